--- The cosocket driver's waiting: how requests of an nginx worker hear the
-- hand-offs of the locks they wait for (docs/DESIGN.md, section 2).
--
-- Per worker and client, one background ngx.timer holds a subscriber
-- connection to each master (a light thread each), subscribed to the
-- client's channel, for as long as the worker lives: not a connection per
-- waiting request. A request whose acquire waits registers its token
-- (listener.enter) before the round that queues it and parks on its own
-- ngx.semaphore between tries; the timer posts to it when a hand-off for
-- that token comes, or when a subscription comes (back) up (a hand-off may
-- have been missed while it was down). The worker is never blocked: a
-- parked request is a coroutine waiting on its semaphore, with the wait the
-- core gave (the holder's TTL, retry_delay, the caller's timeout), so a
-- lost message only makes it slower.
--
-- The bytes on a subscriber connection are the core's (core.subscriber:
-- handshake, SUBSCRIBE, the pushes); this file connects, reads, writes and
-- posts. A connection that breaks is opened again at once, then after 50 ms
-- doubling to 1 s while the master refuses. The timer ends within a second
-- of the worker's shutdown.
local core = require "hiredlock.core"

local ngx = assert(rawget(_G, "ngx"),
  "hiredlock.driver.listener runs under ngx_lua (OpenResty) only")
local semaphore = require "ngx.semaphore"

local tcp = ngx.socket.tcp
local spawn, wait = ngx.thread.spawn, ngx.thread.wait
local sleep = ngx.sleep
local exiting = ngx.worker.exiting
local log, WARN = ngx.log, ngx.WARN

local pairs, setmetatable, tostring, min = pairs, setmetatable, tostring,
  math.min

-- How long a read waits before it looks whether the worker is exiting.
local READ_SLICE_MS = 1000

local M = {
  --- Per worker, since it started: subscriptions made and hand-offs heard,
  -- for tests and monitoring.
  stats = { subscribed = 0, handoffs = 0 },
}
local stats = M.stats

-- Per client handle: its waiters by token (weak: a request that died takes
-- its registration with it) and whether its timer runs.
local rooms = setmetatable({}, { __mode = "k" })

local Waiter = {}
Waiter.__index = Waiter

--- Waits up to ms for a hand-off (or a wake), then tells the lock what came.
function Waiter:wait(lock, ms)
  self.sema:wait(ms / 1000)
  for i in pairs(self.notified) do
    lock:notified(i)
    self.notified[i] = nil
  end
  if self.woken then
    self.woken = false
    lock:wake()
  end
end

function Waiter:leave()
  self.room.waiters[self.token] = nil
end

local function post_all(room)
  for _, w in pairs(room.waiters) do
    w.woken = true
    w.sema:post(1)
  end
end

-- One notice of master i's stream; false when the connection must go.
local function take(room, sock, i, kind, value)
  if kind == "send" then
    return sock:send(value) ~= nil
  elseif kind == "ready" then
    stats.subscribed = stats.subscribed + 1
    post_all(room)
  elseif kind == "handoff" then
    stats.handoffs = stats.handoffs + 1
    local w = room.waiters[value]
    if w then
      w.notified[i] = true
      w.sema:post(1)
    end
  elseif kind == "close" then
    log(WARN, "hiredlock: subscriber connection closed: ", value)
    return false
  end
  return true
end

-- Reads a connected subscriber until it breaks or the worker exits;
-- returns whether it got subscribed.
local function converse(room, sub, sock, i)
  local subscribed = false
  if not sock:send(sub:start()) then
    return subscribed
  end
  sock:settimeout(READ_SLICE_MS)
  while not exiting() do
    local bytes, err = sock:receiveany(65536)
    if not bytes then
      if err ~= "timeout" then
        return subscribed
      end
    else
      local kind, value = sub:feed(bytes)
      while kind ~= "more" do
        subscribed = subscribed or kind == "ready"
        if not take(room, sock, i, kind, value) then
          return subscribed
        end
        kind, value = sub:feed("")
      end
    end
  end
  return subscribed
end

-- Master i's subscriber connection, for the worker's life. A rediss://
-- master's goes through TLS as command connections do (shake: the
-- cosocket driver's handshake). A Sentinel-managed primary gets none (its
-- address moves with failovers): its waiters wait as the core says
-- without hand-off messages, bounded by the holder's TTL and retry_delay.
local function listen(room, client, i, t, shake)
  if t.sentinel then
    return
  end
  local sub = core.subscriber(client, i)
  -- A pool of its own that never gets a connection back: connect() must
  -- not hand us a command connection (or anyone's) from a keepalive pool.
  local opts = { pool = ("hiredlock-sub:%s:%d"):format(t.label,
    ngx.worker.pid()) }
  local failures = 0
  while not exiting() do
    local sock = tcp()
    sock:settimeout(t.connect_timeout_ms)
    local ok
    local deadline = core.now() + t.connect_timeout_ms / 1000
    if t.port then
      ok = sock:connect(t.host, t.port, opts)
    else
      ok = sock:connect(t.host, opts)
    end
    if ok and t.tls then
      ok = not t.tls.error and shake(sock, t.tls, deadline, t.connect_timeout_ms)
    end
    if ok and converse(room, sub, sock, i) then
      failures = 0 -- it was up: reconnect at once
    end
    sock:close()
    failures = failures + 1
    if failures > 1 then
      sleep(min(1, 0.05 * 2 ^ (failures - 2)))
    end
  end
end

local function run(premature, room, client, targets, shake)
  if premature then
    return
  end
  local threads = {}
  for i = 2, #targets do
    threads[i] = spawn(listen, room, client, i, targets[i], shake)
  end
  listen(room, client, 1, targets[1], shake)
  for i = 2, #targets do
    if threads[i] then
      wait(threads[i])
    end
  end
  room.running = false
end

--- Registers a waiting acquire's token (lock:waiter()) with the worker's
-- listener of client, starting it on the first wait; targets are the
-- masters (the cosocket driver's). Returns the waiter to wait on.
function M.enter(client, token, targets, shake)
  local room = rooms[client]
  if not room then
    room = { waiters = setmetatable({}, { __mode = "v" }), running = false }
    rooms[client] = room
  end
  if not room.running then
    local ok, err = ngx.timer.at(0, run, room, client, targets, shake)
    if ok then
      room.running = true
    else -- no timer to be had: this request waits on its timers alone
      log(WARN, "hiredlock: no listener timer: ", tostring(err))
    end
  end
  local w = setmetatable({ token = token, room = room, notified = {},
    woken = false, sema = semaphore.new(0) }, Waiter)
  room.waiters[token] = w
  return w
end

return M
