"""Typographic variants of a test split, and raw-text parsing of the original against each (issue 47).

Two rewritings of a gold CoNLL-U file, each changing FORM and ``# text`` together so the gold file still spells its
raw text (``spandep.tokenization.corpus`` aligns it, and the CoNLL 2018 scorer, which aligns on characters, reads
it; both are checked when the file is written):

- ``typo``: each paragraph as typeset in the treebank's language (``spandep.tokenization.variants.typeset``, seed
  ``--seed``): ``'`` → ``’`` (a lone opening one ``‘``), straight double quotes → ``“ ”`` (en), ``« »`` (fr, it, ru,
  no), ``„ “`` (cs), a lone ``-``/``--`` between spaces → ``–``/``—``, ``...`` → ``…``, a tenth of the single spaces
  inside a sentence (seeded) → U+00A0, and in French a no-break space before ``: »`` and after ``«`` and a narrow
  one before ``; ! ?``. The words of a multiword token get the apostrophes of its surface form. Every other column,
  and MISC (no ``SpacesAfter``), is kept: ``# text`` says where the no-break spaces are;
- ``nopar``: every ``# newpar`` and ``# newdoc`` line removed: the file's raw text is one paragraph, its sentences
  joined by one space (for a file with neither, like fr_sequoia, it_partut and no_nynorsklia, it is the original).

Then each shipped model (``spandep models``: its folder's tokenizer, or ``--tokenizer``) tokenizes and parses the
raw text of the original and of each variant, built as ``benchmarks/scripts/tokenizer_scores.py`` builds it, and
the official CoNLL 2018 scorer (``udtools.udeval``) scores it against that file's gold: Tokens, Words, Sentences F1,
UPOS and LAS (F1); ``lossless``: whether the tokenizer kept every character (``corpus.lossless_problems``).

    python -m benchmarks.scripts.typographic_variants en en-accurate fr it cs ru no
    python -m benchmarks.scripts.typographic_variants fr --tokenizer runs/tokenizers/fr_sequoia_augment/tokenizer --label fr-augment

    python -m benchmarks.scripts.typographic_variants --table benchmarks/results/tokenizer/typographic/*.json

writes ``benchmarks/results/tokenizer/typographic/<name or label>.json`` (``__dev`` before ``.json`` with ``--split
dev``, for choices made on dev); the variant files go to ``runs/typographic/<treebank>/{typo,nopar}-<split>.conllu``
(``--variants``; treebank files are never committed), where ``python -m benchmarks.scripts.check_lossless --data
runs/typographic`` checks them too.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch
from udtools import udeval

from benchmarks.suite.raw_text import model_parser
from benchmarks.suite.record import checkout, machine, portable_path, write_json
from benchmarks.suite.systems import DATASETS, REPO
from spandep.data.conllu import format_sentence, read_conllu
from spandep.data.output import write_blocks
from spandep.data.sentence import Sentence
from spandep.storage.catalogue import read_catalogue
from spandep.storage.model_io import load_model
from spandep.tokenization import tokenizer_for
from spandep.tokenization.corpus import lossless_problems, raw_text, read_paragraphs
from spandep.tokenization.text import SentenceSpans
from spandep.tokenization.trained import load_tokenizer
from spandep.tokenization.variants import typeset

SCHEMA = "spandep-typographic-variants/1"
RESULTS = REPO / "benchmarks" / "results" / "tokenizer" / "typographic"
METRICS = ("Tokens", "Words", "Sentences", "UPOS", "LAS")
_RANGE = re.compile(r"[1-9][0-9]*-([1-9][0-9]*)\t")


def retyped(sentence: Sentence, spans: SentenceSpans, text: str) -> Sentence:
    """``sentence`` with the ``# text``, token forms and multiword words that ``spans`` spell in the paragraph
    ``text`` (one span per token of the sentence, in order)."""
    extra, words = list(sentence.extra_lines), list(sentence.words)
    ranges = {k: i for i, (k, line) in enumerate(extra) if _RANGE.match(line)}
    k = 0
    for span in spans:
        form = text[span.start : span.end]
        if k in ranges:
            columns = extra[ranges[k]][1].split("\t")
            extra[ranges[k]] = (k, "\t".join([columns[0], form, *columns[2:]]))
            last = int(_RANGE.match(columns[0] + "\t").group(1))  # type: ignore[union-attr]
            words[k:last] = [replace(w, form=f) for w, f in zip(words[k:last], span.words)]
            k = last
        else:
            words[k] = replace(words[k], form=form)
            k += 1
    line = f"# text = {text[spans[0].start : spans[-1].end]}"
    return replace(sentence, words=words, extra_lines=extra, comments=[line if c.startswith("# text =") else c for c in sentence.comments])


def write_variants(gold: Path, language: str, out: Path, seed: int, split: str = "test") -> dict[str, Path]:
    """``typo`` and ``nopar`` of ``gold`` written into ``out`` (the module docstring), each checked to spell its
    rewritten text and to be read by the official scorer; every variant's gold file, the original's included."""
    out.mkdir(parents=True, exist_ok=True)
    sentences = list(read_conllu(gold))
    paragraphs = read_paragraphs(gold)
    typed = [typeset(p, language, seed * 1_000_003 + k) for k, p in enumerate(paragraphs)]
    spans = [(s, p.text) for p in typed for s in p.sentences]
    if len(spans) != len(sentences):
        raise SystemExit(f"{gold}: {len(sentences)} sentences read, {len(spans)} aligned")
    files = {"original": gold, "typo": out / f"typo-{split}.conllu", "nopar": out / f"nopar-{split}.conllu"}
    write_blocks((format_sentence(retyped(s, *x)) for s, x in zip(sentences, spans)), files["typo"])
    kept = ([c for c in s.comments if not c.startswith(("# newpar", "# newdoc"))] for s in sentences)
    write_blocks((format_sentence(replace(s, comments=c)) for s, c in zip(sentences, kept)), files["nopar"])
    expected = {"typo": raw_text(typed), "nopar": " ".join(p.text for p in paragraphs) + "\n"}
    for name, text in expected.items():
        if raw_text(read_paragraphs(files[name])) != text:
            raise SystemExit(f"{files[name]}: its raw text is not the rewritten text")
        udeval.load_conllu_file(str(files[name]))  # raises if the official scorer cannot read it
    return files


def official(gold: Path, system: list[Sentence]) -> dict[str, float]:
    """F1 (percent) of :data:`METRICS` by the CoNLL 2018 scorer of ``udtools``."""
    gold_ud = udeval.load_conllu_file(str(gold))
    system_ud = udeval.load_conllu(io.StringIO("".join(map(format_sentence, system))), "<system>", {})
    scores = udeval.evaluate(gold_ud, system_ud)
    return {m: round(100 * scores[m].f1, 2) for m in METRICS}


def score_model(name: str, tokenizer_folder: Path | None, variants: Path, seed: int, split: str) -> dict[str, Any]:
    """Every variant of ``split`` of shipped model ``name``'s treebank, tokenized, parsed and scored."""
    line = read_catalogue()[1][name]
    code = str(line.code)
    files = write_variants(getattr(DATASETS[code], split), code.split("_")[0], variants / code, seed, split)
    model = load_model(line.folder)
    parse, options = model_parser(model, line.model_treebank)
    tokenizer = load_tokenizer(tokenizer_folder) if tokenizer_folder else tokenizer_for(line.folder, options.treebank)
    result: dict[str, Any] = {"treebank": code, "split": split, "model": portable_path(line.folder),
                              "tokenizer": portable_path(tokenizer_folder) if tokenizer_folder else "the model's"}
    for variant, gold in files.items():
        started = time.perf_counter()
        text = raw_text(read_paragraphs(gold))
        sentences = tokenizer.tokenize(text)
        problems = lossless_problems(text, sentences)
        result[variant] = {
            "gold": portable_path(gold), **official(gold, parse(sentences)), "lossless": not problems,
            "lossless_problems": problems[:5], "characters": len(text), "seconds": round(time.perf_counter() - started, 1),
        }
        print(name, variant, " ".join(f"{m} {result[variant][m]:.2f}" for m in METRICS), "lossless" if not problems else problems[:2], flush=True)
    result["differences"] = {
        v: {m: round(result[v][m] - result["original"][m], 2) for m in METRICS} for v in files if v != "original"
    }
    return result


def table(files: list[Path]) -> str:
    """The result ``files`` as a markdown table: Words, Sentences F1 and LAS of each variant, the variants' differences
    from the original, and whether every character was kept."""
    rows = [
        "| model (tokenizer) | treebank | original: Words / Sentences / LAS | typo | Δ Words / LAS | nopar | Δ Words / LAS | lossless |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for path in files:
        r = json.loads(path.read_text(encoding="utf-8"))
        cells = [" / ".join(f"{r[v][m]:.2f}" for m in ("Words", "Sentences", "LAS")) for v in ("original", "typo", "nopar")]
        delta = [" / ".join(f"{r['differences'][v][m]:+.2f}" for m in ("Words", "LAS")) for v in ("typo", "nopar")]
        lossless = "yes" if all(r[v]["lossless"] for v in ("original", "typo", "nopar")) else "**no**"
        rows.append(f"| `{r['name']}` | {r['treebank']} {r['split']} | {cells[0]} | {cells[1]} | {delta[0]} | {cells[2]} | {delta[1]} | {lossless} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="*", help="shipped model names (spandep models)")
    ap.add_argument("--table", nargs="+", type=Path, help="print these result files as a markdown table instead")
    ap.add_argument("--tokenizer", type=Path, help="a trained tokenizer folder instead of the model's (one model)")
    ap.add_argument("--label", help="the result file's name (default: the model's name)")
    ap.add_argument("--variants", type=Path, default=REPO / "runs" / "typographic", help="where the variant files go")
    ap.add_argument("--split", default="test", choices=["dev", "test"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    if args.table:
        print(table(args.table))
        return
    if (args.tokenizer or args.label) and len(args.models) != 1:
        ap.error("--tokenizer and --label go with one model")
    torch.set_num_threads(args.threads)
    for name in args.models:
        result = {
            "schema": SCHEMA, "name": args.label or name, **score_model(name, args.tokenizer, args.variants, args.seed, args.split),
            "scorer": "udtools.udeval (CoNLL 2018)", "seed": args.seed, "threads": args.threads,
            "command": "python -m benchmarks.scripts.typographic_variants " + " ".join(argv if argv is not None else sys.argv[1:]),
            **checkout(), "machine": machine(), "date": time.strftime("%Y-%m-%d"),
        }
        out = RESULTS / f"{args.label or name}{'' if args.split == 'test' else '__' + args.split}.json"
        write_json(out, result)
        print("wrote", portable_path(out))


if __name__ == "__main__":
    main()
