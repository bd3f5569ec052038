#!/usr/bin/env bash
# End-to-end tests with real coding agents (tests/e2e_agents): Claude Code, Codex and Gemini CLI
# from npm (tests/e2e_agents/package-lock.json), run non-interactively against the real
# Switchboard (debug build, fresh SQLite database, a free port of 127.0.0.1) in front of the
# suite's validating upstream (tests/e2e_agents/upstream.py, started by pytest).
#
# Builds nothing: `make test-agents` builds the server and installs the agents first
# (SWITCHBOARD_BIN to test another binary; CARGO_TARGET_DIR is followed). Extra arguments go to pytest
# (e.g. `bash scripts/agents-e2e.sh -k "claude and tool" -x`).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

server_bin="${SWITCHBOARD_BIN:-${CARGO_TARGET_DIR:-$repo/target}/debug/switchboard}"
if [ ! -x "$server_bin" ]; then
  echo "agents-e2e: $server_bin is missing; build it first (cargo build -p switchboard, or make test-agents)" >&2
  exit 1
fi
agents="$repo/tests/e2e_agents"
for bin in claude codex gemini; do
  if [ ! -e "$agents/node_modules/.bin/$bin" ]; then
    echo "agents-e2e: $bin is not installed: (cd tests/e2e_agents && npm ci) or make test-agents" >&2
    exit 1
  fi
done

# --- Python environment: the SDK suite's .venv (pytest, httpx), installed the same way ---
venv="$repo/.venv"
requirements="$repo/tests/e2e_sdk/requirements.txt"
stamp="$venv/.sdk-e2e-requirements.sha256"
want=$({ cat "$requirements"; python3 -c 'import sys; print(sys.version)'; } | sha256sum | cut -d' ' -f1)
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'pass' 2>/dev/null; then
  echo "agents-e2e: creating .venv"
  python3 -m venv --clear "$venv"
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "agents-e2e: installing tests/e2e_sdk/requirements.txt into .venv"
  rm -f "$stamp"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
  echo "$want" > "$stamp"
fi

# --- Switchboard ---
work=$(mktemp -d)
server_pid=""
status=1
cleanup() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  if [ "$status" -ne 0 ] && [ -s "$work/server.log" ]; then
    echo "--- switchboard log (last 60 lines) ---" >&2
    tail -60 "$work/server.log" >&2
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
root_token=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
(
  cd "$work"
  SQL_DSN="sqlite://$work/switchboard.db" PORT="$port" HOST=127.0.0.1 \
    INITIAL_ROOT_ACCESS_TOKEN="$root_token" INITIAL_ROOT_PASSWORD="agents-e2e-root-password" \
    SESSION_SECRET="agents-e2e-session-secret-$root_token" BCRYPT_COST=4 LEDGER_FLUSH_MS=50 \
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
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.2
done
if [ -z "$up" ]; then
  echo "agents-e2e: switchboard did not start on port $port" >&2
  exit 1
fi

# --- Tests ---
export SWITCHBOARD_URL="http://127.0.0.1:$port"
export SWITCHBOARD_ROOT_TOKEN="$root_token"
export PYTHONDONTWRITEBYTECODE=1
status=0
"$venv/bin/python" -m pytest -q -p no:cacheprovider -rfE "$agents" "$@" || status=$?
exit "$status"
