# The release artefacts as a user installs them: `make dist` (sdist, wheel,
# source rock), then the sdist into a fresh virtual environment (compiled),
# the wheel, and the source rock into a fresh rocks tree, all in a temp dir
# outside the checkout, each running the README's quick start against 3
# masters from tests/fixtures (scripts/fresh-install.sh).
suite_summary='^fresh-install: '
suite_seconds=100 # s, 3 at a time on 2 CPUs: the longest start first
suite_run() {
  scripts/dist.sh &&
    tests/fixtures/redis-fixture run -n 3 -- scripts/fresh-install.sh
}
