#!/usr/bin/env bash
# `make run`: the server on the embedded database for a newcomer. On the first start (no data
# directory yet) it fills the database with the demo organization and keeps the demo keys in
# $DATA_DIR/demo-keys.txt (readable only by you), so there is a key to try at once; the file's first
# lines name the demo organization and the team to start from, so the examples printed below work
# as they are. The `export TEAM_OS_API_KEY=…` line it prints reads the Owner's key from that file
# (the key itself stays off the screen): with it every sample of the docs page runs as written.
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
  # key_of ROLE: the shell text that reads ROLE's key from the keys file, printed for the reader to paste.
  key_of() { printf '"$(awk -F'"'"'\\t'"'"' '"'"'$1=="%s"{print $3}'"'"' %s)"' "$1" "$keys_file"; }
  echo "  Keys     $keys_file (one demo key per role)"
  echo "  Key      the Owner's demo key, with which every sample of the docs page runs as written:"
  echo "           export TEAM_OS_API_KEY=$(key_of ORG_OWNER)"
  echo "           # the /platform samples need the platform operator's: export TEAM_OS_API_KEY=$(key_of SUPERADMIN)"
  if [ "$base/v1" != "http://127.0.0.1:3000/v1" ]; then
    echo "           export TEAM_OS_URL=$base/v1"
  fi
  if [ -n "$team_id" ]; then
    org_id=$(field ORGANIZATION 2)
    echo "  Org      $org_id ($(field ORGANIZATION 3))"
    echo "  Team     $team_id ($(field TEAM 3): content in every area; listed first)"
    echo "  Try      curl -H \"Authorization: Bearer \$TEAM_OS_API_KEY\" $base/v1/orgs/$org_id/teams"
    echo "           curl -H \"Authorization: Bearer \$TEAM_OS_API_KEY\" $base/v1/teams/$team_id/tasks"
  else
    echo "  Try      curl -H \"Authorization: Bearer \$TEAM_OS_API_KEY\" $base/v1/me"
  fi
else
  echo "  Keys     stop the server, then: npm run --silent admin -- create-key --email YOU --scopes write"
fi
if [ -n "$cors_origins" ]; then
  echo "  CORS     browser pages on ${cors_origins//,/ and } may call the API (CORS_ORIGINS)"
fi
echo
exec env DATA_DIR="$data_dir" PORT="$port" HOST="$host" LOG_PRETTY=1 CORS_ORIGINS="$cors_origins" WEBHOOKS_ALLOW_PRIVATE_TARGETS="${WEBHOOKS_ALLOW_PRIVATE_TARGETS:-true}" npm run --silent serve
