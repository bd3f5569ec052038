#!/usr/bin/env python3
"""Profiles Switchboard under the benchmark's c32 load with `perf record` (call graphs).

Starts the fast mock upstream and Switchboard exactly as bench.py does (fresh SQLite database,
one OpenAI channel, one unlimited key), warms up, then records `perf record -g` of the
Switchboard process while wrk runs `BENCH_CONNS` connections for `BENCH_DURATION` seconds.
Prints the hottest functions (self time, then with children) and leaves `perf.data` in
`BENCH_PROFILE_OUT` (default bench/results/perf-<shape>.data) for `perf report` or a flame
graph (`perf script | stackcollapse-perf.pl | flamegraph.pl`).

    BENCH_NO_BUILD=1 python3 bench/profile.py            # non-streamed
    BENCH_PROFILE_STREAM=1 python3 bench/profile.py      # streamed

With BENCH_SQL_DSN (an empty database) and BENCH_REDIS_URL set, Switchboard runs on them instead,
as in bench.py.

Needs `perf` (Debian's linux-perf) and a release build with line tables for readable frames:
CARGO_PROFILE_RELEASE_DEBUG=line-tables-only cargo build --release -p switchboard
-p switchboard-mock-upstream.
"""

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the harness: processes, API calls, wrk)


def main():
    perf = shutil.which("perf")
    if not perf:
        bench.fail("perf is missing (Debian: apt-get install linux-perf)")
    stream = bool(os.environ.get("BENCH_PROFILE_STREAM"))
    shape = "stream" if stream else "non-stream"
    out = os.environ.get("BENCH_PROFILE_OUT") or os.path.join(
        bench.BENCH, "results", f"perf-{shape}.data")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    bench.TMP = tempfile.mkdtemp(prefix="switchboard-profile-")
    atexit.register(bench.cleanup)

    mock, mock_port = bench.start_mock("fast", 0)
    sb, sb_port, key, _, _ = bench.start_single(mock_port)
    payload = bench.body(bench.MODEL_FAST, stream)
    bench.wrk(sb_port, payload, key, bench.CONNS, 3)

    rec = subprocess.Popen([perf, "record", "-e", "cpu-clock", "-F", "1999", "-g", "--call-graph", "dwarf,16384",
                            "-o", out, "-p", str(sb.pid)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(1)
    w = bench.wrk(sb_port, payload, key, bench.CONNS, bench.DURATION)
    rec.send_signal(2)
    rec.wait(timeout=120)
    rps = w["requests"] / (w["duration_us"] / 1e6)
    print(f"profile: c{bench.CONNS} {shape} {rps:.0f} req/s under perf; data in {out}")
    for args in (["--no-children"], ["--children"]):
        r = subprocess.run([perf, "report", "-i", out, "--stdio", "--no-call-graph",
                            "--percent-limit", "0.7", *args],
                           capture_output=True, text=True)
        print("\n".join(line for line in r.stdout.splitlines()
                        if line and not line.startswith("#"))[:12000])
    mock.terminate()


if __name__ == "__main__":
    main()
