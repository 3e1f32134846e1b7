--- The Lua bad-input table, part 2: calls in the wrong state, servers that
-- answer with errors, networks that fail; the rows are described in
-- helpers/bad_inputs.lua ("env" rows need the servers of
-- tests/reliability/hrlrel/badenv.py). Rows that make keys on purpose
-- remove them, so no row leaves a key behind.
local function acquire_on(c, var)
  return c.new(c.env(var)):acquire("bad:srv", { ttl = 5, timeout = 0.2 })
end

local function released(c)
  local lock = assert(c.client:acquire("bad:rel", { ttl = 5, timeout = 0 }))
  assert(lock:release())
  return lock
end

local function stored(c, name)
  local lock = c.client:acquire(name, { ttl = 5, timeout = 0 })
  local there = c.inspect():call("EXISTS", name)
  if lock then
    lock:release()
  end
  return ("acquired=%s, key of %d bytes stored=%s"):format(tostring(lock ~= nil), #name,
    tostring(there == 1))
end

local function wrongtype_acquire(c)
  local r = c.inspect()
  r:call("DEL", "bad:list")
  r:call("LPUSH", "bad:list", "x")
  local a, b = c.client:acquire("bad:list", { ttl = 5, timeout = 0 })
  r:call("DEL", "bad:list")
  return a, b
end

local function wrongtype_release(c)
  local r = c.inspect()
  r:call("DEL", "bad:list2")
  local lock = assert(c.client:acquire("bad:list2", { ttl = 5, timeout = 0 }))
  r:call("DEL", "bad:list2")
  r:call("LPUSH", "bad:list2", "x")
  local a, b = lock:release()
  r:call("DEL", "bad:list2")
  return a, b
end

--- A released lock answers every call without I/O and without crashing,
-- twice over: returns "true" or what went wrong.
local function released_answers(c)
  local lock = assert(c.client:acquire("released", { timeout = 0 }))
  local token = lock.token
  assert(lock:release())
  for _ = 1, 2 do
    for _, call in ipairs({ { "release" }, { "extend", 5 }, { "extend" } }) do
      local ok, err = lock[call[1]](lock, call[2])
      if ok ~= nil or err ~= "not held" then
        return ("%s: %s, %s"):format(call[1], tostring(ok), tostring(err))
      end
    end
    if lock:validity() ~= 0 or lock:held() or lock.token ~= token
      or lock.name ~= "released"
      or tostring(lock) ~= 'hiredlock.lock "released" (not held)' then
      return "a field changed: " .. tostring(lock)
    end
  end
  return true
end

return {
  { "name", 'name "a\\0b" (embedded NUL)', function(c) return stored(c, "bad:a\0b") end,
    "returns", "acquired=true, key of 7 bytes stored=true", "ok" },
  { "name", "name \"\\255\\254\" (invalid UTF-8)",
    function(c) return stored(c, "bad:\255\254") end, "returns", "acquired=true", "ok" },
  { "state", "release twice", function(c) return released(c):release() end, "nil, err",
    "not held", "ok" },
  { "state", "extend after release", function(c) return released(c):extend() end,
    "nil, err", "not held", "ok" },
  { "state", "every call on a released lock", released_answers, "returns", "true", "ok" },
  { "state", "acquire while another lock object holds it", function(c)
    local lock = assert(c.client:acquire("bad:h", { ttl = 5, timeout = 0 }))
    local a, b = c.client:acquire("bad:h", { ttl = 5, timeout = 0 })
    lock:release()
    return a, b
  end, "nil, err", "timeout", "ok" },
  { "state", "release after the key expired", function(c)
    -- A master is waited on at most a tenth of the TTL asked for: 0.5 s
    -- gives the acquire and the release the client's own per-master
    -- timeout (50 ms), where a 50 ms TTL left them 5 ms, too little on a
    -- loaded machine. Past the TTL the key is gone and the validity is 0.
    local lock = assert(c.client:acquire("bad:exp", { ttl = 0.5, timeout = 0 }))
    require("system").sleep(0.55)
    return lock:release()
  end, "nil, err", "not owned", "ok" },
  { "server", "OOM (maxmemory 1)", function(c) return acquire_on(c, "HRL_BAD_OOM") end,
    "nil, err", "server error: 0 of 1 masters answered (1 needed)", "env" },
  { "server", "READONLY (a replica)", function(c) return acquire_on(c, "HRL_BAD_RO") end,
    "nil, err", "READONLY", "env" },
  { "server", "BUSY (a script runs)", function(c) return acquire_on(c, "HRL_BAD_BUSY") end,
    "nil, err", "BUSY", "env" },
  { "server", "LOADING (scripted reply)",
    function(c) return acquire_on(c, "HRL_BAD_LOADING") end, "nil, err", "LOADING", "env" },
  { "server", "NOAUTH (no password given)",
    function(c) return acquire_on(c, "HRL_BAD_NOAUTH") end, "nil, err",
    "authentication failed", "env" },
  { "server", "WRONGPASS", function(c) return acquire_on(c, "HRL_BAD_WRONGPASS") end,
    "nil, err", "WRONGPASS", "env" },
  { "server", "WRONGTYPE: the name holds a list (acquire)", wrongtype_acquire, "nil, err",
    "timeout", "ok" },
  { "server", "WRONGTYPE: the key became a list (release)", wrongtype_release, "nil, err",
    "not owned", "ok" },
  { "network", "connection refused", function(c) return acquire_on(c, "HRL_BAD_REFUSED") end,
    "nil, err", "connection refused", "env" },
  { "network", "connection reset", function(c) return acquire_on(c, "HRL_BAD_RESET") end,
    "nil, err", "reset", "env" },
  { "network", "unix socket that does not exist",
    function(c) return acquire_on(c, "HRL_BAD_MISSING_SOCK") end, "nil, err",
    "no such file or directory", "env" },
}
