--- A driver over luasocket built only on the core's sans-I/O protocol
-- (lock:begin/step/command/reply/fail, client:handshake, core.parser): the
-- loop an OpenResty cosocket driver runs, here with blocking sockets and
-- one master after the other. For the specs: it proves the protocol methods
-- are enough to run the algorithm and that the facade's driver seam takes
-- a driver other than the C core's own. It speaks plain TCP only: a
-- rediss:// master fails with a message saying so (luasocket has no TLS;
-- the C driver and the cosocket driver do). It keeps no subscriber
-- connection: a waiting acquire just sleeps the wait the core gives
-- ("wait", ms), which is bounded by the holder's TTL, retry_delay and the
-- caller's timeout, so it still gets the lock a releaser hands it, only
-- later.
local core = require "hiredlock.core"
local socket = require "socket"
local system = require "system"

local D = { rounds = 0 }

-- Connections per client handle and master: { sock, parser }.
local pools = setmetatable({}, { __mode = "k" })

local function close(pool, i)
  if pool[i] then
    pool[i].sock:close()
    pool[i] = nil
  end
end

-- Reads lines until the parser has a complete reply.
local function read_reply(conn)
  while true do
    local kind, value = conn.parser:next()
    if kind then
      return kind, value
    elseif value then
      return nil, value -- protocol error
    end
    local line, err = conn.sock:receive("*l")
    if not line then
      return nil, err
    end
    conn.parser:feed(line .. "\r\n")
  end
end

-- Opens a connection to master i's target (the master, or the cluster node
-- lock:target names) and sends its handshake.
local function open(client, lock, i, timeout_ms)
  if client:master_info(i).tls then
    return nil, "TLS (rediss://) is not supported by the luasocket test driver"
  end
  local host, port, _, _, handshake = lock:target(i)
  local sock = socket.tcp()
  sock:settimeout(timeout_ms / 1000)
  local ok, err = sock:connect(host, tonumber(port))
  if not ok then
    sock:close()
    return nil, err
  end
  local conn = { sock = sock, parser = core.parser() }
  local bytes, replies = client:handshake(i)
  if replies > 0 and handshake then -- not to a sentinel
    sock:send(bytes)
    for k = 1, replies do
      local kind, value = read_reply(conn)
      if not kind then
        sock:close()
        return nil, value
      end
      local result, message = client:handshake_reply(i, k, kind, value)
      if result ~= "ok" then
        sock:close()
        return nil, message, result
      end
    end
  end
  return conn
end

-- One master's part of a round: on its connection, or, for a Redis
-- Cluster, on that of the node lock:target names, following MOVED and ASK
-- ("redirect"), and reading on at "more" (the next reply of the same
-- bytes: ASKING's OK, a fenced SET's INCR).
local function exchange(client, lock, pool, i, timeout_ms)
  for _ = 1, 16 do -- redirects are bounded by the protocol first
    local _, _, label = lock:target(i)
    local key = i .. " " .. label
    local conn, err, why = pool[key], nil, nil
    if not conn then
      conn, err, why = open(client, lock, i, timeout_ms)
      if not conn then
        if lock:fail(i, why or "unreachable", err) ~= "redirect" then
          return
        end
      end
      pool[key] = conn
    end
    if conn then
      conn.sock:settimeout(timeout_ms / 1000)
      local result = "resend"
      while result == "resend" or result == "more" do
        if result == "resend" then
          local sent, serr = conn.sock:send((lock:command(i)))
          if not sent then
            lock:fail(i, "unreachable", serr)
            return close(pool, key)
          end
        end
        local kind, value = read_reply(conn)
        if not kind then
          lock:fail(i, value == "protocol error" and "protocol" or "unreachable",
            value)
          return close(pool, key)
        end
        result = lock:reply(i, kind, value)
      end
      if result ~= "redirect" then
        return
      end
    end
  end
end

-- Runs the begun operation to its end, as the header's driver loop says.
local function run(client, lock)
  local pool = pools[client]
  if not pool then
    pool = {}
    pools[client] = pool
  end
  while true do
    local step, a, b = lock:step()
    if step == "done" then
      return a, b
    elseif step == "wait" then
      system.sleep(a / 1000)
    else
      D.rounds = D.rounds + 1
      for i = 1, client:masters() do
        exchange(client, lock, pool, i, a)
      end
    end
  end
end

-- The driver contract (see hiredlock/driver/hiredis.lua).
function D.acquire(client, name, opts)
  local lock, timeout = client:lock(name, opts)
  local begun, berr = lock:begin("acquire", timeout)
  if not begun then -- two masters known to be one server
    return nil, berr
  end
  local ok, err = run(client, lock)
  if not ok then
    return nil, err
  end
  return lock
end

function D.release(lock)
  local ok, err = lock:begin("release")
  if not ok then
    return nil, err
  end
  return run(lock:client(), lock)
end

function D.extend(lock, ttl)
  local ok, err = lock:begin("extend", ttl)
  if not ok then
    return nil, err
  end
  return run(lock:client(), lock)
end

function D.inspect(client, name)
  local lock = client:lock(name)
  local ok, err = lock:begin("inspect")
  if not ok then
    return nil, err
  end
  run(client, lock)
  return lock:inspection()
end

--- Managed leases: what a driver's renewer does for one lock handle when
-- its renewal is due (lock:renew_due()), once: the renewal runs on the
-- lease's twin like any operation. Returns "renewed" | "lost", reason |
-- "failed", err | "cancelled" | "wait" | "none".
function D.renew(lock)
  local what, twin = lock:renew_begin()
  if what ~= "round" then
    return what, twin
  end
  run(lock:client(), twin)
  return lock:renew_end()
end

return D
