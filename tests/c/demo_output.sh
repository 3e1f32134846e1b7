#!/bin/sh
# `make demo` on 5 masters that want a password (their URLs carry it): the
# demo behaves as it says, and its output never shows the password.
#   demo_output.sh REDIS_FIXTURE DEMO
set -eu
fixture=$1
demo=$2
secret=Demo-Secr3t
if ! out=$("$fixture" run -n 5 --password "$secret" -- "$demo" 2>&1); then
  printf '%s\n' "$out"
  exit 1
fi
case $out in
  *"$secret"*)
    printf '%s\n' "$out"
    echo "demo_output: the demo printed the masters' password" >&2
    exit 1 ;;
esac
case $out in
  *"demo finished as expected"*) ;;
  *) printf '%s\n' "$out"; exit 1 ;;
esac
echo "demo_output: finished as expected, no password shown"
