#!/usr/bin/env bash
# `npm test` (and `make test`): every check in turn, each announced with what it typically takes, so
# that a long step is not mistaken for a hang. Arguments go to vitest (`npm test -- test/tasks.test.ts`).
# The typical times are for a quiet 2-core machine; a busy one (load 10-16) takes two to five times as
# long (README.md, "Tests"; docs/testing.md, "How long the suite takes").
set -euo pipefail
cd "$(dirname "$0")/.."

# Into a pipe or a file (CI, `make test | tee`), no colour codes: Vitest's colours ignore whether the
# output is a terminal (they look at TERM only), and so do some of the other steps' tools. NO_COLOR is
# what they all read; FORCE_COLOR, when set, still wins.
if [ ! -t 1 ] && [ -z "${FORCE_COLOR:-}" ]; then export NO_COLOR=1; fi

clock() { printf '%d:%02d' $(($1 / 60)) $(($1 % 60)); }
begun=$SECONDS
step() { # label, typical duration, command…
  local label=$1 typical=$2 started=$SECONDS
  shift 2
  echo "== $label (typically $typical) …"
  "$@"
  echo "== $label: done in $(clock $((SECONDS - started))) ($(clock $((SECONDS - begun))) since make test began)"
}

step 'generated/ is up to date with openapi/' '10 s' npm run --silent check:generated
step 'lint of the contract and the workflows' '5 s' npm run --silent lint
# Against the last release stored in openapi/releases/ by `npm run release`, so it needs no git
# history or tags (docs/decisions.md, "Breaking changes and deprecation").
step 'every difference from the last release told in the changelog, every break declared' '1 s' npx tsx scripts/breakingChanges.ts
step 'type check (the client, then everything)' '35 s, 10 s when little changed' npm run --silent typecheck
# Only when dist/ is missing or older than its sources: CI's second `make test` (on PostgreSQL) reuses it.
step 'build of dist/ (npm run build)' '20 s, nothing when dist/ is current' scripts/build.sh --if-stale
database=PGlite
[ -n "${TEST_DATABASE_URL:-}" ] && database=PostgreSQL
step "the test suite on $database (vitest: a line per file as it ends)" '7 min' npx vitest run "$@"
