#!/usr/bin/env python3
"""Log queries on a large table (`make bench-logs`, also run by `make bench`).

Fills the `logs` table of a fresh SQLite database (made by Switchboard's own migrations) with
BENCH_LOG_ROWS rows (default 10,000,000) spread over 90 days, 200 users, 1,000 keys, 40 channels
and 60 models, then starts the release binary on it and times the log screen's queries through
the HTTP API, as the console sends them: first pages, filters, keyset paging deep into the
table, the statistics of a day and of a month, a user's own logs and the dashboard. Each query
runs BENCH_LOG_REPEAT times (default 15) after one warm-up; p50 and p95 are reported.

Writes bench/results/logs-latest.json and prints a table. Exits non-zero only when the setup
fails. Standard library only. BENCH_LOG_DB=path reuses (or keeps) a filled database.
"""

import json
import os
import secrets
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET_DIR = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
BIN = os.path.join(TARGET_DIR, "release", "switchboard")
ROWS = int(os.environ.get("BENCH_LOG_ROWS", "10000000"))
REPEAT = int(os.environ.get("BENCH_LOG_REPEAT", "15"))
OUT = os.environ.get("BENCH_LOG_OUT") or os.path.join(ROOT, "bench", "results", "logs-latest.json")
DAYS = 90
USERS = 200
TOKENS = 1000
CHANNELS = 40
MODELS = 60
# A query whose p95 stays under this is "fast" (the console's list feels instant).
GOAL_P95_MS = 200


def log(msg):
    print(f"bench-logs: {msg}", flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(db, token, logf):
    port = free_port()
    env = dict(os.environ, PORT=str(port), HOST="127.0.0.1", SQL_DSN=f"sqlite://{db}",
               INITIAL_ROOT_ACCESS_TOKEN=token, INITIAL_ROOT_PASSWORD=secrets.token_hex(12),
               GLOBAL_API_RATE_LIMIT="0", LOG_LEVEL="warn",
               SESSION_SECRET="bench-logs-secret-0123456789abcdef")
    p = subprocess.Popen([BIN], cwd=os.path.dirname(db), env=env, stdout=open(logf, "a"),
                         stderr=subprocess.STDOUT)
    deadline = time.time() + 60
    while time.time() < deadline:
        if p.poll() is not None:
            sys.exit(f"bench-logs: switchboard exited: see {logf}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=1).read()
            return p, port
        except (urllib.error.URLError, OSError):
            time.sleep(0.2)
    p.kill()
    sys.exit("bench-logs: switchboard did not start")


def stop(p):
    p.terminate()
    try:
        p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()


def call(port, method, path, token, payload=None):
    data = json.dumps(payload).encode() if payload is not None else None
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method,
                                 headers={"Authorization": token,
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=300) as r:
        body = json.loads(r.read())
    if not body.get("success"):
        sys.exit(f"bench-logs: {method} {path} failed: {body}")
    return body["data"]


def fill(db, now):
    """Bulk-loads ROWS logs: indexes dropped, rows generated in SQL, indexes rebuilt."""
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=OFF")
    con.execute("PRAGMA temp_store=MEMORY")
    con.execute("PRAGMA cache_size=-1000000")
    indexes = con.execute(
        "SELECT name, sql FROM sqlite_master WHERE type='index' AND tbl_name='logs' AND sql IS NOT NULL"
    ).fetchall()
    for name, _ in indexes:
        con.execute(f'DROP INDEX "{name}"')
    start = now - DAYS * 86400
    step = DAYS * 86400 / ROWS
    t0 = time.time()
    # Every 50th row is a top-up (type 1), the rest consumption (type 2); users, keys, channels
    # and models follow the row number so every filter value has rows throughout the period.
    con.execute(f"""
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {ROWS})
        INSERT INTO logs (created_at, "type", user_id, username, token_id, token_name,
                          channel_id, model_name, group_name, quota, prompt_tokens,
                          completion_tokens, use_time_ms, first_response_ms, is_stream,
                          source_ip, request_id, content, metadata)
        SELECT {start} + CAST(i * {step} AS INTEGER),
               CASE WHEN i % 50 = 0 THEN 1 ELSE 2 END,
               1000 + i % {USERS}, 'user' || (i % {USERS}),
               10000 + i % {TOKENS}, 'key' || (i % {TOKENS}),
               1 + i % {CHANNELS}, 'model-' || (i % {MODELS}), 'default',
               100 + i % 5000, 10 + i % 2000, i % 800, 200 + i % 3000, 50 + i % 500,
               i % 3 = 0, '10.0.' || (i % 250) || '.' || (i % 199), 'bench-' || i, '', ''
        FROM n
    """)
    con.commit()
    # The daily rollup, as the relay writes it beside every consume log.
    con.execute("""
        INSERT INTO statistics (day, user_id, channel_id, model_name, request_count, quota,
                                prompt_tokens, completion_tokens, request_time_ms)
        SELECT created_at - created_at % 86400, user_id, channel_id, model_name, COUNT(*),
               SUM(quota), SUM(prompt_tokens), SUM(completion_tokens), SUM(use_time_ms)
        FROM logs WHERE "type" = 2
        GROUP BY created_at - created_at % 86400, user_id, channel_id, model_name
    """)
    con.commit()
    log(f"{ROWS:,} rows and their daily rollup inserted in {time.time() - t0:.0f} s; rebuilding {len(indexes)} indexes")
    t0 = time.time()
    for _, sql in indexes:
        con.execute(sql)
    con.commit()
    con.execute("ANALYZE")
    con.commit()
    con.close()
    log(f"indexes rebuilt in {time.time() - t0:.0f} s")


def timed(port, path, token):
    call(port, "GET", path, token)  # warm-up
    ms = []
    data = None
    for _ in range(REPEAT):
        t = time.perf_counter()
        data = call(port, "GET", path, token)
        ms.append((time.perf_counter() - t) * 1000)
    ms.sort()
    p95 = ms[min(len(ms) - 1, int(round(0.95 * (len(ms) - 1))))]
    return statistics.median(ms), p95, data


def main():
    if not os.path.exists(BIN):
        sys.exit(f"bench-logs: {BIN} is missing: cargo build --release -p switchboard")
    keep = os.environ.get("BENCH_LOG_DB")
    tmp = tempfile.mkdtemp(prefix="sb-logs-")
    db = keep or os.path.join(tmp, "logs.db")
    logf = os.path.join(tmp, "switchboard.log")
    token = "bench-logs-root-token-" + secrets.token_hex(8)
    now = int(time.time())
    try:
        fresh = not os.path.exists(db)
        if not fresh:
            # A kept database: the root token must be ours again.
            con = sqlite3.connect(db)
            rows = con.execute("SELECT COUNT(*) FROM logs").fetchone()[0]
            con.close()
            if rows < ROWS:
                sys.exit(f"bench-logs: {db} holds {rows:,} logs, fewer than {ROWS:,}; remove it")
            now = int(sqlite3.connect(db).execute("SELECT MAX(created_at) FROM logs").fetchone()[0])
        p, port = start(db, token, logf)
        if fresh:
            stop(p)
            log(f"filling {db} with {ROWS:,} logs (takes a few minutes)")
            fill(db, now)
            p, port = start(db, token, logf)
        else:
            token = os.environ.get("BENCH_LOG_TOKEN", token)
        try:
            day = now - 86400
            month = now - 30 * 86400
            newest = call(port, "GET", "/api/log?page=1&size=10", token)
            deep_id = newest["data"][0]["id"] - ROWS // 2
            queries = [
                ("newest page, with total count", "/api/log?page=1&size=10"),
                ("newest page, keyset (no count)", "/api/log?size=10&before_id=9223372036854775807"),
                ("keyset page in the middle of the table", f"/api/log?size=10&before_id={deep_id}"),
                ("page 1000 (offset paging)", "/api/log?page=1000&size=10"),
                ("filter: one model", "/api/log?page=1&size=10&model_name=model-7"),
                ("filter: one user", "/api/log?page=1&size=10&user_id=1042"),
                ("filter: one key name", "/api/log?page=1&size=10&token_name=key123"),
                ("filter: one channel", "/api/log?page=1&size=10&channel=5"),
                ("filter: top-ups only", "/api/log?page=1&size=10&type=1"),
                ("filter: last day", f"/api/log?page=1&size=10&start_timestamp={day}"),
                ("filter: user + model + month", f"/api/log?page=1&size=10&user_id=1042&model_name=model-42&start_timestamp={month}"),
                ("stats: last day", f"/api/log/stat?start_timestamp={day}"),
                ("stats: one user, last month", f"/api/log/stat?user_id=1042&start_timestamp={month}"),
                ("stats: last month (all users)", f"/api/log/stat?start_timestamp={month}"),
                ("analytics: last 30 days (rollup)", f"/api/analytics/statistics?start_timestamp={month}&end_timestamp={now}"),
            ]
            # The statistics must be right, not only fast: compare with SQL over the raw logs.
            con = sqlite3.connect(db)
            want = con.execute(
                'SELECT COUNT(*), SUM(quota) FROM logs WHERE "type" = 2 AND created_at >= ?', (month,)
            ).fetchone()
            con.close()
            got = call(port, "GET", f"/api/log/stat?start_timestamp={month}", token)
            if (got["request_count"], got["quota"]) != (want[0], want[1]):
                sys.exit(f"bench-logs: wrong statistics: API {got}, logs {want}")
            results = []
            log(f"timing {len(queries)} queries, {REPEAT} runs each")
            for name, path in queries:
                p50, p95, data = timed(port, path, token)
                total = data.get("total_count") if isinstance(data, dict) else None
                rows = data.get("data") if isinstance(data, dict) else None
                if isinstance(rows, list) and not rows:
                    sys.exit(f"bench-logs: {path} found nothing: the measurement would be empty")
                results.append({"query": name, "path": path, "p50_ms": round(p50, 1),
                                "p95_ms": round(p95, 1), "total_count": total,
                                "fast": p95 <= GOAL_P95_MS})
        finally:
            stop(p)
        width = max(len(r["query"]) for r in results)
        print(f"\nLog queries on {ROWS:,} rows (SQLite, {REPEAT} runs each; goal p95 <= {GOAL_P95_MS} ms)")
        print(f"{'query':<{width}}  {'p50 ms':>8}  {'p95 ms':>8}")
        for r in results:
            mark = "" if r["fast"] else "  SLOW"
            print(f"{r['query']:<{width}}  {r['p50_ms']:>8.1f}  {r['p95_ms']:>8.1f}{mark}")
        os.makedirs(os.path.dirname(OUT), exist_ok=True)
        with open(OUT, "w") as f:
            json.dump({"rows": ROWS, "repeat": REPEAT, "goal_p95_ms": GOAL_P95_MS,
                       "backend": "sqlite", "results": results,
                       "cores": os.cpu_count(), "time": int(time.time())}, f, indent=2)
        log(f"wrote {OUT}")
    finally:
        if not keep and not os.environ.get("BENCH_KEEP_TMP"):
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
