#!/usr/bin/env python3
"""Switchboard soak test (`make soak`: one hour; `make test-soak`: two and a half minutes).

Starts on 127.0.0.1, in a fresh temp dir:
  - the mock upstream (target/debug/mock-upstream, or target/release with SOAK_RELEASE=1);
  - Switchboard (target/debug/switchboard, or target/release) on a fresh SQLite database, with
    two channels (a normal one, and one whose key `sk-mock-500` makes the mock answer 500) and
    two keys (a limited one, edited while in use, and an unlimited one), made through the API.
Then runs SOAK_SECONDS (3600) of mixed load at SOAK_RATE requests a second (8) from
SOAK_THREADS threads (4): chat non-streamed and streamed, embeddings, calls to the failing
channel (their failures are expected and counted apart), and an edit of the limited key (its
name and quota, PUT /api/token) every SOAK_EDIT_SECONDS (3).

Every SOAK_SAMPLE_SECONDS (5) it samples the server process from /proc: RSS (VmRSS), threads,
open files (/proc/pid/fd) and sockets (the fd links to `socket:`). After the warm-up (the first
20 %), it compares the median of the first samples with the median of the last ones, and fails
(exit 1) when
  - RSS grew by more than max(RSS_SLACK_MB = 10 MB, RSS_SLACK_PCT = 15 %),
  - threads, open files or sockets grew by more than their slack (4, 16, 16),
  - any request failed unexpectedly (anything but 200 on the normal calls; anything but a 5xx
    error on the failing channel; a timeout; a key edit that was refused),
  - after a graceful stop (SIGTERM), the users' and keys' used quota differ from the sum of
    their consume logs, or the consume logs are not exactly the requests served (by request id).
It prints a summary table either way. Standard library only.

`SOAK_RATE=half` (what `make soak` uses) first measures what the server answers through this
client in five seconds of unpaced load from the same threads (those calls are counted and
checked like the others) and runs at half of it.

Knobs (environment): SOAK_SECONDS, SOAK_RATE (a number, or `half`), SOAK_THREADS, SOAK_SAMPLE_SECONDS,
SOAK_EDIT_SECONDS, SOAK_RELEASE=1, SOAK_KEEP_TMP=1 (keep the temp dir with the database and logs).
"""

import atexit
import http.client
import json
import os
import secrets
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET_DIR = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
PROFILE = "release" if os.environ.get("SOAK_RELEASE", "") not in ("", "0") else "debug"
SWITCHBOARD_BIN = os.path.join(TARGET_DIR, PROFILE, "switchboard")
MOCK_BIN = os.path.join(TARGET_DIR, PROFILE, "mock-upstream")

SECONDS = float(os.environ.get("SOAK_SECONDS", "3600"))
# `half`: measure what the server takes through this client (PROBE_SECONDS of unpaced load from
# the same threads, counted and checked like the rest) and run at half of it.
RATE_SETTING = os.environ.get("SOAK_RATE", "8").strip()
try:
    RATE = 0.0 if RATE_SETTING == "half" else float(RATE_SETTING)
except ValueError:
    RATE = -1.0
if RATE_SETTING != "half" and not RATE > 0:
    sys.exit(f"soak: SOAK_RATE must be requests a second above 0, or half (got {RATE_SETTING!r})")
PROBE_SECONDS = 5.0
THREADS = max(1, int(os.environ.get("SOAK_THREADS", "4")))
SAMPLE_SECONDS = float(os.environ.get("SOAK_SAMPLE_SECONDS", "5"))
EDIT_SECONDS = float(os.environ.get("SOAK_EDIT_SECONDS", "3"))
WARMUP = 0.2  # share of the run before the reference level is taken

# Tolerances: the end level (median of the last samples) against the level after the warm-up
# (median of the first samples after it).
RSS_SLACK_MB = float(os.environ.get("SOAK_RSS_SLACK_MB", "10"))
RSS_SLACK_PCT = float(os.environ.get("SOAK_RSS_SLACK_PCT", "15"))
SLACK = {
    "threads": int(os.environ.get("SOAK_THREADS_SLACK", "4")),
    "open files": int(os.environ.get("SOAK_FDS_SLACK", "16")),
    "sockets": int(os.environ.get("SOAK_SOCKETS_SLACK", "16")),
}
TIMEOUT = 30  # seconds a request may take before it counts as hung

MODEL_OK = "gpt-4o-mini"
MODEL_FAIL = "gpt-3.5-turbo"  # served only by the sk-mock-500 channel
MODEL_EMBED = "text-embedding-3-small"

# The mix, in order, repeated by every thread (offset by its number).
MIX = ["chat", "stream", "chat", "embed", "stream", "fail", "chat", "stream", "embed", "chat"]

# The process helpers (start-up wait, clean-up of the processes and the temp dir, failure
# report with the log's tail) are the benchmark's.
sys.path.insert(0, os.path.join(ROOT, "bench"))
import bench as harness  # noqa: E402

harness.NAME, harness.KEEP_TMP_ENV = "soak", "SOAK_KEEP_TMP"
PROCS = harness.PROCS
TMP = None
log, cleanup, on_signal = harness.log, harness.cleanup, harness.on_signal
fail, free_port, wait_http = harness.fail, harness.free_port, harness.wait_http


def api(port, method, path, token, payload=None):
    """A management call as root; returns (ok, data or message)."""
    data = None if payload is None else json.dumps(payload).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method,
                                 headers={"Authorization": token,
                                          "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
            out = json.load(r)
    except urllib.error.HTTPError as e:
        return False, f"HTTP {e.code}: {e.read()[:300]!r}"
    except OSError as e:
        return False, f"{type(e).__name__}: {e}"
    if not out.get("success"):
        return False, str(out)[:300]
    return True, out.get("data")


def api_or_fail(port, method, path, token, payload=None):
    ok, data = api(port, method, path, token, payload)
    if not ok:
        fail(f"{method} {path}: {data}")
    return data


# ---------------------------------------------------------------------------------------------
# the process


def proc_sample(pid):
    rss_kb = threads = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss_kb = int(line.split()[1])
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    fds = sockets = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        fds += 1
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:"):
                sockets += 1
        except OSError:
            pass  # closed meanwhile
    return {"rss_mb": rss_kb / 1024.0, "threads": threads, "open files": fds,
            "sockets": sockets}


# ---------------------------------------------------------------------------------------------
# load


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.count = {}  # kind -> answers
        self.latency = {}  # kind -> seconds
        self.unexpected = []  # (kind, what)
        self.expected_failures = 0
        self.served_ids = []  # request ids of the 200 answers
        self.edits = 0

    def add(self, kind, seconds, status, request_id=None, what=None):
        with self.lock:
            self.count[kind] = self.count.get(kind, 0) + 1
            self.latency.setdefault(kind, []).append(seconds)
            if what is not None:
                self.unexpected.append((kind, what))
            elif kind == "fail":
                self.expected_failures += 1
            elif request_id:
                self.served_ids.append(request_id)


def body_for(kind):
    if kind == "embed":
        return "/v1/embeddings", {"model": MODEL_EMBED, "input": "soak test input"}
    b = {"model": MODEL_FAIL if kind == "fail" else MODEL_OK,
         "messages": [{"role": "user", "content": "hi, soak"}]}
    if kind == "stream":
        b["stream"] = True
    return "/v1/chat/completions", b


def one_request(conn, kind, key):
    """Sends one request on `conn` (kept alive); returns (status, request id, body)."""
    path, payload = body_for(kind)
    conn.request("POST", path, body=json.dumps(payload),
                 headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    r = conn.getresponse()
    text = r.read().decode(errors="replace")
    return r.status, r.getheader("X-Request-Id"), text


def check_answer(kind, status, text):
    """None when the answer is what this kind of call should get, else what is wrong."""
    if kind == "fail":
        # The failing channel: an error in the OpenAI shape with a 5xx status.
        if status >= 500:
            try:
                if json.loads(text).get("error", {}).get("message"):
                    return None
            except ValueError:
                pass
        return f"failing channel answered {status}: {text[:200]!r}"
    if status != 200:
        return f"{status}: {text[:200]!r}"
    if kind == "stream":
        if "data: [DONE]" not in text:
            return f"stream without [DONE]: {text[-200:]!r}"
    elif kind == "embed":
        if '"embedding"' not in text:
            return f"no embedding: {text[:200]!r}"
    elif '"choices"' not in text:
        return f"no choices: {text[:200]!r}"
    return None


def load_thread(n, port, keys, stop, stats, paced=True):
    """Requests at RATE / THREADS a second (`paced`; else as fast as they are answered), on a
    kept-alive connection (a new one now and then, as clients do), until `stop`."""
    interval = THREADS / RATE if paced else 0.0
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    i = n
    next_at = time.monotonic() + interval * n / THREADS
    while not stop.is_set():
        delay = next_at - time.monotonic()
        if delay > 0 and stop.wait(delay):
            break
        next_at = max(next_at + interval, time.monotonic() - interval)
        kind = MIX[i % len(MIX)]
        key = keys[i % len(keys)]
        i += 1
        started = time.monotonic()
        try:
            status, rid, text = one_request(conn, kind, key)
        except (OSError, http.client.HTTPException) as e:
            stats.add(kind, time.monotonic() - started, 0, what=f"{type(e).__name__}: {e}")
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
            continue
        what = check_answer(kind, status, text)
        stats.add(kind, time.monotonic() - started, status, rid, what)
        if what is None and status == 200 and not rid:
            stats.add(kind, 0, status, what="a 200 without X-Request-Id")
        if i % 50 == 0:  # a fresh connection now and then
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    conn.close()


def edit_thread(port, root_token, token_id, stop, stats):
    """Edits the limited key (name and quota) every EDIT_SECONDS while it is in use."""
    n = 0
    while not stop.wait(EDIT_SECONDS):
        n += 1
        started = time.monotonic()
        ok, data = api(port, "PUT", "/api/token", root_token,
                       {"id": token_id, "name": f"soak-edited-{n}",
                        "remain_quota": 1_000_000_000 + n * 1000})
        stats.add("key edit", time.monotonic() - started, 200 if ok else 0,
                  what=None if ok else f"PUT /api/token: {data}")
        if ok:
            with stats.lock:
                stats.edits += 1


def sampler_thread(pid, started, stop, samples):
    while True:
        try:
            s = proc_sample(pid)
        except OSError:
            return  # the process is gone (checked elsewhere)
        s["t"] = time.monotonic() - started
        samples.append(s)
        if stop.wait(SAMPLE_SECONDS):
            return


# ---------------------------------------------------------------------------------------------
# checks


def pct(values, p):
    if not values:
        return 0.0
    v = sorted(values)
    k = (len(v) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def growth_checks(samples):
    """Rows (metric, warm-up level, end level, growth, limit, ok) from the samples after warm-up."""
    after = [s for s in samples if s["t"] >= WARMUP * SECONDS]
    if len(after) < 6:
        fail(f"only {len(after)} samples after the warm-up: run longer or sample more often")
    k = max(3, len(after) // 10)
    first, last = after[:k], after[-k:]
    rows = []
    level = lambda xs, m: statistics.median(x[m] for x in xs)  # noqa: E731
    r0, r1 = level(first, "rss_mb"), level(last, "rss_mb")
    limit = max(RSS_SLACK_MB, r0 * RSS_SLACK_PCT / 100.0)
    rows.append(("RSS (MB)", r0, r1, r1 - r0, f"+{limit:.1f}", r1 - r0 <= limit))
    for m in ("threads", "open files", "sockets"):
        a, b = level(first, m), level(last, m)
        rows.append((m, a, b, b - a, f"+{SLACK[m]}", b - a <= SLACK[m]))
    return rows, k, len(after)


def books(db_path):
    """Used quota against the consume logs, per user and per key, from the stopped server's
    database. Returns (problems, the served-by-log request ids, sum of the logs)."""
    c = sqlite3.connect(db_path)
    problems = []
    logs = {uid: (n, q) for uid, n, q in c.execute(
        "SELECT user_id, COUNT(*), COALESCE(SUM(quota), 0) FROM logs WHERE type = 2 "
        "GROUP BY user_id")}
    for uid, name, used in c.execute("SELECT id, username, used_quota FROM users"):
        n, q = logs.get(uid, (0, 0))
        if used != q:
            problems.append(f"user {name}: used_quota {used} != {q}, the sum of its {n} logs")
    by_key = {tid: q for tid, q in c.execute(
        "SELECT token_id, COALESCE(SUM(quota), 0) FROM logs WHERE type = 2 GROUP BY token_id")}
    for tid, name, used in c.execute("SELECT id, name, used_quota FROM tokens"):
        if used != by_key.get(tid, 0):
            problems.append(f"key {name}: used_quota {used} != {by_key.get(tid, 0)}, "
                            f"the sum of its logs")
    ids = [r[0] for r in c.execute("SELECT request_id FROM logs WHERE type = 2")]
    total = sum(q for _, q in logs.values())
    c.close()
    return problems, ids, total


# ---------------------------------------------------------------------------------------------


def main():
    global TMP, RATE
    for path in (SWITCHBOARD_BIN, MOCK_BIN):
        if not os.access(path, os.X_OK):
            flag = " --release" if PROFILE == "release" else ""
            fail(f"{path} missing: cargo build{flag} -p switchboard -p switchboard-mock-upstream")
    if SECONDS < 10:
        fail("SOAK_SECONDS must be at least 10")
    TMP = harness.TMP = tempfile.mkdtemp(prefix="switchboard-soak-")
    atexit.register(cleanup)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    mock_log = os.path.join(TMP, "mock.log")
    mock = subprocess.Popen([MOCK_BIN], stdout=subprocess.PIPE, stderr=open(mock_log, "w"),
                            env=dict(os.environ, MOCK_PORT="0", MOCK_RECORD="0"), text=True)
    PROCS.append(mock)
    line = mock.stdout.readline().strip()  # "listening on 127.0.0.1:PORT"
    if not line.startswith("listening on "):
        fail(f"mock-upstream did not start: {line!r}", mock_log)
    mock_port = int(line.rsplit(":", 1)[1])

    port = free_port()
    root_token = "soak-" + secrets.token_hex(16)
    db_path = os.path.join(TMP, "switchboard.db")
    sb_log = os.path.join(TMP, "switchboard.log")
    env = dict(os.environ, PORT=str(port), HOST="127.0.0.1", SQL_DSN="sqlite://" + db_path,
               DATA_DIR=TMP, INITIAL_ROOT_ACCESS_TOKEN=root_token,
               INITIAL_ROOT_PASSWORD=secrets.token_hex(12), SESSION_SECRET=secrets.token_hex(32),
               GLOBAL_API_RATE_LIMIT="0", CRITICAL_RATE_LIMIT="0", LOG_LEVEL="warn")
    for k in ("FRONTEND_DIR", "REDIS_CONN_STRING", "RUST_LOG"):
        env.pop(k, None)
    sb = subprocess.Popen([SWITCHBOARD_BIN], cwd=TMP, env=env, stdout=open(sb_log, "w"),
                          stderr=subprocess.STDOUT)
    PROCS.append(sb)
    wait_http(f"http://127.0.0.1:{port}/api/status", timeout=60, proc=sb, logfile=sb_log)

    upstream = f"http://127.0.0.1:{mock_port}"
    api_or_fail(port, "POST", "/api/channel", root_token,
                {"name": "soak-ok", "type": 1, "key": "sk-mock-ok", "base_url": upstream,
                 "models": f"{MODEL_OK},{MODEL_EMBED}", "group": "default"})
    api_or_fail(port, "POST", "/api/channel", root_token,
                {"name": "soak-500", "type": 1, "key": "sk-mock-500", "base_url": upstream,
                 "models": MODEL_FAIL, "group": "default"})
    limited = api_or_fail(port, "POST", "/api/token", root_token,
                          {"name": "soak-limited", "remain_quota": 1_000_000_000})
    unlimited = api_or_fail(port, "POST", "/api/token", root_token,
                            {"name": "soak-unlimited", "unlimited_quota": True})
    keys = [limited["key"], unlimited["key"]]
    stats = Stats()
    if RATE_SETTING == "half":
        probe_stop = threading.Event()
        probe = [threading.Thread(target=load_thread, args=(n, port, keys, probe_stop, stats,
                                                            False), daemon=True)
                 for n in range(THREADS)]
        probe_started = time.monotonic()
        for t in probe:
            t.start()
        time.sleep(PROBE_SECONDS)
        probe_stop.set()
        for t in probe:
            t.join()
        took = time.monotonic() - probe_started
        capacity = sum(stats.count.values()) / took
        RATE = max(1.0, capacity / 2)
        log(f"capacity through this client ({THREADS} threads, unpaced, {took:.1f} s): "
            f"{capacity:.0f} req/s; the soak runs at half: {RATE:.0f} req/s")
    log(f"{PROFILE} build on :{port} (SQLite in {TMP}), mock upstream on :{mock_port}; "
        f"{SECONDS:.0f} s at {RATE:g} req/s from {THREADS} threads, a key edit every "
        f"{EDIT_SECONDS:g} s, a sample every {SAMPLE_SECONDS:g} s")

    samples = []
    stop = threading.Event()
    started = time.monotonic()
    threads = [threading.Thread(target=sampler_thread, args=(sb.pid, started, stop, samples),
                                daemon=True),
               threading.Thread(target=edit_thread,
                                args=(port, root_token, limited["id"], stop, stats), daemon=True)]
    threads += [threading.Thread(target=load_thread, args=(n, port, keys, stop, stats),
                                 daemon=True) for n in range(THREADS)]
    for t in threads:
        t.start()
    next_report = started + max(60.0, SECONDS / 10)
    while time.monotonic() - started < SECONDS:
        time.sleep(min(1.0, max(0.0, SECONDS - (time.monotonic() - started))))
        if sb.poll() is not None:
            stop.set()
            fail(f"the server exited with {sb.returncode} during the run", sb_log)
        if time.monotonic() >= next_report and samples:
            s = samples[-1]
            with stats.lock:
                n, bad = sum(stats.count.values()), len(stats.unexpected)
            log(f"{s['t']:.0f} s: {n} requests, {bad} unexpected failures, RSS "
                f"{s['rss_mb']:.1f} MB, {s['threads']} threads, {s['open files']} files, "
                f"{s['sockets']} sockets")
            next_report += max(60.0, SECONDS / 10)
    stop.set()
    for t in threads:
        t.join(timeout=TIMEOUT + 5)
    final = proc_sample(sb.pid)

    # A graceful stop writes every consumption record; then the books are read from the file.
    sb.send_signal(signal.SIGTERM)
    try:
        code = sb.wait(timeout=60)
    except subprocess.TimeoutExpired:
        fail("the server did not stop within 60 s of SIGTERM", sb_log)
    problems, logged_ids, logged_sum = books(db_path)

    # --- summary ----------------------------------------------------------------------------
    rows, k, n_after = growth_checks(samples)
    failures = []
    print()
    print(f"{'calls':<12} {'count':>8} {'p50 ms':>9} {'p99 ms':>9} {'max ms':>9}")
    for kind in ("chat", "stream", "embed", "fail", "key edit"):
        lat = stats.latency.get(kind, [])
        print(f"{kind:<12} {stats.count.get(kind, 0):>8} {pct(lat, 50) * 1000:>9.1f} "
              f"{pct(lat, 99) * 1000:>9.1f} {max(lat, default=0) * 1000:>9.1f}")
    print(f"expected failures (the sk-mock-500 channel): {stats.expected_failures}; "
          f"unexpected: {len(stats.unexpected)}; key edits: {stats.edits}")
    print()
    print(f"{'process':<12} {'warm-up':>9} {'end':>9} {'growth':>9} {'limit':>9}  verdict"
          f"   (medians of the first/last {k} of {n_after} samples after {WARMUP:.0%})")
    for metric, a, b, g, limit, ok in rows:
        print(f"{metric:<12} {a:>9.1f} {b:>9.1f} {g:>+9.1f} {limit:>9}  {'ok' if ok else 'GREW'}")
        if not ok:
            failures.append(f"{metric} grew from {a:.1f} to {b:.1f} (limit {limit})")
    print(f"{'(final)':<12} RSS {final['rss_mb']:.1f} MB, {final['threads']} threads, "
          f"{final['open files']} files, {final['sockets']} sockets")
    served = set(stats.served_ids)
    print()
    print(f"books: {len(logged_ids)} consume logs summing to {logged_sum}, "
          f"{len(stats.served_ids)} requests served; used quota "
          f"{'equals' if not problems else 'DIFFERS FROM'} the logs")
    print()

    if code != 0:
        failures.append(f"the server exited with {code} after SIGTERM")
    for kind, what in stats.unexpected[:10]:
        failures.append(f"unexpected failure ({kind}): {what}")
    if len(stats.unexpected) > 10:
        failures.append(f"... and {len(stats.unexpected) - 10} more unexpected failures")
    if stats.expected_failures == 0:
        failures.append("no call reached the failing channel")
    if stats.edits == 0:
        failures.append("no key edit was made")
    failures += problems
    if len(served) != len(stats.served_ids):
        failures.append("a request id was given to two answers")
    if len(logged_ids) != len(set(logged_ids)):
        failures.append("a request was logged twice")
    if set(logged_ids) != served:
        failures.append(f"consume logs and requests served differ: "
                        f"{len(served - set(logged_ids))} served without a log, "
                        f"{len(set(logged_ids) - served)} logs of no request served")
    if failures:
        for f in failures:
            print(f"soak: FAILED: {f}", file=sys.stderr)
        sys.exit(1)
    log(f"passed ({SECONDS:.0f} s, {sum(stats.count.values())} calls)")


if __name__ == "__main__":
    main()
