#!/usr/bin/env bash
# Checks that docker-compose.yml is a valid Compose file (no engine needed).
set -euo pipefail
cd "$(dirname "$0")/.."
export SESSION_SECRET="${SESSION_SECRET:-compose-check-secret-0123456789}"
if command -v docker-compose >/dev/null; then
  docker-compose -f docker-compose.yml config -q
elif docker compose version >/dev/null 2>&1; then
  docker compose -f docker-compose.yml config -q
else
  echo "docker-compose is not installed (Debian: apt-get install docker-compose); cannot check docker-compose.yml" >&2
  exit 1
fi
echo "docker-compose.yml: valid"
