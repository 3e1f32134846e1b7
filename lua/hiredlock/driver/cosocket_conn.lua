-- The cosocket driver's connections: where each master's command goes (a
-- target and its keepalive pool per master, per node for a Redis Cluster or
-- a Sentinel-managed primary), opening a connection (TCP or unix, then a
-- rediss:// master's TLS handshake), and reading and writing against a
-- deadline. hiredlock/driver/cosocket_round.lua runs the rounds over these;
-- the listener (hiredlock/driver/listener.lua) opens its subscribers with them.
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
local core = require "hiredlock.core"

local ngx = assert(rawget(_G, "ngx"),
  "hiredlock.driver.cosocket_conn runs under ngx_lua (OpenResty) only")
local tcp = ngx.socket.tcp
local md5 = ngx.md5
local now = core.now

local pcall, tostring, setmetatable, ceil, open, type, require =
  pcall, tostring, setmetatable, math.ceil, io.open, type, require

local M = {}

-- Per client handle: each master's connect target and pool, computed once.
local targets = setmetatable({}, { __mode = "k" })

--- Per keepalive pool name, the answers the last handshake of a new
-- connection in this worker got ({kind, value, ...}): a client that asks
-- the server who it is (INFO: one server under two names, restart_guard)
-- hears them from here when it takes a pooled connection, which skips the
-- handshake (hiredlock/driver/cosocket_round.lua, identify), so clients share
-- the worker's pools whatever their number (issue 24, item 1: clients
-- made per request kept pools of their own, and a stampede ran a worker
-- out of connections).
M.answers = {}

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

function M.targets_of(client)
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
      timeout_ms = info.timeout_ms,
      tls = tls,
      -- The handshake (AUTH, SELECT) and the TLS settings are the whole
      -- state of a connection: their digest keeps credentials out of the
      -- pool name and out of logs.
      opts = { pool = ("hiredlock:%s:%d:%s"):format(info.label, info.db,
        md5(handshake .. (tls and ("\0tls\0%s\0%s\0%s\0%s"):format(
          tls.verify, tls.server_name or "", tls.certfile or "",
          tls.keyfile or "") or ""))) },
      -- INFO in the handshake: a pooled connection's answers are replayed
      asks = info.asks_server,
    }
    if info.path then
      t.host = "unix:" .. info.path
    else
      t.host, t.port = host_of(info.host), info.port
    end
    t.sentinel = info.sentinel
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
function M.target_of(list, lock, i)
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
      asks = handshake and base.asks,
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
function M.shake_hands(sock, tls, deadline, connect_timeout_ms)
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

function M.connect(t)
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
    ok, err = M.shake_hands(sock, t.tls, deadline, t.connect_timeout_ms)
    if not ok then
      sock:close()
      return nil, err
    end
  end
  return sock
end

-- How long a wait for a master's reply goes at most before it looks again
-- whether the round still needs that master (hrl_proto_skippable): a
-- cosocket waits for its own socket only, so a round settled by the other
-- masters' replies is seen at the end of a slice, not at once.
M.SETTLE_SLICE_MS = 10

-- The next reply within the deadline: kind, value | nil, why, message,
-- timed_out. skippable, when given, is asked when a slice of the wait
-- passed with nothing read: once it says true, nil, "skipped".
function M.read_reply(sock, parser, deadline, timeout_ms, skippable)
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
    local slice = skippable and left > M.SETTLE_SLICE_MS and M.SETTLE_SLICE_MS
      or left
    sock:settimeout(slice)
    local bytes, err = sock:receiveany(65536)
    if bytes then
      local fed, ferr = parser:feed(bytes)
      if not fed then
        return nil, "protocol", ferr
      end
    elseif err == "timeout" and slice < left then
      if skippable() then
        return nil, "skipped"
      end
    else
      return nil, "unreachable", io_message(err, "timeout", timeout_ms),
        err == "timeout"
    end
  end
end

function M.send(sock, data, deadline, timeout_ms)
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

M.io_message = io_message

return M
