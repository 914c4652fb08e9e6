-- wrk script of versus.py: 80% GET <BENCH_PREFIX><random id from $BENCH_IDS>, 20% POST a
-- small document to $BENCH_POST_PATH.
local ids = {}
local prefix = os.getenv("BENCH_PREFIX") or "/items/"
local post_path = os.getenv("BENCH_POST_PATH") or "/items"
local body = '{"name":"bench item","price":12.5,"tags":["x","y"],"created":"2024-06-01T12:00:00Z"}'
function init(args)
  for line in io.lines(os.getenv("BENCH_IDS")) do
    if #line > 0 then ids[#ids + 1] = line end
  end
  math.randomseed(os.time() + math.floor(os.clock() * 1e6) + tonumber(tostring({}):match("0x(%x+)") or "0", 16) % 100000)
end
local hdrs = nil
local function json_headers()
  -- a copy of the -H headers (a table passed to wrk.format replaces them) plus Content-Type
  if not hdrs then
    hdrs = {}
    for k, v in pairs(wrk.headers) do hdrs[k] = v end
    hdrs["Content-Type"] = "application/json"
  end
  local h = {}
  for k, v in pairs(hdrs) do h[k] = v end
  return h
end
function request()
  if math.random(5) == 1 then
    return wrk.format("POST", post_path, json_headers(), body)
  end
  return wrk.format("GET", prefix .. ids[math.random(#ids)])
end
