#!/usr/bin/env bash
# The sim suite's run (scripts/suites/26-sim.sh) and `make sim`'s
# (scripts/sim.sh): the regression scenarios, a slice of seeds on every
# CPU with the protocol as shipped (hrl-sim), then every mutant until a
# seed catches it (hrl-sim-mutants); one summary line.
#   tests/sim/suite.sh BUILD_DIR SEEDS MUTANT_SEEDS[,RARE] [JSON]
set -uo pipefail
bin=$1 seeds=$2 mutant_seeds=$3 json=${4:-}
jobs=$(nproc)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
here=$(dirname "$0")
rc=0
"$bin/hrl-sim" --regress "$here"/regress/*.txt | tee "$out/regress" || rc=1
"$bin/hrl-sim" --seeds "$seeds" --jobs "$jobs" --failures build/sim-failures \
  --json "$out/slice.json" | tee "$out/slice" || rc=1
"$bin/hrl-sim-mutants" --mutants "$mutant_seeds" --jobs "$jobs" \
  --json "$out/mutants.json" | tee "$out/mutants" || rc=1
if [ -n "$json" ]; then
  python3 - "$out/slice.json" "$out/mutants.json" "$json" <<'PY' || rc=1
import json, sys
merged = {}
for path in sys.argv[1:3]:
    with open(path) as f:
        merged.update(json.load(f))
merged.pop("format", None)
with open(sys.argv[3], "w") as f:
    json.dump(merged, f, indent=2)
    f.write("\n")
PY
fi
regress=$(grep -E '^regressions: ' "$out/regress" | sed 's/^regressions: //')
slice=$(grep -E '^sim: ' "$out/slice" | sed 's/^sim: //')
mutants=$(grep -E '^mutants: ' "$out/mutants" | sed 's/^mutants: //')
echo "sim suite: ${slice:-no slice ran}; regressions ${regress:-none ran}; mutants ${mutants:-none ran}"
exit $rc
