#!/usr/bin/env bash
# `make check-op OP=getTeamTaskSummary`: the checks of one operation, fastest first — the contract
# (lint, generated/ fresh, every difference from the last release told in CHANGELOG.md, the contract
# suite and the error codes), the type check, then its rows of the matrix suites
# (permissions, statement budget, mock, fuzzer, the client's pages), picked by name with vitest's -t,
# for a change its events (declared in src/events/catalog.ts, written exactly so and valid against
# the contract's webhooks), its code samples (run as written against the mock and on the demo data)
# and their panel on the docs page, and last its area's test file and its own (test/<area>.test.ts,
# test/<operationId>.test.ts).
set -euo pipefail
cd "$(dirname "$0")/.."
op="${1:-}"
if [[ ! "$op" =~ ^[a-z][a-zA-Z0-9]*$ ]]; then
  echo "usage: make check-op OP=<operationId>" >&2
  exit 2
fi

read -r area method < <(node -e '
  const { paths } = JSON.parse(require("fs").readFileSync("generated/openapi.json", "utf8"));
  const found = Object.values(paths).flatMap((item) => Object.entries(item)).find(([, o]) => o && o.operationId === process.argv[1]);
  if (!found) process.exit(1);
  const [method, op] = found;
  console.log(op.tags[0].toLowerCase().split(/\s+/).map((w, i) => (i ? w[0].toUpperCase() + w.slice(1) : w)).join(""), method);
' "$op") || { echo "$op is not an operationId of generated/openapi.json (changed the contract? run make generate)" >&2; exit 1; }

step() { printf '\n== %s\n' "$1"; }

step "contract: lint, generated/ fresh, the changelog against the last release, test/contract.test.ts and test/errorCodes.test.ts"
npx redocly lint openapi/openapi.yaml --format=summary
npm run --silent check:generated
npx tsx scripts/breakingChanges.ts
npx vitest run test/contract.test.ts test/errorCodes.test.ts

step "types"
npm run --silent typecheck

step "$op in the permission matrix, the statement budget, the mock, the fuzzer and the client's pages"
npx vitest run test/permissions.test.ts test/roundTrips.test.ts test/mock.test.ts test/fuzz/fuzz.part1.test.ts \
  test/fuzz/fuzz.part2.test.ts test/client.test.ts -t "\\b${op}\\b"

if [[ "$method" != get ]]; then
  step "$op's events: declared in src/events/catalog.ts and the contract's webhooks, written exactly so, valid against them"
  npx vitest run test/eventCatalog.test.ts
  npx vitest run test/eventLog.test.ts -t "\\b${op}\\b"
fi

# Only this operation's samples run, on a demo of their own; `make test` runs them all in turn on one demo.
step "$op's code samples (curl and the client), run as written against the mock and on the demo data"
CODE_SAMPLES_OF="$op" npx vitest run test/codeSamples.test.ts

# Skipped, with a message, where no Chromium is installed.
step "$op's samples on the docs page, in a headless Chromium"
DOCS_SAMPLES_OF="$op" npx vitest run test/docsCodeSamples.test.ts

files=()
for file in "test/${area}.test.ts" "test/${op}.test.ts"; do
  [[ -f "$file" ]] && files+=("$file")
done
if ((${#files[@]} > 0)); then
  step "the area's tests: ${files[*]}"
  npx vitest run "${files[@]}"
fi
