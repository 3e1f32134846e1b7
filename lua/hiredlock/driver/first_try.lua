--- The cosocket driver's first tries: one at a time per lock name and
-- nginx worker, for waiting acquires (hiredlock/driver/cosocket.lua).
--
-- A burst of requests for one name reaches a worker in one batch of
-- events, and nginx runs each request until it yields before it reads any
-- reply. Were every waiting acquire to send its first try at once, the try
-- that wins would have its reply read only after the worker had run the
-- whole batch (each request's try: a connection taken or opened, the
-- command written) and the other worker and Redis had had the CPU too: in
-- the stampede benchmark (200 requests, 2 workers) the holder started its
-- work 6 to 27 ms after it arrived, while lua-resty-lock's holder, which
-- takes a shared dict without yielding, starts at once. So a waiting
-- acquire whose name has a first try out from this worker (same masters,
-- same credentials) parks until that try's round is over, and then sends
-- its own: the batch costs a semaphore wait per request, the first try's
-- reply is read next, and whoever won starts its work while the others'
-- tries go out. Nothing the protocol decides changes (the waiters still
-- try, queue and hear hand-offs as before); a waiter sends its first try
-- at most one round later, the round it would have lost to anyway.
--
-- Only waiting acquires of a plain lock (timeout > 0, no mode or "lock")
-- park: an acquire without a wait goes at once, and readers or permits do
-- not exclude each other. A waiter parks no longer than its own timeout,
-- nor than the first try's round can last (its masters' connect_timeout +
-- timeout): a request aborted mid-round never posts, and its place is
-- then taken by the next arrival. The waiters of one first try go
-- together when it is over, never behind one another's.
local semaphore = require "ngx.semaphore"
local core = require "hiredlock.core"

local now = core.now
local concat, pairs, setmetatable = table.concat, pairs, setmetatable

local M = {}

-- Per key (name and masters): the first try out, {key, sema, ends}. An
-- entry whose owner never said it was over (its request aborted) stays
-- until the name's next acquire replaces it, or a sweep: when the table
-- has grown to `sweep_at` entries, those past their end go (amortized: the
-- next sweep waits for twice the entries left).
local out = {}
local entries, sweep_at = 0, 64

local function sweep(t)
  entries = 0
  for key, flight in pairs(out) do
    if flight.ends <= t then
      out[key] = nil
    else
      entries = entries + 1
    end
  end
  sweep_at = entries * 2 > 64 and entries * 2 or 64
end

-- The masters' part of a key, per targets list (a client's, computed once):
-- their pools (address, database, credentials digest) and the longest a
-- round there can last, in seconds.
local masters = setmetatable({}, { __mode = "k" })

local function masters_of(list)
  local m = masters[list]
  if not m then
    local pools, longest = {}, 0
    for i = 1, #list do
      local t = list[i]
      pools[i] = t.opts.pool
      local ms = (t.connect_timeout_ms or 0) + (t.timeout_ms or 0)
      if ms > longest then
        longest = ms
      end
    end
    m = { key = "\0" .. concat(pools, "\0"), longest = longest / 1000 }
    masters[list] = m
  end
  return m
end

--- Before a waiting acquire's first round, on its client's targets list
-- (hiredlock/driver/cosocket_conn.lua). With no first try out for the
-- name, the caller's is the one: returns it, to pass to M.over once its
-- first round is over. Else parks until that one is over, wait_s (the
-- acquire's timeout) or its round's bound, whichever comes first, and
-- returns nil.
function M.enter(name, list, wait_s)
  local m = masters_of(list)
  local key = name .. m.key
  local t = now()
  local ahead = out[key]
  if ahead and t < ahead.ends then
    local left = ahead.ends - t
    ahead.sema:wait(wait_s < left and wait_s or left)
    return nil
  end
  if not ahead then
    if entries + 1 >= sweep_at then
      sweep(t)
    end
    entries = entries + 1
  end
  local flight = { key = key, sema = semaphore.new(0), ends = t + m.longest }
  out[key] = flight
  return flight
end

--- The owner's first round is over: its waiters go.
function M.over(flight)
  if out[flight.key] == flight then
    out[flight.key] = nil
    entries = entries - 1
  end
  local waiting = -flight.sema:count()
  if waiting > 0 then
    flight.sema:post(waiting)
  end
end

--- How many first tries the worker has on record (out, or abandoned and
-- not swept yet): for tests and monitoring.
function M.size()
  return entries
end

return M
