#!/usr/bin/env bash
# `make run`: the server on the embedded database for a newcomer. On the first start (no data
# directory yet) it fills the database with the demo organization and keeps the demo keys in
# $DATA_DIR/demo-keys.txt (readable only by you), so there is a key to try at once; the file's first
# lines name the demo organization and the team to start from, so the examples printed below work
# as they are.
set -euo pipefail
cd "$(dirname "$0")/.."

data_dir=${DATA_DIR:-./data}
port=${PORT:-3000}
host=${HOST:-127.0.0.1}
keys_file="$data_dir/demo-keys.txt"
# Without a colon: CORS_ORIGINS= (empty) turns CORS off.
cors_origins=${CORS_ORIGINS-http://localhost:5173,http://127.0.0.1:5173}

if [ -z "${DATABASE_URL:-}" ] && [ ! -e "$data_dir" ]; then
  echo "First start: creating the embedded database in $data_dir with the demo organization…"
  keys=$(DATA_DIR="$data_dir" npm run --silent admin -- seed-demo)
  (umask 077 && printf '%s\n' "$keys" > "$keys_file")
fi

base="http://$host:$port"
echo
echo "  API      $base/v1"
echo "  Docs     $base/v1/docs"
if [ -f "$keys_file" ]; then
  # field TAG N: the Nth field of the line TAG in the keys file (ORGANIZATION and TEAM: id, name).
  field() { awk -F'\t' -v tag="$1" -v n="$2" '$1==tag{print $n}' "$keys_file"; }
  team_id=$(field TEAM 2)
  owner_key="\$(awk -F'\\t' '\$1==\"ORG_OWNER\"{print \$3}' $keys_file)"
  echo "  Keys     $keys_file (one demo key per role)"
  if [ -n "$team_id" ]; then
    org_id=$(field ORGANIZATION 2)
    echo "  Org      $org_id ($(field ORGANIZATION 3))"
    echo "  Team     $team_id ($(field TEAM 3): content in every area; listed first)"
    echo "  Try      curl -H \"Authorization: Bearer $owner_key\" $base/v1/orgs/$org_id/teams"
    echo "           curl -H \"Authorization: Bearer $owner_key\" $base/v1/teams/$team_id/tasks"
  else
    echo "  Try      curl -H \"Authorization: Bearer $owner_key\" $base/v1/me"
  fi
else
  echo "  Keys     stop the server, then: npm run --silent admin -- create-key --email YOU --scopes write"
fi
if [ -n "$cors_origins" ]; then
  echo "  CORS     browser pages on ${cors_origins//,/ and } may call the API (CORS_ORIGINS)"
fi
echo
exec env DATA_DIR="$data_dir" PORT="$port" HOST="$host" LOG_PRETTY=1 CORS_ORIGINS="$cors_origins" WEBHOOKS_ALLOW_PRIVATE_TARGETS="${WEBHOOKS_ALLOW_PRIVATE_TARGETS:-true}" npm run --silent serve
