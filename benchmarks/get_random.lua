-- wrk script of versus.py: GET <BENCH_PREFIX><id><BENCH_SUFFIX> with a random id from the
-- file $BENCH_IDS (one id per line), so that reads spread over every stored document.
local ids = {}
local prefix = os.getenv("BENCH_PREFIX") or "/items/"
local suffix = os.getenv("BENCH_SUFFIX") or ""
function init(args)
  for line in io.lines(os.getenv("BENCH_IDS")) do
    if #line > 0 then ids[#ids + 1] = line end
  end
  math.randomseed(os.time() + math.floor(os.clock() * 1e6) + tonumber(tostring({}):match("0x(%x+)") or "0", 16) % 100000)
end
function request()
  return wrk.format("GET", prefix .. ids[math.random(#ids)] .. suffix)
end
