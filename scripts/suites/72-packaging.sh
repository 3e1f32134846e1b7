# The release artefacts on a machine without hiredis and OpenSSL: `make
# dist` (reused when fresh), then, in a mount namespace hiding every file of
# the libhiredis* and libssl* packages, the old-style build failing to
# import, each CPython's manylinux wheel in a fresh venv (quick starts, a
# lock over TLS), the sdist and the source rock built there without TLS
# (quick starts, rediss:// refused), the C core compiled there by cc alone
# (rediss:// refused with the same message); before that, a second `pip install .`
# of a checkout rebuilding from a clean tree (scripts/packaging.sh).
# Needs root (unshare -m), as CI has.
suite_summary='^packaging: (ok|FAILED)'
suite_seconds=74 # s, 3 at a time on 2 CPUs: the longest start first
suite_run() {
  tests/fixtures/redis-fixture run -n 3 --tls -- scripts/packaging.sh ||
    { echo "packaging: FAILED"; return 1; }
}
