#!/usr/bin/env bash
# Installs the system packages Switchboard builds against when they are missing (Debian/Ubuntu).
set -euo pipefail

# `deps.sh test` also installs what the test suite uses: Chromium (browser journey), the CJK
# fonts and poppler-utils (invoice PDFs), docker-compose (compose file check), python3-yaml
# (Kubernetes manifest check).
need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
pkgs=(pkg-config libssl-dev default-libmysqlclient-dev)
if [ "${1:-}" = "test" ]; then
  pkgs+=(chromium fonts-noto-cjk poppler-utils docker-compose python3-yaml)
fi
for p in "${pkgs[@]}"; do
  have_pkg "$p" || need+=("$p")
done
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)

if [ ${#need[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null; then
    echo "Missing: ${need[*]}. Install them with your package manager (OpenSSL and MariaDB/MySQL client development files, pkg-config, a C compiler, Node.js >= 20)." >&2
    exit 1
  fi
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "Installing ${need[*]} ..."
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
  echo "Node.js >= 20 is required (found $(node --version))." >&2
  exit 1
fi
