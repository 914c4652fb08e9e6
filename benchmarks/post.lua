-- wrk script of versus.py: POST a small JSON document (BENCH_BODY overrides the body,
-- BENCH_POST_PATH the path).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = os.getenv("BENCH_BODY") or '{"name":"bench item","price":12.5,"tags":["x","y"],"created":"2024-06-01T12:00:00Z"}'
local p = os.getenv("BENCH_POST_PATH")
if p then wrk.path = p end
