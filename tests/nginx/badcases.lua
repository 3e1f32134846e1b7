--- Bad requests as an application makes them: a value from the request
-- goes into a hiredlock call. The same cases run inside nginx
-- (hrltest.lua, cosocket driver) and in plain Lua (plain.lua, C driver), so
-- the suite can check that both raise the very same message.
local B = {}

B.empty_name = function(c) return c:acquire("") end
B.long_name = function(c) return c:acquire(("n"):rep(513)) end
B.nil_name = function(c) return c:acquire(nil) end
B.number_name = function(c) return c:acquire(42) end
B.negative_ttl = function(c) return c:acquire("bad", { ttl = -1 }) end
-- too short for a round to leave any validity (issue 13)
B.short_ttl = function(c) return c:acquire("bad", { ttl = 0.002 }) end
B.string_ttl = function(c) return c:acquire("bad", { ttl = "10" }) end
B.nan_timeout = function(c) return c:acquire("bad", { timeout = 0 / 0 }) end
B.unknown_option = function(c) return c:acquire("bad", { tll = 10 }) end
B.with_no_fn = function(c) return c:with("bad", nil, nil) end

-- A bad ttl for extend on a held lock: it raises, and the lock stays held
-- and can be released.
B.extend_ttl = function(c)
  local lock = assert(c:acquire("bad:extend", { ttl = 10, timeout = 0 }))
  local ok, err = pcall(lock.extend, lock, -5)
  assert(lock:held(), "the lock must stay held after the raise")
  assert(lock:release())
  if not ok then
    error(err, 0)
  end
end

return B
