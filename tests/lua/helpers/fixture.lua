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

local function numbers(list)
  local out = split(list or "", " ")
  for i, v in ipairs(out) do
    out[i] = tonumber(v)
  end
  return out
end

--- Starts n servers; extra: more launcher options ("--password pw").
-- With --tls/--mtls the fixture also has tls_urls, tls_ports and tls_dir
-- (the certificates: tests/fixtures/README.md), with --cluster
-- cluster_url, with --sentinels K sentinel_url, sentinel_ports, service,
-- with --replicas R replica_urls (replicas "r1", ... for ctl and cmd).
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
    ports = numbers(vars.HRL_FIXTURE_PORTS),
    tls_urls = split(vars.HRL_FIXTURE_TLS_URLS or "", ","),
    tls_ports = numbers(vars.HRL_FIXTURE_TLS_PORTS),
    tls_dir = vars.HRL_FIXTURE_TLS_DIR,
    cluster_url = vars.HRL_FIXTURE_CLUSTER_URL,
    sentinel_url = vars.HRL_FIXTURE_SENTINEL_URL,
    sentinel_ports = numbers(vars.HRL_FIXTURE_SENTINEL_PORTS),
    service = vars.HRL_FIXTURE_SENTINEL_SERVICE,
    replica_urls = split(vars.HRL_FIXTURE_REPLICA_URLS or "", ","),
    conns = {},
  }, F)
  return fx
end

--- `redis-fixture VERB DIR ARGS...`: its output, without the last newline;
-- raises when it fails.
function F:run(verb, ...)
  local words = { shell_quote(F.launcher), verb, shell_quote(self.dir) }
  for _, arg in ipairs({ ... }) do
    words[#words + 1] = shell_quote(arg)
  end
  local cmd = table.concat(words, " ") .. "; echo \"exit:$?\""
  local p = assert(io.popen(cmd))
  local out = p:read("*a")
  p:close()
  local text, rc = out:match("^(.-)\n?exit:(%d+)\n$")
  assert(rc == "0", "failed: " .. cmd .. ": " .. tostring(out))
  return text
end

--- --cluster: the key's hash slot and the node serving it.
function F:slot(key)
  local slot, owner = self:run("slot", key):match("^(%d+) (%d+)$")
  return tonumber(slot), tonumber(owner)
end

--- --cluster: moves slot to node `to` (or one stage: begin, keys, end).
function F:migrate(slot, to, stage)
  self:run("migrate", tostring(slot), tostring(to), stage or "all")
end

--- --sentinels: the node the sentinels name as the primary.
function F:primary()
  return tonumber(self:run("primary"))
end

--- --sentinels: SENTINEL FAILOVER; the new primary once it is one (and,
-- with demoted, once the old one is its replica).
function F:failover(demoted)
  if demoted then
    return tonumber(self:run("failover", "--demoted"))
  end
  return tonumber(self:run("failover"))
end

--- The path of one of the --tls certificates ("ca.crt", ...).
function F:tls_file(name)
  return self.tls_dir .. "/" .. name
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

--- kill / pause / resume / restart node i (1-based; a sentinel: "s1", ...).
function F:ctl(verb, i, extra)
  self:drop(i)
  local cmd = ("%s %s %s %s %s"):format(shell_quote(F.launcher), verb,
    shell_quote(self.dir), tostring(i), extra or "")
  assert(succeeded(os.execute(cmd)), "failed: " .. cmd)
end

--- A command on node i (a replica: "r1", ...), answered by the node itself.
function F:cmd(i, ...)
  if not self.conns[i] then
    local port = self.ports[i]
    if type(i) == "string" then
      port = tonumber(self.replica_urls[tonumber(i:match("^r(%d+)$"))]:match(":(%d+)$"))
    end
    self.conns[i] = assert(resp.connect(port))
  end
  return self.conns[i]:call(...)
end

--- Number of nodes on which key exists (a cluster's node that redirects
-- has not got it).
function F:count_key(key)
  local count = 0
  for i = 1, self.n do
    local ok, n = pcall(self.cmd, self, i, "EXISTS", key)
    if not ok and not tostring(n):find("^redis error reply: [MA][OS][VK]") then
      error(n, 0)
    end
    count = count + (ok and n or 0)
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
