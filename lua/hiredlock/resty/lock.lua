--- lua-resty-lock's API over hiredlock: the same calls, options and error
-- strings, but the lock lives in Redis, so it holds across every nginx
-- worker on every host (and in plain Lua too). Switch with one line:
--
--   local resty_lock = require "hiredlock.resty.lock"  -- was "resty.lock"
--   local lock, err = resty_lock:new("my_locks", { exptime = 30, timeout = 5 })
--   local elapsed, err = lock:lock("key")   -- 0 at once, seconds waited, or
--   ...                                     -- nil, "timeout" | "locked" | ...
--   lock:unlock()                           -- 1 | nil, "unlocked" | ...
--
-- The masters are set once per worker: resty_lock.configure(urls_or_client,
-- opts) from init_by_lua* (hiredlock.new's arguments, or a client it made),
-- else HIREDLOCK_URLS / HIREDLOCK_URL (comma separated; nginx passes them
-- to workers only when nginx.conf says `env HIREDLOCK_URL;`), else
-- redis://127.0.0.1:6379. The dictionary name is a namespace: the lock
-- "key" of new("my_locks") is the hiredlock lock named "my_locks:key" (no
-- lua_shared_dict is needed). What differs from lua-resty-lock, and why, is
-- in docs/MIGRATING.md: a waiter is woken by the release instead of polling
-- (step, ratio and max_step are accepted and unused), exptime = 0 is a
-- managed lease rather than a lock that never expires, and garbage
-- collection never releases a lock.
local hiredlock = require "hiredlock"
local core = require "hiredlock.core"

local type, tostring, error, setmetatable, pairs =
  type, tostring, error, setmetatable, pairs
local min, max, floor = math.min, math.max, math.floor
local getenv = os.getenv
local now = core.now

local _M = { _VERSION = "hiredlock " .. core.VERSION }
local mt = { __index = _M }

local DEFAULT_URL = "redis://127.0.0.1:6379"
local DEFAULT_EXPTIME = 30 -- lua-resty-lock's
local DEFAULT_TIMEOUT = 5
local LEASE_TTL = 30 -- exptime = 0: a lease of this TTL, renewed while held

-- The worker's client: configure()'s, or made from the environment on
-- first use.
local client

local function split(list)
  local urls = {}
  for url in list:gmatch("[^,%s]+") do
    urls[#urls + 1] = url
  end
  return urls
end

local function urls_from_env()
  for _, var in pairs({ "HIREDLOCK_URLS", "HIREDLOCK_URL" }) do
    local urls = split(getenv(var) or "")
    if #urls > 0 then
      return urls
    end
  end
  return { DEFAULT_URL }
end

local function is_client(v)
  return type(v) == "table" and v._handle ~= nil
    and type(v.acquire) == "function"
end

--- resty_lock.configure(urls_or_client [, opts]) -> true
-- The masters of this module's locks: hiredlock.new(urls, opts), or a
-- client hiredlock.new made. Call it from init_by_lua* (each worker gets a
-- copy) or init_worker_by_lua*; bad arguments raise, as hiredlock.new's.
-- configure(nil) goes back to the environment (HIREDLOCK_URL(S)).
function _M.configure(urls_or_client, opts)
  if urls_or_client == nil then
    client = nil
  elseif is_client(urls_or_client) then
    client = urls_or_client
  else
    client = hiredlock.new(urls_or_client, opts)
  end
  return true
end

local function get_client()
  if not client then
    client = hiredlock.new(urls_from_env())
  end
  return client
end

local function number_opt(opts, name)
  local v = opts[name]
  if v ~= nil and type(v) ~= "number" then
    error(("bad argument #2 to 'new' (%s must be a number, got %s)"):format(
      name, type(v)), 3)
  end
  return v
end

--- resty_lock:new(dict_name [, opts]) -> lock | nil, "dictionary not found"
-- opts: exptime (seconds the lock lives in Redis, default 30; 0: a managed
-- lease renewed while held), timeout (seconds lock() waits, default 5, at
-- most exptime; 0: one attempt), step, ratio, max_step (lua-resty-lock's
-- polling schedule: accepted, unused). No I/O.
function _M.new(_, dict_name, opts)
  if type(dict_name) ~= "string" or dict_name == "" then
    return nil, "dictionary not found"
  end
  if opts ~= nil and type(opts) ~= "table" then
    error(("bad argument #2 to 'new' (table expected, got %s)"):format(
      type(opts)), 2)
  end
  opts = opts or {}
  local exptime = number_opt(opts, "exptime") or DEFAULT_EXPTIME
  local timeout = number_opt(opts, "timeout")
  local step = number_opt(opts, "step")
  if exptime < 0 or exptime ~= exptime then
    error(("bad argument #2 to 'new' (exptime must be 0 or more, got %s)")
      :format(tostring(exptime)), 2)
  end
  if timeout then
    if exptime > 0 then
      timeout = min(timeout, exptime) -- as lua-resty-lock: by then it expired
    end
    if step then
      step = min(step, timeout)
    end
  end
  return setmetatable({
    dict = dict_name,
    timeout = max(timeout or DEFAULT_TIMEOUT, 0),
    exptime = exptime,
    step = step or 0.001,
    ratio = number_opt(opts, "ratio") or 2,
    max_step = number_opt(opts, "max_step") or 0.5,
  }, mt)
end

-- Seconds a lock() waited: 0 when its first try took the lock (as
-- lua-resty-lock reports an acquire without a wait), else the time it took,
-- to the millisecond and never 0.
local function waited(lk, t0)
  if lk._handle:counts().attempts <= 1 then
    return 0
  end
  return max(floor((now() - t0) * 1000 + 0.5) / 1000, 0.001)
end

--- lock:lock(key) -> elapsed | nil, err
-- Takes the lock "key" in this object's namespace, waiting up to its
-- timeout; a release wakes the waiter at once. err: "nil key", "empty key",
-- "key too long", "locked" (this object holds one already), "timeout", or
-- hiredlock's "connection failed: ..." and the like.
function _M.lock(self, key)
  if key == nil then
    return nil, "nil key"
  end
  if self._hold then
    return nil, "locked"
  end
  key = tostring(key)
  if key == "" then
    return nil, "empty key"
  end
  local name = self.dict .. ":" .. key
  if #name > core.NAME_MAX then
    return nil, "key too long"
  end
  local lease = self.exptime == 0
  local t0 = now()
  local lk, err = get_client():acquire(name, {
    ttl = lease and LEASE_TTL or self.exptime,
    timeout = self.timeout,
    auto_renew = lease,
  })
  if not lk then
    return nil, err
  end
  self._hold = lk
  self.key = key
  return waited(lk, t0)
end

-- After these, the object holds nothing any more.
local function hold_ended(err)
  return err == "not owned" or err == "not held" or err:find("^lost") ~= nil
end

--- lock:unlock() -> 1 | nil, err
-- Releases the lock (or hands it to the first waiter). err: "unlocked"
-- (this object holds nothing), "not owned" (the lock had expired or was
-- taken: nothing of another holder's is deleted), or a transport failure,
-- after which the object still holds it and unlock() may be retried.
function _M.unlock(self)
  local lk = self._hold
  if not lk then
    return nil, "unlocked"
  end
  local ok, err = lk:release()
  if ok then
    self._hold = nil
    return 1
  end
  if hold_ended(err) then
    self._hold = nil
  end
  return nil, err
end

--- lock:expire([time]) -> true | nil, err
-- Sets the lock's time left in Redis to time seconds (default: exptime).
-- err: "unlocked", "not owned" (it had expired or was taken), or a
-- transport failure.
function _M.expire(self, time)
  local lk = self._hold
  if not lk then
    return nil, "unlocked"
  end
  if time ~= nil and (type(time) ~= "number" or not (time > 0)) then
    error(("bad argument #1 to 'expire' (time must be a number above 0, got %s)")
      :format(tostring(time)), 2)
  end
  local ok, err = lk:extend(time or (self.exptime > 0 and self.exptime or LEASE_TTL))
  if ok then
    return true
  end
  if hold_ended(err) then
    self._hold = nil
  end
  return nil, err
end

--- The hiredlock lock behind a held object (token, fence, validity(),
-- lost()...), or nil.
function _M.hold(self)
  return self._hold
end

return _M
