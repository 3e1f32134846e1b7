-- Waiting under faults from plain Lua (#24), the C core's driver behind it:
-- a Ctrl-C in the round that takes the lock leaves no key; a stalled master
-- does not end a fresh acquire's wait; waiters stay quiet while the holder
-- lacks a master; a client that polls keeps no old place in line; releases
-- reach a master stopped with its script cache flushed; a key without a TTL
-- is named when the wait runs out.
local fixture = require "helpers.fixture"
local system = require "system"

local function scripts_run(fx, i)
  local info = fx:cmd(i, "INFO", "commandstats")
  local total = 0
  for _, name in ipairs({ "evalsha", "eval" }) do
    total = total + tonumber(info:match("cmdstat_" .. name .. ":calls=(%d+)")
      or "0")
  end
  return total
end

describe("waiting under faults", function()
  it("leaves no key when Ctrl-C lands in the round that took the lock", function()
    -- Master 3 of 3 paused: the first round waits its 0.5 s for it, and
    -- gets the lock from the other two. The interrupt came meanwhile:
    -- before #24 the acquire returned the lock and "interrupted!" was
    -- raised after it, leaving the key for its 30 s.
    local fx = fixture.start(3)
    local here = debug.getinfo(1, "S").source:match("^@(.*)16%-waiting_faults_spec%.lua$")
    for attempt = 1, 3 do
      local name = "wf:int:" .. attempt
      fx:ctl("pause", 3)
      local cmd = ("'%s' '%shelpers/interrupt_round_child.lua' '%s' %s 2>&1 & "
        .. "pid=$!; sleep 0.2; kill -INT $pid; wait $pid; echo \"exit $?\"")
        :format(fixture.interpreter(), here, table.concat(fx.urls, ","), name)
      local p = assert(io.popen(cmd))
      local out = p:read("*a")
      p:close()
      fx:ctl("resume", 3)
      assert.truthy(out:find("^taking\n"), out)
      assert.truthy(out:find("interrupted!", 1, true), out)
      assert.is_nil(out:find("returned", 1, true))
      assert.truthy(out:find("exit 1\n", 1, true), out)
      system.sleep(0.2) -- the resumed master runs what it queued
      assert.equals(0, fx:count_key(name), "attempt " .. attempt)
    end
    fx:stop()
  end)

  it("rides out a stalled master within its wait", function()
    local fx = fixture.start(1)
    local client = fx:client() -- 50 ms per master
    local lock = assert(client:acquire("wf:stall", { timeout = 0 }))
    assert.is_true(lock:release())
    fx:cmd(1, "CLIENT", "PAUSE", "300")
    local t0 = system.monotime()
    local err
    lock, err = client:acquire("wf:stall", { ttl = 10, timeout = 5 })
    local took = system.monotime() - t0
    assert.is_nil(err) -- before #24: "connection failed: ... timeout after 50 ms"
    assert.is_true(took >= 0.25 and took < 3, "took " .. took)
    assert.is_true(lock:release())
    fx:cmd(1, "CLIENT", "PAUSE", "300")
    lock, err = client:acquire("wf:stall", { ttl = 10, timeout = 0 })
    assert.is_nil(lock)
    assert.matches("timeout after 50 ms", err)
    system.sleep(0.4)
    fx:stop()
  end)

  it("keeps waiters parked while the holder lacks a master", function()
    local fx = fixture.start(5)
    local holder = assert(fx:client():acquire("wf:churn", { ttl = 30, timeout = 0 }))
    assert.equals(1, fx:cmd(5, "DEL", "wf:churn"))
    -- One waiter in a child process (plain Lua blocks), patient (cap 10 s).
    local cmd = ("'%s' -e 'local h = require(\"hiredlock\"); "
      .. "local urls = {} for u in (\"%s\"):gmatch(\"[^,]+\") do urls[#urls+1] = u end "
      .. "local l = h.new(urls, {retry_delay = 10, retry_jitter = 0}):acquire(\"wf:churn\", "
      .. "{ttl = 30, timeout = 8}) print(l and \"got\" or \"not\") if l then l:release() end' &")
      :format(fixture.interpreter(), table.concat(fx.urls, ","))
    local first = assert(io.popen(cmd))
    local second = assert(io.popen(cmd))
    local before = {}
    system.sleep(1)
    for i = 1, 5 do
      before[i] = scripts_run(fx, i)
    end
    system.sleep(2)
    local calls = 0
    for i = 1, 5 do
      calls = math.max(calls, scripts_run(fx, i) - before[i])
    end
    assert.is_true(calls <= 4, "queue-script calls in 2 s: " .. calls) -- before: ~72
    assert.is_true(holder:release())
    assert.equals("got\n", first:read("*a"))
    assert.equals("got\n", second:read("*a"))
    first:close()
    second:close()
    fx:stop()
  end)

  it("does not keep an old place in line for a client that polls", function()
    -- A waits 1 s and gives up while master 3 is paused (from 0.5 s): its
    -- leave gets no answer there, so its client keeps its place, for the
    -- entry's lease. It then
    -- polls without a wait for 4 s while B queued. Its next wait must queue
    -- behind B: before #24 every poll renewed the kept place, and A went
    -- first.
    local fx = fixture.start(3)
    local name = "wf:jump"
    local here = debug.getinfo(1, "S").source:match("^@(.*)16%-waiting_faults_spec%.lua$")
    local child = ("'%s' '%shelpers/queue_child.lua'"):format(fixture.interpreter(), here)
    local urls = table.concat(fx.urls, ",")
    local order = os.tmpname()
    local holder = assert(io.popen(("%s hold '%s' '%s' '%s' '%s'"):format(child, urls,
      name, fixture.launcher, fx.dir)))
    assert.equals("held", holder:read("*l"))
    local a = fx:client()
    os.execute(("(sleep 0.5; '%s' pause '%s' 3) &"):format(fixture.launcher, fx.dir))
    local lock = a:acquire(name, { ttl = 30, timeout = 1 })
    assert.is_nil(lock)
    system.sleep(0.2)
    fx:ctl("resume", 3)
    local b = assert(io.popen(("%s wait '%s' '%s' '%s'"):format(child, urls, name, order)))
    for _ = 1, 1000 do
      if fx:cmd(1, "ZCARD", name .. "{" .. name .. "}:queue") >= 1 then
        break
      end
      system.sleep(0.005)
    end
    local t0 = system.monotime()
    while system.monotime() - t0 < 4 do
      assert.is_nil(a:acquire(name, { ttl = 30, timeout = 0 }))
      system.sleep(0.1)
    end
    lock = assert(a:acquire(name, { ttl = 30, timeout = 20 }))
    local f = assert(io.open(order, "a"))
    f:write("A")
    f:close()
    assert.is_true(lock:release())
    assert.equals("got\n", b:read("*a"))
    assert.equals("released\n", holder:read("*a"))
    b:close()
    holder:close()
    f = assert(io.open(order))
    local got = f:read("*a")
    f:close()
    os.remove(order)
    assert.equals("BA", got)
    fx:stop()
  end)

  it("gets its releases to a master stopped without its scripts", function()
    local fx = fixture.start(3)
    local client = fx:client()
    local names = {}
    for k = 1, 7 do
      names[k] = "wf:nos:" .. k
      assert.is_true(assert(client:acquire(names[k], { timeout = 0 })):release())
    end
    fx:cmd(3, "SCRIPT", "FLUSH")
    fx:ctl("pause", 3)
    for k = 0, 49 do
      local lock = assert(client:acquire(names[k % 7 + 1], { ttl = 10, timeout = 0 }))
      assert.is_true(lock:release())
    end
    fx:ctl("resume", 3)
    system.sleep(1) -- it catches up in milliseconds; the keys live 10 s
    local left = 0
    for k = 1, 7 do
      left = left + fx:count_key(names[k])
    end
    assert.equals(0, left) -- before #24: one key, for its TTL
    fx:stop()
  end)

  it("names a key without a TTL when the wait runs out", function()
    local fx = fixture.start(1)
    local client = fx:client()
    local holder = assert(client:acquire("wf:orders:42", { ttl = 10, timeout = 0 }))
    fx:cmd(1, "SET", "wf:orders:42", "paid") -- no TTL: never expires
    local lock, err = client:acquire("wf:orders:42", { ttl = 10, timeout = 0.5 })
    assert.is_nil(lock)
    assert.equals(("timeout: 127.0.0.1:%d: the key has no TTL (it never "
      .. "expires: only what wrote it can free it)"):format(fx.ports[1]), err)
    local ok, rerr = holder:release()
    assert.is_nil(ok)
    assert.equals("not owned", rerr)
    fx:stop()
  end)
end)
