# C sources are clang-format clean (.clang-format at the root), and the
# Python sources ruff clean: lint and format (pyproject.toml's [tool.ruff]).
suite_summary='^format: '
suite_seconds=18 # s, 3 at a time on 2 CPUs: the longest start first
suite_nice=1 # computes only: on the CPU time the other suites leave
suite_run() {
  local c py rc=0
  c=$(git ls-files '*.[ch]' ':!vendor/') # vendor/: hiredis, as pinned
  py=$(git ls-files '*.py')
  quiet scripts/pip-install.sh ruff=ruff==0.17.6 || return 1
  # shellcheck disable=SC2086
  clang-format --dry-run -Werror $c || rc=1
  # shellcheck disable=SC2086
  python3 -m ruff check --quiet $py || rc=1
  # shellcheck disable=SC2086
  python3 -m ruff format --check --quiet $py || rc=1
  if [ $rc -eq 0 ]; then
    echo "format: $(echo "$c" | wc -w) C files clang-format clean," \
      "$(echo "$py" | wc -w) Python files ruff clean"
  else
    echo "format: files need make format (clang-format -i, ruff format)"
  fi
  return $rc
}
