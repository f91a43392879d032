#!/usr/bin/env bash
# Calibrate shipped models on their dev splits and measure them on test (BENCHMARKS.md, "Calibration of every
# shipped model"), one torch thread, one model at a time; a name of a model of several treebanks is parsed, calibrated
# and measured as its treebank. For each NAME: the weights' checksums and a parse of the
# first SENTENCES dev sentences before, `calibration_table calibrate NAME` (spandep calibrate FOLDER DEV --write),
# then the same checks after (the weights and the parse, heads, labels and every column, must be byte-identical:
# calibration changes only the confidences), then `calibration_table measure NAME` on test.
#   benchmarks/scripts/calibrate_shipped.sh en en-accurate fr it ru no cs zh
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 1 ] || { echo "usage: $0 NAME [NAME ...]" >&2; exit 2; }
PY=${PYTHON:-.venv/bin/python}
SENTENCES=${SENTENCES:-300}
export OMP_NUM_THREADS=1 PYTHONPATH=$PWD/src:$PWD${PYTHONPATH:+:$PYTHONPATH}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for name in "$@"; do
  read -r folder dev < <("$PY" -c 'import sys; from benchmarks.scripts.calibration_table import model_named, portable_path
from benchmarks.suite.raw_text import dataset
m = model_named(sys.argv[1]); print(portable_path(m.folder), portable_path(dataset(m.code, None).dev))' "$name")
  awk -v n="$SENTENCES" 'BEGIN { RS = ""; ORS = "\n\n" } NR <= n' "$dev" > "$work/dev.conllu"
  check() {  # the weights' checksums and the parse of the dev excerpt, into $work/$1.*
    (cd "$folder" && find . -type f ! -name config.json ! -name 'card*.json' -print0 | sort -z | xargs -0 sha256sum) > "$work/$1.sha256"
    "$PY" -m spandep parse "$work/dev.conllu" --model "$name" --threads 1 -o "$work/$1.conllu"
  }
  check before
  "$PY" -m benchmarks.scripts.calibration_table calibrate "$name"
  check after
  cmp "$work/before.sha256" "$work/after.sha256"
  cmp "$work/before.conllu" "$work/after.conllu"
  echo "$name: weights and the parse of $(grep -c "^$" "$work/dev.conllu") dev sentences unchanged"
  "$PY" -m benchmarks.scripts.calibration_table measure "$name"
done
