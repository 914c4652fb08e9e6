-- wrk script of versus.py: PATCH <BENCH_PREFIX><id> with a small JSON body (BENCH_BODY
-- overrides it), a random id from the file $BENCH_IDS (one id per line).
local ids = {}
local prefix = os.getenv("BENCH_PREFIX") or "/items/"
local body = os.getenv("BENCH_BODY") or '{"price": 42.5}'
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
  return wrk.format("PATCH", prefix .. ids[math.random(#ids)], json_headers(), body)
end
