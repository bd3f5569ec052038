-- wrk script for `make bench`: POSTs BENCH_BODY with `Authorization: Bearer BENCH_KEY` and, when
-- done, prints one JSON line (prefixed `BENCH_JSON `) with counts, errors and latency percentiles
-- in microseconds. Any status >= 400 is counted by wrk in errors.status.
wrk.method = "POST"
wrk.body = os.getenv("BENCH_BODY") or '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. (os.getenv("BENCH_KEY") or "sk-bench")

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"bytes":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"min":%d,"mean":%.1f,"p50":%d,"p90":%d,"p99":%d,"max":%d}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency.min, latency.mean, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max))
end
