-- The line protocol, Lua side: one command a line on stdin, words separated
-- by blanks, options as key=value words; every answer is one JSON line on
-- stdout (tests/workers/README.md).
local W = {}

--- A command line as (command, positional words, key=value options).
function W.parse(line)
  local cmd, args, opts = nil, {}, {}
  for word in line:gmatch("%S+") do
    if not cmd then
      cmd = word
    else
      local k, v = word:match("^([^=]+)=(.*)$")
      if k then
        opts[k] = v
      else
        args[#args + 1] = word
      end
    end
  end
  return cmd, args, opts
end

local function quote(s)
  return '"' .. tostring(s):gsub('[%c"\\]', function(c)
    return ("\\u%04x"):format(c:byte())
  end) .. '"'
end
W.quote = quote

--- JSON for nil, booleans, numbers, strings and tables (a table with [1]
--- is an array); numbers keep up to 6 decimals.
function W.json(v)
  local t = type(v)
  if v == nil then
    return "null"
  elseif t == "boolean" then
    return tostring(v)
  elseif t == "number" then
    if v == math.floor(v) and math.abs(v) < 2 ^ 53 then
      return ("%.0f"):format(v)
    end
    return ("%.6f"):format(v)
  elseif t == "string" then
    return quote(v)
  elseif v[1] ~= nil then
    local parts = {}
    for i, x in ipairs(v) do
      parts[i] = W.json(x)
    end
    return "[" .. table.concat(parts, ",") .. "]"
  end
  local parts = {}
  for k, x in pairs(v) do
    parts[#parts + 1] = quote(k) .. ":" .. W.json(x)
  end
  table.sort(parts)
  return "{" .. table.concat(parts, ",") .. "}"
end

function W.out(s)
  io.stdout:write(type(s) == "string" and s or W.json(s), "\n")
  io.stdout:flush()
end

function W.split(s)
  local t = {}
  for item in s:gmatch("[^,]+") do
    t[#t + 1] = item
  end
  return t
end

W.CLIENT_OPTIONS = { "connect_timeout", "timeout", "retry_delay", "retry_jitter" }

--- The client options present in opts, as numbers (hiredlock.new's).
function W.client_options(opts, names)
  local o = {}
  for _, k in ipairs(names or W.CLIENT_OPTIONS) do
    if opts[k] then
      o[k] = tonumber(opts[k])
    end
  end
  return o
end

return W
