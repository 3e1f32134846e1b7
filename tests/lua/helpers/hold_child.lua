-- Holds a lock for a while, then releases it, so that a spec's waiter (in
-- the parent, plain Lua has no threads) hears the hand-off:
--   lua hold_child.lua URL NAME HOLD [CA_FILE]
-- prints "held" once it holds NAME, then, HOLD seconds later, "released T"
-- with T the protocol's clock (core.now(), the same in every process) just
-- before the release went out.
local hiredlock = require "hiredlock"
local core = require "hiredlock.core"
local system = require "system"

local opts = { connect_timeout = 1, timeout = 0.5 }
if arg[4] and arg[4] ~= "" then
  opts.ssl_ca_certs = arg[4]
end
local lock = assert(hiredlock.new(arg[1], opts):acquire(arg[2],
  { ttl = 30, timeout = 5 }))
io.stdout:write("held\n")
io.stdout:flush()
system.sleep(tonumber(arg[3]))
local t = core.now()
assert(lock:release())
io.stdout:write(("released %.6f\n"):format(t))
