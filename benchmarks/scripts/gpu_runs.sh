#!/usr/bin/env bash
# Train span configs side by side on one CUDA GPU, then choose inference settings on EWT dev and score EWT test.
#   benchmarks/scripts/gpu_runs.sh train CONFIG...   start one background training per config (resumable; logs in runs/)
#   benchmarks/scripts/gpu_runs.sh finish RUN...     per run (a folder under runs/), in parallel: spandep tune on
#                                            dev (writes the chosen settings into the model), parse and score test
# PY names the Python that has spandep importable (default .venv/bin/python); TUNE_GRID the sweep's grid
# (default: k in 1 2 5 10 and spandep tune's default lambdas and word-arc weights).
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PY:-.venv/bin/python}
DEV=../shared/data/en_ewt/en_ewt-ud-dev.conllu
TEST=../shared/data/en_ewt/en_ewt-ud-test.conllu
mkdir -p runs benchmarks/results/evaluate
case "$1" in
  train)
    shift
    for cfg in "$@"; do
      name=$(basename "$cfg" .toml)
      setsid nohup $PY -m spandep train "$cfg" --device cuda --threads 2 ${TRAIN_ARGS:-} > "runs/$name.gpu.log" 2>&1 < /dev/null &
    done ;;
  finish)
    shift
    for run in "$@"; do
      (
        $PY -m spandep tune "runs/$run/model" $DEV --device cuda --threads 2 ${TUNE_GRID:---ks 1,2,5,10} \
          --out "benchmarks/results/en_ewt_dev__span_sweep__$run.json" --write --ablate-mutual > "runs/$run.tune.log" 2>&1
        mkdir -p "runs/$run/pred"
        $PY -m spandep parse $TEST -o "runs/$run/pred/en_ewt-test.conllu" --model "runs/$run/model" --device cuda
        $PY -m spandep evaluate $TEST "runs/$run/pred/en_ewt-test.conllu" --json \
          | PYTHONPATH=src:. $PY -m benchmarks.suite.record spandep-evaluate/1 "benchmarks/scripts/gpu_runs.sh finish $run" \
          > "benchmarks/results/evaluate/en_ewt_test__$run.json"
      ) &
    done
    wait ;;
  *) echo "usage: $0 train CONFIG... | finish RUN..." >&2; exit 2 ;;
esac
