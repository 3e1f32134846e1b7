# The rock's build (hiredlock-*.rockspec, build.type "make"), run by
# `luarocks make` and by `luarocks install` of the source rock from the
# rock's root. LuaRocks passes CC, CFLAGS, LIBFLAG and LUA_INCDIR (build)
# and LUADIR, LIBDIR (install).
#
# The C module hiredlock.core is bindings/lua/*.c and the C core, the files
# core/sources.txt lists (the one list, read here), in one shared object,
# linked with:
#   hiredis  the system's when its header and library are found (as a
#            rockspec's external dependency would be), else the bundled
#            vendor/hiredis, compiled in with its symbols hidden;
#            HIREDLOCK_HIREDIS=system | bundled forces one
#   OpenSSL  (TLS, rediss://) when found (pkg-config, else the header and
#            -lssl -lcrypto); without it the build goes on and rediss://
#            masters are refused with the core's one message
#            (core/src/driver/tls_none.c); HIREDLOCK_TLS=on | off forces it
# A rockspec cannot do either (its external_dependencies fail the build when
# a library is missing). Every build starts from an empty build/rock/.
# The Lua facade: every lua/hiredlock/**/*.lua, whatever modules there are.
#
#   make -f bindings/lua/rock.mk print-sources   what the module compiles
#                                                (scripts/check-sources.py)

CC ?= cc
CFLAGS ?= -O2 -fPIC
LIBFLAG ?= -shared
LUA_INCDIR ?= /usr/include/lua5.1
HIREDLOCK_HIREDIS ?= auto
HIREDLOCK_TLS ?= auto
OUT := build/rock
THIS := $(lastword $(MAKEFILE_LIST))
HASH := \#

CORE_SOURCES := $(shell sed -e '/^$(HASH)/d' -e '/^[[:space:]]*$$/d' core/sources.txt)
BINDING_SOURCES := $(sort $(wildcard bindings/lua/*.c))
HIREDIS_SOURCES := $(addprefix vendor/hiredis/,alloc.c async.c hiredis.c net.c \
  read.c sds.c sockcompat.c)
LUA_MODULES := $(shell find lua/hiredlock -name '*.lua' | sort)

# $(call links,HEADER,LIBS,CFLAGS): "yes" when a program including HEADER
# compiles and links with LIBS.
links = $(shell printf '$(HASH)include <$(1)>\nint main(void) { return 0; }\n' | \
  $(CC) $(3) -x c - -o /dev/null $(2) >/dev/null 2>&1 && echo yes)

ifeq ($(HIREDLOCK_HIREDIS),auto)
  HIREDIS := $(if $(call links,hiredis/hiredis.h,-lhiredis),system,bundled)
else
  HIREDIS := $(HIREDLOCK_HIREDIS)
endif
ifeq ($(HIREDIS),system)
  HIREDIS_LIBS := -lhiredis
  HIREDIS_OBJS :=
  HIREDIS_INC :=
else ifeq ($(HIREDIS),bundled)
  HIREDIS_LIBS :=
  HIREDIS_OBJS := $(patsubst %.c,$(OUT)/%.o,$(HIREDIS_SOURCES))
  HIREDIS_INC := -Ivendor
else
  $(error HIREDLOCK_HIREDIS=$(HIREDLOCK_HIREDIS): use auto, system or bundled)
endif

ifneq ($(HIREDLOCK_TLS),off)
  SSL_CFLAGS := $(shell pkg-config --cflags openssl 2>/dev/null)
  SSL_LIBS := $(or $(shell pkg-config --libs openssl 2>/dev/null),-lssl -lcrypto)
  TLS := $(if $(call links,openssl/ssl.h,$(SSL_LIBS),$(SSL_CFLAGS)),openssl,none)
else
  TLS := none
endif
ifeq ($(TLS),none)
  ifeq ($(HIREDLOCK_TLS),on)
    $(error HIREDLOCK_TLS=on, but OpenSSL's header or libraries are missing)
  endif
  SSL_CFLAGS := -DHRL_NO_TLS
  SSL_LIBS :=
endif

# The optimisation of the CMake build and the Python extension: -O3 where
# the flags ask for -O2 (LuaRocks' default; any other level, -O0 for a
# debugger, is left alone), the core's acquire + release ran ~390 more
# instructions at -O2. Every symbol but luaopen_hiredlock_core hidden: no
# call between the module's own functions goes through the PLT, and the
# compiler may inline across them (hrlua.h). With link-time optimisation
# when the compiler links a shared object with it (a clang without its
# linker plugin does not: built without), the binding's calls of the
# core's small accessors and the core's calls across its files are
# inlined too: about 350 instructions of a Lua acquire + release cycle.
LTO := $(if $(shell printf 'int f(void) { return 0; }\n' | \
  $(CC) -flto=auto -fPIC $(LIBFLAG) -x c - -o /dev/null >/dev/null 2>&1 && echo yes),-flto=auto)
MODULE_CFLAGS := $(subst -O2,-O3,$(CFLAGS)) -fvisibility=hidden $(LTO)

OBJS := $(patsubst %.c,$(OUT)/%.o,$(BINDING_SOURCES) $(CORE_SOURCES))
INCLUDES := -Icore/include -Icore/src $(HIREDIS_INC) -I$(LUA_INCDIR) $(SSL_CFLAGS)

.PHONY: all install print-sources

all:
	@echo "hiredlock rock: hiredis $(HIREDIS), TLS $(TLS), LTO $(if $(LTO),on,off)"
	rm -rf $(OUT)
	$(MAKE) -f $(THIS) $(OUT)/hiredlock/core.so

$(OUT)/hiredlock/core.so: $(OBJS) $(HIREDIS_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(LIBFLAG) $(MODULE_CFLAGS) -o $@ $^ $(HIREDIS_LIBS) $(SSL_LIBS) -lpthread -lm

$(OUT)/vendor/%.o: vendor/%.c
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -W%,$(CFLAGS)) -std=c99 -fvisibility=hidden -c $< -o $@

$(OUT)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(MODULE_CFLAGS) $(INCLUDES) -c $< -o $@

install:
	mkdir -p $(LIBDIR)/hiredlock
	cp $(OUT)/hiredlock/core.so $(LIBDIR)/hiredlock/core.so
	for f in $(LUA_MODULES); do \
	  d=$(LUADIR)/$$(dirname $${f#lua/}); mkdir -p $$d && cp $$f $$d/ || exit 1; \
	done

print-sources:
	@printf '%s\n' $(BINDING_SOURCES) $(CORE_SOURCES)
