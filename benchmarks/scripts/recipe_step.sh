#!/usr/bin/env bash
# One recipe step for the non-English treebanks (BENCHMARKS.md, "Every treebank"): train CONFIG (resumable: run it
# again after a stop), choose a span model's settings on each treebank's dev (spandep tune --ks 2,5 --write: the best
# setting on dev; --treebank in a model of several), then score it on each treebank's dev split with gold tokens, every
# CoNLL 2018 metric, into benchmarks/results/multilingual/<treebank>__<step>.json. One torch thread throughout.
#   benchmarks/scripts/recipe_step.sh configs/multilingual/cs_cltt-steps.toml cs_cltt
#   benchmarks/scripts/recipe_step.sh configs/multi-e5-span.toml fr_sequoia it_partut ru_taiga no_nynorsklia cs_cltt zh_gsd_v1
# The step's name is the config's file name without .toml; the model is the config's [training] output + /model.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 2 ] || { echo "usage: $0 CONFIG TREEBANK [TREEBANK ...]" >&2; exit 2; }
config=$1; shift
PY=${PYTHON:-.venv/bin/python}
export OMP_NUM_THREADS=1 PYTHONPATH=$PWD/src:$PWD${PYTHONPATH:+:$PYTHONPATH}
step=$(basename "$config" .toml)
read -r out kind < <("$PY" -c 'import sys; from spandep.training.config import load_config
c = load_config(sys.argv[1]); print(c["training"]["output"], c["model"]["type"])' "$config")
mkdir -p benchmarks/results/multilingual
"$PY" -m spandep train "$config" --threads 1
if [ "$kind" = span ]; then  # spandep tune on each treebank's dev (--treebank in a model of several)
  for treebank in "$@"; do
    dev=$("$PY" -c 'import sys; from benchmarks.suite.systems import DATASETS; print(DATASETS[sys.argv[1]].dev)' "$treebank")
    which=(); [ $# -gt 1 ] && which=(--treebank "$treebank")
    "$PY" -m spandep tune "$out/model" "$dev" "${which[@]}" --ks 2,5 --write --threads 1 \
      --out "benchmarks/results/multilingual/${treebank}__${step}__tune.json"
    "$PY" -m benchmarks.suite.record spandep-tune/1 "benchmarks/scripts/recipe_step.sh $config $*" \
      "benchmarks/results/multilingual/${treebank}__${step}__tune.json"
  done
fi
for treebank in "$@"; do
  "$PY" -m benchmarks.suite.raw_text --model "$out/model" --dataset "$treebank" --split dev --mode gold --rounds 1 \
    --system "$step" --out "benchmarks/results/multilingual/${treebank}__${step}.json"
done
