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
# README.md, lua/, bindings/lua/ and the core) to DEST, without any build
# product a developer left in the checkout. Run from the repository root.
stage_rock() {
  mkdir -p "$1"
  tar -cf - --exclude='*.o' --exclude='*.so' hiredlock-*.rockspec LICENSE \
    README.md lua bindings/lua core/include core/src core/sources.txt |
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
