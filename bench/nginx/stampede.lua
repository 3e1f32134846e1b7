--- The stampede phase's application (bench/hrlbench/stampede.py): the cache
-- miss every request of a burst hits at once, guarded by a lock.
--   /stampede?lib=hiredlock|hiredlock-request|resty&key=K&work=S
-- (hiredlock-request: a client made in the handler for every request, as
-- lua-resty-redis teaches; hiredlock: one per worker)
-- lock K; if the cache holds K, unlock and answer "hit"; else work S
-- seconds (ngx.sleep), fill the cache, unlock, answer "miss". The headers
-- X-Arrive and X-Done (hiredlock.core.now(), CLOCK_BOOTTIME seconds, the
-- same clock in every worker) time the request inside nginx; the request
-- that did the work records when it unlocked (K:released in the shared
-- dict), and every other one answers X-After, its answer since then.
local hiredlock = require "hiredlock"
local core = require "hiredlock.core"

local now = core.now
local cache = ngx.shared.stampede_cache

local S = {}

local client -- per worker, on first use

local OPTIONS = { timeout = 0.5, connect_timeout = 1 }

local function hiredlock_lock(key, per_request)
  local c = client
  if per_request then
    c = hiredlock.new(os.getenv("HRL_STAMPEDE_URL"), OPTIONS)
  elseif not c then
    c = hiredlock.new(os.getenv("HRL_STAMPEDE_URL"), OPTIONS)
    client = c
  end
  local lock, err = c:acquire(key, { ttl = 10, timeout = 30 })
  if not lock then
    return nil, err
  end
  return function()
    return lock:release()
  end
end

local function resty_lock(key)
  local lock = require("resty.lock"):new("stampede_locks",
    { exptime = 10, timeout = 30 })
  local elapsed, err = lock:lock(key)
  if not elapsed then
    return nil, err
  end
  return function()
    return lock:unlock()
  end
end

function S.serve()
  local args = ngx.req.get_uri_args()
  local key = args.key
  local arrive = now()
  local lock = args.lib == "resty" and resty_lock or hiredlock_lock
  local unlock, err = lock(key, args.lib == "hiredlock-request")
  if not unlock then
    local body = "lock: " .. tostring(err)
    ngx.status = 500
    ngx.header["Content-Length"] = #body
    return ngx.print(body)
  end
  local body = "hit"
  if not cache:get(key) then
    ngx.sleep(tonumber(args.work) or 0.1)
    cache:set(key, "value")
    body = "miss"
  end
  local ok, uerr = unlock()
  local done = now()
  if body == "miss" then
    cache:set(key .. ":released", done)
  else
    local released = cache:get(key .. ":released")
    if released then
      ngx.header["X-After"] = ("%.6f"):format(done - released)
    end
  end
  ngx.header["X-Arrive"] = ("%.6f"):format(arrive)
  ngx.header["X-Done"] = ("%.6f"):format(done)
  if not ok then
    ngx.status = 500
    body = "unlock: " .. tostring(uerr)
  end
  ngx.header["Content-Length"] = #body
  ngx.print(body)
end

return S
