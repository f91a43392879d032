#!/usr/bin/env bash
# Ship a treebank of the multilingual pool as a folder of its own (issue 46, deliverable 2), one torch thread: the pool
# model fine-tuned on that treebank alone (configs/multilingual/pool-<treebank>.toml, `[data] train_treebanks`), cut to
# it, where its dev split said so (BENCHMARKS.md, "A treebank fine-tuned apart from the pool"):
#   1. the run's model cut to TREEBANK (`spandep export --treebank`, int8) with the pool's trained tokenizer of it, into
#      src/spandep/resources/TREEBANK, its lemma head given the dictionary the treebank's line of the multilingual
#      folder chose on dev (`lemma_dictionary.py`; the fine-tune's run does not keep that setting);
#   2. the catalogue line NAME pointed at that folder (its note says so), then `pool_catalogue.py multilingual`: the
#      treebank left out of the multilingual folder's lines, its tokenizer and card removed from that folder;
#   3. calibrated on the treebank's dev split, measured on test (calibration_table calibrate/measure NAME);
#   4. its test split parsed from gold tokens (timed, 3 rounds) and from raw text into results/raw/TREEBANK__TREEBANK-pool-finetune*.json
#      (shipped_table.SYSTEMS names that system for the folder), then the card.
# Then regenerate the tables (languages_table, calibration_table table, shipped_table) and write the dev comparison in
# BENCHMARKS.md. Usage: benchmarks/scripts/ship_treebank.sh TREEBANK NAME RUN TOKENIZERS
#   e.g. benchmarks/scripts/ship_treebank.sh ko_gsd ko runs/pool-ko_gsd runs/tokenizers-all
# (RUN's name is its config's: runs/pool-ko_gsd was trained by configs/multilingual/pool-ko_gsd.toml, the folder's note says.)
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -eq 4 ] || { echo "usage: $0 TREEBANK NAME RUN TOKENIZERS" >&2; exit 2; }
tb=$1 name=$2 run=$3 tokenizers=$4
PY=${PYTHON:-.venv/bin/python}
OUT=src/spandep/resources/$tb
SYSTEM=$tb-pool-finetune
RAW=benchmarks/results/raw/${tb}__$SYSTEM
export OMP_NUM_THREADS=1 PYTHONPATH=$PWD/src:$PWD${PYTHONPATH:+:$PYTHONPATH}
rm -rf "$OUT"
"$PY" -m spandep export "$run/model" "$OUT" --int8-all --treebank "$tb" --tokenizer "$tb=$tokenizers/$tb/tokenizer"
dictionary=$("$PY" -c 'import sys; from spandep.storage.model_io import read_model_config
d = (read_model_config("src/spandep/resources/multilingual")["model"]["heads"].get("lemma", {}).get("treebank_dictionaries") or {}).get(sys.argv[1])
print(" ".join(("--language", d["language"], "--mode", d["mode"])) if d else "")' "$tb")
[ -z "$dictionary" ] || "$PY" -m benchmarks.scripts.lemma_dictionary "$OUT" $dictionary  # the mode the treebank's line chose on its dev
"$PY" - "$name" "$tb" "$run" <<'EOF'
import json, sys
from pathlib import Path
from benchmarks.scripts.pool_catalogue import render
from spandep.storage.catalogue import CATALOGUE_FILE
name, tb, run = sys.argv[1:]
data = json.loads(CATALOGUE_FILE.read_text(encoding="utf-8"))
line = data["models"].get(name)
if line is None or line.get("code") != tb:
    raise SystemExit(f"{name}: no catalogue line of {tb} to point at its own folder (pool_catalogue.py writes them)")
trained = json.loads(Path(run, "config.json").read_text(encoding="utf-8"))["data"].get("train_treebanks") or [tb]
owners = " and ".join(f"{t}'s" for t in trained)
line.update({"folder": tb, "model_treebank": tb, "note": f"the multilingual model fine-tuned on {owners} training data alone "
             f"(configs/multilingual/{Path(run).name}.toml), cut to {tb} (spandep export --treebank); multilingual-e5-small with int8 weights (make models)"})
CATALOGUE_FILE.write_text(render(data), encoding="utf-8")
print(f"{name} -> {tb}/")
EOF
"$PY" -m benchmarks.scripts.pool_catalogue multilingual
"$PY" -m benchmarks.scripts.calibration_table calibrate "$name"
"$PY" -m benchmarks.scripts.calibration_table measure "$name"
"$PY" -m benchmarks.suite.raw_text --model "$OUT" --dataset "$tb" --system "$SYSTEM" --mode gold --rounds 3 --out "${RAW}__gold.json"
"$PY" -m benchmarks.suite.raw_text --model "$OUT" --dataset "$tb" --system "$SYSTEM" --mode raw --rounds 0 --out "$RAW.json"
"$PY" -m benchmarks.scripts.model_card "${RAW}__gold.json" "$RAW.json" "benchmarks/results/calibration/$name.json" "$OUT" --treebank "$tb" --speed "${RAW}__gold.json"
