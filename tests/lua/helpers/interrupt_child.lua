-- Waits for a lock someone else holds, for up to 10 s, until interrupted.
--   lua interrupt_child.lua URL NAME
local hiredlock = require "hiredlock"
local client = hiredlock.new(arg[1])
io.stdout:write("waiting\n")
io.stdout:flush()
local lock, err = client:acquire(arg[2], { timeout = 10 })
print("returned", lock, err)
