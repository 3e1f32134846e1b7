--- The cosocket driver's rounds, for hiredlock/driver/cosocket.lua and
-- its lease renewer (hiredlock/driver/cosocket_leases.lua): the loop that
-- steps a begun operation of the C core's sans-I/O protocol to its end
-- (run), and each round it asks for, every master's part of it on a
-- cosocket. This file only opens connections, moves bytes and waits; what
-- to send and what a reply means are the core's.
--
-- A round goes to all N masters at once, one light thread
-- (ngx.thread.spawn) per master after the first, each against its own
-- deadline: connect_timeout to connect, then the round's timeout for the
-- replies (a new connection's handshake unanswered by then carries over
-- to the lock's next round in the request, see handshake); a master known
-- to be late is not waited for once the round is decided without it
-- (lock:skippable, looked at every SETTLE_SLICE_MS of a wait, as a
-- cosocket waits for its own socket only). A connection comes from a
-- keepalive pool whose name holds the master, its database and a digest
-- of the handshake (credentials), so two clients share connections only
-- when they are interchangeable (clients made per request too: see
-- identify). A new connection sends the handshake (AUTH/SELECT/INFO)
-- alone, before the command. The bytes of a round on a connection are the
-- core's stream's (core.stream: owed replies dropped first, NOSCRIPT
-- resends, the full script behind a late release). A connection that
-- failed or got a reply out of step is closed; one whose reply is late is
-- kept, owing it, for the next round of the same lock (see kept), never
-- pooled while it owes (a late reply must not answer another command) and
-- never closed for it (the lock's next command must follow the late one
-- on the server). A pooled connection that breaks before any reply (the
-- server closed it while it was idle) is replaced once, as the C driver
-- does. A Redis Cluster master (redis+cluster://) is one master whose
-- command goes to the node lock:target names, each node with its own
-- pool; MOVED and ASK are followed (the protocol says "redirect" and
-- where), ASK with the ASKING the command bytes begin with. A
-- Sentinel-managed primary (redis+sentinel://) likewise: a sentinel is
-- asked first (lock:command is then the question, sent with no handshake)
-- and its answer redirects the command to the primary.
--
-- Targets, pools, TLS and the reads and writes against a deadline are
-- hiredlock/driver/cosocket_conn.lua's. The waiting side (one subscriber
-- per worker and master, requests parked on semaphores) is
-- hiredlock/driver/listener.lua, which run registers a waiting acquire
-- with; a first try (hiredlock/driver/first_try.lua) lets the acquires
-- parked behind it go once its round is over.
local core = require "hiredlock.core"
local listener = require "hiredlock.driver.listener"
local conn = require "hiredlock.driver.cosocket_conn"
local first_try = require "hiredlock.driver.first_try"

local ngx = assert(rawget(_G, "ngx"),
  "hiredlock.driver.cosocket_round runs under ngx_lua (OpenResty) only")
local spawn, wait = ngx.thread.spawn, ngx.thread.wait
local sleep = ngx.sleep
local now = core.now

local pcall, tostring, setmetatable, select, ceil = pcall, tostring,
  setmetatable, select, math.ceil
local targets_of, target_of, connect = conn.targets_of, conn.target_of,
  conn.connect
local read_reply, send, shake_hands, io_message = conn.read_reply, conn.send,
  conn.shake_hands, conn.io_message
local SETTLE_SLICE_MS = conn.SETTLE_SLICE_MS

local M = {
  --- Per worker, since it started: connections opened (new), taken from
  -- a keepalive pool (reused) and taken up again by the lock whose late
  -- reply they owed (kept), and rounds run; renewals run and renewer
  -- timers running now (one per client with held leases). For tests and
  -- monitoring.
  stats = { new = 0, reused = 0, kept = 0, rounds = 0, renewals = 0,
    renewers = 0 },
}

-- Reports master i's failure: "retarget" when the protocol wants the
-- command on another of a cluster's nodes (this one was never reached),
-- else "close".
local function failed(lock, i, why, message)
  return lock:fail(i, why, message) == "redirect" and "retarget" or "close"
end

-- The answers a connection's handshake got, per keepalive pool, as the
-- worker heard them last: { kind, value, kind, value, ... }. See identify.
local answers = conn.answers

-- A connection's handshake (AUTH, SELECT, INFO), alone: the command goes
-- only after every reply said OK, so that a refused AUTH or SELECT cannot
-- let it run as the default user or in database 0 and leave a key there.
-- nil when it went through, else converse's outcome after reporting the
-- failure to the protocol. What the server said is kept for the pool.
-- A handshake still unanswered at the round's deadline is part of opening
-- the connection, as in the C driver: within connect_timeout of the
-- connect, "carry" keeps the connection for the lock's next round in this
-- request (c.shaking: where its replies stand), which reads on instead of
-- sending it again. A connect itself cannot carry over (a cosocket's
-- connect runs to its end in the light thread that called it), nor a
-- handshake past the request (a cosocket is its request's).
local function handshake(client, lock, i, t, c, deadline, timeout_ms)
  local sock = c.sock
  local shaking = c.shaking
  c.shaking = nil
  local parser, heard, first
  if shaking then
    parser, heard, first = shaking.parser, shaking.heard, shaking.k
  else
    local ok, err = send(sock, t.handshake, deadline, timeout_ms)
    if not ok then
      return c.reused and "stale" or failed(lock, i, "unreachable", err)
    end
    parser, heard, first = core.parser(), {}, 1
    c.opened = c.opened or now()
  end
  local function skippable()
    return lock:skippable(i)
  end
  for k = first, t.replies do
    local kind, value, rerr, timed_out = read_reply(sock, parser, deadline,
      timeout_ms, skippable)
    if not kind then
      if value == "skipped" or timed_out then
        if value == "skipped" then -- settled without it: nothing of ours sent
          c.stream:skip(lock, i)
        else
          lock:missed(i, rerr)
        end
        if now() < c.opened + t.connect_timeout_ms / 1000 then
          c.shaking = { parser = parser, heard = heard, k = k }
          return "carry"
        end
        return "close"
      elseif c.reused and k == 1 and value == "unreachable" then
        return "stale" -- a pooled connection the server closed while idle
      end
      return failed(lock, i, value, rerr)
    end
    local result, message = client:handshake_reply(i, k, kind, value)
    if result ~= "ok" then
      return failed(lock, i, result, message)
    end
    heard[2 * k - 1], heard[2 * k] = kind, value
  end
  answers[t.opts.pool] = heard
  t.heard = heard
  return nil
end

-- The handshake's answers the worker kept for a pool, told to client as
-- if its connection had heard them; false when one is refused (the
-- uptime kept may be that of a younger server than now: ask again).
local function replay(client, i, t, heard)
  for k = 1, t.replies do
    if client:handshake_reply(i, k, heard[2 * k - 1], heard[2 * k]) ~= "ok"
    then
      return false
    end
  end
  return true
end

-- Whether the client knows who is behind a connection to t before its
-- command goes there. A new connection shakes hands. A pooled one was
-- checked when it was new, by whichever client opened it: clients with
-- the same masters and credentials share the worker's pools, also those
-- made per request. A client that asks who the server is (several
-- masters, restart_guard: INFO in its handshake) and has not heard the
-- answer the worker keeps for that pool yet replays it (a pool's live
-- connections all reach the server process that answered: a restart ends
-- them), so its check of one server under two names sees every master;
-- without a kept answer, or when the replay is refused, it shakes hands
-- again on the pooled connection (AUTH and SELECT again change nothing),
-- and that answer stands. nil, or converse's outcome.
local function identify(client, lock, i, t, c, deadline, timeout_ms)
  if t.replies == 0 then
    return nil
  end
  if c.shaking then -- an earlier round's handshake, still to be answered
    return handshake(client, lock, i, t, c, deadline, timeout_ms)
  end
  if not c.fresh then
    local heard = answers[t.opts.pool]
    if not t.asks or (heard and t.heard == heard) then
      return nil
    end
    if heard and replay(client, i, t, heard) then
      t.heard = heard
      return nil
    end
  end
  return handshake(client, lock, i, t, c, deadline, timeout_ms)
end

-- A connection the stream held a command back from (it owes too many
-- replies): reads what it owes until the round's deadline, so that a
-- master that is back gets the lock's later rounds. "keep", or "close"
-- when it broke or said more than it owed.
local function drain(sock, stream, deadline)
  while stream:owed() > 0 do
    local left = ceil((deadline - now()) * 1000)
    if left <= 0 then
      return "keep"
    end
    sock:settimeout(left)
    local data, err = sock:receiveany(65536)
    if not data then
      return err == "timeout" and "keep" or "close"
    end
    if not stream:drain(data) then
      return "close"
    end
  end
  return "keep"
end

-- Master i's part of a round on connection c ({sock, stream, fresh,
-- reused}; the stream is the core's: owed replies dropped first, NOSCRIPT
-- resends, the late command, commands held back). Returns "keep" when the
-- connection may be kept (it may owe replies: see place), "close" when it
-- must not, "stale" when a kept or pooled connection broke before it
-- answered anything (the server closed it while it was idle: the command
-- never ran, a fresh connection may try), or, for a Redis Cluster or a
-- Sentinel-managed primary, "redirect" (MOVED, ASK, the primary a
-- sentinel named: keep this connection, send the command where
-- lock:target says) and "retarget" (this node failed before the command
-- went out: close it, try the one lock:target says), or "carry" (a new
-- connection's handshake still unanswered: kept for the lock's next
-- round, see handshake).
local function converse(client, lock, i, t, c, nodes, timeout_ms)
  local deadline = now() + timeout_ms / 1000
  local outcome = identify(client, lock, i, t, c, deadline, timeout_ms)
  if outcome then
    return outcome
  end
  local sock, stream = c.sock, c.stream
  local bytes = stream:start(lock, i)
  if not bytes then -- held back: it owes too much, master i is done
    return drain(sock, stream, deadline)
  end
  local ok, err = send(sock, bytes, deadline, timeout_ms)
  if not ok then
    if c.reused and not stream:replied() then
      return "stale"
    end
    return failed(lock, i, "unreachable", err)
  end
  while true do
    local left = ceil((deadline - now()) * 1000)
    local data, rerr = nil, "timeout"
    local slice = left > SETTLE_SLICE_MS and SETTLE_SLICE_MS or left
    if left > 0 then
      sock:settimeout(slice)
      data, rerr = sock:receiveany(65536)
    end
    if not data and rerr == "timeout" and slice < left then
      -- A slice of the wait ended, not the deadline. Known to be late, and
      -- the round decided without it: not waited for (issue 24 item 4).
      -- Its reply is owed; the connection is kept for the lock's next
      -- round like a late one. A master that answers within a slice is
      -- not late any more.
      if lock:skippable(i) then
        return stream:skip(lock, i) == "done" and "keep" or "close"
      end
    elseif not data then
      if rerr ~= "timeout" then
        if c.reused and not stream:replied() then
          return "stale"
        end
        return failed(lock, i, "unreachable",
          io_message(rerr, "timeout", timeout_ms))
      end
      -- Kept, owing the reply: whatever the master does with the command
      -- when it wakes up, this lock's next command follows it there on
      -- this connection, and a release or extend sends the full script
      -- behind it (hrl_proto_late_command), so a lost script cache cannot
      -- keep it from running.
      local action, late = stream:expire(lock, i,
        io_message("timeout", "timeout", timeout_ms))
      if late then
        sock:settimeout(timeout_ms)
        if not sock:send(late) then
          return "close"
        end
      end
      return action == "done" and "keep" or "close"
    else
      local action, out = stream:feed(lock, i, data)
      if action == "send" then -- the full script after a NOSCRIPT
        ok, err = send(sock, out, deadline, timeout_ms)
        if not ok then
          return failed(lock, i, "unreachable", err)
        end
      elseif action == "done" then
        if nodes and select(3, lock:target(i)) ~= t.label then
          return "redirect"
        end
        return "keep"
      elseif action == "close" then -- out of step, recorded
        return "close"
      end
    end
  end
end

local stats = M.stats

-- Connections that owe replies to a lock's commands, per lock handle and
-- target: {sock, stream, ctx}. A connection whose reply is late is kept,
-- not closed and not pooled: it serves that lock's next round only, so the
-- master runs the lock's commands in the order they were sent (a release
-- behind its SET, a waiter's try behind its step aside: issue 24 item 9,
-- and docs/RELIABILITY.md's pooled rule), and no other lock's command
-- waits behind what it owes. Once it owes nothing it goes back to the
-- keepalive pool. A cosocket belongs to the request (or timer) that
-- opened it, which closes it when it ends: a lock whose next operation
-- runs in another request uses another connection.
local kept = setmetatable({}, { __mode = "k" })

-- A connection to t for lock's round: the one the lock left owing replies
-- there, else one from the keepalive pool, else a new one; nil, err.
local function obtain(lock, t)
  local mine = kept[lock]
  local c = mine and mine[t]
  if c then
    mine[t] = nil
    if c.ctx == ngx.ctx then
      stats.kept = stats.kept + 1
      return c
    end
  end
  local opened = now()
  local sock, err = connect(t)
  if not sock then
    return nil, err
  end
  local reused = sock:getreusedtimes() > 0
  if reused then
    stats.reused = stats.reused + 1
  else
    stats.new = stats.new + 1
  end
  return { sock = sock, stream = core.stream(), fresh = not reused,
    reused = reused, opened = not reused and opened or nil }
end

-- Where a connection goes after a round it may be kept from: the
-- keepalive pool when it owes nothing, else the lock's (see kept), as
-- also when its handshake carries over (see handshake).
local function place(lock, t, c)
  if c.stream:owed() == 0 and not c.shaking then
    if not c.sock:setkeepalive() then
      c.sock:close()
    end
    return
  end
  c.fresh, c.reused, c.ctx = false, true, ngx.ctx
  local mine = kept[lock]
  if not mine then
    mine = {}
    kept[lock] = mine
  end
  mine[t] = c
end

-- Master i's part of a round, from connect to keepalive, kept or closed;
-- for a Redis Cluster, on to the nodes its redirects name.
local function exchange(client, lock, i, list, timeout_ms)
  local stale = false
  local nodes = list[i].nodes ~= nil
  for _ = 1, 16 do -- redirects are bounded by the protocol first
    local t = target_of(list, lock, i)
    local c, err = obtain(lock, t)
    local outcome
    if not c then
      outcome = failed(lock, i, "unreachable", err)
    else
      local ok
      ok, outcome = pcall(converse, client, lock, i, t, c, nodes, timeout_ms)
      if not ok then -- never expected: keep the worker's log free of aborts
        lock:fail(i, "protocol", tostring(outcome))
        outcome = "close"
      end
      if outcome == "keep" or outcome == "redirect" or outcome == "carry" then
        place(lock, t, c)
      else
        c.sock:close()
      end
    end
    if outcome == "stale" then
      if stale then -- a second time only after a stale pooled connection
        lock:fail(i, "unreachable", "server closed the connection")
        return
      end
      stale = true
    elseif outcome ~= "redirect" and outcome ~= "retarget" then
      return
    end
  end
  lock:fail(i, "protocol", "too many redirects")
end

-- One round: every master at once, each within its own deadline.
local function round(client, lock, timeout_ms)
  stats.rounds = stats.rounds + 1
  local list = targets_of(client)
  local n = #list
  local threads = {}
  for i = 2, n do
    threads[i] = spawn(exchange, client, lock, i, list, timeout_ms)
    if not threads[i] then -- no thread to be had: do it here, in turn
      exchange(client, lock, i, list, timeout_ms)
    end
  end
  exchange(client, lock, 1, list, timeout_ms)
  for i = 2, n do
    if threads[i] then
      local ok, err = wait(threads[i])
      if not ok then
        lock:fail(i, "protocol", tostring(err))
      end
    end
  end
end

-- Runs the begun operation to its end (the driver loop of hiredlock/proto.h).
-- A waiting acquire registers its token with the worker's listener before
-- the round that queues it, and waits on its semaphore between tries. A
-- first try (first_try.enter's flight) lets the acquires parked behind it
-- go once its round is over.
local function run(client, lock, flight)
  local waiter
  while true do
    local step, a, b = lock:step()
    if flight and step ~= "round" then
      first_try.over(flight)
      flight = nil
    end
    if step == "done" then
      if waiter then
        waiter:leave()
      end
      return a, b
    elseif step == "wait" then
      if waiter then
        waiter:wait(lock, a)
      else
        sleep(a / 1000)
      end
    else
      if not waiter then
        local token = lock:waiter()
        if token then
          waiter = listener.enter(client, token, targets_of(client),
            shake_hands)
        end
      end
      round(client, lock, a)
      if flight then
        first_try.over(flight)
        flight = nil
      end
    end
  end
end

M.run = run

return M
