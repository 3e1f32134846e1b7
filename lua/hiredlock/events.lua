--- The events of hiredlock clients (docs/OPERATING.md): a lease lost, a
-- renewal that failed while the lease was still valid, a master going and
-- coming back, gone waiters a release skipped, a wait at least slow_wait
-- long. The core queues them where they happen (a call, the renewer);
-- they are handed to the client's on_event(event) after each call of the
-- client's (and, under nginx, after each renewal), or, without one, under
-- nginx to the error log at the event's level (WARN, INFO, DEBUG) and
-- nowhere in plain Lua. An event is a table: kind, level ("warning",
-- "info", "debug"), message (the core's words), name, master, ms, count,
-- status, detail. Nothing is reported on the fast path.
local pcall, setmetatable, tostring = pcall, setmetatable, tostring

local ngx = rawget(_G, "ngx")
local in_nginx = type(ngx) == "table" and type(ngx.log) == "function"
  and ngx.WARN ~= nil

local LEVELS = in_nginx and {
  warning = ngx.WARN, info = ngx.INFO, debug = ngx.DEBUG,
} or nil

local M = {
  --- client handle -> on_event (weak: a collected client takes its own)
  handlers = setmetatable({}, { __mode = "k" }),
}

--- The default: nginx's error log at the event's level; nothing elsewhere.
function M.default(event)
  if LEVELS then
    ngx.log(LEVELS[event.level] or ngx.INFO, "hiredlock: ", event.message)
  end
end

local function complain(err)
  if LEVELS then
    ngx.log(ngx.ERR, "hiredlock: on_event failed: ", tostring(err))
  else
    io.stderr:write("hiredlock: on_event failed: ", tostring(err), "\n")
  end
end

--- Hands the events the client handle queued to its on_event. A callback
-- that raises is reported and the next event goes on: the call that ran
-- before it (an acquire, a release) has its own result to return.
function M.deliver(handle)
  local events, dropped = handle:events()
  if not events then
    return
  end
  local fn = M.handlers[handle] or M.default
  for i = 1, #events do
    local ok, err = pcall(fn, events[i])
    if not ok then
      complain(err)
    end
  end
  if dropped > 0 and LEVELS then
    ngx.log(ngx.WARN, "hiredlock: ", dropped,
      " events were dropped: the client's queue was full")
  end
end

return M
