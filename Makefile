# The project's two commands: `make demo` and `make test` (see README.md).
# Both install what they need from Debian first, only what is missing.
SHELL := /bin/bash
JOBS ?= $(shell nproc)
DEPS := core fuzz python lua nginx reliability dist

.PHONY: all deps build test demo dist bench fuzz reliability sim format clean

all: build

deps:
	@scripts/install-deps.sh $(DEPS)

build: deps
	@cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build build -j$(JOBS)

# Every suite, each with its summary line; fails when any suite fails.
test: deps
	@scripts/run-tests.sh

# The release artefacts in build/dist/: the sdist, a manylinux wheel per
# CPython (build, auditwheel) and the source rock (scripts/dist.sh). Needs
# only a C compiler, OpenSSL's headers and zip from Debian; its tools go into
# venvs under build/dist-tools.
dist:
	@scripts/install-deps.sh dist
	@scripts/dist.sh --force

# A lock on 5 local masters: contention, 2 masters killed, then 3.
demo: build
	@tests/fixtures/redis-fixture run -n 5 -- build/examples/hiredlock-demo

# Every runtime and peer side by side; writes docs/PERFORMANCE.md (see
# bench/README.md). `make bench BENCH_ARGS=--quick`: a check in 2 minutes.
bench: build
	@bench/run.sh $(BENCH_ARGS)

# libFuzzer on the RESP reader, URL/option parsing, the handshake and the
# state machine: 10^6 executions per target.
fuzz: deps
	@scripts/fuzz.sh

# Every reliability case at full length, the bad-input tables and the
# fuzzers; writes docs/RELIABILITY.md (about 25 minutes).
reliability: deps
	@scripts/reliability.sh

# The deterministic simulation (tests/sim): 10^6 seeded worlds against the
# protocol, every seeded mutant caught; writes its figures to
# docs/RELIABILITY.md (about half an hour on 2 idle CPUs).
sim:
	@scripts/install-deps.sh core
	@scripts/sim.sh $(SIM_ARGS)

format:
	@clang-format -i $$(git ls-files '*.[ch]' ':!vendor/') # vendor/: as pinned
	@python3 -m ruff check --fix --quiet $$(git ls-files '*.py')
	@python3 -m ruff format --quiet $$(git ls-files '*.py')

# Every build output is under build/.
clean:
	rm -rf build
