#!/usr/bin/env bash
# Parse speed of the shipped model under two or more checkouts of the code, timed in alternation (for a change that
# must keep speed, such as a refactor). Each revision is checked out into a temporary worktree (its own shipped
# model); each round runs `spandep benchmark-speed` (1 warm-up, 2 timed runs, 1 thread, the model's settings) once per
# revision with the harness's clock set to the process's CPU time, which other jobs on a shared machine barely change.
# Prints "round revision sentences/s [run seconds]"; compare revisions by the median of their per-round ratios.
# THREADS=N times N torch threads instead; CLOCK=wall times wall-clock seconds instead of CPU time (what N > 1
# threads are for: run it with the machine otherwise idle); MODEL=NAME times that shipped model (`spandep models`;
# each checkout's own folder of that name) instead of the default one.
#
#   benchmarks/scripts/checkout_speed.sh INPUT.conllu REV [REV ...]     (ROUNDS=3 by default; run from the repository root)
#   THREADS=2 CLOCK=wall ROUNDS=5 benchmarks/scripts/checkout_speed.sh INPUT.conllu OLD NEW
#   MODEL=it benchmarks/scripts/checkout_speed.sh ../shared/data/it_partut/it_partut-ud-test.conllu OLD NEW
set -euo pipefail
input=$(realpath "$1"); shift
root=$(pwd); py="$root/.venv/bin/python"
tmp=$(mktemp -d); trap 'for d in "$tmp"/*/; do git -C "$root" worktree remove --force "$d" >/dev/null 2>&1 || true; done; rm -rf "$tmp"' EXIT
for rev in "$@"; do git worktree add --detach "$tmp/$rev" "$rev" >/dev/null 2>&1; done
for round in $(seq 1 "${ROUNDS:-3}"); do
  for rev in "$@"; do
    (cd "$tmp/$rev" && OMP_NUM_THREADS=${THREADS:-1} PYTHONPATH="$tmp/$rev/src" "$py" -c "
import sys, time
if '${CLOCK:-cpu}' == 'cpu':
    time.perf_counter = time.process_time
from spandep.cli.main import app
sys.argv = ['spandep', 'benchmark-speed', '$input', '--model', '${MODEL:-en}', '--runs', '2', '--threads', '${THREADS:-1}', '--json']
app()" 2>/dev/null) | "$py" -c "import json, sys; d = json.load(sys.stdin); print($round, '$rev', d['sent_per_s']['mean'], d['runs_seconds'])"
  done
done
