--- A minimal blocking RESP client over luasocket, for looking at what the
-- library left in Redis (values, TTLs) independently of the library itself;
-- tests/reliability's Lua workers use it for their data server too.
-- Error replies raise; nil bulk replies return nil.
local socket = require "socket"

local R = {}
R.__index = R

--- R.connect(port[, timeout]) -> client | nil, err (timeout: seconds per
-- call, default 2).
function R.connect(port, timeout)
  local sock = assert(socket.tcp())
  sock:settimeout(timeout or 2)
  local ok, err = sock:connect("127.0.0.1", port)
  if not ok then
    sock:close()
    return nil, err
  end
  sock:setoption("tcp-nodelay", true)
  return setmetatable({ sock = sock }, R)
end

local function read(sock)
  local line = assert(sock:receive("*l"))
  local kind, rest = line:sub(1, 1), line:sub(2)
  if kind == "+" then
    return rest
  elseif kind == "-" then
    error("redis error reply: " .. rest, 0)
  elseif kind == ":" then
    return tonumber(rest)
  elseif kind == "$" then
    local n = tonumber(rest)
    if n < 0 then
      return nil
    end
    return assert(sock:receive(n + 2)):sub(1, n)
  elseif kind == "*" then
    local n = tonumber(rest)
    if n < 0 then
      return nil
    end
    local items = {}
    for i = 1, n do
      items[i] = read(sock)
    end
    return items
  end
  error("bad RESP line: " .. line, 0)
end

local function encode(parts, ...)
  local n = select("#", ...)
  parts[#parts + 1] = "*" .. n .. "\r\n"
  for i = 1, n do
    local arg = tostring((select(i, ...)))
    parts[#parts + 1] = "$" .. #arg .. "\r\n" .. arg .. "\r\n"
  end
end

--- r:call("SET", "k", "v") -> the reply (binary-safe arguments).
function R:call(...)
  local parts = {}
  encode(parts, ...)
  assert(self.sock:send(table.concat(parts)))
  return read(self.sock)
end

--- r:pipeline({"SET", "a", 1}, {"SET", "b", 2}) -> list of replies.
function R:pipeline(...)
  local parts = {}
  local n = select("#", ...)
  for i = 1, n do
    local cmd = select(i, ...)
    encode(parts, (unpack or table.unpack)(cmd))
  end
  assert(self.sock:send(table.concat(parts)))
  local out = {}
  for i = 1, n do
    out[i] = read(self.sock)
  end
  return out
end

--- r:eval(script, numkeys, ...) -> reply | nil, err: lua-resty-redis's
-- shape, what hiredlock.fenced_write calls; an error reply is returned
-- (its text) instead of raised.
function R:eval(...)
  local ok, res = pcall(self.call, self, "EVAL", ...)
  if ok then
    return res
  end
  return nil, (tostring(res):gsub("^redis error reply: ", ""))
end

function R:close()
  self.sock:close()
end

return R
