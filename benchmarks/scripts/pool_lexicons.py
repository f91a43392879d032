"""Each treebank's own lemma lexicons in a pool model folder (issue 46), chosen on dev against the lexicons of all.

    .venv/bin/python -m benchmarks.scripts.pool_lexicons compare src/spandep/resources/multilingual \\
        --out benchmarks/results/multilingual/lexicons.json
    .venv/bin/python -m benchmarks.scripts.pool_lexicons write src/spandep/resources/multilingual

A model of several treebanks trained before ``Lemmatizer.treebank_config`` has one pair of lemma lexicons over all its
treebanks' training words, so that a form takes the lemma it had most often in any language (Icelandic ``Er`` →
``vera`` for a German word tagged AUX; Nynorsk's lemmas for Bokmål's words). ``compare`` parses the dev split of
every treebank of the pool (``runs/pool``; at most ``--cap`` words, whole sentences, every column but FORM blanked)
once with the folder's lexicons switched off, one torch thread, then applies to the predicted UPOS, FEATS and
edit-script lemmas each way of looking them up: none, the lexicons of all treebanks (as shipped), each treebank's
own (``treebank_lexicons``), its own then those of all for a pair its own lacks (the way chosen:
``Lemmatizer.refine`` with ``fallback = "all"``), its own then those of the other treebanks of its language (the
most pairs first: ``fallback = "language"``, ``lemma.kin``), and that then those of all; it prints and writes (``--out``, schema ``spandep-lexicons/1``) each treebank's lemma
accuracy and their macro means. No test split is read. ``write`` puts each treebank's own lexicons, from the pool's
training files, into the folder (``heads.json.xz``), those of its language to serve a pair its own lacks
(``fallback = "language"``) and the lexicons of all left out, as training a model of several treebanks now does.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from benchmarks.suite.raw_text import first_words
from benchmarks.suite.record import portable_path, stamp, write_json
from benchmarks.suite.systems import pool_folder
from spandep.data.conllu import read_conllu
from spandep.models.heads.lemma import Lemmatizer, kin, lexicons, looked_up, treebank_lexicons
from spandep.storage.model_io import read_model_config, write_model_config

SCHEMA = "spandep-lexicons/1"
WAYS = ("none", "all", "own", "own_then_all", "own_then_language", "own_then_language_then_all")


def trains_of(names: list[str], pool: Path) -> dict:
    return {name: list(read_conllu(pool / name / "train.conllu")) for name in names}


def write(folder: Path, pool: Path) -> None:
    """The folder's lemma head with each treebank's own lexicons beside those of all."""
    config = read_model_config(folder)
    names = config["model"]["treebanks"]["names"]
    heads = config["model"]["heads"]
    heads["lemma"] = Lemmatizer.treebank_config(heads["lemma"], trains_of(names, pool))
    write_model_config(folder, config)
    print(f"wrote each of {len(names)} treebanks' lemma lexicons into {folder}")


def compare(folder: Path, pool: Path, cap: int, only: list[str] | None = None) -> dict:
    """Dev lemma accuracy of each treebank for each way of looking lemmas up (module docstring)."""
    import torch

    from spandep.api import ModelSpec
    from spandep.options import InferenceOptions
    from spandep.pipeline.long import parse_sentences

    torch.set_num_threads(1)
    parser = ModelSpec(folder, InferenceOptions(), threads=1).load_model()
    head = parser.heads["lemma"]
    assert isinstance(head, Lemmatizer)
    names = parser.treebanks.names
    trains = trains_of(names, pool)  # every treebank's, for the lexicons of all
    shared = lexicons([s for t in trains.values() for s in t])
    everyone = (shared["lexicon"], shared["feats_lexicon"])
    own_tables = treebank_lexicons(trains)
    head.lexicon, head.feats_lexicon, head.treebank_lexicons = {}, {}, {}  # the scripts' lemmas come through
    rows = {}
    for name in only or names:
        gold = first_words(list(read_conllu(pool / name / "dev.conllu")), cap)
        blank = [replace(s, words=[replace(w, upos="_", xpos="_", feats="_", lemma="_") for w in s.words]) for s in gold]
        parsed = parse_sentences(parser, blank, InferenceOptions(treebank=name))
        own = (own_tables[name]["lexicon"], own_tables[name]["feats_lexicon"])
        language = [(own_tables[k]["lexicon"], own_tables[k]["feats_lexicon"]) for k in kin(own_tables, name)]
        right = {way: [] for way in WAYS}
        for g, p in zip(gold, parsed):
            if "lemma" not in p.columns:  # a treebank without lemmas: the head fills none
                continue
            feats = p.columns.get("feats") or [None] * len(g.words)
            for gw, lemma, upos, bundle in zip(g.words, p.columns["lemma"], p.columns["upos"], feats):
                if gw.lemma == "_":
                    continue
                args = (lemma, gw.form, upos, bundle)
                got = {"none": lemma, "all": looked_up([everyone], *args), "own": looked_up([own], *args),
                       "own_then_all": looked_up([own, everyone], *args), "own_then_language": looked_up([own, *language], *args),
                       "own_then_language_then_all": looked_up([own, *language, everyone], *args)}
                for way in WAYS:
                    right[way].append(got[way] == gw.lemma)
        if right["none"]:
            rows[name] = {"words": len(right["none"]), **{way: round(100 * float(np.mean(r)), 2) for way, r in right.items()}}
            print(name, rows[name], flush=True)
    means = {way: round(float(np.mean([r[way] for r in rows.values()])), 2) for way in WAYS}
    print("macro mean", means)
    return {"folder": portable_path(folder), "cap": cap, "macro_mean": means, "treebanks": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    for command in ("compare", "write"):
        p = sub.add_parser(command)
        p.add_argument("folder", type=Path)
        p.add_argument("--pool", type=Path, default=pool_folder())
    sub.choices["compare"].add_argument("--cap", type=int, default=3000, help="at most this many dev words per treebank")
    sub.choices["compare"].add_argument("--out", type=Path)
    sub.choices["compare"].add_argument("--treebanks", nargs="*", help="these treebanks only (default: all)")
    args = ap.parse_args()
    if args.command == "write":
        write(args.folder, args.pool)
        return
    result = compare(args.folder, args.pool, args.cap, args.treebanks)
    if args.out:
        write_json(args.out, stamp(result, SCHEMA, "python -m benchmarks.scripts.pool_lexicons " + shlex.join(sys.argv[1:])))


if __name__ == "__main__":
    main()
