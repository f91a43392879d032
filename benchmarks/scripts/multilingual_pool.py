"""The training pool of the multilingual model: every complete treebank of the data (sections A and C of its README) and
every dev-only one (D), deduplicated as the README's "Overlaps to respect" asks, UD v1 relations converted.

For each treebank it writes ``OUT/<treebank>/{train,dev,test}.conllu``:

- complete treebanks (train/dev/test): train, dev (for choices: the best epoch, the inference settings) and test as
  released; ``ptb_nltk_sample`` is left out (unlabelled: every relation is ``dep``);
- dev-only treebanks (``devtest_only/``): the released dev split into a training part and a held-out part (its last
  ``--held-out`` share, from a document's start where one is near), which takes the place of dev for
  choices; test stays test. Figures on these are not comparable to ones trained on a train split.

Deduplication is by sentence text (``# text``, else the surface forms; NFKC, whitespace and punctuation removed) between the
treebanks of one language (UD's prefix: ``no`` for both Norwegians): a training sentence whose text is in another
treebank's test split or split kept for choices is dropped, as is one already in another treebank's training part;
a choice sentence whose text is in another treebank's test split, or in a dev-only treebank's training part (it has no
other training text; the complete treebank keeps the rest of its dev for choices), is dropped. This covers every overlap the README
names (fi_ftb test in fi_tdt dev, pl_pdb / pl_lfg, ja_gsd in ja_gsd_v1) and any it does not. A treebank's own
released splits are kept as released (a short sentence such as "Thank you ." may be in both its train and test,
and is in other languages' files too); the B folders (``ud22_devtest_only/``) are older releases of D's, not used. Treebanks flagged UD v1
are written with v2 relations (``spandep.data.udv1``), so the files need no ``ud_version`` in a config.

Writes the manifest (``--manifest``, JSON: per treebank its language, UD version, split files, sentence counts and
dropped duplicates by reason, and the totals) and the ``[data] treebanks`` recipe of the pool (``--recipe``)::

    python benchmarks/scripts/multilingual_pool.py --data ../shared/data --out runs/pool \\
        --manifest benchmarks/results/multilingual_pool.json --recipe configs/recipes/pool-treebanks.toml
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from collections import Counter
from pathlib import Path

from benchmarks.suite.record import machine, portable_path
from spandep.data.conllu import check_trees, read_conllu, write_conllu
from spandep.data.languages import treebank_language, treebanks
from spandep.data.sentence import Sentence
from spandep.data.udv1 import named_v1, to_v2

SPLITS = ("train", "dev", "test")
LEFT_OUT = {"ptb_nltk_sample": "unlabelled (DEPREL root/dep only)"}
_RELEASE = re.compile(r"\(UD (\d+\.\d+)\)|@ r(\d+\.\d+)")


def text_key(sentence: Sentence) -> str:
    """What two sentences share when they are the same text: ``# text`` (else the surface forms, a multiword token's
    once), NFKC, without whitespace or punctuation (Unicode P*; a text of punctuation only keeps it): UD 2.17 zh_gsd
    writes ``，。`` where UD 1.4 zh_gsd_v1 writes ``,.`` in the same sentences."""
    text = sentence.comment("text")
    if text is None:
        ranges = {int(line.split("\t")[0].split("-")[0]): line.split("\t") for _, line in sentence.extra_lines if "-" in line.split("\t")[0]}
        forms, skip = [], 0
        for word in sentence.words:
            if word.id in ranges:
                forms.append(ranges[word.id][1])
                skip = int(ranges[word.id][0].split("-")[1])
            elif word.id > skip:
                forms.append(word.form)
        text = "".join(forms)
    text = "".join(c for c in unicodedata.normalize("NFKC", text) if not c.isspace())
    return "".join(c for c in text if not unicodedata.category(c).startswith("P")) or text


def split_file(folder: Path, split: str) -> Path | None:
    """The ``split`` file of a treebank folder (``*-ud-dev.conllu`` or ``.conllu.xz``), ``None`` where it has none."""
    found = sorted(folder.glob(f"*-ud-{split}.conllu*"))
    return found[0] if found else None


def release(readme: str, name: str) -> str | None:
    """The UD release of a treebank as the data README's row names it (``2.16``), ``None`` where it names none."""
    row = next((line for line in readme.splitlines() if line.startswith(f"| `{name}/`")), "")
    found = _RELEASE.search(row)
    return next(g for g in found.groups() if g) if found else None


def _key(treebank: str, sentence: Sentence) -> tuple[str, str]:
    """A sentence's text within its language (the treebank's prefix)."""
    return treebank.split("_")[0], text_key(sentence)


def _texts(splits: dict[str, dict[str, list[Sentence]]], split: str) -> dict[tuple[str, str], set[str]]:
    """The treebanks each text of a language is in, in their ``split``."""
    found: dict[tuple[str, str], set[str]] = {}
    for name, parts in splits.items():
        for sentence in parts[split]:
            found.setdefault(_key(name, sentence), set()).add(name)
    return found


def _without(name: str, sentences: list[Sentence], split: str, sources: dict[str, dict[tuple[str, str], set[str]]],
             seen: dict[tuple[str, str], set[str]] | None = None) -> tuple[list[Sentence], dict[str, int]]:
    """``sentences`` of treebank ``name`` less those whose text another treebank has in one of ``sources`` (named by
    where: the first that has it), and the count dropped for each (``"<split>: in <where>"``); each kept one is added
    to ``seen`` where given (the training parts written so far)."""
    kept, dropped = [], Counter()
    for sentence in sentences:
        key = _key(name, sentence)
        where = next((where for where, found in sources.items() if found.get(key, {name}) - {name}), None)
        if where:
            dropped[f"{split}: in {where}"] += 1
        else:
            kept.append(sentence)
            if seen is not None:
                seen.setdefault(key, set()).add(name)
    return kept, dict(dropped)


def read(path: Path, v1: bool) -> list[Sentence]:
    sentences = list(check_trees(read_conllu(path)))
    return [to_v2(s) for s in sentences] if v1 else sentences


def held_out(dev: list[Sentence], share: float) -> tuple[list[Sentence], list[Sentence]]:
    """A dev-only treebank's dev as (training part, held-out part): the held-out part its last ``share`` (at least one
    sentence), starting at a document or paragraph boundary where there is one within its first half."""
    cut = len(dev) - max(1, round(len(dev) * share))
    starts = [i for i in range(cut, cut + (len(dev) - cut) // 2) if any(c.startswith(("# newdoc", "# newpar")) for c in dev[i].comments)]
    cut = starts[0] if starts else cut
    return dev[:cut], dev[cut:]


def treebank_folders(data: Path, only: tuple[str, ...] = ()) -> dict[str, tuple[Path, bool]]:
    """Every treebank of the pool (``only``: those of them): name → (folder, dev-only)."""
    found = {}
    for name in sorted(only or treebanks()):
        for folder, dev_only in ((data / name, False), (data / "devtest_only" / name, True)):
            if folder.is_dir() and name not in LEFT_OUT and split_file(folder, "test"):
                found[name] = (folder, dev_only or split_file(folder, "train") is None)
    return found


def build(data: Path, out: Path, share: float, only: tuple[str, ...] = ()) -> dict:
    """Write the pool (``only``: of those treebanks) under ``out``; the manifest (paths as given)."""
    readme = (data / "README.md").read_text(encoding="utf-8")
    splits: dict[str, dict[str, list[Sentence]]] = {}
    info: dict[str, dict] = {}
    for name, (folder, dev_only) in treebank_folders(data, only).items():
        v1 = named_v1(name)
        files = {s: split_file(folder, s) for s in SPLITS}
        read_splits = {s: read(p, v1) for s, p in files.items() if p is not None}
        if dev_only:
            read_splits["train"], read_splits["dev"] = held_out(read_splits["dev"], share)
        splits[name] = read_splits
        language = treebank_language(name)
        info[name] = {
            "language": language.name if language else None, "code": language.code if language else None,
            "ud_version": 1 if v1 else 2, "release": release(readme, name), "train_split": "dev (less the held-out part)" if dev_only else "train",
            "sources": {s: str(p) for s, p in files.items() if p is not None},
        }
    tests = _texts(splits, "test")
    dev_only_train = _texts({n: p for n, p in splits.items() if info[n]["train_split"] != "train"}, "train")
    for name, parts in splits.items():
        parts["dev"], dropped = _without(name, parts["dev"], "dev", {"another treebank's test split": tests, "a dev-only treebank's training part": dev_only_train})
        info[name]["dropped"] = {"dev: in another treebank's test split": 0, **dropped}
    choices = _texts(splits, "dev")
    seen: dict[tuple[str, str], set[str]] = {}
    for name, parts in splits.items():
        sources = {"another treebank's test split": tests, "another treebank's split for choices": choices, "another treebank's training part": seen}
        parts["train"], dropped = _without(name, parts["train"], "train", sources, seen)
        info[name]["dropped"].update(dropped)
        folder = out / name
        folder.mkdir(parents=True, exist_ok=True)
        for split, sentences in parts.items():
            write_conllu(sentences, folder / f"{split}.conllu")
        info[name]["files"] = {s: str(folder / f"{s}.conllu") for s in SPLITS}
        info[name]["sentences"] = {s: len(parts[s]) for s in SPLITS}
        info[name]["words"] = {s: sum(len(x) for x in parts[s]) for s in SPLITS}
    return info


def totals(info: dict) -> dict:
    """The pool's size: treebanks, languages, training sentences and words, dropped sentences."""
    return {
        "treebanks": len(info), "dev_only_treebanks": sum(i["train_split"] != "train" for i in info.values()),
        "languages": len({i["code"] for i in info.values()}),
        "train_sentences": sum(i["sentences"]["train"] for i in info.values()),
        "train_words": sum(i["words"]["train"] for i in info.values()),
        "dev_sentences": sum(i["sentences"]["dev"] for i in info.values()),
        "dropped": sum(sum(i["dropped"].values()) for i in info.values()),
    }


def recipe(info: dict, out: Path) -> str:
    """The ``[data] treebanks`` recipe of the pool (a base config, like configs/recipes/six-treebanks.toml)."""
    lines = [
        "# The multilingual training pool (written by benchmarks/scripts/multilingual_pool.py: run it first; it writes",
        f"# {portable_path(out)}/<treebank>/). Dev-only treebanks train on their dev less a held-out part, which is their dev",
        "# here. Not a runnable config: configs/multilingual/pool-e5-biaffine.toml takes it as a base.",
        'base = "annotation-heads.toml"', "", "[data]", "treebanks = [",
    ]
    for name, i in info.items():
        lines.append(f'  {{ name = "{name}", train = "{portable_path(Path(i["files"]["train"]))}", dev = "{portable_path(Path(i["files"]["dev"]))}" }},')
    return "\n".join([*lines, "]", "", "[model]", "treebank_dim = 32", ""])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--out", type=Path, default=Path("runs/pool"))
    parser.add_argument("--held-out", type=float, default=0.2, help="share of a dev-only treebank's dev kept for choices")
    parser.add_argument("--manifest", type=Path)
    parser.add_argument("--recipe", type=Path)
    parser.add_argument("--only", nargs="*", default=(), help="these treebanks only (a check of some overlaps)")
    args = parser.parse_args(argv)
    info = build(args.data, args.out, args.held_out, tuple(args.only))
    for i in info.values():
        i["sources"] = {s: portable_path(Path(p)) for s, p in i["sources"].items()}
        i["files"] = {s: portable_path(Path(p)) for s, p in i["files"].items()}
    manifest = {
        "schema": "spandep-multilingual-pool/1",
        "command": "python " + " ".join([portable_path(Path(sys.argv[0])), *(argv if argv is not None else sys.argv[1:])]),
        "machine": machine(), "held_out": args.held_out,
        "totals": totals(info), "treebanks": info,
    }
    if args.manifest:
        args.manifest.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if args.recipe:
        args.recipe.write_text(recipe(info, args.out), encoding="utf-8")
    print(json.dumps(manifest["totals"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
