-- A lock holder the interop tests drive over stdin/stdout, one command per
-- line, one answer per line (tests/interop/README.md has the protocol).
-- Names and prefixes travel hex-encoded so any bytes get through.
local hiredlock = require "hiredlock"

local function unhex(s)
  return (s:gsub("..", function(h) return string.char(tonumber(h, 16)) end))
end

local function split(line)
  local words = {}
  for w in line:gmatch("%S+") do
    words[#words + 1] = w
  end
  return words
end

local client, lock
io.stdout:setvbuf("line")
for line in io.lines() do
  local w = split(line)
  local cmd = w[1]
  local ok, a, b = pcall(function()
    if cmd == "new" then
      local urls = {}
      for u in w[3]:gmatch("[^,]+") do
        urls[#urls + 1] = u
      end
      local prefix = w[2] == "-" and "" or unhex(w[2])
      -- w[4]: a patient waiter's retry_delay, in seconds
      -- timeout 0.5 s (capped at ttl/10): exclusion is tested, not a 50 ms
      -- reply under load
      client = hiredlock.new(urls, { key_prefix = prefix, timeout = 0.5,
        retry_delay = tonumber(w[4]) })
      return true
    elseif cmd == "acquire" or cmd == "fenced" then
      local l, err = client:acquire(unhex(w[2]), {
        ttl = tonumber(w[3]), timeout = tonumber(w[4]),
        fenced = cmd == "fenced" })
      if l then
        lock = l
        return true, l.fence_string and (l.token .. " " .. l.fence_string)
          or l.token
      end
      return nil, err
    elseif cmd == "hold" then
      local permits = tonumber(w[3])
      local l, err = client:acquire(unhex(w[4]), {
        ttl = tonumber(w[5]), timeout = tonumber(w[6]), mode = w[2],
        permits = permits ~= 0 and permits or nil })
      if l then
        lock = l
        return true, l.token .. " " .. tostring(l.permit or 0)
      end
      return nil, err
    elseif cmd == "lease" then
      local l, err = client:acquire(unhex(w[2]), {
        ttl = tonumber(w[3]), timeout = 0, auto_renew = true })
      if l then
        lock = l
        return true, l.token
      end
      return nil, err
    elseif cmd == "check" then
      return lock:check()
    elseif cmd == "release" then
      return lock:release()
    elseif cmd == "extend" then
      return lock:extend(tonumber(w[2]))
    elseif cmd == "quit" then
      os.exit(0)
    end
    return nil, "unknown command " .. tostring(cmd)
  end)
  if not ok then
    io.write("raise ", tostring(a):gsub("\n", " "), "\n")
  elseif a then
    io.write("ok", b and (" " .. b) or "", "\n")
  else
    io.write("err ", tostring(b), "\n")
  end
end
