#!/usr/bin/env bash
# `npm run build`: the server as production runs it — src/ compiled to dist/src/ (no loader at run
# time), with the bundled contract and the docs page beside it in dist/generated/ and the changelog in
# dist/, where the compiled code looks for them.
# `--if-stale` (npm's `prestart`) builds only when dist/ is missing or older than what it is built
# from, so that `npm ci && npm start` on a fresh clone starts the server, and a restart costs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
entry=dist/src/server.js
if [ "${1:-}" = "--if-stale" ] && [ -f "$entry" ] &&
  [ -z "$(find src generated CHANGELOG.md package.json package-lock.json tsconfig.json tsconfig.build.json -newer "$entry" -print -quit)" ]; then
  exit 0
fi
if [ ! -x node_modules/.bin/tsc ]; then
  echo "dist/ must be built first, and TypeScript is not installed: run 'npm ci' (with dev dependencies), then 'npm run build'." >&2
  exit 1
fi
[ "${1:-}" = "--if-stale" ] && echo "Building dist/ (missing or older than src/) …" >&2
rm -rf dist
npx tsc -p tsconfig.build.json
cp generated/openapi.json generated/docs.html dist/generated/
cp CHANGELOG.md dist/
