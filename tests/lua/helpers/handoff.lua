--- A hand-off heard by a waiter of plain Lua: another process
-- (helpers/hold_child.lua) holds the lock, the spec waits for it with a
-- patient client (a try after 20 s at the latest without a hand-off), and
-- the child releases after half a second.
local fixture = require "helpers.fixture"
local hiredlock = require "hiredlock"
local core = require "hiredlock.core"

local M = {}

M.PATIENT = { connect_timeout = 1, timeout = 0.5, retry_delay = 20, retry_jitter = 0 }

local here = debug.getinfo(1, "S").source:match("^@(.*)handoff%.lua$")

--- Seconds from the child's release until the waiter had the lock (nil,
-- err when it did not get it). opts: the waiter's client options (PATIENT
-- and more); ca: the child's ssl_ca_certs, if any.
function M.after_release(url, name, opts, ca)
  local cmd = ("'%s' '%shold_child.lua' '%s' '%s' 0.5 '%s' 2>&1"):format(
    fixture.interpreter(), here, url, name, ca or "")
  local p = assert(io.popen(cmd))
  local first = p:read("*l")
  assert(first == "held", "the child did not hold: " .. tostring(first))
  local lock, err = hiredlock.new(url, opts):acquire(name, { ttl = 10, timeout = 15 })
  local got = core.now()
  local rest = p:read("*a")
  p:close()
  if not lock then
    return nil, err
  end
  lock:release()
  local released = tonumber(rest:match("released ([%d.]+)"))
  assert(released, "the child said: " .. rest)
  return got - released
end

return M
