#!/usr/bin/env bash
# Train the tokenizer of each treebank with a train split into runs/tokenizers/<treebank>/ (one at a time, one torch
# thread), then score it on dev and test (benchmarks/results/tokenizer/<treebank>.json). Rerunning resumes an
# interrupted training; a finished one is only scored again. Usage: benchmarks/scripts/train_tokenizers.sh [treebank ...]
# Data: ../shared/data, or $SPANDEP_DATA. A treebank of the multilingual pool (issue 46) other than the seven below is
# read from the pool folder that benchmarks/scripts/multilingual_pool.py writes ($SPANDEP_POOL, default runs/pool: a
# dev-only language learns from its pooled dev less the held-out part, which is its dev) and trained for at most 30
# epochs with patience 10 (a CPU budget for some eighty treebanks: EWT's dev Words F1 at epoch 30 was 0.06 below its best,
# at 66), each epoch at least 50 batches (a treebank of a few thousand words makes one or two batches a pass); scripts
# without spaces between words (zh, ja, th, vi) also get the word lexicon, and th and vi the first 4 layers of
# multilingual-e5-small under each character for up to 60 epochs, patience 20 (issue 47's recipe, chosen on their dev:
# docs/tokenizer.md; zh_gsd's and ja_gsd's were trained so by hand, BENCHMARKS.md "Scripts without spaces").
set -euo pipefail
cd "$(dirname "$0")/../.."
DATA=${SPANDEP_DATA:-../shared/data}
PY=${PYTHON:-.venv/bin/python}
POOL=${SPANDEP_POOL:-runs/pool}
export OMP_NUM_THREADS=1 PYTHONPATH=$PWD/src:$PWD${PYTHONPATH:+:$PYTHONPATH}
declare -A STEM=([en_ewt]=en_ewt-ud [zh_gsd_v1]=zh_gsd_v1-ud [fr_sequoia]=fr_sequoia-ud [it_partut]=it_partut-ud
                 [ru_taiga]=ru_taiga-ud [no_nynorsklia]=no_nynorsklia-ud [cs_cltt]=cs_cltt-ud)
treebanks=("$@")
[ ${#treebanks[@]} -gt 0 ] || treebanks=(en_ewt fr_sequoia it_partut ru_taiga zh_gsd_v1 no_nynorsklia cs_cltt)
for name in "${treebanks[@]}"; do
  run=runs/tokenizers/$name
  mkdir -p "$run"
  extra=()
  if [ -n "${STEM[$name]:-}" ]; then
    train=$DATA/$name/${STEM[$name]}-train.conllu dev=$DATA/$name/${STEM[$name]}-dev.conllu
  else
    train=$POOL/$name/train.conllu dev=$POOL/$name/dev.conllu extra=(--epochs 30 --patience 10 --min-batches 50)
    case $name in zh_*|ja_*|th_*|vi_*) extra+=(--lexicon-lengths 8) ;; esac
    case $name in th_*|vi_*) extra+=(--encoder multilingual-e5-small --encoder-layers 4 --augment 0 --epochs 60 --patience 20) ;; esac
  fi
  if [ "$name" = ru_taiga ]; then  # its dev split is all Instagram, a genre train and test lack: tune on dev + 1/10 of train
    "$PY" -m benchmarks.scripts.tokenizer_tuning_split "$train" "$dev" "$run/split"
    train=$run/split/train.conllu dev=$run/split/tune.conllu
  fi
  "$PY" -m spandep train-tokenizer "$train" --dev "$dev" -o "$run" "${extra[@]}" >> "$run/train.log" 2>&1
  SPANDEP_POOL=$POOL "$PY" -m benchmarks.scripts.tokenizer_scores "$name" --tokenizer "$run/tokenizer" --data "$DATA"
done
