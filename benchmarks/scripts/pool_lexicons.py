"""Each treebank's own lemma lexicons and language's dictionary in a pool model folder (issues 46 and 45), chosen on dev.

    .venv/bin/python -m benchmarks.scripts.pool_lexicons compare src/spandep/resources/multilingual \\
        --out benchmarks/results/multilingual/lexicons.json
    .venv/bin/python -m benchmarks.scripts.pool_lexicons write src/spandep/resources/multilingual
    .venv/bin/python -m benchmarks.scripts.pool_lexicons dictionaries src/spandep/resources/multilingual \\
        --out benchmarks/results/multilingual/dictionaries.json
    .venv/bin/python -m benchmarks.scripts.pool_lexicons write-dictionaries src/spandep/resources/multilingual \\
        --choices benchmarks/results/multilingual/dictionaries.json

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

``dictionaries`` parses, the same way, the dev split of each treebank whose language simplemma lists
(``models/heads/dictionary.py``), the folder's dictionaries switched off, then applies each mode of the language's
dictionary to the lemmas the parse gave, as ``Lemmatizer.refine`` would (``Lemmatizer.dictionary_for``): each
treebank's lemma accuracy with none, ``repair`` and ``prefer``, and over the forms its lexicons lack; the mode with
the larger gain is chosen, none where neither gains (schema ``spandep-dictionaries/1``). ``write-dictionaries`` puts
the chosen ones into the folder's lemma head (``treebank_dictionaries``); ``table`` renders that result beside each
treebank's official test Lemmas from gold tokens (``results/languages/<treebank>__gold.json``; ``--doc FILE``: between
``<!-- pool-dictionaries:begin -->`` and ``<!-- pool-dictionaries:end -->``).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.suite.raw_text import first_words
from benchmarks.suite.record import portable_path, stamp, write_json
from benchmarks.suite.report import print_or_replace
from benchmarks.suite.systems import RESULTS, pool_folder
from spandep.data.conllu import read_conllu
from spandep.data.languages import treebank_language
from spandep.models.heads.dictionary import MODES, language_of
from spandep.models.heads.lemma import Lemmatizer, kin, lexicons, looked_up, treebank_lexicons
from spandep.storage.model_io import read_model_config, write_model_config

SCHEMA = "spandep-lexicons/1"
DICTIONARY_SCHEMA = "spandep-dictionaries/1"
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


def loaded(folder: Path) -> Any:
    """The folder's parser, one torch thread, its lemma head's lexicons, dictionaries and all as saved."""
    import torch

    from spandep.api import ModelSpec
    from spandep.options import InferenceOptions

    torch.set_num_threads(1)
    parser = ModelSpec(folder, InferenceOptions(), threads=1).load_model()
    assert isinstance(parser.heads["lemma"], Lemmatizer)
    return parser


def dev_parses(parser: Any, pool: Path, name: str, cap: int) -> tuple[list, list]:
    """``name``'s pool dev sentences (at most ``cap`` words, whole sentences) and the parser's parse of their forms,
    as ``name``, every other column blanked."""
    from spandep.options import InferenceOptions
    from spandep.pipeline.long import parse_sentences

    gold = first_words(list(read_conllu(pool / name / "dev.conllu")), cap)
    blank = [replace(s, words=[replace(w, upos="_", xpos="_", feats="_", lemma="_") for w in s.words]) for s in gold]
    return gold, parse_sentences(parser, blank, InferenceOptions(treebank=name))


def compare(folder: Path, pool: Path, cap: int, only: list[str] | None = None) -> dict:
    """Dev lemma accuracy of each treebank for each way of looking lemmas up (module docstring)."""
    parser = loaded(folder)
    head = parser.heads["lemma"]
    names = parser.treebanks.names
    trains = trains_of(names, pool)  # every treebank's, for the lexicons of all
    shared = lexicons([s for t in trains.values() for s in t])
    everyone = (shared["lexicon"], shared["feats_lexicon"])
    own_tables = treebank_lexicons(trains)
    head.lexicon, head.feats_lexicon, head.treebank_lexicons = {}, {}, {}  # the scripts' lemmas come through
    rows = {}
    for name in only or names:
        gold, parsed = dev_parses(parser, pool, name, cap)
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


def dictionaries(folder: Path, pool: Path, cap: int, only: list[str] | None = None) -> dict:
    """Dev lemma accuracy of each treebank with no dictionary and with each mode of its language's (module docstring)."""
    parser = loaded(folder)
    head = parser.heads["lemma"]
    head.dictionary, head.treebank_dictionaries = None, {}  # the lexicons' and scripts' lemmas come through
    rows = {}
    for name in only or parser.treebanks.names:
        language = treebank_language(name)
        code = language_of(language.code if language else None)
        if code is None:
            continue
        gold, parsed = dev_parses(parser, pool, name, cap)
        looked = {mode: head.dictionary_for(name, {"language": code, "mode": mode}) for mode in MODES}
        right: dict[str, list[bool]] = {way: [] for way in ("none", *MODES)}
        unseen: dict[str, list[bool]] = {way: [] for way in right}
        for g, p in zip(gold, parsed):
            if "lemma" not in p.columns:
                continue
            for gw, lemma, upos in zip(g.words, p.columns["lemma"], p.columns["upos"]):
                if gw.lemma == "_":
                    continue
                got = {"none": lemma, **{mode: d.lemma(lemma, gw.form, upos) for mode, d in looked.items()}}
                for way, value in got.items():
                    right[way].append(value == gw.lemma)
                    if gw.form not in looked["repair"].seen_forms:
                        unseen[way].append(value == gw.lemma)
        if not right["none"]:
            continue
        row = {"language": code, "words": len(right["none"]), "unseen_words": len(unseen["none"]),
               **{way: round(100 * float(np.mean(r)), 2) for way, r in right.items()},
               **{f"unseen_{way}": round(100 * float(np.mean(r)), 2) if r else None for way, r in unseen.items()}}
        gains = {mode: sum(right[mode]) - sum(right["none"]) for mode in MODES}
        best = max(MODES, key=lambda mode: gains[mode])  # ties: repair, the one that changes less
        row["chosen"] = best if gains[best] > 0 else None
        rows[name] = row
        print(name, row, flush=True)
    return {"folder": portable_path(folder), "cap": cap, "treebanks": rows}


def write_dictionaries(folder: Path, choices: Path) -> None:
    """The dictionaries ``choices`` (a ``dictionaries`` result) chose, into the folder's lemma head."""
    rows = json.loads(choices.read_text(encoding="utf-8"))["treebanks"]
    chosen = {name: {"language": row["language"], "mode": row["chosen"]} for name, row in sorted(rows.items()) if row["chosen"]}
    config = read_model_config(folder)
    lemma = config["model"]["heads"]["lemma"]
    lemma["treebank_dictionaries"] = chosen
    if not chosen:
        lemma.pop("treebank_dictionaries")
    write_model_config(folder, config)
    print(f"wrote the dictionaries of {len(chosen)} treebanks into {folder}")


def table(choices: Path, languages: Path) -> str:
    """The ``dictionaries`` result ``choices`` as a Markdown table, with the test Lemmas of ``languages``' files."""
    rows = json.loads(choices.read_text(encoding="utf-8"))["treebanks"]
    lines = ["| treebank | simplemma | dev words (unseen forms) | dev Lemmas: none / `repair` / `prefer` | unseen forms: none / `repair` / `prefer` | chosen | test Lemmas (official, gold tokens) |",
             "|---|---|---|---|---|---|---|"]
    for name, row in sorted(rows.items()):
        result = languages / f"{name}__gold.json"
        test = json.loads(result.read_text(encoding="utf-8"))["conll18"]["Lemmas"]["f1"] if result.is_file() else None
        ways = ("none", *MODES)
        best = row["chosen"] or "none"
        dev = " / ".join(f"**{row[w]:.2f}**" if w == best else f"{row[w]:.2f}" for w in ways)
        unseen = " / ".join(f"{row[f'unseen_{w}']:.2f}" for w in ways)
        lines.append(f"| {name} | {row['language']} | {row['words']:,} ({row['unseen_words']:,}) | {dev} | {unseen} | {row['chosen'] or 'none'} | "
                     f"{'–' if test is None else f'{test:.2f}'} |")
    chosen = [r[r["chosen"] or "none"] for r in rows.values()]
    lines.append(f"| macro mean ({len(rows)}) | | | {np.mean([r['none'] for r in rows.values()]):.2f} → **{np.mean(chosen):.2f}** | | | |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    for command in ("compare", "write", "dictionaries", "write-dictionaries"):
        p = sub.add_parser(command)
        p.add_argument("folder", type=Path)
        p.add_argument("--pool", type=Path, default=pool_folder())
    shown = sub.add_parser("table")
    shown.add_argument("--choices", type=Path, default=RESULTS / "multilingual" / "dictionaries.json")
    shown.add_argument("--doc", type=Path, help="write the table between its markers in this file")
    for command in ("compare", "dictionaries"):
        sub.choices[command].add_argument("--cap", type=int, default=3000, help="at most this many dev words per treebank")
        sub.choices[command].add_argument("--out", type=Path)
        sub.choices[command].add_argument("--treebanks", nargs="*", help="these treebanks only (default: all)")
    sub.choices["write-dictionaries"].add_argument("--choices", type=Path, required=True, help="a dictionaries result")
    args = ap.parse_args()
    if args.command == "table":
        print_or_replace(table(args.choices, RESULTS / "languages"), args.doc, "<!-- pool-dictionaries:begin -->",
                         "<!-- pool-dictionaries:end -->", "the pool's dictionaries table")
        return
    if args.command == "write":
        write(args.folder, args.pool)
        return
    if args.command == "write-dictionaries":
        write_dictionaries(args.folder, args.choices)
        return
    run, schema = (compare, SCHEMA) if args.command == "compare" else (dictionaries, DICTIONARY_SCHEMA)
    result = run(args.folder, args.pool, args.cap, args.treebanks)
    if args.out:
        write_json(args.out, stamp(result, schema, "python -m benchmarks.scripts.pool_lexicons " + shlex.join(sys.argv[1:])))


if __name__ == "__main__":
    main()
