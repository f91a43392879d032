#!/usr/bin/env bash
# Ship the multilingual model (issue 46), one torch thread, every step resumable (run it again after a stop; a result
# made with other weights, by their digest, is made again):
#   1. MODEL as the folder ships, into src/spandep/resources/multilingual (export_pool.sh, once: int8 export, lemma
#      lexicons and dictionaries written, cut to the treebanks no other folder serves), then copy in the trained
#      tokenizers TOKENIZERS/<treebank>/tokenizer (what train_tokenizers.sh writes) it has none of, but of the treebanks
#      another folder serves (their folders ship their own), in int8 rows as the export is --int8-all
#      (docs/tokenizer.md; to ship new weights, remove the folder first: every line is then calibrated and scored again);
#   2. its catalogue lines (pool_catalogue.py: one per treebank without a model of its own that has a tokenizer; the
#      tokenizers and cards of treebanks another folder serves removed from the folder);
#   3. the lines calibrated on their treebanks' dev splits, all in one call when one is new (calibration_table calibrate
#      NAME...: spandep calibrate FOLDER DEV... --treebank TB... --write), then measured on test where stale
#      (calibration_table measure NAME... --stale);
#   4. every treebank of the folder scored from gold tokens, and each with a trained tokenizer from raw text, into
#      results/languages (score_pool.py; a result of other weights, from raw text by another tokenizer, or split by
#      rules where a tokenizer is trained now, is scored again);
#   5. the folder timed once on $SPEED's test from gold tokens (score_pool --rounds 3), then each line's card
#      (model_card.py: gold, raw, calibration, --speed that timing).
# Usage: benchmarks/scripts/ship_pool.sh MODEL TOKENIZERS   (needs runs/pool from multilingual_pool.py, or $SPANDEP_POOL)
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -eq 2 ] || { echo "usage: $0 MODEL TOKENIZERS" >&2; exit 2; }
model=$1 tokenizers=$2
PY=${PYTHON:-.venv/bin/python}
OUT=src/spandep/resources/multilingual
SPEED=de_gsd  # the treebank whose test times the folder (gold tokens, 3 rounds): every line's card shows that speed
export OMP_NUM_THREADS=1 PYTHONPATH=$PWD/src:$PWD${PYTHONPATH:+:$PYTHONPATH}
ours=$("$PY" -m benchmarks.scripts.pool_catalogue multilingual --served)  # the treebanks no other folder serves
[ -f "$OUT/config.json" ] || benchmarks/scripts/export_pool.sh "$model" "$OUT"
"$PY" -c 'import sys; from pathlib import Path; from benchmarks.scripts.score_pool import add_tokenizers
print("tokenizers copied in:", " ".join(add_tokenizers(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:])) or "none")' "$OUT" "$tokenizers" $ours
"$PY" -m benchmarks.scripts.pool_catalogue multilingual
names=$("$PY" -c 'from spandep.storage.catalogue import read_catalogue
print(" ".join(n for n, m in read_catalogue()[1].items() if m.folder.name == "multilingual"))')
weights=$("$PY" -c 'import sys; from benchmarks.suite.record import weights_digest; print(weights_digest(sys.argv[1]))' "$OUT")
for name in $names; do  # a new line (or new weights) moves the pooled mapping every line leans on: all again, in one call
  report=benchmarks/results/calibration/$name.dev.json
  grep -q "\"weights\": \"$weights\"" "$report" 2>/dev/null || { "$PY" -m benchmarks.scripts.calibration_table calibrate $names; break; }
done
"$PY" -m benchmarks.scripts.calibration_table measure $names --stale
for mode in gold raw; do  # the treebanks whose result is missing, of another folder, or split by rules where one is trained now
  stale=$("$PY" -c 'import json, sys; from pathlib import Path
from benchmarks.suite.record import TOKENIZER_FILES, weights_digest
def stale(t):
    path = Path(f"benchmarks/results/languages/{t}__{sys.argv[1]}.json")
    result = json.loads(path.read_text()) if path.is_file() else {}
    trained = any(Path(*where, "config.json").is_file() for where in ((sys.argv[3], t, "tokenizer"), (sys.argv[2], "tokenizers", t)))
    if sys.argv[1] == "raw" and not trained:
        return False  # scored from raw text once its tokenizer is trained
    if result.get("weights") != sys.argv[4] or result.get("tokenizer") == "rules" and trained:
        return True
    return sys.argv[1] == "raw" and result.get("tokenizer_weights") != weights_digest(Path(sys.argv[2], "tokenizers", t), TOKENIZER_FILES)
print(" ".join(t for t in sys.argv[5:] if stale(t)))' "$mode" "$OUT" "$tokenizers" "$weights" $ours)
  [ -z "$stale" ] || "$PY" -m benchmarks.scripts.score_pool "$OUT" --mode "$mode" --treebanks $stale --again --tokenizers "$tokenizers"
done
timed=benchmarks/results/languages/${SPEED}__gold.json  # the folder's speed, timed on one treebank's test
grep -q '"words_per_s"' "$timed" || "$PY" -m benchmarks.scripts.score_pool "$OUT" --mode gold --treebanks "$SPEED" --again --rounds 3
"$PY" -c 'from spandep.storage.catalogue import read_catalogue
print("\n".join(f"{n} {m.code}" for n, m in read_catalogue()[1].items() if m.folder.name == "multilingual"))' |
while read -r name tb; do
  results=("benchmarks/results/languages/${tb}__gold.json" "benchmarks/results/languages/${tb}__raw.json" "benchmarks/results/calibration/$name.json")
  "$PY" -m benchmarks.scripts.model_card "${results[@]}" "$OUT" --treebank "$tb" --speed "$timed"
done
