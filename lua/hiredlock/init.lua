--- hiredlock: distributed locks on Redis (Redlock) for Lua 5.1, LuaJIT 2.1
-- and Lua 5.4, over the same C core as the C and Python APIs.
--
--   local hiredlock = require "hiredlock"
--   local client = hiredlock.new({"redis://a:6379", "redis://b:6379",
--                                 "redis://c:6379"}, {timeout = 0.05})
--   local lock, err = client:acquire("res", {ttl = 10, timeout = 5})
--   if lock then ... lock:release() end
--
-- Runtime failures return nil and a short lowercase message ("timeout",
-- "not owned", "connection failed: ..."); wrong arguments raise. The full
-- reference is docs/LUA-API.md.
local core = require "hiredlock.core"
local events = require "hiredlock.events"
local deliver = events.deliver
local error, pcall, setmetatable, getmetatable, type, tostring, select, pairs =
  error, pcall, setmetatable, getmetatable, type, tostring, select, pairs
local floor = math.floor
local unpack = unpack or table.unpack

-- Under ngx_lua a blocking socket would stall every request of the worker:
-- there, all I/O goes through cosockets (hiredlock/driver/cosocket.lua).
local ngx = rawget(_G, "ngx")
local in_nginx = type(ngx) == "table" and type(ngx.socket) == "table"
  and type(ngx.get_phase) == "function"

local M = {
  VERSION = core.VERSION,
  _VERSION = "hiredlock " .. core.VERSION,
  --- The driver new clients use for their network calls (see
  -- hiredlock/driver/hiredis.lua for the contract). Internal: the seam the
  -- OpenResty cosocket driver plugs into.
  _driver = require(in_nginx and "hiredlock.driver.cosocket"
    or "hiredlock.driver.hiredis"),
}

-- The blocking driver calls the core handles' own methods (acquire,
-- release): with it, Client.acquire and Lock.release are the binding's
-- (core.facade, below), which take the handle of a released lock of the
-- same name again instead of making one per acquire. Any other driver
-- (cosockets, a test's) goes through the driver table.
local BLOCKING = require "hiredlock.driver.hiredis"

local Client = {}
Client.__index = Client

local Lock = {}
Lock.__index = Lock

--- hiredlock.new(urls, opts) -> client
-- urls: one URL or a list of them, redis://[[user]:pass@]host[:port][/db],
-- rediss://...[?ssl_option=value&...] (TLS) or
-- unix://[[user]:pass@]/path[?db=N]. opts (all optional, seconds):
-- connect_timeout (0.1), timeout (per master, 0.05), retry_delay (0.2),
-- retry_jitter (0.1), drift_factor (0.01), key_prefix (""), the defaults
-- of its locks' auto_renew (false), max_hold (0) and fenced (false: true
-- makes every lock of the client fenced unless its acquire says fenced =
-- false), and for rediss:// masters ssl_ca_certs, ssl_ca_path,
-- ssl_certfile, ssl_keyfile (paths), ssl_cert_reqs ("required", "optional"
-- or "none") and ssl_check_hostname (true).
-- owner (a label written beside each lock: see acquire) and slow_wait
-- (seconds: a wait at least this long is reported, 1) too, and
-- on_event(event), called with the client's events (hiredlock/events.lua,
-- docs/OPERATING.md) after each of its calls; without it, nginx logs them.
-- No connection is made until the first lock needs one.
local live = setmetatable({}, { __mode = "k" }) -- clients, for prometheus()
local made = 0
local WEAK_VALUES = { __mode = "v" }

function M.new(urls, opts)
  local on_event
  if type(opts) == "table" and opts.on_event ~= nil then
    on_event = opts.on_event
    local copy = {}
    for k, v in pairs(opts) do
      copy[k] = v
    end
    copy.on_event = nil
    opts = copy
  end
  local handle = core.new(urls, opts)
  if on_event ~= nil then
    if type(on_event) ~= "function" then
      error(("bad argument #2 to 'new' (on_event must be a function, got %s)")
        :format(type(on_event)), 2)
    end
    events.handlers[handle] = on_event
  end
  -- core.new checked opts: fenced and auto_renew are nil or booleans.
  local fenced = type(opts) == "table" and opts.fenced == true
  local lease = type(opts) == "table" and opts.auto_renew == true
  local client = setmetatable({ _handle = handle, _driver = M._driver,
    _fenced = fenced, _auto_renew = lease,
    -- name -> a core handle for the next acquire of the name: a released
    -- lock's or a failed acquire's (LuaJIT's facade), or the one the name's
    -- last acquire made, which the C facade leaves here while a lock object
    -- holds it and takes only once no object does; weak, so that the
    -- names a client stops using cost nothing after the next collection.
    _spares = setmetatable({}, WEAK_VALUES),
    -- _husk: the handle a released lock's object keeps once its own went
    -- back to _spares (made on first use, see Lock:release).
  }, Client)
  made = made + 1
  live[client] = made
  return client
end

-- The lock object of any driver but the blocking one (whose objects are
-- bindings/lua/object.c's userdata, with the same members and methods):
-- one table per acquisition. name, token (and a fenced
-- lock's fence, fence_string, a permit's number) are plain fields, read while held and kept
-- after; _handle is the core lock handle, _client the client (its driver,
-- handle and spares); _lease marks an auto-renewed lock, whose handle is
-- never reused (the renewer may still be on it).
local function new_lock(client, name, handle, token, fence, fence_string,
                        lease, permit)
  if fence == nil and not lease and permit == nil then
    return setmetatable({ name = name, token = token, _handle = handle,
      _client = client }, Lock)
  end
  return setmetatable({ name = name, token = token, fence = fence,
    fence_string = fence_string, permit = permit, _handle = handle,
    _client = client, _lease = lease }, Lock)
end

-- acquire through a driver table: a new handle per acquisition.
local function acquire_through(client, driver, name, opts)
  local chandle = client._handle
  local handle, err = driver.acquire(chandle, name, opts)
  deliver(chandle)
  if not handle then
    return nil, err
  end
  -- Whether it is fenced: acquire's option, else the client's default
  -- (the core checked both: nil or a boolean).
  local fenced = nil
  local lease = nil
  if opts ~= nil then
    fenced = opts.fenced
    lease = opts.auto_renew
  end
  if fenced == nil then
    fenced = client._fenced
  end
  if lease == nil then
    lease = client._auto_renew
  end
  -- A semaphore's permit: its number (1 to permits); nil otherwise (no
  -- call into the core for any other lock).
  local permit = nil
  if opts ~= nil and opts.mode == "permit" then
    permit = handle:permit()
  end
  if fenced then
    -- A fenced lock's fence: a number (an integer in Lua 5.4; a double in
    -- 5.1 and LuaJIT, exact up to 2^53) and the exact decimal string, the
    -- one to send on (fenced_write, a header, SQL). Read now, while held:
    -- the lock keeps them after the hold, the handle does not.
    return new_lock(client, name, handle, handle:token(), handle:fence(),
      handle:fence_string(), lease, permit)
  end
  -- A plain lock's fence and fence_string are nil: no call into the core
  -- for them (a cycle's cost is mostly calls into the core).
  return new_lock(client, name, handle, handle:token(), nil, nil, lease,
    permit)
end

--- client:acquire(name, opts) -> lock | nil, err
-- opts: ttl (seconds the lock lives on the masters, default 30) and timeout
-- (seconds to keep retrying, default 5; 0 makes one attempt); auto_renew
-- (a managed lease: renewed about every third of its TTL while held) and
-- max_hold (with auto_renew, seconds after which renewal stops; 0: none);
-- fenced (take a fencing token: lock.fence, lock.fence_string). new()'s
-- opts may set the defaults of auto_renew, max_hold and fenced.
-- err: "timeout" when others held it until the deadline, or the
-- "connection failed: ..." (or "authentication failed: ...", "permission
-- denied: ...", ...) message
-- when no quorum of masters answered.
-- With the blocking driver, Client.acquire is the binding's (core.facade,
-- below: bindings/lua/facade.c builds new_lock's table itself, on the
-- handle of a released lock of the name when it fits); with any other
-- driver, this.
local function acquire_other(self, name, opts)
  return acquire_through(self, self._driver, name, opts)
end

--- client:inspect(name) -> inspection | nil, err
-- Who holds the lock name and who waits for it, as each master has it,
-- and the quorum's view (docs/OPERATING.md): read only, no lock taken.
-- inspection: name, state ("held", "free" or "unknown": too few masters
-- answered), held, token (its first 8 characters), owner, validity
-- (seconds it stays on a quorum at best), fence, quorum, answered,
-- holding, and masters: per master, master, ok, error, present, token,
-- ttl (seconds; -1: no TTL; nil: no key), fence, owner, queued and
-- waiters (in order: token, age, lease, owner).
function Client:inspect(name)
  local inspection, err = self._driver.inspect(self._handle, name)
  deliver(self._handle)
  return inspection, err
end

--- client:stats() -> the client's counters since it was made
-- (docs/OPERATING.md): acquired, busy, cancelled, failed (by reason),
-- waited, wait_bounds, wait_buckets, wait_sum, released, handoffs,
-- dead_waiters, extended, renewals, renewals_failed, losses, inspections,
-- masters ({master, unreachable, errors}).
function Client:stats()
  return self._handle:stats()
end

local function callable(f)
  if type(f) == "function" then
    return true
  end
  local mt = getmetatable(f)
  return type(mt) == "table" and mt.__call ~= nil
end

-- The policy of every scoped hold (with, <close>), once: release on the way
-- out; "not held" is nothing to report (the body released it, or was told
-- it was lost); a failed release is reported only when the body did not
-- fail, so it never masks the body's own error. Returns the message to
-- report, or nil.
local function release_on_exit(lock, body_failed)
  local released, err = lock:release()
  if released or err == "not held" or body_failed then
    return nil
  end
  return err
end

-- Re-raises fn's error, or returns its results unless the release failed.
local function finish(lock, ok, ...)
  local err = release_on_exit(lock, not ok)
  if not ok then
    error((...), 0)
  end
  if err then
    return nil, err
  end
  return true, ...
end

--- client:with(name, opts, fn, ...) -> true, fn's results | nil, err
-- Acquires, calls fn(lock, ...), and always releases, also when fn raises
-- (fn's error is raised again, unchanged, after the release). nil, err when
-- the lock was not acquired, or when the release found it lost ("not
-- owned": fn's work was not protected to the end).
function Client:with(name, opts, fn, ...)
  if not callable(fn) then
    error(("bad argument #3 to 'with' (function expected, got %s)"):format(
      type(fn)), 2)
  end
  local lock, err = self:acquire(name, opts)
  if not lock then
    return nil, err
  end
  return finish(lock, pcall(fn, lock, ...))
end

-- A copy of opts (a table or nil) with mode and permits set; anything else
-- as it is, for acquire to refuse.
local function with_mode(opts, mode, permits)
  if opts ~= nil and type(opts) ~= "table" then
    return opts
  end
  local copy = {}
  for k, v in pairs(opts or {}) do
    copy[k] = v
  end
  copy.mode, copy.permits = mode, permits
  return copy
end

local RWLock = {}
RWLock.__index = RWLock

local Semaphore = {}
Semaphore.__index = Semaphore

--- client:rwlock(name) -> rwlock
-- A read-write lock: rwlock:read(opts) and rwlock:write(opts) are
-- client:acquire(name, opts) for a read (many at once) or the write (alone)
-- of name; each returns a lock (its own token and TTL) or nil, err. A
-- waiting write stops new reads; waiters are served in arrival order
-- (docs/SAFETY.md). client:acquire(name, {mode = "read"}) is the same.
function Client:rwlock(name)
  return setmetatable({ client = self, name = name }, RWLock)
end

function RWLock:read(opts)
  return self.client:acquire(self.name, with_mode(opts, "read"))
end

function RWLock:write(opts)
  return self.client:acquire(self.name, with_mode(opts, "write"))
end

--- client:semaphore(name, permits) -> semaphore
-- A counting semaphore: semaphore:acquire(opts) is client:acquire(name,
-- opts) for one of its permits (at most `permits` held at once), returning
-- a lock whose .permit is its number, or nil, err.
function Client:semaphore(name, permits)
  return setmetatable({ client = self, name = name, permits = permits },
    Semaphore)
end

function Semaphore:acquire(opts)
  return self.client:acquire(self.name,
    with_mode(opts, "permit", self.permits))
end

local FENCE_MAX = "9223372036854775807" -- 2^63 - 1

-- Whether decimal a is below decimal b (no sign, no leading zeros): by
-- length, then byte by byte (string < follows the locale).
local function below(a, b)
  if #a ~= #b then
    return #a < #b
  end
  for i = 1, #a do
    local x, y = a:byte(i), b:byte(i)
    if x ~= y then
      return x < y
    end
  end
  return false
end

-- A fence as the exact decimal text the script takes, or nil.
local function fence_text(fence)
  local mtype = math.type
  if mtype and mtype(fence) == "integer" then
    fence = tostring(fence)
  elseif type(fence) == "number" and fence == floor(fence) and fence >= 1
    and fence < 2 ^ 63 then
    fence = ("%.0f"):format(fence)
  end
  if type(fence) == "string" and fence:find("^[1-9]%d*$")
    and not below(FENCE_MAX, fence) then
    return fence
  end
  return nil
end

--- hiredlock.fenced_write(redis, fence_key, fence, command, ...)
--   -> the command's reply | nil, err
-- Runs one Redis command on `redis` (the store you protect, not the lock's
-- masters; anything with lua-resty-redis's eval(script, numkeys, ...)) only
-- when `fence` (lock.fence_string, or an integer) is not older than the
-- last fence seen at fence_key, and records it there. err is
-- "STALEFENCE fence <f> is older than <last>" for an older fence (nothing
-- is written), or the store's error. fence_key may be a list
-- {fence_key, key, ...}: the keys the command touches, declared for Redis
-- Cluster and ACLs.
function M.fenced_write(redis, fence_key, fence, ...)
  local text = fence_text(fence)
  if not text then
    error(("bad argument #3 to 'fenced_write' (fence must be from 1 to %s, "
      .. "got %s)"):format(FENCE_MAX, tostring(fence)), 2)
  end
  local argc = select("#", ...)
  if argc == 0 then
    error("bad argument #4 to 'fenced_write' (a command to run is needed)", 2)
  end
  local keys = type(fence_key) == "table" and fence_key or { fence_key }
  local args = {}
  for i = 1, #keys do
    args[i] = keys[i]
  end
  local n = #keys + 1
  args[n] = text
  for i = 1, argc do
    args[n + i] = (select(i, ...))
  end
  local res, err = redis:eval(core.FENCED_WRITE_SCRIPT, #keys,
    unpack(args, 1, n + argc))
  if err ~= nil then
    return nil, err
  end
  return res
end

M.FENCED_WRITE_SCRIPT = core.FENCED_WRITE_SCRIPT

-- live clients' stats, for prometheus(): {{number, stats}}. A client
-- dropped with a lock still held stays in the weak registry for one
-- collection cycle after its handle was finalized (the lock's object,
-- finalized with it, reaches it), and any allocation may run that
-- finalizer: such a client's stats() raises, and it is left out; any other
-- error is raised.
local function live_stats()
  local out = {}
  for client, n in pairs(live) do
    local ok, stats = pcall(client.stats, client)
    if ok then
      out[#out + 1] = { n, stats }
    elseif not client._handle:closed() then
      error(stats, 0)
    end
  end
  return out
end

M.prometheus = require("hiredlock.prometheus").renderer(live_stats)

function Client:masters()
  return self._handle:masters()
end

function Client:quorum()
  return self._handle:quorum()
end

function Client:__tostring()
  return (tostring(self._handle):gsub("^hiredlock%.core%.", "hiredlock.", 1))
end

--- lock:release() -> true | nil, err
-- "not owned": a quorum answered but the key was no longer ours (expired,
-- taken since). "not held": this object does not hold the lock (released
-- already, or found lost). "lost: <reason>": the hold of this auto-renewed
-- lock was lost (no I/O). Transport failures keep it held so release can
-- be retried; it expires with its TTL anyway.
-- With the blocking driver, Lock.release is the binding's (core.facade,
-- bindings/lua/facade.c): once the hold is over (and unless it is a
-- lease, whose renewer may still be on its handle), the handle goes back
-- to the client for the next acquire of the name, and the object keeps the
-- client's husk (_husk, made on first use: a handle that never held
-- anything), which answers all it is asked from now on as its own would
-- (release and extend: "not held"; held: false; validity: 0; lost: false),
-- with no way to reach the next hold. With any other driver, this.
local function release_other(self)
  local client = self._client
  local ok, err = client._driver.release(self._handle)
  deliver(client._handle)
  return ok, err
end

--- lock:extend([ttl]) -> true | nil, err
-- Resets the TTL on the masters to ttl seconds (default: the lock's own
-- TTL); the new TTL replaces what was left. "not owned" when it was lost.
function Lock:extend(ttl)
  local client = self._client
  local ok, err = client._driver.extend(self._handle, ttl)
  deliver(client._handle)
  return ok, err
end

--- lock:lost() -> true, reason | false
-- Whether the hold of this auto-renewed lock was lost: a renewal found the
-- key not ours ("not owned"), no quorum renewed it before its validity ran
-- out ("expired..."), or max_hold passed ("max_hold reached"). No I/O.
function Lock:lost()
  return self._handle:lost()
end

--- lock:check() -> true | nil, "lost: <reason>"
function Lock:check()
  return self._handle:check()
end

--- lock:validity() -> seconds this lock is still safely held (0 when not).
function Lock:validity()
  return self._handle:validity()
end

--- lock:held() -> whether this object holds the lock with validity left.
function Lock:held()
  return self._handle:held()
end

function Lock:__tostring()
  local handle = self._handle
  local ok, held = pcall(handle.held, handle)
  if not ok then -- finalized: only reachable through another finalizer
    return ("hiredlock.lock %q (closed)"):format(self.name)
  end
  if held then
    return ("hiredlock.lock %q (held, %.3f s left)"):format(self.name,
      handle:validity())
  end
  return ("hiredlock.lock %q (not held)"):format(self.name)
end

--- Lua 5.4: `local lock <close> = client:acquire(...)` releases on scope
-- exit. A failed release is raised when the scope ends normally (the work
-- may not have been protected), never over the error the scope unwinds with.
function Lock:__close(err)
  local rerr = release_on_exit(self, err ~= nil)
  if rerr then
    error(rerr, 2)
  end
end

-- Last: the lock objects of the blocking driver (bindings/lua/object.c)
-- take their metamethods from Lock, complete by now.
if type(rawget(_G, "jit")) ~= "table" then
  Client.acquire, Lock.release = core.facade(Lock, BLOCKING, acquire_other,
    release_other, deliver)
else
  -- LuaJIT compiles the cycle's Lua steps (stitched around the calls into
  -- the core), which then cost less than the C closures' API calls: its
  -- facade keeps them in Lua, on core.acquire_on and core.release_on,
  -- with the same steps and results as bindings/lua/facade.c. Its lock
  -- object stays a table: the C facade's userdata (bindings/lua/object.c)
  -- costs LuaJIT more than the table (10,115 instructions per cycle against
  -- 8,983, December 2026), its members being read through C calls.
  local acquire_on, release_on = core.acquire_on, core.release_on
  -- release through the FFI where there is one: the JIT compiles a call
  -- of a C function pointer into the trace, where a call of release_on (a
  -- lua_CFunction) leaves it (bindings/lua/facade.c, hrlua_ffi_release).
  local release_status, LOCK_HANDLE = core.release_status,
    core.lock_metatable
  local ffi_release = nil
  local has_ffi, ffi = pcall(require, "ffi")
  if has_ffi and type(core.ffi_release) == "userdata" then
    ffi_release = ffi.cast("int (*)(void *)", core.ffi_release)
  end

  function Client:acquire(name, opts)
    if self._driver ~= BLOCKING then
      return acquire_other(self, name, opts)
    end
    local chandle, spares = self._handle, self._spares
    local spare = spares[name]
    -- A plain lock's object, made before the call into the core: LuaJIT
    -- compiles the steps on the way into a C function, and interprets
    -- those after it (the trace stitched after the call stops at the
    -- return to the caller's frame). Unused when the acquire fails or the
    -- lock is more than a plain one.
    local lock = setmetatable({ name = name, token = false, _handle = false,
      _client = self }, Lock)
    -- handle, token [, queued [, fence, fence_string, lease]]
    --   | nil, err [, the handle, holding nothing]
    local handle, token, queued, fence, fence_string, lease =
      acquire_on(chandle, name, opts, spare)
    if not handle then
      if queued ~= nil then -- the handle that failed, for the next try
        spares[name] = queued
      end
      deliver(chandle)
      return nil, token
    end
    if handle == spare then
      spares[name] = nil
    end
    if queued then -- events of the client's to hand to on_event
      deliver(chandle)
    end
    -- A semaphore's permit: its number (1 to permits); nil otherwise (no
    -- call into the core for any other lock).
    local permit = nil
    if opts ~= nil and opts.mode == "permit" then
      permit = handle:permit()
    end
    if not lease and permit == nil then
      if fence == nil then
        lock.token, lock._handle = token, handle
        return lock
      end
      -- A fenced lock's table, made here and returned from a local: a
      -- tail call (return new_lock(...), return setmetatable(...)) aborts
      -- the trace stitched after the call into the core ("NYI: return to
      -- lower frame"), and every fenced acquire's steps after it were
      -- interpreted.
      lock = setmetatable({ name = name, token = token, fence = fence,
        fence_string = fence_string, _handle = handle, _client = self }, Lock)
      return lock
    end
    return new_lock(self, name, handle, token, fence, fence_string, lease,
      permit)
  end

  function Lock:release()
    local client, handle = self._client, self._handle
    if client._driver ~= BLOCKING then
      return release_other(self)
    end
    local ok, err, queued
    local code = -1
    if ffi_release ~= nil and type(handle) == "userdata"
      and getmetatable(handle) == LOCK_HANDLE then
      code = ffi_release(handle)
    end
    if code == 0 then
      ok = true
    elseif code < 0 then -- not a live handle: release_on raises
      ok, err, queued = release_on(handle)
    else
      ok, err, queued = release_status(handle, code)
    end
    if ok and not self._lease then -- the handle to the spares, see above
      local husk = client._husk
      if husk == nil then
        husk = client._handle:lock(handle:name(), { ttl = handle:ttl(),
          auto_renew = false })
        client._husk = husk
      end
      self._handle = husk
      local name = self.name -- a field the caller may have changed
      if name ~= nil and name == name then -- nil and NaN are no keys
        client._spares[name] = handle
      end
    end
    if queued then -- events of the client's to hand to on_event
      deliver(client._handle)
    end
    return ok, err
  end
end

return M
