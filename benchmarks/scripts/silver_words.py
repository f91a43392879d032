"""Silver training text for a tokenizer: a treebank's words cut further where a dictionary segmenter cuts them.

UD 1.4 Japanese GSD (``ja_gsd_v1``, 8,277 training sentences) writes a word about a bunsetsu (``これに``
``不快感を`` ``示す``); UD 2 GSD writes UniDic's short units (``これ`` ``に`` ``不快`` ``感`` ``を`` ``示す``), and only its
dev and test are here (``devtest_only/ja_gsd``). MeCab with UniDic (``fugashi`` and ``unidic-lite`` from PyPI, needed
by this script only) writes those units. Each sentence of ``TREEBANK`` keeps every boundary its own words have and
gains every one the segmenter puts inside them: the treebank's words are never merged, only cut. The output is a
CoNLL-U file for ``spandep train-tokenizer`` (forms and sentence boundaries; the other columns are placeholders, a
flat tree, not an annotation), then each ``--gold`` file as it is (the UD 2 training part, which the tokenizer also
reads). A sentence whose text (``benchmarks.scripts.multilingual_pool.text_key``) is in an ``--exclude`` file (the
splits the tokenizer is chosen and scored on) is left out. ``--agreement FILE GOLD`` measures the rule where both
annotations exist: Words F1 against GOLD's words over the sentences of FILE that GOLD has too (ja_gsd_v1's dev holds
440 of the UD 2 dev's sentences), of the refined words, the segmenter alone and FILE's own words. Writes a record
(counts, agreement, the segmenter's versions) as JSON on standard output::

    python -m benchmarks.scripts.silver_words ../shared/data/ja_gsd_v1/ja-ud-train.conllu.xz --gold runs/pool/ja_gsd/train.conllu \\
        --exclude ../shared/data/devtest_only/ja_gsd/ja_gsd-ud-dev.conllu.xz ../shared/data/devtest_only/ja_gsd/ja_gsd-ud-test.conllu.xz \\
        --agreement ../shared/data/ja_gsd_v1/ja-ud-dev.conllu.xz ../shared/data/devtest_only/ja_gsd/ja_gsd-ud-dev.conllu.xz -o runs/ja_silver/train.conllu
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable
from importlib import metadata
from pathlib import Path

from benchmarks.scripts.heads_extra_data import read
from benchmarks.scripts.multilingual_pool import text_key
from benchmarks.suite.record import machine, portable_path
from spandep.data.conllu import read_conllu
from spandep.data.output import write_blocks
from spandep.data.sentence import Sentence
from spandep.tokenization.corpus import gold_tokens, sentence_text

Segmenter = Callable[[str], list[str]]


def mecab() -> Segmenter:
    """MeCab with UniDic (``fugashi``, ``unidic-lite``): the surface forms of a text's short units."""
    try:
        import fugashi
    except ImportError:
        raise SystemExit("silver_words: needs fugashi and unidic-lite (pip install fugashi unidic-lite)") from None
    tagger = fugashi.Tagger()
    return lambda text: [node.surface for node in tagger(text)]


def refine(words: list[str], segment: Segmenter) -> list[str]:
    """``words`` cut wherever ``segment`` cuts their text (theirs joined); no word of ``words`` is merged with another."""
    text = "".join(words)
    pieces = [p for p in segment(text) if p]
    if "".join(pieces) != text:
        raise ValueError(f"the segmenter changed the text: {text!r}")
    cuts = set()
    for group in (words, pieces):
        at = 0
        for part in group:
            at += len(part)
            cuts.add(at)
    bounds = [0, *sorted(cuts)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


def silver(sentence: Sentence, segment: Segmenter) -> str:
    """``sentence`` as a CoNLL-U block of its refined words: ``# text`` (rebuilt as the tokenizer's corpus rebuilds it),
    forms, a flat tree, ``SpaceAfter=No`` where the text has no space after the word."""
    text = sentence_text(sentence, gold_tokens(sentence))
    lines, at = [f"# text = {text}"], 0
    for i, form in enumerate(refine([w.form for w in sentence.words], segment), 1):
        at = text.index(form, at) + len(form)
        misc = "_" if text[at:at + 1].isspace() else "SpaceAfter=No"
        lines.append(f"{i}\t{form}\t_\tX\t_\t_\t{0 if i == 1 else 1}\t{'root' if i == 1 else 'dep'}\t_\t{misc}")
    return "\n".join(lines) + "\n\n"


def build(treebank: Path, gold: Iterable[Path], exclude: Iterable[Path], segment: Segmenter) -> tuple[str, dict]:
    """The silver file's text and its record."""
    excluded = {text_key(s) for path in exclude for s in read_conllu(path)}
    blocks, left_out, words_in, words_out = [], 0, 0, 0
    for sentence in read_conllu(treebank):
        if any(" " in w.form for w in sentence.words) or len(sentence.extra_lines):
            raise SystemExit(f"silver_words: {treebank}: a word with a space or a multiword token; this script takes neither")
        if text_key(sentence) in excluded:
            left_out += 1
            continue
        block = silver(sentence, segment)
        blocks.append(block)
        words_in += len(sentence.words)
        words_out += block.count("\n") - 2
    gold_text = [read(path) for path in gold]
    record = {
        "treebank": portable_path(treebank), "sentences": len(blocks), "left_out_excluded": left_out,
        "words_before": words_in, "words_after": words_out, "gold": [portable_path(p) for p in gold],
        "exclude": [portable_path(p) for p in exclude],
    }
    return "".join(blocks) + "".join(t if t.endswith("\n\n") else t.rstrip("\n") + "\n\n" for t in gold_text), record


def _spans(words: list[str]) -> set[tuple[int, int]]:
    ends = [0]
    for word in words:
        ends.append(ends[-1] + len(word))
    return set(zip(ends, ends[1:]))


def agreement(treebank: Path, gold: Path, segment: Segmenter) -> dict:
    """Words F1 (character spans, whitespace ignored) against ``gold``'s words, over the sentences of ``treebank``
    whose text ``gold`` has too: of the refined words (``silver``), of the segmenter alone and of the treebank's own."""
    reference = {text_key(s): [w.form for w in s.words] for s in read_conllu(gold)}
    counts = {"silver": [0, 0, 0], "segmenter": [0, 0, 0], "treebank": [0, 0, 0]}
    sentences = 0
    for sentence in read_conllu(treebank):
        words = [w.form for w in sentence.words]
        truth = reference.get(text_key(sentence))
        if truth is None or "".join(truth).replace(" ", "") != "".join(words):
            continue
        sentences += 1
        expected = _spans(truth)
        for name, found in (("silver", refine(words, segment)), ("segmenter", segment("".join(words))), ("treebank", words)):
            got = _spans(found)
            counts[name] = [a + b for a, b in zip(counts[name], (len(expected & got), len(expected), len(got)))]
    return {"sentences": sentences, **{name: round(200 * tp / (g + p), 2) if g + p else None for name, (tp, g, p) in counts.items()}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("treebank", type=Path)
    parser.add_argument("--gold", type=Path, nargs="*", default=[], help="CoNLL-U files appended as they are")
    parser.add_argument("--exclude", type=Path, nargs="*", default=[], help="splits whose sentence texts are left out")
    parser.add_argument("-o", "--out", type=Path, required=True)
    parser.add_argument("--agreement", type=Path, nargs=2, metavar=("FILE", "GOLD"),
                        help="also report Words F1 against GOLD's words over the sentences of FILE (of TREEBANK's annotation) that GOLD has too")
    args = parser.parse_args(argv)
    segment = mecab()
    text, record = build(args.treebank, args.gold, args.exclude, segment)
    if args.agreement:
        record["agreement"] = {"file": portable_path(args.agreement[0]), "gold": portable_path(args.agreement[1]), **agreement(*args.agreement, segment)}
    record = {"schema": "spandep-silver-words/1", **record, "segmenter": {p: metadata.version(p) for p in ("fugashi", "unidic-lite")}, "machine": machine()}
    record["command"] = "python -m benchmarks.scripts.silver_words " + " ".join(argv if argv is not None else sys.argv[1:])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_blocks([text], args.out)
    print(json.dumps(record, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
