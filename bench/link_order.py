#!/usr/bin/env python3
"""Writes crates/server/relay-path.ld: the functions the server runs at start-up and on the relay
path, laid out together at the start of the binary's code (`make link-order`; bench/README.md,
"Code layout").

The kernel maps a program's code 64 KiB at a time around each page it first runs, so a start-up
that calls a function here and there through 21 MB of code kept 17 MB of it resident, idle, for
the life of the process. Laid out together, what runs is a few MB.

How: Switchboard's release binary runs under `valgrind --tool=callgrind` (mangled names) as
`bench.py` starts it (SQLite, one OpenAI channel on the mock, one key); a dump after start-up and
another after non-streamed and streamed requests name every function that ran. The relay path's
come first (most instructions first), then start-up's, at the start of `.text` (the rest of the
code follows in the linker's own order; one `.text`, as valgrind only names functions inside
sections it knows). Each becomes a pattern for the section
the compiler puts it in (`-ffunction-sections`, Rust's default), with the hash in a mangled name
(`17h<16 hex digits>E`, which changes with the build's profile, features and dependencies) as a
wildcard, so the script stays good across builds; a function renamed since only falls back to
the linker's own order. A generic function's instantiations share such a pattern: where it would
match more than LINK_ORDER_MAX_SHARED (4) functions, the instantiations that ran are listed by
their exact names, which match builds made as `make release` makes them (the profile, the
features of `-p switchboard` alone, this Cargo.lock and toolchain; `make link-order` builds so).
`crates/server/build.rs` passes the script to release links on Linux.

Environment: as bench.py (CARGO_TARGET_DIR, BENCH_NO_BUILD). Output: LINK_ORDER_OUT (default
crates/server/relay-path.ld).
"""
import atexit
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the harness: processes, API calls)
import instructions  # noqa: E402  (the request loop)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.environ.get("LINK_ORDER_OUT", os.path.join(ROOT, "crates", "server", "relay-path.ld"))
REQUESTS = int(os.environ.get("LINK_ORDER_REQUESTS", "1500"))
HASH = re.compile(r"17h[0-9a-f]{16}E$")
# Characters a pattern in a linker script may hold unquoted (mangled names and C names do).
PLAIN = re.compile(r"^[A-Za-z0-9_.$]+$")
# A pattern that matches more functions than this lists the ones that ran by their exact names.
MAX_SHARED = int(os.environ.get("LINK_ORDER_MAX_SHARED", "4"))


def functions(dump, binary):
    """Self instructions per function of `binary` in one callgrind dump (uncompressed names)."""
    cost = collections.Counter()
    ob = fn = None
    for line in open(dump, errors="replace"):
        if line.startswith("ob="):
            ob = line[3:].strip()
        elif line.startswith("fn="):
            fn = line[3:].strip() if ob == binary else None
        elif fn and line[:1].isdigit():
            parts = line.split()
            if len(parts) >= 2:
                cost[fn] += int(parts[1])
    return cost


def pattern(name):
    name = re.sub(r"'\d+$", "", name)  # callgrind's mark of a recursive call
    if not PLAIN.match(name):
        return None
    return ".text." + HASH.sub("17h*E", name)


def main():
    valgrind = shutil.which("valgrind")
    control = shutil.which("callgrind_control")
    if not (valgrind and control):
        bench.fail("valgrind is missing (Debian: apt-get install valgrind)")
    bench.TMP = tempfile.mkdtemp(prefix="switchboard-order-")
    atexit.register(bench.cleanup)
    mock, mock_port = bench.start_mock("fast", 0)
    sb, port, key, sb_log, env = bench.start_single(
        mock_port,
        wrapper=(valgrind, "--tool=callgrind", "--dump-instr=no", "--demangle=no",
                 "--compress-strings=no", "--compress-pos=no"),
        timeout=600)
    cenv = dict(os.environ, HOST=env["HOST"])
    time.sleep(2)
    subprocess.run([control, "-d", str(sb.pid)], check=True, capture_output=True, env=cenv)
    for stream in (False, True):
        errors = instructions.load(port, bench.body(bench.MODEL_FAST, stream), key, REQUESTS, 8)
        if errors:
            bench.fail(f"requests failed: {errors[:3]}", sb_log)
    time.sleep(2)  # the consume log's flush
    subprocess.run([control, "-d", str(sb.pid)], check=True, capture_output=True, env=cenv)
    dumps = sorted((os.path.join(bench.TMP, f) for f in os.listdir(bench.TMP)
                    if f.startswith(f"callgrind.out.{sb.pid}.")), key=os.path.getmtime)
    if len(dumps) < 2:
        bench.fail(f"callgrind wrote {len(dumps)} dumps, not 2", sb_log)
    binary = os.path.realpath(bench.SWITCHBOARD_BIN)
    start_up, relay = functions(dumps[0], binary), functions(dumps[1], binary)
    if not relay:
        bench.fail(f"no function of {binary} in the dumps")
    # How many functions of the binary each pattern would match: a generic function's
    # instantiations all share one (the types are in the hash); those that ran are named exactly
    # instead, which only matches a build of the same profile, features and dependencies
    # (`make release`'s), and elsewhere leaves them to the linker's order.
    symbols = [line.split()[-1] for line in subprocess.run(
        ["nm", "--defined-only", binary], capture_output=True, text=True,
        check=True).stdout.splitlines() if line.strip()]
    matches = collections.Counter(pattern(s) for s in symbols)
    seen = set()
    lines = []
    for name in [f for f, _ in relay.most_common()] + [f for f, _ in start_up.most_common()]:
        p = pattern(name)
        if p and matches[p] > MAX_SHARED:
            p = ".text." + re.sub(r"'\d+$", "", name)
        if p and p not in seen:
            seen.add(p)
            lines.append(f"    *({p})")
    with open(OUT, "w") as out:
        out.write("/* Written by bench/link_order.py (make link-order): the functions that run on the\n"
                  "   relay path, then at start-up, laid out together (bench/README.md, \"Code layout\").\n"
                  "   crates/server/build.rs passes it to release links on Linux. */\n"
                  "SECTIONS {\n  .text : {\n")
        out.write("\n".join(lines))
        out.write("\n  }\n} INSERT AFTER .init;\n")
    print(f"{OUT}: {len(lines)} functions ({len(relay)} on the relay path, "
          f"{len(set(start_up) - set(relay))} more at start-up)")


if __name__ == "__main__":
    main()
