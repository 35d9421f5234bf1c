#!/bin/bash
# Run benches on two checkouts, interleaved (before, after; then after, before), and print
# their `key: value` lines side by side.  Each checkout needs its own venv in .venv
# (the editable install maps privbandit.accounting & co. to that checkout's folders).
#
# Usage: bench/before_after.sh BEFORE_DIR AFTER_DIR [OUT_DIR]
#   e.g. git worktree add /tmp/before <commit> && (cd /tmp/before && python -m venv .venv &&
#        .venv/bin/pip install -q -e .) && bench/before_after.sh /tmp/before . /tmp/ba
set -euo pipefail
before=$(cd "$1" && pwd); after=$(cd "$2" && pwd); out=${3:-/tmp/before_after}
mkdir -p "$out"
BENCHES=(
  "bench_linucb --rounds 20000 --repeats 3"
  "bench_club --rounds 5000 --repeats 2"
  "bench_fclub --rounds 20000 --comm-horizons 10000"
  "bench_vertical --horizon 2000 --items 100 500 --no-sealed"
  "bench_anonymous --rounds 100000"
  "bench_fedmab --horizon 1000000 --repeats 3"
  "bench_cascade --rounds 100000 --ref-rounds 20000"
)
for pass in 1 2; do
  for spec in "${BENCHES[@]}"; do
    read -r name args <<< "$spec"
    sides=(before after); [ "$pass" = 2 ] && sides=(after before)
    for side in "${sides[@]}"; do
      dir=$before; [ "$side" = after ] && dir=$after
      # shellcheck disable=SC2086
      (cd "$dir" && nice -n 10 .venv/bin/python "bench/$name.py" $args) \
        > "$out/${name}_${side}_$pass.txt" 2>&1
    done
    echo "== $name (pass $pass): before | after"
    paste -d'|' <(grep -E '^[a-z_0-9]+: ' "$out/${name}_before_$pass.txt") \
                <(grep -E '^[a-z_0-9]+: ' "$out/${name}_after_$pass.txt") | column -t -s'|'
  done
done
