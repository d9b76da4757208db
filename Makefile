# Everyday commands. Each one but help installs the dependencies first when they are missing. `make` alone
# lists them (`make help`): every target of .PHONY has a `##` line (test/makeTargets.test.ts).
.PHONY: help install generate lint mock docs test typecheck check-op run bench bench-scale soak stubs client-example
.DEFAULT_GOAL := help

help: ## These targets, each with what it does
	@awk -F ':.*## ' '/^[a-z][a-z-]*:.*## / { printf "  make %-15s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

NODE_MODULES := node_modules/.package-lock.json

$(NODE_MODULES): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

install: $(NODE_MODULES) ## npm ci, only when package.json or package-lock.json changed since the last one

# `npm ci` builds the client (its `prepare`); this rebuilds it when the contract's types or its sources
# changed since, so that the client's examples never run against a missing or stale build.
CLIENT_BUILD := client/dist/client/src/index.js

$(CLIENT_BUILD): generated/api.ts $(wildcard client/src/*.ts) client/package.json client/tsconfig.json | $(NODE_MODULES)
	npm run --silent build:client

run: $(NODE_MODULES) ## The server on the embedded database at http://127.0.0.1:3000/v1 (demo data on first start)
	npm run --silent generate
	scripts/run.sh

bench: $(NODE_MODULES) ## Every figure next to the floor of the stack (Express + raw queries), on PostgreSQL and PGlite
	npm run --silent bench

bench-scale: $(NODE_MODULES) ## What a request costs as the data grows (1,000 to 1,000,000 tasks, 5,000,000 events), on PostgreSQL and PGlite; writes docs/performance/scale.svg
	npm run --silent bench:scale

soak: $(NODE_MODULES) ## A mixed workload on PostgreSQL for SOAK_MINUTES (default 10): errors, latency, memory trend
	npm run --silent soak

stubs: $(NODE_MODULES) ## The scaffold of every operation without a handler: handler, query, budget, matrix row, test (docs/adding-an-operation.md)
	npm run --silent stubs

generate: $(NODE_MODULES) ## Contract → generated/ (bundle, types, docs page)
	npm run --silent generate

lint: $(NODE_MODULES) ## Lint the contract with Redocly
	npm run --silent lint

mock: $(NODE_MODULES) $(CLIENT_BUILD) ## Prism mock of the contract at http://127.0.0.1:4010/v1 (and the client built, for its examples)
	npm run --silent mock

client-example: $(NODE_MODULES) $(CLIENT_BUILD) ## The typed client's example (client/examples/openTasks.ts), against the mock unless TEAM_OS_URL is set; EXAMPLE=live: the live stream's (liveEvents.ts), EXAMPLE=sync: client.sync's (sync.ts), against `make run`
	npx tsx scripts/clientExample.ts $(EXAMPLE)

docs: $(NODE_MODULES) ## Serve the API reference at http://127.0.0.1:4020/v1/docs
	npm run --silent docs

typecheck: $(NODE_MODULES) ## tsc over everything; the client is rebuilt only when generated/api.ts or client/ changed
	npm run --silent typecheck

check-op: $(NODE_MODULES) ## The checks of one operation (contract, changelog, types, its matrix rows, events, samples, its tests): make check-op OP=getTeamTaskSummary
	scripts/check-op.sh "$(OP)"

test: $(NODE_MODULES) ## Freshness of generated/, lint, types, the build, then the test suite
	npm test
