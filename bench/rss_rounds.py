#!/usr/bin/env python3
"""Where Switchboard's memory goes across load rounds: the check behind `make bench`'s "RSS not
growing across rounds", taken apart.

Starts the fast mock and Switchboard as `bench.py` does (fresh SQLite database, one OpenAI
channel, one unlimited key), warms up, then runs RSS_ROUNDS rounds (default 4) of c32 load
(RSS_ROUND_SECONDS non-streamed, then as long streamed; default 10). After each round (1 s
later, as bench.py reads it) it prints the RSS, the anonymous part, the SQLite connections the
server holds open and its threads, and at the end the change from the first round to the last,
mapping by mapping, in groups:

- `mimalloc arena`: anonymous mappings of 1 GiB or more (mimalloc reserves its arenas so): the
  Rust side's heap;
- `[heap]`: glibc's main arena (the C libraries' `malloc`: SQLite, libpq, libmysqlclient);
- `anon <size>`: other anonymous mappings, by size; glibc's per-thread arenas are the ones of
  1-2 MB that come and go;
- a file's path: its pages mapped (the binary's code and read-only data, shared libraries).

    make bench-rss                                               # builds as make release does
    python3 bench/rss_rounds.py                                  # the binaries already built
    CARGO_TARGET_DIR=/tmp/other python3 bench/rss_rounds.py      # another build
    MALLOC_ARENA_MAX=4 python3 bench/rss_rounds.py               # an allocator setting

The environment reaches the server, so allocator settings (MALLOC_ARENA_MAX,
MIMALLOC_PURGE_DELAY) can be compared without a build. RSS_SMAPS_DIR keeps each round's
`/proc/<pid>/smaps`.
"""

import atexit
import os
import re
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the harness: processes, load)

ROUNDS = max(2, int(os.environ.get("RSS_ROUNDS", "4")))
SECONDS = max(1, int(os.environ.get("RSS_ROUND_SECONDS", "10")))
MAPPING = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) ")


def smaps_groups(pid):
    """RSS in KB by group of mappings (see the module's doc)."""
    groups = {}
    group = None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            m = MAPPING.match(line)
            if m:
                fields = line.split()
                size_kb = (int(m.group(2), 16) - int(m.group(1), 16)) // 1024
                if len(fields) > 5:
                    group = fields[5]
                elif size_kb >= 1 << 20:
                    group = "mimalloc arena"
                else:
                    group = f"anon {size_kb} KB"
            elif line.startswith("Rss:") and group is not None:
                groups[group] = groups.get(group, 0) + int(line.split()[1])
    return groups


def sqlite_connections(pid):
    """Open descriptors of the database file itself (one a SQLite connection)."""
    n = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").endswith("switchboard.db"):
                n += 1
        except OSError:
            pass
    return n


def snapshot(pid, tag):
    rss = bench.mem_kb([pid], "VmRSS")
    with open(f"/proc/{pid}/smaps_rollup") as f:
        anon = next(int(line.split()[1]) for line in f if line.startswith("Anonymous:"))
    threads = len(os.listdir(f"/proc/{pid}/task"))
    bench.log(f"{tag}: RSS {bench.mb(rss)} MB, anonymous {bench.mb(anon)} MB, "
              f"SQLite connections {sqlite_connections(pid)}, threads {threads}")
    keep = os.environ.get("RSS_SMAPS_DIR")
    if keep:
        os.makedirs(keep, exist_ok=True)
        shutil.copyfile(f"/proc/{pid}/smaps", os.path.join(keep, tag.replace(" ", "-")))
    return smaps_groups(pid)


def main():
    for path in (bench.SWITCHBOARD_BIN, bench.MOCK_BIN):
        if not os.path.exists(path):
            bench.fail(f"{path} missing: make bench-rss builds it")
    bench.TMP = tempfile.mkdtemp(prefix="switchboard-rss-")
    atexit.register(bench.cleanup)
    _mock, mock_port = bench.start_mock("fast", 0)
    sb, port, key, _log, _env = bench.start_single(mock_port)
    snapshot(sb.pid, "fresh")
    for stream in (False, True):
        bench.wrk(port, bench.body(bench.MODEL_FAST, stream), key, bench.CONNS, 2)
    time.sleep(2)
    snapshot(sb.pid, "idle")
    rounds = []
    for n in range(1, ROUNDS + 1):
        for stream in (False, True):
            bench.wrk(port, bench.body(bench.MODEL_FAST, stream), key, bench.CONNS, SECONDS)
        time.sleep(1)
        rounds.append(snapshot(sb.pid, f"round {n}"))
    first, last = rounds[0], rounds[-1]
    print(f"RSS change from round 1 to round {ROUNDS}, by mapping (KB):")
    changes = {g: last.get(g, 0) - first.get(g, 0) for g in set(first) | set(last)}
    for g, d in sorted(changes.items(), key=lambda x: -abs(x[1])):
        if abs(d) >= 64:
            print(f"  {d:+8d}  {g}")
    print(f"  {sum(changes.values()):+8d}  in all")


if __name__ == "__main__":
    main()
