#!/usr/bin/env bash
# Browser journey: starts the real server (debug build) on a fresh SQLite database and a free
# port, then drives Debian's Chromium with playwright-core through frontend/e2e.
set -euo pipefail
cd "$(dirname "$0")/.."

CHROMIUM_PATH=${CHROMIUM_PATH:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM_PATH" ]; then
  if command -v apt-get >/dev/null && [ "$(id -u)" -eq 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "Chromium not found at $CHROMIUM_PATH: install Debian's 'chromium' package (or set CHROMIUM_PATH)." >&2
    exit 1
  fi
fi

work=$(mktemp -d)
# The mock upstream the journeys' channel points at (the playground chat is answered by it).
mock_bin="$PWD/target/debug/mock-upstream"
if [ ! -x "$mock_bin" ]; then
  echo "e2e: $mock_bin is missing: cargo build -p switchboard-mock-upstream (make test-e2e does)" >&2
  exit 1
fi
# Prints the address a helper announced ("listening on ADDR" in $work/NAME.out), waiting up to
# 5 s for it; fails with the helper's log when it never does.
listening() {
  local name=$1 what=$2 addr=
  for _ in $(seq 1 50); do
    addr=$(sed -n 's/^listening on //p' "$work/$name.out" 2>/dev/null | head -1)
    [ -n "$addr" ] && break
    sleep 0.1
  done
  if [ -z "$addr" ]; then cat "$work/$name.log" >&2; echo "e2e: $what did not start" >&2; return 1; fi
  echo "$addr"
}
MOCK_PORT=0 MOCK_RECORD=0 "$mock_bin" > "$work/mock.out" 2> "$work/mock.log" &
mock=$!
mock_addr=$(listening mock "the mock upstream")
# The mail server the journeys read codes from (scripts/smtp-sink.py writes each message to a file).
mail_dir="$work/mail"
python3 scripts/smtp-sink.py "$mail_dir" > "$work/smtp.out" 2> "$work/smtp.log" &
smtp=$!
smtp_port=$(listening smtp "the mail server")
# GitHub's OAuth app flow (scripts/fake-github.py), for the GitHub sign-in journey.
export GITHUB_SECRET="e2e-github-secret"
python3 scripts/fake-github.py "$GITHUB_SECRET" > "$work/github.out" 2> "$work/github.log" &
github=$!
github_url="http://$(listening github "the fake GitHub" | sed 's/^/127.0.0.1:/')"
# An epay gateway (scripts/fake-epay.py), for the online top-up journey.
export EPAY_PID="1001" EPAY_KEY="e2e-epay-merchant-key"
python3 scripts/fake-epay.py "$EPAY_PID" "$EPAY_KEY" > "$work/epay.out" 2> "$work/epay.log" &
epay=$!
epay_url="http://$(listening epay "the fake epay" | sed 's/^/127.0.0.1:/')"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
export ROOT_PASSWORD="e2e-root-password"
(
  cd "$work"
  SQL_DSN="sqlite://$work/e2e.db" PORT="$port" HOST=127.0.0.1 \
    INITIAL_ROOT_PASSWORD="$ROOT_PASSWORD" FRONTEND_DIR="$OLDPWD/frontend/dist" \
    SESSION_SECRET="e2e-session-secret-0123456789" BCRYPT_COST=4 LOG_LEVEL=warn \
    GITHUB_OAUTH_URL="$github_url" GITHUB_API_URL="$github_url" \
    exec "$OLDPWD/target/debug/switchboard"
) > "$work/server.log" 2>&1 &
server=$!
cleanup() {
  kill "$server" "$mock" "$smtp" "$github" "$epay" 2>/dev/null || true
  wait "$server" "$mock" "$smtp" "$github" "$epay" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$port/api/status" >/dev/null 2>&1 && break
  if ! kill -0 "$server" 2>/dev/null; then cat "$work/server.log" >&2; exit 1; fi
  sleep 0.2
done

export BASE_URL="http://127.0.0.1:$port" MOCK_URL="http://$mock_addr" CHROMIUM_PATH SMTP_PORT="$smtp_port" MAIL_DIR="$mail_dir" GITHUB_URL="$github_url" EPAY_URL="$epay_url"
status=0
(cd frontend && npm run --silent e2e) || status=$?
if [ $status -ne 0 ]; then
  echo "--- server log ---" >&2
  tail -50 "$work/server.log" >&2
fi
exit $status
