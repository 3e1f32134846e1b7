--- The OpenResty driver: every byte goes through ngx.socket.tcp cosockets,
-- every wait through ngx.semaphore or ngx.sleep, so a lock never blocks an
-- nginx worker. What to send, what a reply means, quorum, validity, drift,
-- cleanup, the waiting queue and when to try again are the C core's (the
-- sans-I/O protocol of hiredlock.core, see docs/LUA-API.md); this file only
-- opens connections, moves bytes and waits. The waiting side (one
-- subscriber per worker and client, requests parked on semaphores) is
-- hiredlock/driver/listener.lua.
--
-- The contract is the one of hiredlock/driver/hiredis.lua:
--   acquire(client_handle, name, opts) -> lock_handle | nil, err
--   release(lock_handle)               -> true | nil, err
--   extend(lock_handle, ttl)           -> true | nil, err
--
-- A round goes to all N masters at once, one light thread
-- (ngx.thread.spawn) per master after the first, each against its own
-- deadline: connect_timeout to connect, then the round's timeout for the
-- replies. A connection comes from a keepalive pool whose name holds the
-- master, its database and a digest of the handshake (credentials), so two
-- clients share connections only when they are interchangeable. A new
-- connection sends the handshake (AUTH/SELECT) ahead of the command; a
-- connection that failed, timed out or got a reply out of step is closed,
-- never pooled (a late reply must not answer a later command). A pooled
-- connection that breaks before any reply (the server closed it while it
-- was idle) is replaced once, as the C driver does. A Redis Cluster master
-- (redis+cluster://) is one master whose command goes to the node
-- lock:target names, each node with its own pool; MOVED and ASK are
-- followed (the protocol says "redirect" and where), ASK with the ASKING
-- the command bytes begin with. A Sentinel-managed primary
-- (redis+sentinel://) likewise: a sentinel is asked first (lock:command is
-- then the question, sent with no handshake) and its answer redirects the
-- command to the primary.
--
-- A rediss:// master's new connection shakes hands with the cosocket's own
-- TLS (sock:sslhandshake) after connect, within what is left of
-- connect_timeout, verification on unless ssl_cert_reqs is "none". The
-- trusted CAs are nginx's (lua_ssl_trusted_certificate, and
-- lua_ssl_verify_depth for longer chains): a cosocket cannot be given a CA
-- file of its own, so ssl_ca_certs and ssl_ca_path are not used here. The
-- host name is checked (and sent as SNI) when ssl_check_hostname is on;
-- nginx checks DNS names only, so an IP address with the check on is
-- refused with a message saying so. ssl_certfile / ssl_keyfile give the
-- client certificate (tcpsock:setclientcert), read once per worker.
--
-- Managed leases (auto_renew) are renewed by one ngx.timer per worker and
-- client, not one per lock: cosockets cannot cross from a timer to a
-- request, so the timer runs each renewal's round with cosockets of its own,
-- driving the same sans-I/O extend (on the lease's twin) as every driver.
-- It sleeps on a semaphore until the next due renewal (a new lease wakes
-- it), and ends when the client has no held lease left.
--
-- Cosockets exist in the rewrite, access and content phases and in timers
-- (and the SSL certificate/session phases); elsewhere (init, init_worker,
-- set, header and body filters, log, balancer) the operations return
-- nil, "cosockets unavailable in the <phase> phase ..." at once instead of
-- blocking the worker. Where cosockets exist, argument errors raise as with
-- the hiredis driver, with the documented messages.
local core = require "hiredlock.core"
local listener = require "hiredlock.driver.listener"

local ngx = assert(rawget(_G, "ngx"),
  "hiredlock.driver.cosocket runs under ngx_lua (OpenResty) only")
local tcp = ngx.socket.tcp
local spawn, wait = ngx.thread.spawn, ngx.thread.wait
local sleep = ngx.sleep
local get_phase = ngx.get_phase
local md5 = ngx.md5
local now = core.now

local pcall, tostring, setmetatable, ceil, open, type =
  pcall, tostring, setmetatable, math.ceil, io.open, type

local M = {
  --- Per worker, since it started: connections opened (new) and taken from
  -- a keepalive pool (reused), and rounds run; renewals run and renewer
  -- timers running now (one per client with held leases). For tests and
  -- monitoring.
  stats = { new = 0, reused = 0, rounds = 0, renewals = 0, renewers = 0 },
}

-- Where ngx.socket.tcp, ngx.sleep and ngx.thread work (ngx_lua's contexts).
local COSOCKET_PHASES = {
  rewrite = true,
  server_rewrite = true,
  access = true,
  content = true,
  timer = true,
  ssl_cert = true,
  ssl_session_fetch = true,
  ssl_client_hello = true,
  preread = true, -- ngx_stream_lua
}

local function phase_error()
  local phase = get_phase()
  if COSOCKET_PHASES[phase] then
    return nil
  end
  return ("cosockets unavailable in the %s phase (lock from rewrite, access, "
    .. "content or an ngx.timer)"):format(tostring(phase))
end

-- Per client handle: each master's connect target and pool, computed once.
local targets = setmetatable({}, { __mode = "k" })

-- An IPv4 or IPv6 address rather than a name.
local function is_address(host)
  return host:find("^[%d.]+$") ~= nil or host:find(":", 1, true) ~= nil
end

-- A PEM file's contents parsed by ngx.ssl's parse (a certificate chain or a
-- private key), or nil, message.
local function read_pem(what, path, parse)
  local f, err = open(path, "rb")
  if not f then
    return nil, ("TLS: %s %s: %s"):format(what, path, tostring(err):gsub("^[^:]*: ", ""))
  end
  local pem = f:read("*a")
  f:close()
  local parsed, perr = parse(pem)
  if not parsed then
    return nil, ("TLS: %s %s: %s"):format(what, path, tostring(perr))
  end
  return parsed
end

-- A rediss:// master's TLS settings as the cosocket takes them.
local function tls_target(info)
  local verify = info.ssl_cert_reqs ~= "none"
  local check = verify and info.ssl_check_hostname
  local t = {
    verify = verify,
    -- SNI and the name nginx checks; nginx checks when both are given.
    server_name = check and info.host or nil,
    certfile = info.ssl_certfile,
    keyfile = info.ssl_keyfile or info.ssl_certfile,
  }
  if check and is_address(info.host) then
    t.error = "TLS: nginx cannot check an IP address (name the host, or ssl_check_hostname=false)"
  end
  return t
end

-- The client certificate and key, parsed once (per target, per worker).
local function client_cert(tls)
  if tls.cert or tls.cert_error then
    return tls.cert, tls.key, tls.cert_error
  end
  local ssl = require "ngx.ssl"
  local cert, err = read_pem("ssl_certfile", tls.certfile, ssl.parse_pem_cert)
  local key
  if cert then
    key, err = read_pem("ssl_keyfile", tls.keyfile, ssl.parse_pem_priv_key)
  end
  if not key then
    tls.cert_error = err
    return nil, nil, err
  end
  tls.cert, tls.key = cert, key
  return cert, key
end

-- A host as a cosocket connects to it: an IPv6 address in brackets.
local function host_of(host)
  return host:find(":", 1, true) and "[" .. host .. "]" or host
end

local function targets_of(client)
  local list = targets[client]
  if list then
    return list
  end
  list = {}
  for i = 1, client:masters() do
    local info = client:master_info(i)
    local handshake, replies = client:handshake(i)
    local tls = info.tls and tls_target(info) or nil
    local t = {
      label = info.label,
      handshake = handshake,
      replies = replies,
      connect_timeout_ms = info.connect_timeout_ms,
      tls = tls,
      -- The handshake (AUTH, SELECT) and the TLS settings are the whole
      -- state of a connection: their digest keeps credentials out of the
      -- pool name and out of logs.
      opts = { pool = ("hiredlock:%s:%d:%s"):format(info.label, info.db,
        md5(handshake .. (tls and ("\0tls\0%s\0%s\0%s\0%s"):format(
          tls.verify, tls.server_name or "", tls.certfile or "",
          tls.keyfile or "") or ""))) },
    }
    if info.path then
      t.host = "unix:" .. info.path
    else
      t.host, t.port = host_of(info.host), info.port
    end
    t.sentinel = info.sentinel -- its address moves: no subscriber there
    if info.cluster or info.sentinel then
      t.digest = md5(handshake)
      t.nodes = {} -- per node label, as target_of makes them
    end
    list[i] = t
  end
  targets[client] = list
  return list
end

-- Where master i's command goes now: the master's target, or for a Redis
-- Cluster or a Sentinel-managed primary that of the node the protocol
-- names (lock:target: a cluster's node, the primary, or a sentinel to ask,
-- which gets no handshake), one per node and pool of its own.
local function target_of(list, lock, i)
  local base = list[i]
  if not base.nodes then
    return base
  end
  local host, port, label, _, handshake = lock:target(i)
  local t = base.nodes[label]
  if not t then
    t = {
      label = label,
      host = host_of(host),
      port = port,
      handshake = handshake and base.handshake or "",
      replies = handshake and base.replies or 0,
      connect_timeout_ms = base.connect_timeout_ms,
      opts = { pool = ("hiredlock:%s:%s:%s"):format(label,
        handshake and base.digest or "sentinel", base.digest) },
    }
    base.nodes[label] = t
  end
  return t
end

-- ngx_lua's words for failures, in the C driver's words where they differ,
-- so a message reads the same whichever driver ran.
local function io_message(err, what, ms)
  if err == "timeout" then
    return ("%s after %d ms"):format(what, ms)
  elseif err == "closed" then
    return "server closed the connection"
  end
  return err
end

-- lua-resty-core (0.1.25 at least) asserts instead of returning the error
-- when a handshake that failed verification completed at once: the reason
-- is then still in its shared error buffer (resty.core.base), where
-- sslhandshake's last call left it. nil when it cannot be read.
local function handshake_error()
  local ok, base = pcall(require, "resty.core.base")
  if not ok or type(base.get_errmsg_ptr) ~= "function" then
    return nil
  end
  local errmsg = base.get_errmsg_ptr()
  if errmsg == nil or errmsg[0] == nil then
    return nil
  end
  return require("ffi").string(errmsg[0])
end

-- A new connection's TLS handshake, within what is left of the connect
-- timeout (deadline); true, or nil, message.
local function shake_hands(sock, tls, deadline, connect_timeout_ms)
  if tls.certfile then
    local cert, key, err = client_cert(tls)
    if not cert then
      return nil, err
    end
    local ok, cerr = sock:setclientcert(cert, key)
    if not ok then
      return nil, "TLS: " .. tostring(cerr)
    end
  end
  local left = ceil((deadline - now()) * 1000)
  if left <= 0 then
    return nil, io_message("timeout", "connect timeout", connect_timeout_ms)
      .. " (TLS handshake)"
  end
  sock:settimeout(left)
  local called, session, err = pcall(sock.sslhandshake, sock, nil,
    tls.server_name, tls.verify)
  if not called then
    return nil, "TLS: " .. (handshake_error() or "handshake refused")
  end
  if not session then
    if err == "timeout" then
      return nil, io_message(err, "connect timeout", connect_timeout_ms)
        .. " (TLS handshake)"
    end
    return nil, "TLS: " .. tostring(err)
  end
  return true
end

local function connect(t)
  if t.tls and t.tls.error then
    return nil, t.tls.error
  end
  local deadline = now() + t.connect_timeout_ms / 1000
  local sock = tcp()
  sock:settimeout(t.connect_timeout_ms)
  local ok, err
  if t.port then
    ok, err = sock:connect(t.host, t.port, t.opts)
  else
    ok, err = sock:connect(t.host, t.opts)
  end
  if not ok then
    return nil, io_message(err, "connect timeout", t.connect_timeout_ms)
  end
  if t.tls and sock:getreusedtimes() == 0 then
    ok, err = shake_hands(sock, t.tls, deadline, t.connect_timeout_ms)
    if not ok then
      sock:close()
      return nil, err
    end
  end
  return sock
end

-- The next reply within the deadline: kind, value | nil, why, message,
-- timed_out.
local function read_reply(sock, parser, deadline, timeout_ms)
  while true do
    local kind, value = parser:next()
    if kind then
      return kind, value
    elseif value then
      return nil, "protocol", value
    end
    local left = ceil((deadline - now()) * 1000)
    if left <= 0 then
      return nil, "unreachable", io_message("timeout", "timeout", timeout_ms),
        true
    end
    sock:settimeout(left)
    local bytes, err = sock:receiveany(65536)
    if not bytes then
      return nil, "unreachable", io_message(err, "timeout", timeout_ms),
        err == "timeout"
    end
    local fed, ferr = parser:feed(bytes)
    if not fed then
      return nil, "protocol", ferr
    end
  end
end

local function send(sock, data, deadline, timeout_ms)
  local left = ceil((deadline - now()) * 1000)
  if left <= 0 then
    return nil, io_message("timeout", "timeout", timeout_ms)
  end
  sock:settimeout(left)
  local sent, err = sock:send(data)
  if not sent then
    return nil, io_message(err, "timeout", timeout_ms)
  end
  return true
end

-- Reports master i's failure: "retarget" when the protocol wants the
-- command on another of a cluster's nodes (this one was never reached),
-- else "close".
local function failed(lock, i, why, message)
  return lock:fail(i, why, message) == "redirect" and "retarget" or "close"
end

-- A new connection's handshake (AUTH, SELECT), alone: the command goes
-- only after every reply said OK, so that a refused AUTH or SELECT cannot
-- let it run as the default user or in database 0 and leave a key there.
-- nil when it went through, else converse's outcome after reporting the
-- failure to the protocol.
local function handshake(client, lock, i, t, sock, parser, deadline,
                         timeout_ms)
  local ok, err = send(sock, t.handshake, deadline, timeout_ms)
  if not ok then
    return failed(lock, i, "unreachable", err)
  end
  for k = 1, t.replies do
    local kind, value, rerr, timed_out = read_reply(sock, parser, deadline,
      timeout_ms)
    if not kind then
      if timed_out then
        lock:missed(i, rerr)
        return "close"
      end
      return failed(lock, i, value, rerr)
    end
    local result, message = client:handshake_reply(i, k, kind, value)
    if result ~= "ok" then
      return failed(lock, i, result, message)
    end
  end
  return nil
end

-- Master i's part of a round on one connection. Returns "pool" when the
-- connection may be kept, "close" when it must not, "stale" when a pooled
-- connection broke before it answered anything (the server closed it while
-- it was idle: the command never ran, a fresh connection may try), or, for
-- a Redis Cluster, "redirect" (MOVED, ASK: keep this connection, send the
-- command where lock:target says) and "retarget" (this node failed before
-- the command went out: close it, try the one lock:target says).
local function converse(client, lock, i, t, sock, reused, timeout_ms)
  local deadline = now() + timeout_ms / 1000
  local parser = core.parser()
  if not reused and t.replies > 0 then
    local outcome = handshake(client, lock, i, t, sock, parser, deadline,
      timeout_ms)
    if outcome then
      return outcome
    end
  end
  local command, expected = lock:command(i)
  local ok, err = send(sock, command, deadline, timeout_ms)
  if not ok then
    if reused then
      return "stale"
    end
    return failed(lock, i, "unreachable", err)
  end
  local answered = 0
  while true do
    local kind, value, rerr, timed_out = read_reply(sock, parser, deadline,
      timeout_ms)
    if not kind then
      if reused and answered == 0 and value == "unreachable" and not timed_out
      then
        return "stale"
      end
      if timed_out then
        -- The connection is closed unanswered: whatever the master does
        -- with the command when it wakes up, the full script goes too (see
        -- hrl_proto_late_command), so a lost script cache cannot keep a
        -- release from running there.
        local late = lock:missed(i, rerr)
        if late then
          sock:settimeout(timeout_ms)
          sock:send(late)
        end
        return "close"
      end
      return failed(lock, i, value, rerr)
    end
    answered = answered + 1
    local result = lock:reply(i, kind, value)
    if result == "redirect" then
      return "redirect"
    elseif result ~= "resend" and result ~= "more" then
      -- A reply out of step leaves the stream unusable, and so does one
      -- still to come (the command behind a refused ASKING).
      return (result == "protocol" or answered < expected) and "close"
        or "pool"
    elseif result == "resend" then
      command, expected = lock:command(i)
      answered = 0
      ok, err = send(sock, command, deadline, timeout_ms)
      if not ok then
        return failed(lock, i, "unreachable", err)
      end
    end
  end
end

local stats = M.stats

-- Master i's part of a round, from connect to keepalive or close; for a
-- Redis Cluster, on to the nodes its redirects name.
local function exchange(client, lock, i, list, timeout_ms)
  local stale = false
  for _ = 1, 16 do -- redirects are bounded by the protocol first
    local t = target_of(list, lock, i)
    local sock, err = connect(t)
    local outcome
    if not sock then
      outcome = failed(lock, i, "unreachable", err)
    else
      local reused = sock:getreusedtimes() > 0
      if reused then
        stats.reused = stats.reused + 1
      else
        stats.new = stats.new + 1
      end
      local ok
      ok, outcome = pcall(converse, client, lock, i, t, sock, reused,
        timeout_ms)
      if not ok then -- never expected: keep the worker's log free of aborts
        lock:fail(i, "protocol", tostring(outcome))
        outcome = "close"
      end
      if (outcome == "pool" or outcome == "redirect")
        and sock:setkeepalive() then
        sock = nil
      end
      if sock then
        sock:close()
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
-- the round that queues it, and waits on its semaphore between tries.
local function run(client, lock)
  local waiter
  while true do
    local step, a, b = lock:step()
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
    end
  end
end

-- Managed leases. The renewer of a client keeps its leases weakly: a lease
-- collected unreleased is not renewed any more (its key expires with its
-- TTL), as everywhere.
local has_semaphore, semaphore = pcall(require, "ngx.semaphore")
local timer_at, worker_exiting = ngx.timer.at, ngx.worker.exiting
local log, ERR = ngx.log, ngx.ERR
local next, min, huge = next, math.min, math.huge

-- The longest sleep of a renewer: it looks whether the worker is exiting
-- this often (nginx waits for running timers when it shuts a worker down).
local MAX_SLEEP = 1
-- A renewal the protocol holds back (the holder's own call is out on the
-- lock) is looked at again after this many seconds.
local HELD_BACK = 0.01

local renewers = setmetatable({}, { __mode = "k" }) -- client handle -> state

local function renew(client, lock)
  local what, twin = lock:renew_begin()
  if what == "round" then
    stats.renewals = stats.renewals + 1
    run(client, twin)
    lock:renew_end() -- the holder learns a loss from lock:lost() and co.
  elseif what == "wait" then
    sleep(HELD_BACK)
  end
end

-- The leases due at t (a list, or nil) and the next due time after t.
-- No lease is left in a variable of the sleeping timer: a slot of its
-- frame would keep a dropped lease from being collected.
local function scan(r, t)
  local due, first = nil, huge
  local lock = next(r.leases)
  while lock ~= nil do
    local at = lock:renew_due()
    if not at then
      r.leases[lock] = nil -- released, lost or collected: done with it
    elseif at <= t then
      due = due or {}
      due[#due + 1] = lock
    elseif at < first then
      first = at
    end
    lock = next(r.leases, lock)
  end
  return due, first
end

-- One look at the client's leases, in a light thread of its own: renews
-- those due and returns how long to sleep (0: look again now), or nil when
-- no lease is left. Its stack, and every lease a slot of it still holds,
-- is garbage once it returns, so a lease dropped unreleased is collected
-- (and so no longer renewed) while the timer sleeps.
local function tick(client, r)
  local t = now()
  local due, first = scan(r, t)
  if due then
    for i = 1, #due do
      renew(client, due[i])
    end
    return 0
  end
  if next(r.leases) == nil then
    return nil
  end
  return first - t
end

-- The timer: renews what is due, sleeps until the next due renewal.
local function renewer(premature, client, r)
  while not premature and not worker_exiting() do
    local ok, delay = wait(spawn(tick, client, r))
    if not ok then -- never expected: log it, keep renewing the others
      log(ERR, "hiredlock: lease renewal failed: ", delay)
      delay = HELD_BACK
    end
    if delay == nil then
      break
    elseif delay > 0 and has_semaphore then
      r.sema:wait(min(delay, MAX_SLEEP))
    elseif delay > 0 then
      sleep(min(delay, 0.1))
    end
  end
  r.running = false
  stats.renewers = stats.renewers - 1
end

-- Puts a just acquired lease on its client's renewer, starting the timer
-- when none runs.
local function watch(client, lock)
  if not lock:renew_due() then
    return -- not a lease
  end
  local r = renewers[client]
  if not r then
    r = { leases = setmetatable({}, { __mode = "k" }), running = false,
      sema = has_semaphore and semaphore.new() or nil }
    renewers[client] = r
  end
  r.leases[lock] = true
  if r.running then
    if r.sema then
      r.sema:post(1) -- it may sleep past the newcomer's first renewal
    end
    return
  end
  local ok, err = timer_at(0, renewer, client, r)
  if not ok then
    log(ERR, "hiredlock: cannot start the lease renewer: ", err)
    return
  end
  r.running = true
  stats.renewers = stats.renewers + 1
end

-- The phase comes first: where no cosocket can run, that is the one thing
-- to fix, and no operation is left begun on the handle.
function M.acquire(client, name, opts)
  local perr = phase_error()
  if perr then
    return nil, perr
  end
  -- Argument errors raise from here with acquire's words (see proto.c).
  local lock, timeout = client:lock(name, opts)
  local begun, err = lock:begin("acquire", timeout)
  if not begun then
    return nil, err
  end
  local acquired, aerr = run(client, lock)
  if not acquired then
    return nil, aerr
  end
  watch(client, lock)
  return lock
end

function M.release(lock)
  local perr = phase_error()
  if perr then
    return nil, perr
  end
  local ok, err = lock:begin("release")
  if not ok then
    return nil, err
  end
  local client = lock:client()
  local r = renewers[client]
  if r and r.leases[lock] and r.sema then
    r.sema:post(1) -- its renewer may have nothing left to do
  end
  return run(client, lock)
end

function M.extend(lock, ttl)
  local perr = phase_error()
  if perr then
    return nil, perr
  end
  local ok, err = lock:begin("extend", ttl) -- errors name 'extend' #1
  if not ok then
    return nil, err
  end
  return run(lock:client(), lock)
end

return M
