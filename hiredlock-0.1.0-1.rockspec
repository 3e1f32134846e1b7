-- luarocks make                          (Lua 5.1; LuaJIT uses the same tree)
-- luarocks --lua-version 5.4 make        (Lua 5.4)
-- Builds the C module hiredlock.core from bindings/lua/*.c and the C core in
-- one shared object, linked with the system's hiredis and, for TLS
-- (rediss://), OpenSSL's libssl and libcrypto, and installs the Lua facade.
-- A rockspec cannot read files, so the core's list below repeats
-- core/sources.txt; scripts/check-sources.py (make test) fails when they
-- differ. `make dist` packs it with its sources into a source rock.
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

external_dependencies = {
  HIREDIS = { header = "hiredis/hiredis.h" },
  OPENSSL = { header = "openssl/ssl.h" },
}

build = {
  type = "builtin",
  modules = {
    ["hiredlock"] = "lua/hiredlock/init.lua",
    ["hiredlock.driver.hiredis"] = "lua/hiredlock/driver/hiredis.lua",
    ["hiredlock.driver.cosocket"] = "lua/hiredlock/driver/cosocket.lua",
    ["hiredlock.driver.cosocket_conn"] = "lua/hiredlock/driver/cosocket_conn.lua",
    ["hiredlock.driver.listener"] = "lua/hiredlock/driver/listener.lua",
    ["hiredlock.events"] = "lua/hiredlock/events.lua",
    ["hiredlock.prometheus"] = "lua/hiredlock/prometheus.lua",
    ["hiredlock.resty.lock"] = "lua/hiredlock/resty/lock.lua",
    ["hiredlock.core"] = {
      sources = {
        "bindings/lua/args.c",
        "bindings/lua/client.c",
        "bindings/lua/compat.c",
        "bindings/lua/lock.c",
        "bindings/lua/module.c",
        "bindings/lua/ops.c",
        "bindings/lua/parser.c",
        "bindings/lua/proto.c",
        "bindings/lua/result.c",
        "bindings/lua/subscriber.c",
        "core/src/api/client.c",
        "core/src/api/lock.c",
        "core/src/api/ops.c",
        "core/src/api/renewer.c",
        "core/src/driver/conn.c",
        "core/src/driver/connect.c",
        "core/src/driver/fanout.c",
        "core/src/driver/listen.c",
        "core/src/driver/replies.c",
        "core/src/driver/sleep.c",
        "core/src/driver/tls.c",
        "core/src/driver/waitroom.c",
        "core/src/proto/clock.c",
        "core/src/proto/cluster.c",
        "core/src/proto/config.c",
        "core/src/proto/convert.c",
        "core/src/proto/inspect.c",
        "core/src/proto/lease.c",
        "core/src/proto/lock_state.c",
        "core/src/proto/nodes.c",
        "core/src/proto/observe.c",
        "core/src/proto/options.c",
        "core/src/proto/owner.c",
        "core/src/proto/parser.c",
        "core/src/proto/random.c",
        "core/src/proto/redlock.c",
        "core/src/proto/reply.c",
        "core/src/proto/resp.c",
        "core/src/proto/round.c",
        "core/src/proto/seam.c",
        "core/src/proto/sentinel.c",
        "core/src/proto/sibling_key.c",
        "core/src/proto/status.c",
        "core/src/proto/stream.c",
        "core/src/proto/subscriber.c",
        "core/src/proto/target.c",
        "core/src/proto/url.c",
        "core/src/proto/url_seeds.c",
        "core/src/proto/url_tls.c",
        "core/src/proto/waiting.c",
      },
      incdirs = {
        "core/include",
        "core/src",
        "$(HIREDIS_INCDIR)",
        "$(OPENSSL_INCDIR)",
      },
      libdirs = { "$(HIREDIS_LIBDIR)", "$(OPENSSL_LIBDIR)" },
      libraries = { "hiredis", "ssl", "crypto", "pthread", "m" },
    },
  },
}

test = {
  type = "busted",
  flags = { "--config-file=tests/lua/busted-config.lua" },
}
