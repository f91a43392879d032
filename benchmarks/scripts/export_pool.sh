#!/usr/bin/env bash
# A pool model as the multilingual folder ships (issue 46), one torch thread: MODEL exported compact with int8 weights,
# its lemma lexicons written again (pool_lexicons.py write: each treebank's own, those of its language serving a pair
# its own lacks, the lexicons of all left out, as a pool run trained now writes them), each treebank's dictionary mode
# chosen on its dev split and written (pool_lexicons.py dictionaries / write-dictionaries; the choices into $CHOICES,
# default benchmarks/results/multilingual/dictionaries.json), then cut into OUT to the treebanks no other folder serves
# (export --treebank, repeated, `pool_catalogue.py multilingual --served`: the classes and weight rows only those read go;
# the same parses, docs/treebanks.md). No tokenizers, catalogue lines, calibration or scores: ship_pool.sh adds them,
# after this step. A candidate is compared with the shipped folder on dev so, before it ships (docs/data.md):
#   CHOICES=runs/dev/NAME-dictionaries.json benchmarks/scripts/export_pool.sh runs/RUN/model runs/dev/NAME-folder
#   python -m benchmarks.scripts.score_pool runs/dev/NAME-folder --split dev --mode gold --rounds 0 --results runs/dev/NAME \
#       --treebanks $(python -m benchmarks.scripts.pool_catalogue multilingual --served)
# Usage: benchmarks/scripts/export_pool.sh MODEL OUT   (needs runs/pool, or $SPANDEP_POOL)
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -eq 2 ] || { echo "usage: $0 MODEL OUT" >&2; exit 2; }
model=$1 out=$2
PY=${PYTHON:-.venv/bin/python}
CHOICES=${CHOICES:-benchmarks/results/multilingual/dictionaries.json}
export OMP_NUM_THREADS=1 PYTHONPATH=$PWD/src:$PWD${PYTHONPATH:+:$PYTHONPATH}
ours=$("$PY" -m benchmarks.scripts.pool_catalogue multilingual --served)
mkdir -p runs && full=$(mktemp -d runs/export-XXXXXX)/multilingual  # in the checkout: the choices record the path
trap 'rm -rf "$(dirname "$full")"' EXIT  # the full export is not kept, whether the cut is written or a step fails
"$PY" -m spandep export "$model" "$full" --int8-all
"$PY" -m benchmarks.scripts.pool_lexicons write "$full"
"$PY" -m benchmarks.scripts.pool_lexicons dictionaries "$full" --cap 5000 --out "$CHOICES"
"$PY" -m benchmarks.scripts.pool_lexicons write-dictionaries "$full" --choices "$CHOICES"
"$PY" -m spandep export "$full" "$out" --int8-all $(printf -- '--treebank %s ' $ours)
