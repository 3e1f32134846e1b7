#!/usr/bin/env bash
# Builds what the reliability cases run, each with the project's own
# installer and into its usual place under build/ (never the source tree):
#   build/tests/reliability/bad_inputs, canceller   CMake (tests/reliability/
#                                                   CMakeLists.txt), in build/
#   build/python        pip install --target (scripts/pip-install.sh)
#   build/lua/5.1, 5.4  luarocks make --tree (tests/lua/build-rock.sh)
# and lays out build/reliability/, the harness's directory, with links to
# them under the names it runs them by:
#   py -> ../python, lua/<abi> -> the tree's lib/lua/<abi> (hiredlock/core.so),
#   c/<prog> -> ../../tests/reliability/<prog>
# Every C file is compiled with -Wall -Wextra -Werror. Quiet unless it fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
out=build/reliability
progs=(bad_inputs canceller)

build_main "${progs[@]/#/rel_}"
quiet scripts/pip-install.sh redis=redis
for abi in 5.1 5.4; do
  quiet tests/lua/build-rock.sh "$abi"
done

mkdir -p "$out/c" "$out/lua"
ln -sfn ../python "$out/py"
for abi in 5.1 5.4; do
  ln -sfn "../../lua/$abi/lib/lua/$abi" "$out/lua/$abi"
done
for prog in "${progs[@]}"; do
  ln -sfn "../../tests/reliability/$prog" "$out/c/$prog"
done
echo "build: $out (c, lua 5.1/5.4, python)"
