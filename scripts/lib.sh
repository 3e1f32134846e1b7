# shellcheck shell=bash
# Shell functions shared by scripts/ and the suites' build scripts; source it
# (`source scripts/lib.sh`), it runs nothing by itself.

# quiet CMD [ARGS...]: runs CMD, showing its output only when it fails
# (builds are noisy).
quiet() {
  local out
  if ! out=$("$@" 2>&1); then
    echo "$out"
    return 1
  fi
}

# flock_9: takes the lock on the file open on fd 9 (flock 9: build/locks/,
# build/dist.lock), waiting as long as it takes; but first, when another
# process holds it at a lower priority than ours (a nice suite, such as
# prebuild building what this suite needs: scripts/run-tests.sh), raises
# that holder's process group (its suite) to our priority: a suite never
# waits on a build the suites beside it starve.
flock_9() {
  flock -n 9 && return 0
  local fd pid mine theirs
  mine=$(ps -o ni= -p "$BASHPID" | tr -d " ")
  # The holder is one of the processes with the file open on their fd 9
  # (the flock(1) that took the lock has exited; its shell holds it).
  for fd in /proc/[0-9]*/fd/9; do
    [ "$fd" -ef "/proc/$BASHPID/fd/9" ] || continue
    pid=${fd#/proc/}
    pid=${pid%%/*}
    theirs=$(ps -o ni= -p "$pid") || continue
    # || true: a holder gone meanwhile is no error (callers run set -e).
    if [ "$theirs" -gt "$mine" ]; then
      renice -n "$mine" -g "$(ps -o pgid= -p "$pid" | tr -d ' ')" \
        >/dev/null 2>&1 || true
    fi
  done
  flock 9
}

# locked NAME CMD [ARGS...]: runs CMD holding the lock build/locks/NAME
# (flock), so that suites running side by side (scripts/run-tests.sh) build
# a shared output (build/, build/python, a rock tree) one at a time: the
# second finds it fresh. Run from the repository root.
locked() {
  local name=$1
  shift
  mkdir -p build/locks
  (
    flock_9
    "$@"
  ) 9>"build/locks/$name.lock"
}

# build_main [TARGET...]: configures build/ (RelWithDebInfo, as `make build`)
# and builds the TARGETs there (all without one), quiet unless it fails,
# holding the lock "build": the c, interop, reliability, sim and prebuild
# suites and bench/run.sh all build there. Run from the repository root.
build_main() {
  locked build _build_main "$@"
}
_build_main() {
  local targets=()
  [ $# -eq 0 ] || targets=(--target "$@")
  quiet cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
    quiet cmake --build build -j"$(nproc)" "${targets[@]}"
}

# build_asan: configures and builds build/asan (the C tests under ASan and
# UBSan: the c-asan suite) holding the lock "asan": the prebuild suite
# builds it too. Run from the repository root.
build_asan() {
  locked asan _build_asan
}
_build_asan() {
  quiet cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=Debug -DHRL_SANITIZE=ON \
    -DHRL_BENCH=OFF &&
    quiet cmake --build build/asan -j"$(nproc)"
}

# ctest_jobs: how many C tests ctest runs side by side: one a CPU (they
# spend most of their time waiting on Redis and on timers, each with Redis
# servers of its own: tests/fixtures; more at once, beside the other suites,
# and the tests' deadlines of tens of milliseconds start to slip).
ctest_jobs() {
  nproc
}

# fingerprint PATH... : one hash of the names and contents of the files under
# the PATHs (build products a developer may have left there excluded), for
# skipping a rebuild whose inputs have not changed.
fingerprint() {
  find "$@" -type f ! -name '*.o' ! -name '*.so' ! -name '*.pyc' -print0 |
    LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1
}

# fresh STAMP KEY: true when the file STAMP holds KEY (what the last build was
# made from); `echo KEY >STAMP` after a build.
fresh() {
  [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]
}

# stage_rock DEST: copies what the rock is built from (the rockspec, LICENSE,
# README.md, lua/, bindings/lua/ with the rock's makefile, the core and the
# bundled hiredis) to DEST, without any build product a developer left in
# the checkout. Run from the repository root.
stage_rock() {
  mkdir -p "$1"
  tar -cf - --exclude='*.o' --exclude='*.so' hiredlock-*.rockspec LICENSE \
    README.md lua bindings/lua core/include core/src core/sources.txt \
    vendor/hiredis |
    tar -xf - -C "$1"
}

# use_python_build: puts build/python (scripts/pip-install.sh) first on
# PYTHONPATH (and its bin/ on PATH) and checks that python3 then imports
# hiredlock from there, not from an older install elsewhere. Run from the repository root.
use_python_build() {
  export PYTHONPATH="$PWD/build/python${PYTHONPATH:+:$PYTHONPATH}"
  # pip install --target puts console scripts (hiredlock) in its bin/.
  export PATH="$PWD/build/python/bin:$PATH"
  local where
  where=$(cd / && python3 -c 'import hiredlock; print(hiredlock.__file__)')
  case $where in
    "$PWD/build/python/hiredlock/"*) ;;
    *) echo "hiredlock is imported from $where, not from build/python" >&2
       return 1 ;;
  esac
}

# backend_wheels: the build backend pyproject.toml asks for (setuptools),
# the newest release and the newest one that still runs on Python 3.9 (the
# oldest the package supports), downloaded once into build/wheels, so that builds and installs of the sdist
# run with --no-index (PIP_NO_INDEX=1 PIP_FIND_LINKS=build/wheels) like on a
# machine without PyPI. Run from the repository root.
backend_wheels() {
  locked wheels _backend_wheels
}
_backend_wheels() {
  local root=$PWD wheels=$PWD/build/wheels requires
  requires=$(cd / && python3 -c 'import sys, tomllib
with open(sys.argv[1], "rb") as f:
    print(" ".join(tomllib.load(f)["build-system"]["requires"]))' \
    "$root/pyproject.toml")
  fresh "$wheels.stamp" "$requires" && return 0
  rm -rf "$wheels"
  # shellcheck disable=SC2086 # one requirement a word
  # The stamp only once both downloads are there: a failed one (the
  # network, once) left a stamp over wheels without Python 3.9's setuptools,
  # and every later dist build of the 3.9 wheel failed on it.
  quiet python3 -m pip download -q --disable-pip-version-check \
    --dest "$wheels" $requires &&
    # shellcheck disable=SC2086
    quiet python3 -m pip download -q --disable-pip-version-check \
      --only-binary :all: --python-version 3.9 --dest "$wheels" $requires &&
    echo "$requires" >"$wheels.stamp"
}
