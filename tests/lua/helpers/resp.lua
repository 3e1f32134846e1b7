--- A minimal blocking RESP client over luasocket, for looking at what the
-- library left in Redis (values, TTLs) independently of the library itself.
-- Error replies raise; nil bulk replies return nil.
local socket = require "socket"

local R = {}
R.__index = R

function R.connect(port)
  local sock = assert(socket.tcp())
  sock:settimeout(2)
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

--- r:call("SET", "k", "v") -> the reply (binary-safe arguments).
function R:call(...)
  local n = select("#", ...)
  local parts = { "*" .. n .. "\r\n" }
  for i = 1, n do
    local arg = tostring((select(i, ...)))
    parts[#parts + 1] = "$" .. #arg .. "\r\n" .. arg .. "\r\n"
  end
  assert(self.sock:send(table.concat(parts)))
  return read(self.sock)
end

function R:close()
  self.sock:close()
end

return R
