"""How far two annotations of the same sentences agree, by the official CoNLL 2018 scorer: a ceiling for a model
trained on one and scored on the other (UD 1.4 Chinese GSD, converted to UD v2 relations, against UD 2.17 GSD).

The sentences are paired in order; a pair whose word counts differ is left out of both sides (the count is
reported). In a kept pair the second file's forms are replaced by the first's (UD 2.17 writes full-width
punctuation where UD 1.4 has ASCII), so that the scorer aligns the words one to one, and multiword-token and
empty-node lines are left out of both; heads, labels, tags and features stay as each file has them. A file of UD v1 relations is read converted (``--ud-version 1``: the map of
``spandep.data.udv1``, as training reads it).

    python -m benchmarks.scripts.annotation_agreement ../shared/data/devtest_only/zh_gsd/zh_gsd-ud-test.conllu.xz \\
        ../shared/data/zh_gsd_v1/zh_gsd_v1-ud-test.conllu --ud-version 1 --out benchmarks/results/multilingual/zh_gsd_test__ud14_vs_ud217.json
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from dataclasses import replace
from pathlib import Path

from udtools import udeval

from benchmarks.suite.record import write_json
from spandep.data.conllu import format_sentence, read_conllu
from spandep.data.udv1 import sentences_to_v2
from spandep.evaluation.provenance import stamp

METRICS = ("Words", "UPOS", "UFeats", "UAS", "LAS")


def paired(reference: Path, other: Path, ud_version: int) -> tuple[str, str, int, int]:
    """The two files' kept sentences as CoNLL-U texts, the other's forms made the reference's; sentences kept, left out."""
    first = list(read_conllu(reference))
    second = list(read_conllu(other))
    if ud_version == 1:
        second = list(sentences_to_v2(second))
    if len(first) != len(second):
        raise SystemExit(f"{reference} has {len(first)} sentences, {other} {len(second)}: not the same sentences")
    kept_a, kept_b = [], []
    for a, b in zip(first, second):
        if len(a.words) != len(b.words):
            continue
        words = [replace(wb, form=wa.form) for wa, wb in zip(a.words, b.words)]
        kept_a.append(replace(a, extra_lines=[]))
        kept_b.append(replace(b, words=words, extra_lines=[], comments=[]))
    return "".join(map(format_sentence, kept_a)), "".join(map(format_sentence, kept_b)), len(kept_a), len(first) - len(kept_a)


def agreement(reference: Path, other: Path, ud_version: int) -> dict[str, float | int]:
    """The official F1 (percent) of :data:`METRICS`, ``other`` scored against ``reference``, and the sentences kept
    and left out (:func:`paired`)."""
    gold, system, kept, left = paired(reference, other, ud_version)
    scores = udeval.evaluate(udeval.load_conllu(io.StringIO(gold), "<reference>", {}), udeval.load_conllu(io.StringIO(system), "<other>", {}))
    return {"sentences_kept": kept, "sentences_left_out": left, **{m: round(100 * scores[m].f1, 2) for m in METRICS}}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("reference", type=Path, help="the annotation scored against (gold)")
    ap.add_argument("other", type=Path, help="the other annotation of the same sentences (system)")
    ap.add_argument("--ud-version", type=int, default=2, choices=[1, 2], help="the other file's UD version (1: converted)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    report = {
        "reference": str(args.reference), "other": str(args.other), "other_ud_version": args.ud_version,
        "scorer": "udtools.udeval (CoNLL 2018)", **agreement(args.reference, args.other, args.ud_version),
    }
    result = stamp(report, "spandep-annotation-agreement/1", "python -m benchmarks.scripts.annotation_agreement " + " ".join(argv or sys.argv[1:]))
    if args.out:
        write_json(args.out, result)
    print(json.dumps(result, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
