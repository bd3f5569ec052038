#!/usr/bin/env python3
"""Counts the CPU instructions Switchboard executes per relayed request, under callgrind.

Wall-clock benchmarks on a shared 2-core machine move by 10 to 30 % between runs; an
instruction count does not: callgrind counts the instructions of the process, whatever else
the machine does. This is the A/B tool for relay-path changes (two builds, same workload, same
count every time to within a fraction of a percent); `make bench` stays the judge of speed.

Starts the fast mock upstream and Switchboard (fresh SQLite database, one OpenAI channel, one
unlimited key, as bench.py) with Switchboard under `valgrind --tool=callgrind`, warms up,
zeroes the counters, runs `BENCH_INSN_REQUESTS` requests (default 3000) over
`BENCH_INSN_CONNS` connections (default 8) with a small Python client, dumps the counters and
prints instructions per request, total and by function (inclusive and self, top 40) from
`callgrind_annotate`.

    BENCH_NO_BUILD=1 python3 bench/instructions.py                # non-streamed
    BENCH_PROFILE_STREAM=1 BENCH_NO_BUILD=1 python3 bench/instructions.py
    CARGO_TARGET_DIR=/tmp/other python3 bench/instructions.py     # another build

The consume-log writer flushes every 500 ms, so its share per request depends on how many
rows a flush carries; the harness waits for the last flush before dumping, so every request's
row is counted once.
"""

import atexit
import http.client
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the harness: processes, API calls)

REQUESTS = int(os.environ.get("BENCH_INSN_REQUESTS", "3000"))
CONNS = int(os.environ.get("BENCH_INSN_CONNS", "8"))


def load(port, payload, key, n, conns):
    """Sends `n` requests over `conns` kept-alive connections; returns the failures."""
    body = payload.encode()
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    left = [n]
    errors = []
    lock = threading.Lock()

    def worker():
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        while True:
            with lock:
                if left[0] == 0:
                    return
                left[0] -= 1
            c.request("POST", bench.PATH, body=body, headers=headers)
            r = c.getresponse()
            data = r.read()
            if r.status != 200:
                with lock:
                    errors.append((r.status, data[:200]))

    threads = [threading.Thread(target=worker) for _ in range(conns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def main():
    valgrind = shutil.which("valgrind")
    control = shutil.which("callgrind_control")
    annotate = shutil.which("callgrind_annotate")
    if not (valgrind and control and annotate):
        bench.fail("valgrind is missing (Debian: apt-get install valgrind)")
    stream = bool(os.environ.get("BENCH_PROFILE_STREAM"))
    shape = "stream" if stream else "non-stream"
    bench.TMP = tempfile.mkdtemp(prefix="switchboard-insn-")
    atexit.register(bench.cleanup)

    mock, mock_port = bench.start_mock("fast", 0)
    sb, sb_port, key, sb_log, env = bench.start_single(
        mock_port, wrapper=(valgrind, "--tool=callgrind", "--dump-instr=no"), timeout=300)
    payload = bench.body(bench.MODEL_FAST, stream)
    errors = load(sb_port, payload, key, 300, CONNS)
    if errors:
        bench.fail(f"warm-up failed: {errors[:3]}", sb_log)
    time.sleep(1.5)  # the warm-up's consume rows are written
    # vgdb names its pipes after $USER and $HOST as valgrind saw them (HOST is the listen
    # address here): the control commands need the same.
    cenv = dict(os.environ, HOST=env["HOST"])
    subprocess.run([control, "-z", str(sb.pid)], check=True, capture_output=True, env=cenv)
    started = time.time()
    errors = load(sb_port, payload, key, REQUESTS, CONNS)
    took = time.time() - started
    time.sleep(1.5)  # the last flush of the consume log
    r = subprocess.run([control, "-d", str(sb.pid)], capture_output=True, text=True, env=cenv)
    log_control = r.stdout + r.stderr
    if errors:
        bench.fail(f"{len(errors)} requests failed: {errors[:3]}", sb_log)
    # `callgrind_control -d` writes `callgrind.out.<pid>.<n>` in the working directory.
    dumps = [os.path.join(bench.TMP, f) for f in os.listdir(bench.TMP)
             if f.startswith(f"callgrind.out.{sb.pid}.")]
    if not dumps:
        bench.fail("callgrind wrote no dump: " + log_control, sb_log)
    dump = max(dumps, key=os.path.getmtime)
    r = subprocess.run([annotate, "--inclusive=yes", dump], capture_output=True, text=True)
    total = None
    for line in r.stdout.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\(100\.0%\)\s+PROGRAM TOTALS", line)
        if m:
            total = int(m.group(1).replace(",", ""))
    if total is None:
        bench.fail("callgrind_annotate printed no total:\n" + r.stdout[:2000])
    print(f"instructions: {shape}, {REQUESTS} requests over {CONNS} connections "
          f"({took:.1f} s under callgrind)")
    print(f"instructions per request: {total / REQUESTS:,.0f}")
    keep = os.environ.get("BENCH_INSN_OUT")
    if keep:
        shutil.copy(dump, keep)
        print(f"callgrind data: {keep}")
    for inclusive in ("yes", "no"):
        r = subprocess.run([annotate, f"--inclusive={inclusive}", "--threshold=100",
                            "--auto=no", dump], capture_output=True, text=True)
        print(f"\n-- {'inclusive' if inclusive == 'yes' else 'self'} (per request) --")
        shown = 0
        for ln in r.stdout.splitlines():
            m = re.match(r"\s*([\d,]+) \(\s*([\d.]+)%\)\s+(.*)", ln)
            if not m or "PROGRAM TOTALS" in ln:
                continue
            # callgrind_annotate lists the threads' entry frames among the self costs too.
            if inclusive == "no" and float(m.group(2)) > 50:
                continue
            n = int(m.group(1).replace(",", ""))
            name = re.sub(r"^\S*?:", "", m.group(3), count=1)
            print(f"{n / REQUESTS:>10,.0f} {m.group(2):>6}%  {name[:150]}")
            shown += 1
            if shown == 40:
                break
    mock.terminate()


if __name__ == "__main__":
    main()
