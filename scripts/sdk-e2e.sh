#!/usr/bin/env bash
# End-to-end tests with the official `openai`, `anthropic` and `google-genai` Python SDKs
# (tests/e2e_sdk): the real Switchboard
# (debug build) on a fresh SQLite database and the mock upstream, both on free ports of
# 127.0.0.1, driven by pytest from a virtualenv in .venv.
#
# Builds nothing: `make test-sdk` builds target/debug/switchboard and target/debug/mock-upstream
# first. Extra arguments go to pytest (e.g. `bash scripts/sdk-e2e.sh -k stream -x`).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

server_bin="$repo/target/debug/switchboard"
mock_bin="$repo/target/debug/mock-upstream"
for bin in "$server_bin" "$mock_bin"; do
  if [ ! -x "$bin" ]; then
    echo "sdk-e2e: $bin is missing; build it first:" >&2
    echo "  cargo build -p switchboard -p switchboard-mock-upstream   (or: make test-sdk)" >&2
    exit 1
  fi
done

# --- Python environment (.venv), reinstalled only when requirements.txt or Python changed ---
venv="$repo/.venv"
requirements="$repo/tests/e2e_sdk/requirements.txt"
stamp="$venv/.sdk-e2e-requirements.sha256"
want=$({ cat "$requirements"; python3 -c 'import sys; print(sys.version)'; } | sha256sum | cut -d' ' -f1)
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'pass' 2>/dev/null; then
  echo "sdk-e2e: creating .venv"
  python3 -m venv --clear "$venv"
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "sdk-e2e: installing tests/e2e_sdk/requirements.txt into .venv"
  rm -f "$stamp"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
  echo "$want" > "$stamp"
fi

# --- Servers ---
work=$(mktemp -d)
mock_pid=""
server_pid=""
status=1
cleanup() {
  for pid in $server_pid $mock_pid; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in $server_pid $mock_pid; do
    wait "$pid" 2>/dev/null || true
  done
  if [ "$status" -ne 0 ]; then
    if [ -s "$work/server.log" ]; then
      echo "--- switchboard log (last 60 lines) ---" >&2
      tail -60 "$work/server.log" >&2
    fi
    if [ -s "$work/mock.log" ]; then
      echo "--- mock upstream log (last 20 lines) ---" >&2
      tail -20 "$work/mock.log" >&2
    fi
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The mock picks its own port and prints it on its first line.
MOCK_PORT=0 MOCK_RECORD=0 "$mock_bin" > "$work/mock.log" 2>&1 &
mock_pid=$!
mock_addr=""
for _ in $(seq 1 100); do
  mock_addr=$(sed -n '1s/^listening on //p' "$work/mock.log" 2>/dev/null || true)
  [ -n "$mock_addr" ] && break
  if ! kill -0 "$mock_pid" 2>/dev/null; then
    echo "sdk-e2e: the mock upstream did not start" >&2
    exit 1
  fi
  sleep 0.1
done
if [ -z "$mock_addr" ]; then
  echo "sdk-e2e: the mock upstream printed no address" >&2
  exit 1
fi

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
root_token=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
(
  cd "$work"
  SQL_DSN="sqlite://$work/switchboard.db" PORT="$port" HOST=127.0.0.1 \
    INITIAL_ROOT_ACCESS_TOKEN="$root_token" INITIAL_ROOT_PASSWORD="sdk-e2e-root-password" \
    SESSION_SECRET="sdk-e2e-session-secret-$root_token" BCRYPT_COST=4 LEDGER_FLUSH_MS=50 \
    LOG_LEVEL=warn GLOBAL_API_RATE_LIMIT=0 CRITICAL_RATE_LIMIT=0 \
    exec "$server_bin"
) > "$work/server.log" 2>&1 &
server_pid=$!
up=""
for _ in $(seq 1 150); do
  if curl -fsS "http://127.0.0.1:$port/api/status" >/dev/null 2>&1; then
    up=1
    break
  fi
  if ! kill -0 "$server_pid" 2>/dev/null; then
    break
  fi
  sleep 0.2
done
if [ -z "$up" ]; then
  echo "sdk-e2e: switchboard did not start on port $port" >&2
  exit 1
fi

# --- Tests ---
export SWITCHBOARD_URL="http://127.0.0.1:$port"
export SWITCHBOARD_ROOT_TOKEN="$root_token"
export MOCK_UPSTREAM_URL="http://$mock_addr"
export PYTHONDONTWRITEBYTECODE=1
pytest_status=0
"$venv/bin/python" -m pytest -q -p no:cacheprovider "$repo/tests/e2e_sdk" "$@" || pytest_status=$?
if [ "$pytest_status" -eq 5 ]; then
  echo "sdk-e2e: pytest collected no tests" >&2
fi

# --- Property-based calls of every documented /api operation (schemathesis) ---
# Generated valid and invalid inputs for each operation of the served OpenAPI document, as root:
# no answer may be a 5xx and every answer must match its documented schema. Skipped when only
# some SDK tests were asked for (extra arguments). Operations that would replace root's own
# credentials (its access token, its password: /api/user/{token,logout,self}) are left out so the run keeps its access.
fuzz_status=0
if [ "$#" -eq 0 ]; then
  echo "sdk-e2e: schemathesis on /api/openapi.json (${API_FUZZ_EXAMPLES:-12} examples an operation)"
  "$venv/bin/schemathesis" run "$SWITCHBOARD_URL/api/openapi.json" \
    --header "Authorization: $root_token" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
    --exclude-path-regex '^/api/user/(token|logout|self)$' \
    --max-examples "${API_FUZZ_EXAMPLES:-12}" --seed "${API_FUZZ_SEED:-20261123}" \
    --request-timeout 30 --workers 1 --no-color || fuzz_status=$?
fi
status=$pytest_status
[ "$status" -eq 0 ] && status=$fuzz_status
exit "$status"
