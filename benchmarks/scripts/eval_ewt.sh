#!/usr/bin/env bash
# Parse EWT test with a trained model and score it: benchmarks/scripts/eval_ewt.sh RUN_NAME (a folder under runs/).
set -euo pipefail
cd "$(dirname "$0")/../.."
RUN=$1
TEST=../shared/data/en_ewt/en_ewt-ud-test.conllu
mkdir -p benchmarks/results/evaluate runs/$RUN/pred
.venv/bin/spandep parse $TEST -o runs/$RUN/pred/en_ewt-test.conllu --model runs/$RUN/model --threads ${THREADS:-2}
.venv/bin/spandep evaluate $TEST runs/$RUN/pred/en_ewt-test.conllu --json \
  | PYTHONPATH=src:. .venv/bin/python -m benchmarks.suite.record spandep-evaluate/1 "benchmarks/scripts/eval_ewt.sh $RUN" \
  > benchmarks/results/evaluate/en_ewt_test__$RUN.json
.venv/bin/spandep evaluate $TEST runs/$RUN/pred/en_ewt-test.conllu | head -16
