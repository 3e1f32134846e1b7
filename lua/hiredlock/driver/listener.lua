--- The cosocket driver's waiting: how requests of an nginx worker hear the
-- hand-offs of the locks they wait for (docs/DESIGN.md, section 2).
--
-- One subscriber connection per worker and master, whatever the number of
-- clients: every client that waits in the worker hears on the worker's
-- channel (client:share_channel with the first one), so the waiters of a
-- client made per request and those of a client made once share one
-- connection to each master (one per client:subscriber_key: the master,
-- its TLS settings and credentials, the channel). Each connection is an
-- ngx.timer of its own (a feed), started by the first wait on it and
-- ended after it had no waiter for M.IDLE_S seconds (60), so a worker
-- holds no more timers than masters, not one per client (a timer per
-- client exhausted lua_max_running_timers and left waiters deaf: issue 24,
-- item 1).
--
-- A request whose acquire waits registers its token (listener.enter) with
-- the feeds of its client's masters before the round that queues it, and
-- parks on its own ngx.semaphore between tries; a feed posts to it when a
-- hand-off for that token comes, or when its subscription comes (back) up
-- (a hand-off may have been missed while it was down). The worker is never
-- blocked: a parked request is a coroutine waiting on its semaphore, with
-- the wait the core gave (the holder's TTL, retry_delay, the caller's
-- timeout), so a lost message only makes it slower.
--
-- The bytes and where they go are the core's (core.subscriber: the
-- master, or a sentinel to ask and then the primary it named, the
-- handshake, SUBSCRIBE, the pushes); this file connects (TLS as the
-- command connections do), reads, writes and posts. A light thread reads
-- with no read timeout (a quiet subscriber is not an error, and ngx_lua
-- would log every timeout as one: issue 24, item 2), keepalive on; the
-- feed's timer looks every second whether the worker exits or the feed
-- idles, and then kills the reader. A connection that breaks is opened
-- again at once, then after 50 ms doubling to 1 s while the master
-- refuses; one not subscribed within connect_timeout + timeout is given
-- up the same way.
local core = require "hiredlock.core"

local ngx = assert(rawget(_G, "ngx"),
  "hiredlock.driver.listener runs under ngx_lua (OpenResty) only")
local semaphore = require "ngx.semaphore"

local tcp = ngx.socket.tcp
local spawn, wait, kill = ngx.thread.spawn, ngx.thread.wait, ngx.thread.kill
local sleep = ngx.sleep
local exiting = ngx.worker.exiting
local md5 = ngx.md5
local log, WARN = ngx.log, ngx.WARN
local now = core.now

local next, pairs, pcall, setmetatable, tostring, min = next, pairs, pcall,
  setmetatable, tostring, math.min

-- How often a feed's timer looks whether the worker exits or it idles.
local LOOK_S = 1
-- The longest read timeout ngx_lua takes (ms): never reached.
local FOREVER_MS = 2 ^ 31 - 1

local M = {
  --- Per worker, since it started: subscriptions made, hand-offs heard,
  -- and feeds (subscriber connections) running now, for tests and
  -- monitoring.
  stats = { subscribed = 0, handoffs = 0, feeds = 0 },
  --- A feed without waiters for this long (seconds) closes its connection
  -- and ends.
  IDLE_S = 60,
}
local stats = M.stats

-- The worker's feeds by key (a digest of client:subscriber_key).
local feeds = {}
-- The client whose channel every client of the worker shares, and the
-- process it was chosen in (nginx forks workers after init_by_lua).
local anchor, anchor_pid
-- Per client handle: the channel's anchor it shares, and its feeds' keys.
local shared = setmetatable({}, { __mode = "k" })
local keys = setmetatable({}, { __mode = "k" })

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
  for feed in pairs(self.at) do
    if feed.waiters[self.token] == self then
      feed.waiters[self.token] = nil
    end
  end
end

local function post_all(feed)
  for _, w in pairs(feed.waiters) do
    w.woken = true
    w.sema:post(1)
  end
end

-- A host as a cosocket connects to it: an IPv6 address in brackets.
local function host_of(host)
  return host:find(":", 1, true) and "[" .. host .. "]" or host
end

-- The feed's reader: passes what its connection says on until it ends.
-- Returns "redirect" (a sentinel named the primary: go there at once),
-- "closed" (the server refused something) or "broken".
local function read(feed, sub, sock)
  while true do
    local bytes = sock:receiveany(65536)
    if not bytes then
      return "broken"
    end
    local kind, value = sub:feed(bytes)
    while kind ~= "more" do
      if kind == "send" then
        if not sock:send(value) then
          return "broken"
        end
      elseif kind == "ready" then
        feed.subscribed = true
        stats.subscribed = stats.subscribed + 1
        post_all(feed)
      elseif kind == "handoff" then
        stats.handoffs = stats.handoffs + 1
        local w = feed.waiters[value]
        if w then
          w.notified[w.at[feed]] = true
          w.sema:post(1)
        end
      elseif kind == "redirect" then
        return "redirect"
      else -- "close"
        if feed.failures == 0 then -- once a streak, not once a retry
          log(WARN, "hiredlock: subscriber connection to ", feed.label,
            " closed: ", value)
        end
        return "closed"
      end
      kind, value = sub:feed("")
    end
  end
end

-- Whether the feed had no waiter for M.IDLE_S.
local function idle(feed, t)
  if next(feed.waiters) ~= nil then
    feed.busy_at = t
    return false
  end
  return t - feed.busy_at >= M.IDLE_S
end

-- One connection of the feed, from connect to close: "up" (it was
-- subscribed), "redirect", "stop" (the worker exits, or the feed idles),
-- or nil (it failed).
local function session(feed, sub)
  local t = feed.target
  local host, port, label, path, handshake = sub:open()
  local sock = tcp()
  sock:settimeouts(t.connect_timeout_ms, t.connect_timeout_ms, FOREVER_MS)
  local deadline = now() + t.connect_timeout_ms / 1000
  local ok
  if port then
    ok = sock:connect(host_of(host), port, feed.pool)
  else
    ok = sock:connect("unix:" .. path, feed.pool)
  end
  if ok and handshake and t.tls then
    ok = not t.tls.error and feed.shake(sock, t.tls, deadline,
      t.connect_timeout_ms)
  end
  if not ok or not sock:send(sub:start()) then
    sock:close()
    return nil
  end
  pcall(sock.setoption, sock, "keepalive", true) -- ngx_lua 0.10.18 and up
  feed.label = label
  feed.subscribed = false
  feed.done = false
  local reader = spawn(function()
    local outcome = read(feed, sub, sock)
    feed.done = true
    feed.sema:post(1)
    return outcome
  end)
  local give_up = now() + (t.connect_timeout_ms + t.timeout_ms) / 1000
  local outcome
  while not feed.done do
    feed.sema:wait(LOOK_S)
    local at = now()
    if exiting() or idle(feed, at) then
      outcome = "stop"
      break
    elseif not feed.subscribed and not feed.done and at >= give_up then
      break -- never subscribed: a server that does not answer
    end
  end
  if feed.done then
    local _, result = wait(reader)
    outcome = outcome or result
  else
    kill(reader)
  end
  sock:close()
  if outcome == "stop" or outcome == "redirect" then
    return outcome
  end
  return feed.subscribed and "up" or nil
end

-- A feed's timer: its connection, opened again after every break, until
-- the worker exits or the feed idles.
local function serve(premature, feed)
  if not premature then
    local sub = core.subscriber(feed.client, feed.i)
    while not exiting() and not idle(feed, now()) do
      local outcome = session(feed, sub)
      if outcome == "stop" then
        break
      elseif outcome == "up" then
        feed.failures = 0 -- it was up: reconnect at once
      elseif outcome ~= "redirect" then
        feed.failures = feed.failures + 1
        if feed.failures > 1 then
          sleep(min(1, 0.05 * 2 ^ (feed.failures - 2)))
        end
      end
    end
  end
  feed.running = false
  stats.feeds = stats.feeds - 1
  if feeds[feed.key] == feed and next(feed.waiters) == nil then
    feeds[feed.key] = nil -- (and the client it holds)
  end
end

local function start(feed)
  local ok, err = ngx.timer.at(0, serve, feed)
  if not ok then -- no timer to be had: its waiters wait on their timers
    log(WARN, "hiredlock: no subscriber timer: ", tostring(err))
    return
  end
  feed.running = true
  stats.feeds = stats.feeds + 1
end

--- Makes client hear its hand-offs on the worker's channel, before its
-- first wait: call it before each acquire (cheap once done).
function M.adopt(client)
  local pid = ngx.worker.pid()
  if anchor_pid ~= pid then
    anchor, anchor_pid = client, pid
  end
  if shared[client] ~= anchor then
    client:share_channel(anchor)
    shared[client] = anchor
    keys[client] = nil
  end
end

-- The keys of client's feeds, one per master.
local function keys_of(client, n)
  local list = keys[client]
  if not list then
    list = {}
    for i = 1, n do
      list[i] = md5(client:subscriber_key(i)) -- credentials stay out
    end
    keys[client] = list
  end
  return list
end

--- Registers a waiting acquire's token (lock:waiter()) with the worker's
-- feeds of client's masters (targets, the cosocket driver's), starting
-- those not running; shake is the driver's TLS handshake. Returns the
-- waiter to wait on.
function M.enter(client, token, targets, shake)
  local w = setmetatable({ token = token, notified = {}, woken = false,
    sema = semaphore.new(0), at = {} }, Waiter)
  local list = keys_of(client, #targets)
  for i = 1, #targets do
    local key = list[i]
    local feed = feeds[key]
    if not feed then
      local t = targets[i]
      feed = { key = key, client = client, i = i, target = t, shake = shake,
        label = t.label, waiters = setmetatable({}, { __mode = "v" }),
        sema = semaphore.new(0), failures = 0, busy_at = now(),
        running = false, subscribed = false, done = true,
        -- A pool of its own that never gets a connection back: connect()
        -- must not hand us a command connection from a keepalive pool.
        pool = { pool = "hiredlock-sub:" .. key } }
      feeds[key] = feed
    end
    feed.waiters[token] = w
    feed.busy_at = now()
    w.at[feed] = i
    if not feed.running then
      start(feed)
    end
  end
  return w
end

return M
