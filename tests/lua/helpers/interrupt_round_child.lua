-- Takes a lock whose first round waits for a paused master (0.5 s), until
-- interrupted in that round.
--   lua interrupt_round_child.lua URL1,URL2,URL3 NAME
local hiredlock = require "hiredlock"
local urls = {}
for url in arg[1]:gmatch("[^,]+") do
  urls[#urls + 1] = url
end
local client = hiredlock.new(urls, { connect_timeout = 1, timeout = 0.5 })
io.stdout:write("taking\n")
io.stdout:flush()
local lock, err = client:acquire(arg[2], { ttl = 30, timeout = 5 })
print("returned", lock, err)
