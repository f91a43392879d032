"""Write the catalogue lines of the multilingual model: one per treebank of the pool that has no model of its own.

    .venv/bin/python -m benchmarks.scripts.pool_catalogue multilingual        # resources/multilingual, every treebank
    .venv/bin/python -m benchmarks.scripts.pool_catalogue multilingual --served   # only print the treebanks it is to serve

Each treebank of the pool's manifest (``benchmarks/results/multilingual_pool.json``) whose treebank no other
catalogue line ships (en_ewt, fr_sequoia, ... keep their own models) and for which the folder holds a trained
tokenizer (``tokenizers/<treebank>/``: raw text in, a treebank without one is left out and named) gets one line in
``resources/catalogue.json``:
named by its language's ISO 639-1 code where it is that language's default treebank (``de``; ``nb`` for
no_bokmaal), else by the treebank (``es_gsd``), with ``folder`` the model folder, ``model_treebank`` and ``code`` the
treebank, the language's English name (:mod:`spandep.data.languages`) and the UD repository the test split comes
from (its ``SOURCE.txt`` beside the data; a UD v1 release named with its tag, as zh's line is). Lines of the folder
written before are replaced, the others kept as they are, in their order; the new lines follow, by name.
``--served`` writes nothing: it prints the pool's treebanks no other folder's line serves, those the folder is cut to
(``export_pool.sh``).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
from pathlib import Path
from typing import Any

from benchmarks.suite.record import portable_path
from benchmarks.suite.systems import REPO, pool_entries
from spandep.data.languages import language, treebank_language
from spandep.storage.catalogue import CATALOGUE_FILE, card_file
from spandep.tokenization.text import tokenizer_folder


def repository(source_test: str) -> str:
    """The UD repository named by the ``SOURCE.txt`` beside a released test file (``UD_German-GSD``)."""
    text = (REPO / source_test).parent.joinpath("SOURCE.txt").read_text(encoding="utf-8")
    found = re.search(r"\bUD_[A-Za-z]+(?:-[A-Za-z0-9]+)*", text)
    if found is None:
        raise SystemExit(f"{source_test}: its SOURCE.txt names no UD repository")
    return found.group(0)


def pool_lines(folder: str, entries: dict[str, dict[str, Any]], shipped: set[str], trained: int) -> dict[str, dict[str, Any]]:
    """The catalogue lines, by name, of the treebanks of ``entries`` not in ``shipped``, in model ``folder``."""
    lines = {}
    for treebank, entry in entries.items():
        lang = treebank_language(treebank)
        if treebank in shipped or lang is None:
            continue
        default = lang.treebank == treebank and language(lang.code) == lang
        release = f" r{entry['release']}" if entry["ud_version"] == 1 and entry["release"] else ""
        split = "its train split" if entry["train_split"] == "train" else "its dev split less a held-out part (no train split here)"
        lines[lang.code if default else treebank] = {
            "code": treebank, "folder": folder, "language": lang.name, "treebank": repository(entry["sources"]["test"]) + release,
            "model_treebank": treebank,
            "note": f"the multilingual model of {trained} treebanks, as {treebank}, trained on {split}; multilingual-e5-small "
                    "with int8 weights (make models)",
        }
    return dict(sorted(lines.items()))


def owned_elsewhere(folder: str, models: dict[str, dict[str, Any]]) -> set[str]:
    """The treebanks that catalogue lines ``models`` (name: line) of folders other than ``folder`` serve."""
    return {line["code"] for line in models.values() if line["folder"] != folder and line.get("code")}


def prune(folder: Path, owned: set[str]) -> list[str]:
    """Remove from pool ``folder`` the tokenizer and model card of each of ``owned``, treebanks other folders serve;
    the treebanks whose files were removed."""
    removed = []
    for treebank in sorted(owned):
        tokenizer, card = tokenizer_folder(folder, treebank), folder / card_file(treebank)
        if tokenizer.is_dir() or card.is_file():
            shutil.rmtree(tokenizer, ignore_errors=True)
            card.unlink(missing_ok=True)
            removed.append(treebank)
    return removed


def render(data: dict[str, Any]) -> str:
    """The catalogue file as it is kept: one line per model."""
    lines = [f"    {json.dumps(name, ensure_ascii=False)}: {json.dumps(line, ensure_ascii=False)}" for name, line in data["models"].items()]
    return '{\n  "default": ' + json.dumps(data["default"]) + ',\n  "models": {\n' + ",\n".join(lines) + "\n  }\n}\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", help="the model folder under src/spandep/resources/")
    ap.add_argument("--served", action="store_true", help="print the pool's treebanks no other folder serves; write nothing")
    args = ap.parse_args()
    data = json.loads(CATALOGUE_FILE.read_text(encoding="utf-8"))
    kept = {name: line for name, line in data["models"].items() if line["folder"] != args.folder}
    entries = pool_entries()
    owned = owned_elsewhere(args.folder, kept)  # treebanks with a model of their own
    if args.served:
        print(" ".join(t for t in entries if t not in owned))
        return
    folder = CATALOGUE_FILE.parent / args.folder
    ready = {tb: entry for tb, entry in entries.items() if (tokenizer_folder(folder, tb) / "config.json").is_file()}
    lines = pool_lines(args.folder, ready, owned, len(entries))
    unready = sorted(set(entries) - set(ready) - owned)
    if unready:
        print(f"left out, no trained tokenizer in {portable_path(folder)}: {', '.join(unready)}")
    clash = set(lines) & set(kept)
    if clash:
        raise SystemExit(f"names taken by other lines: {', '.join(sorted(clash))}")
    CATALOGUE_FILE.write_text(render({**data, "models": {**kept, **lines}}), encoding="utf-8")
    print(f"wrote {len(lines)} lines of {args.folder} into {portable_path(CATALOGUE_FILE)}")
    removed = prune(folder, owned)
    if removed:
        print(f"removed from {portable_path(folder)} the tokenizers and cards of treebanks other folders serve: {', '.join(removed)}")


if __name__ == "__main__":
    main()
