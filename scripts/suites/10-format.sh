# C sources are clang-format clean (.clang-format at the root).
suite_summary='^format: '
suite_run() {
  local files
  files=$(git ls-files '*.[ch]')
  # shellcheck disable=SC2086
  if clang-format --dry-run -Werror $files; then
    echo "format: $(echo "$files" | wc -w) C files clean"
  else
    echo "format: files need clang-format -i (make format)"
    return 1
  fi
}
