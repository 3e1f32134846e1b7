-- luarocks make                          (Lua 5.1; LuaJIT uses the same tree)
-- luarocks --lua-version 5.4 make        (Lua 5.4)
-- Builds the C module hiredlock.core from bindings/lua/*.c and the C core
-- (the files core/sources.txt lists) in one shared object, with the
-- system's hiredis or, when none is found, the bundled one (vendor/hiredis)
-- compiled in, and OpenSSL for TLS (rediss://) when found; installs it and
-- every Lua module under lua/. The build is bindings/lua/rock.mk: a
-- rockspec can neither choose between two hiredis nor go on without
-- OpenSSL. scripts/check-sources.py (make test) checks what it compiles
-- against core/sources.txt. `make dist` packs it with its sources into a
-- source rock.
rockspec_format = "3.0"
package = "hiredlock"
version = "0.1.0-1"

source = {
  -- Never fetched by `luarocks make` (it builds the directory it runs in) nor
  -- by installing the source rock of `make dist`, which carries the sources
  -- in dir: both build offline.
  url = "git+https://github.com/hiredlock/hiredlock.git",
  tag = "v0.1.0",
  dir = "hiredlock",
}

description = {
  summary = "Distributed locks on Redis (Redlock) over one C core",
  detailed = [[
    hiredlock implements the Redlock algorithm over N independent Redis
    masters (N = 1 is the plain single-instance lock) in a small C core on
    hiredis, shared with the C and Python APIs: same algorithm, same wire
    format, same error texts, so a lock taken from one runtime excludes the
    others. Runs on Lua 5.1, LuaJIT 2.1 and Lua 5.4.
  ]],
  license = "MIT",
  labels = { "redis", "lock", "redlock", "distributed" },
}

dependencies = {
  "lua >= 5.1",
}

build = {
  type = "make",
  makefile = "bindings/lua/rock.mk",
  -- HIREDLOCK_HIREDIS=system|bundled and HIREDLOCK_TLS=on|off in the
  -- environment force a choice (bindings/lua/rock.mk).
  build_variables = {
    CC = "$(CC)",
    CFLAGS = "$(CFLAGS)",
    LIBFLAG = "$(LIBFLAG)",
    LUA_INCDIR = "$(LUA_INCDIR)",
  },
  install_variables = {
    LUADIR = "$(LUADIR)",
    LIBDIR = "$(LIBDIR)",
  },
}

test = {
  type = "busted",
  flags = { "--config-file=tests/lua/busted-config.lua" },
}
