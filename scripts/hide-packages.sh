#!/usr/bin/env bash
# Runs a command on this machine as if some Debian packages were not
# installed: in a mount namespace of its own (unshare -m, root), every file
# of the installed packages whose names match the patterns, under /usr/lib,
# /usr/include and /lib, is hidden by an overlay with a whiteout for it, so
# the dynamic loader, the compiler and pkg-config find nothing there
# ("cannot open shared object file", "No such file or directory"). The rest
# of the machine, and every process outside, sees no change; the overlays
# go away with the namespace.
#   scripts/hide-packages.sh PATTERN... -- COMMAND [ARG...]
#   e.g. scripts/hide-packages.sh 'libhiredis*' 'libssl*' -- python3 -c ...
# Prints "hide-packages: hid N files of PACKAGES" on stderr first.
set -euo pipefail
patterns=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  patterns+=("$1")
  shift
done
[ $# -gt 1 ] && [ ${#patterns[@]} -gt 0 ] ||
  { echo "usage: hide-packages.sh PATTERN... -- COMMAND [ARG...]" >&2; exit 2; }
shift

if [ -z "${HRL_HIDE_INSIDE:-}" ]; then
  [ "$(id -u)" -eq 0 ] || { echo "hide-packages: needs root (unshare -m)" >&2; exit 2; }
  # --propagation private (unshare's default): nothing mounted inside shows
  # outside.
  exec env HRL_HIDE_INSIDE=1 unshare -m --propagation private \
    "$0" "${patterns[@]}" -- "$@"
fi
unset HRL_HIDE_INSIDE

mapfile -t packages < <(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' \
  "${patterns[@]}" 2>/dev/null | awk '$2 ~ /^.i/ {print $1}')
[ ${#packages[@]} -gt 0 ] ||
  { echo "hide-packages: no installed package matches ${patterns[*]}" >&2; exit 2; }
# The packages' files (not directories), by the directory they are in, that
# directory's real path (/lib is /usr/lib on a merged /usr).
declare -A hide
count=0
while IFS= read -r f; do
  case $f in /usr/lib/* | /usr/include/* | /lib/* | /lib64/*) ;; *) continue ;; esac
  [ -f "$f" ] || [ -L "$f" ] || continue
  [ -d "$f" ] && continue
  d=$(realpath "$(dirname "$f")")
  hide[$d]+="${f##*/}"$'\n'
  count=$((count + 1))
done < <(dpkg -L "${packages[@]}")

# The overlays' upper and work directories on a tmpfs of the namespace's
# own; parents before children (a child overlay lies on its parent's).
scratch=$(mktemp -d /tmp/hrlhide.XXXXXX)
mount -t tmpfs hrlhide "$scratch"
n=0
while IFS= read -r d; do
  n=$((n + 1))
  mkdir -p "$scratch/$n/up" "$scratch/$n/work"
  while IFS= read -r name; do
    [ -n "$name" ] && mknod "$scratch/$n/up/$name" c 0 0
  done <<<"${hide[$d]}"
  mount -t overlay hrlhide \
    -o "lowerdir=$d,upperdir=$scratch/$n/up,workdir=$scratch/$n/work" "$d"
done < <(printf '%s\n' "${!hide[@]}" | awk '{print length($0) " " $0}' |
  sort -n | cut -d' ' -f2-)
echo "hide-packages: hid $count files of ${packages[*]}" >&2
exec "$@"
