-- A workload through every path of the C module, for valgrind (see
-- 90-memcheck_spec.lua): acquire / extend / release / with, argument errors
-- (which longjmp out of C), connection and authentication failures, the
-- sans-I/O protocol, the parser, and finalizers run early or twice.
--   URLS=... DOWN_URL=... AUTH_URL=... lua memcheck.lua
local hiredlock = require "hiredlock"
local core = require "hiredlock.core"

local urls = {}
for url in assert(os.getenv("URLS")):gmatch("[^,]+") do
  urls[#urls + 1] = url
end

-- assert(), saying what came instead: a bare "assertion failed!" from the
-- child under valgrind told nothing of what went wrong.
local function expect(ok, ...)
  if not ok then
    local got = {}
    for k = 1, select("#", ...) do
      got[k] = tostring((select(k, ...)))
    end
    error("got: " .. table.concat(got, ", "), 2)
  end
  return ok
end

for round = 1, 2 do
  -- Not the production 50 ms per master (100 ms to connect): under
  -- valgrind on a loaded machine a connect took longer, and memcheck is
  -- not about time.
  local events = {}
  local client = hiredlock.new(urls, {
    timeout = 0.5,
    connect_timeout = 1,
    key_prefix = "mc\0:",
    owner = "mc@%h:%p",
    on_event = function(ev) events[#events + 1] = ev.kind end,
  })
  for i = 1, 20 do
    local name = "mc" .. round .. "\0" .. i % 3
    local lock = assert(client:acquire(name, { ttl = 5, timeout = 0 }))
    assert(lock:extend(6))
    local other, err = client:acquire(name, { timeout = 0 })
    expect(other == nil and err == "timeout", other, err)
    assert(tostring(lock):find("held", 1, true))
    assert(lock:release())
    expect(select(2, lock:release()) == "not held", lock:release())
  end
  assert(client:with("mc:with", nil, function(_, x) return x end, 7))

  -- Operability: an inspection of a held and labelled lock, the counters,
  -- Prometheus text, a label refused.
  local held = assert(client:acquire("mc:ops", { ttl = 5, owner = "o%%" .. round }))
  local view = client:inspect("mc:ops")
  expect(view.held and view.owner == "o%" .. round and #view.masters == #urls,
    view.held, view.owner, #view.masters)
  assert(held:release())
  assert(client:inspect("mc:ops").state == "free")
  assert(not pcall(client.inspect, client, ""))
  assert(not pcall(client.acquire, client, "x", { owner = "a\nb" }))
  local stats = client:stats()
  expect(stats.acquired >= 21 and #stats.wait_buckets > 0, stats.acquired,
    #stats.wait_buckets)
  assert(hiredlock.prometheus({ mc = client }):find("hiredlock_acquires_total", 1, true))
  assert(#events == 0, table.concat(events, ", ")) -- all up: nothing to report
  assert(not pcall(client.with, client, "mc:with", nil, error))

  for _, bad in ipairs({
    function() return client:acquire(42) end,
    function() return client:acquire("") end,
    function() return client:acquire(("x"):rep(513)) end,
    function() return client:acquire("x", { ttl = -1 }) end,
    function() return client:acquire("x", { ttl = 0 / 0 }) end,
    function() return client:acquire("x", { foo = 1 }) end,
    function() return client:acquire("x", { 1 }) end,
    function() return hiredlock.new("http://x") end,
    function() return hiredlock.new({ urls[1], urls[1] }) end,
    function() return hiredlock.new({ urls[1], 5 }) end,
    function() return hiredlock.new({}) end,
    function() return hiredlock.new(urls, { drift_factor = 1 }) end,
    function() return hiredlock.new(urls, { key_prefix = ("p"):rep(600) }) end,
    function() return hiredlock.new("redis://:pw@127.0.0.1:99999") end,
  }) do
    assert(not pcall(bad))
  end

  -- Transport failures: a dead master, a wrong password.
  -- (A second to connect and shake hands, as above: the AUTH's refusal,
  -- not the time valgrind takes to ask, is what is looked at.)
  local down = hiredlock.new(os.getenv("DOWN_URL"))
  local _, err = down:acquire("mc:down", { timeout = 0 })
  expect(tostring(err):find("^connection failed"), err)
  local auth = hiredlock.new(os.getenv("AUTH_URL"), { connect_timeout = 1 })
  _, err = auth:acquire("mc:auth", { timeout = 0 })
  expect(tostring(err):find("^authentication failed"), err)

  -- The sans-I/O protocol and the parser, without I/O.
  local handle = core.new({ "redis://:pw@127.0.0.1:1/2", "redis://127.0.0.1:2",
    "redis://127.0.0.1:3" })
  assert(handle:handshake(1))
  assert(handle:handshake_reply(1, 1, "error", "WRONGPASS no") == "auth")
  local lock, timeout = handle:lock("mc:sio", { timeout = 0 })
  assert(lock:begin("acquire", timeout))
  assert(lock:step() == "round")
  assert(lock:command(1))
  for i = 1, 3 do
    lock:reply(i, "status", "OK")
  end
  assert(select(2, lock:step()) == true)
  assert(lock:begin("release"))
  lock:step()
  assert(lock:reply(1, "error", "NOSCRIPT x") == "resend")
  assert(lock:command(1))
  lock:reply(1, "integer", 1)
  lock:fail(2, "unreachable", "gone")
  lock:fail(3, "protocol", nil)
  assert(lock:step() == "done")
  assert(lock:counts().ok == 1)
  local parser = core.parser()
  parser:feed("+OK\r\n$3\r\nabc\r\n:5\r\n*2\r\n$1\r\na\r\n:1\r\n*1\r\n*1\r\n")
  assert(parser:next() == "status" and parser:next() == "string")
  assert(parser:next() == "integer" and parser:next() == "array")
  assert(select(2, parser:next())) -- a nested array: a protocol error

  -- Finalizers run early, twice, and then again by the collector.
  local l1 = assert(client:acquire("mc:gc" .. round, { ttl = 1, timeout = 0 }))
  local h1 = l1._handle
  getmetatable(h1).__gc(h1)
  getmetatable(h1).__gc(h1)
  assert(not pcall(l1.release, l1))
  local l2 = assert(client:acquire("mc:gc2" .. round, { ttl = 1, timeout = 0 }))
  local ch = client._handle
  getmetatable(ch).__gc(ch)
  assert(not pcall(l2.release, l2))
  getmetatable(parser).__gc(parser)
  client, l1, l2, h1, ch, lock, handle, parser = nil, nil, nil, nil, nil, nil, nil, nil
  collectgarbage()
  collectgarbage()
end
print("memcheck: done")
