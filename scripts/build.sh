#!/usr/bin/env bash
# `npm run build`: the server as production runs it — src/ compiled to dist/src/ (no loader at run
# time), with the bundled contract and the docs page beside it in dist/generated/, where the
# compiled code looks for them.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf dist
npx tsc -p tsconfig.build.json
cp generated/openapi.json generated/docs.html dist/generated/
