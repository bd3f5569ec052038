#!/usr/bin/env bash
# `make bench`: installs the load tools when missing, builds the release binaries and runs
# bench/bench.py (mock upstream vs nginx vs Switchboard). See bench/README.md for the method.
#
# Then bench/logs_bench.py times the log queries on a 10-million-row table.
#
# Knobs (environment): BENCH_SKIP_LOGS=1, BENCH_LOG_ROWS (10000000), BENCH_DURATION (s per load phase, 10), BENCH_CONNS (32), BENCH_ROUNDS (2),
# BENCH_TTFE_N (200), BENCH_PACE_MS (20), BENCH_WRK_THREADS (1), BENCH_NO_BUILD=1 (skip cargo),
# BENCH_LOG_LEVELS ("default warn": the shipped configuration, then LOG_LEVEL=warn).
set -euo pipefail
cd "$(dirname "$0")/.."

have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

need=()
# Load tools: Debian's nginx-light (the reference hop) and wrk (the load generator).
[ -x /usr/sbin/nginx ] || command -v nginx >/dev/null || need+=(nginx-light)
command -v wrk >/dev/null || need+=(wrk)
command -v python3 >/dev/null || need+=(python3)
# What the release build links against (same list as scripts/deps.sh, without the Node toolchain).
if [ -z "${BENCH_NO_BUILD:-}" ] && command -v dpkg-query >/dev/null; then
  for p in pkg-config libpq-dev default-libmysqlclient-dev; do
    have_pkg "$p" || need+=("$p")
  done
fi

if [ ${#need[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null; then
    echo "bench: missing ${need[*]}; install them with your package manager (Debian names: nginx-light wrk python3)." >&2
    exit 1
  fi
  if [ "$(id -u)" -eq 0 ]; then
    SUDO=()
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    SUDO=(sudo -n)
  else
    echo "bench: missing ${need[*]}; run as root, or first: sudo apt-get install -y ${need[*]}" >&2
    exit 1
  fi
  echo "bench: installing ${need[*]} ..."
  "${SUDO[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq "${need[@]}" >/dev/null
fi

if [ -z "${BENCH_NO_BUILD:-}" ]; then
  # Built apart, so that Switchboard's binary is the one `make release` makes (built together,
  # cargo would unify the two packages' dependency features: another build, other symbol
  # names than crates/server/relay-path.ld lists).
  echo "bench: cargo build --release -p switchboard; cargo build --release -p switchboard-mock-upstream"
  "${CARGO:-cargo}" build --release -p switchboard
  "${CARGO:-cargo}" build --release -p switchboard-mock-upstream
fi

# Switchboard as shipped (LOG_LEVEL unset: info, the access log on) into latest.json, then with
# LOG_LEVEL=warn into latest-warn.json; BENCH_LOG_LEVELS chooses ("default" is the shipped one).
for level in ${BENCH_LOG_LEVELS:-default warn}; do
  if [ "$level" = default ]; then
    BENCH_LOG_LEVEL= python3 bench/bench.py "$@"
  else
    BENCH_LOG_LEVEL="$level" BENCH_OUT="${BENCH_OUT_DIR:-bench/results}/latest-$level.json" \
      python3 bench/bench.py "$@"
  fi
done
# Log queries on 10 million rows (bench/logs_bench.py); BENCH_SKIP_LOGS=1 skips them.
if [ -z "${BENCH_SKIP_LOGS:-}" ]; then
  python3 bench/logs_bench.py
fi
