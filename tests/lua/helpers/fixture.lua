--- Redis for the specs, from the project's one launcher
-- (tests/fixtures/redis-fixture) and nothing else. Every fixture is owned by
-- this Lua process (--owner), so the launcher's reaper stops the servers
-- even when a run crashes before fx:stop().
local resp = require "helpers.resp"
local system = require "system"
local hiredlock = require "hiredlock"

local F = {}
F.__index = F

local here = debug.getinfo(1, "S").source:match("^@(.*)helpers/fixture%.lua$")
local root = here and here:gsub("tests/lua/$", "") or ""
F.launcher = os.getenv("HRL_FIXTURE") or (root .. "tests/fixtures/redis-fixture")

local function shell_quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

--- This Lua process's pid (no getpid() in plain Lua).
function F.pid()
  local f = assert(io.open("/proc/self/stat"))
  local pid = f:read("*l"):match("^(%d+)")
  f:close()
  return tonumber(pid)
end

--- The interpreter running this process, for child Lua processes.
function F.interpreter()
  local p = assert(io.popen("readlink /proc/" .. F.pid() .. "/exe"))
  local exe = p:read("*l")
  p:close()
  return exe
end

local function split(list, sep)
  local out = {}
  for item in list:gmatch("[^" .. sep .. "]+") do
    out[#out + 1] = item
  end
  return out
end

--- Starts n servers; extra: more launcher options ("--password pw").
function F.start(n, extra)
  local cmd = ("%s start -n %d --owner %d %s"):format(shell_quote(F.launcher),
    n, F.pid(), extra or "")
  local p = assert(io.popen(cmd))
  local vars = {}
  for line in p:lines() do
    local k, v = line:match("^([%w_]+)=(.*)$")
    if k then
      vars[k] = v:gsub('^"(.*)"$', "%1"):gsub("^'(.*)'$", "%1")
    end
  end
  p:close()
  assert(vars.HRL_FIXTURE_DIR and tonumber(vars.HRL_FIXTURE_N) == n,
    "redis-fixture start failed: " .. cmd)
  local fx = setmetatable({
    dir = vars.HRL_FIXTURE_DIR,
    n = n,
    urls = split(vars.HRL_FIXTURE_URLS, ","),
    unix_urls = split(vars.HRL_FIXTURE_UNIX_URLS, ","),
    ports = split(vars.HRL_FIXTURE_PORTS, " "),
    conns = {},
  }, F)
  for i, port in ipairs(fx.ports) do
    fx.ports[i] = tonumber(port)
  end
  return fx
end

local function succeeded(a, b, c)
  -- os.execute: 5.1 returns a status number, 5.2+ true|nil, "exit", code.
  if type(a) == "number" then
    return a == 0
  end
  return a == true and b == "exit" and c == 0
end

function F:drop(i)
  if self.conns[i] then
    self.conns[i]:close()
    self.conns[i] = nil
  end
end

--- kill / pause / resume / restart node i (1-based).
function F:ctl(verb, i, extra)
  self:drop(i)
  local cmd = ("%s %s %s %d %s"):format(shell_quote(F.launcher), verb,
    shell_quote(self.dir), i, extra or "")
  assert(succeeded(os.execute(cmd)), "failed: " .. cmd)
end

--- A command on node i, answered by the node itself.
function F:cmd(i, ...)
  if not self.conns[i] then
    self.conns[i] = assert(resp.connect(self.ports[i]))
  end
  return self.conns[i]:call(...)
end

--- Number of nodes on which key exists.
function F:count_key(key)
  local count = 0
  for i = 1, self.n do
    count = count + self:cmd(i, "EXISTS", key)
  end
  return count
end

--- A hiredlock client on the first n (default all) TCP URLs.
--- Number of nodes on which key exists once it has had `within` seconds to
-- go: a key that a loaded machine delivered late to a minority of nodes
-- expires late too, and a test about expiry must not read that as revived.
function F:count_key_settled(key, within)
  local deadline = system.monotime() + within
  local count = self:count_key(key)
  while count > 0 and system.monotime() < deadline do
    system.sleep(0.02)
    count = self:count_key(key)
  end
  return count
end

--- A hiredlock client on the first n (default all) TCP URLs.
function F:client(opts, n)
  local urls = {}
  for i = 1, n or self.n do
    urls[i] = self.urls[i]
  end
  return hiredlock.new(urls, opts)
end

function F:flush()
  for i = 1, self.n do
    self:cmd(i, "FLUSHALL")
  end
end

function F:stop()
  for i = 1, self.n do
    self:drop(i)
  end
  os.execute(("%s stop %s"):format(shell_quote(F.launcher),
    shell_quote(self.dir)))
end

return F
