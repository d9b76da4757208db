# Everyday commands. Each one installs the dependencies first when they are missing.
.PHONY: install generate lint mock docs test typecheck check-op run bench soak stubs client-example

NODE_MODULES := node_modules/.package-lock.json

$(NODE_MODULES): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

install: $(NODE_MODULES)

run: $(NODE_MODULES) ## The server on the embedded database at http://127.0.0.1:3000/v1 (demo data on first start)
	npm run --silent generate
	scripts/run.sh

bench: $(NODE_MODULES) ## Every figure next to the floor of the stack (Express + raw queries), on PostgreSQL and PGlite
	npm run --silent bench

soak: $(NODE_MODULES) ## A mixed workload on PostgreSQL for SOAK_MINUTES (default 10): errors, latency, memory trend
	npm run --silent soak

stubs: $(NODE_MODULES) ## The scaffold of every operation without a handler: handler, query, budget, matrix row, test (docs/adding-an-operation.md)
	npm run --silent stubs

generate: $(NODE_MODULES) ## Contract → generated/ (bundle, types, docs page)
	npm run --silent generate

lint: $(NODE_MODULES) ## Lint the contract with Redocly
	npm run --silent lint

mock: $(NODE_MODULES) ## Prism mock of the contract at http://127.0.0.1:4010/v1
	npm run --silent mock

client-example: $(NODE_MODULES) ## The typed client's example (client/examples/openTasks.ts); against the mock unless TEAM_OS_URL is set
	npm run --silent build:client
	npx tsx scripts/clientExample.ts

docs: $(NODE_MODULES) ## Serve the API reference at http://127.0.0.1:4020/v1/docs
	npm run --silent docs

typecheck: $(NODE_MODULES) ## tsc over everything; the client is rebuilt only when generated/api.ts or client/ changed
	npm run --silent typecheck

check-op: $(NODE_MODULES) ## Every check of one operation: make check-op OP=getTeamTaskSummary
	scripts/check-op.sh "$(OP)"

test: $(NODE_MODULES) ## Freshness of generated/, lint, types, the build, then the test suite
	npm test
