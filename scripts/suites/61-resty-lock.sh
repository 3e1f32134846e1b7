# lua-resty-lock's own t/sanity.t against hiredlock.resty.lock in a real
# nginx, with only its `require "resty.lock"` swapped: one test per check
# (84), the ones docs/MIGRATING.md lists marked as expected failures. The
# .t file is read where it lies (HRL_RESTY_LOCK_T, or a lua-resty-lock
# checkout found beside the repository; tests/resty_lock/conftest.py), never
# copied here; without it the checks are skipped, and the summary says so.
suite_summary='^=* ?[0-9]+ (passed|failed|skipped).* in [0-9.]+s'
suite_seconds=23 # s, 3 at a time on 2 CPUs: the longest start first
suite_run() {
  local root run_dir rc
  root=$(pwd)
  quiet scripts/pip-install.sh pytest=pytest redis=redis || return 1
  tests/lua/build-rock.sh 5.1 | sed 's/^installed/rock/' || return 1
  run_dir=$(mktemp -d)
  (cd "$run_dir" && HRL_NGX_TREE="$root/build/lua/5.1" python3 -m pytest \
    -p no:cacheprovider -q -rxXs "$root/tests/resty_lock")
  rc=$?
  rm -rf "$run_dir"
  return $rc
}
