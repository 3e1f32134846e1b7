--- Bad inputs, Lua: the one table of every bad input the Lua API is checked
-- against, and how a row is run, under lua5.1, LuaJIT and lua5.4 and, for
-- the rows with an id, inside nginx (the cosocket driver). Consumers:
--   tests/lua/02-inputs_spec.lua     every row that needs no server or one
--                                    healthy master (none, ok)
--   tests/reliability/lua/run_bad_inputs.lua   every row, the "env" ones
--                                    against the misbehaving servers of
--                                    tests/reliability/hrlrel/badenv.py,
--                                    written out for docs/RELIABILITY.md
--   tests/nginx (hrltest.lua, plain.lua)   the rows with an id, raised in
--                                    nginx and in plain Lua alike
-- A row: { category, input, fn(ctx), kind, message, need, id = ..., exact =
-- true }. Kinds: "raises" (an error containing the message, or every
-- message of a list; with exact, the whole text), "nil, err" (nil and a
-- message containing it), "returns" (the first value, as text), "ok"
-- (accepted).
local B = {}

B.NEEDS = { none = 1, ok = 2, env = 3 }

--- What rows call: ctx.client (the facade's client on the healthy master),
-- ctx.ok, ctx.dup (that master as localhost), ctx.port (its port, for
-- inspection) and ctx.env (the HRL_BAD_* servers, for "env" rows).
function B.context(fields)
  local ctx = fields
  ctx.env = ctx.env or function(k)
    return (assert(os.getenv(k), k))
  end
  function ctx.new(url, opts)
    local o = { timeout = 0.5, connect_timeout = 0.5 }
    for k, v in pairs(opts or {}) do
      o[k] = v
    end
    return require("hiredlock").new(url or ctx.ok, o)
  end
  function ctx.inspect()
    ctx._inspect = ctx._inspect
      or assert(require("helpers.resp").connect(tonumber(ctx.port), 30))
    return ctx._inspect
  end
  return ctx
end

--- The table, or the rows whose need is at most up_to.
function B.rows(up_to)
  local out = {}
  for _, part in ipairs({ "helpers.bad_inputs_arguments", "helpers.bad_inputs_states",
    "helpers.bad_inputs_deploy" }) do
    for _, row in ipairs(require(part)) do
      if B.NEEDS[row[6]] <= B.NEEDS[up_to or "env"] then
        out[#out + 1] = row
      end
    end
  end
  return out
end

--- The row with this id (the nginx cases).
function B.by_id(id)
  for _, row in ipairs(B.rows()) do
    if row.id == id then
      return row
    end
  end
end

local function contains(text, message)
  if type(message) == "table" then
    for _, m in ipairs(message) do
      if not text:find(m, 1, true) then
        return false
      end
    end
    return true
  end
  return text:find(message, 1, true) ~= nil
end

--- Runs one row; its outcome as the reliability report shows it.
function B.run(row, ctx)
  local category, input, fn, kind, message = row[1], row[2], row[3], row[4], row[5]
  local res = { pcall(fn, ctx) }
  local got_kind, text, raw
  if not res[1] then
    raw = tostring(res[2])
    -- without the "file:line: " of where it was raised
    got_kind, text = "raises", (raw:gsub("^[^:]*:%d+: ", ""))
  elseif res[2] == nil and res[3] ~= nil then
    got_kind, text = "nil, err", tostring(res[3])
  elseif kind == "returns" then
    got_kind, text = "returns", tostring(res[2])
  else
    got_kind, text = "ok", tostring(res[2])
  end
  local shown = type(message) == "table" and table.concat(message, " ... ") or message
  local ok = got_kind == kind
  if row.exact then
    ok = ok and raw == message
  else
    ok = ok and contains(text, message)
  end
  return {
    category = category, input = input,
    expected = kind .. (shown ~= "" and (": " .. shown) or ""),
    got = got_kind == "ok" and "accepted" or (got_kind .. ": " .. text),
    as_expected = ok,
  }
end

return B
