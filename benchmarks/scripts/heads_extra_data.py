"""A treebank's training file with other treebanks of its language appended, for the output heads (issue 45).

The heads of a model trained on a small treebank (cs_cltt: 467 sentences) see few of the language's forms and
feature bundles; the dev and test splits of the language's other treebanks in ``../shared/data`` (``devtest_only/``,
``ud22_devtest_only/``) can teach them more (``spandep train-heads MODEL OUT_FILE DEV --set ...``, each head kept at
its best epoch on the target's own dev). Only the extra treebanks' **dev** splits are taken (their tests stay
unseen), and their FEATS lose the feature names the target's training file never uses (cs_cac and cs_fictree mark
``NameType``, which cs_cltt does not annotate: a head that learnt it would add it to cs_cltt words). Every other
column is kept as released. The target's training file comes first, unchanged. An extra sentence whose text is in
one of the ``--exclude`` files (the target's dev and test: its epochs are chosen on the one and it is scored on the
other) is dropped, as ``multilingual_pool.py`` deduplicates (``text_key``): UD 2.2 Italian ISDT's dev holds 142 of
the 156 sentences of it_partut's dev.

    python -m benchmarks.scripts.heads_extra_data TARGET_TRAIN EXTRA_DEV [EXTRA_DEV ...] --exclude TARGET_DEV TARGET_TEST -o OUT.conllu
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchmarks.scripts.multilingual_pool import text_key
from spandep.data.conllu import read_conllu
from spandep.data.reading import InputBytes, decoded_lines


def read(path: Path) -> str:
    """The text of ``path``, decompressed where it is gzip, xz or bzip2 (as every spandep command reads it)."""
    return "".join(line for _, line in decoded_lines(path, keepends=True))


def feature_names(text: str) -> set[str]:
    """The feature names of the FEATS column of every word line of ``text``."""
    names = set()
    for line in text.splitlines():
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit() and cols[5] != "_":
            names |= {pair.split("=", 1)[0] for pair in cols[5].split("|")}
    return names


def without(text: str, path: Path, excluded: set[str]) -> tuple[str, int]:
    """``text``, that of ``path``, without its sentences whose :func:`text_key` is in ``excluded``, and how many those
    were (the file's sentence blocks and its sentences as read from ``text`` correspond one to one)."""
    blocks = [b for b in text.split("\n\n") if b.strip()]
    sentences = list(read_conllu(InputBytes(str(path), text.encode("utf-8"))))
    if len(blocks) != len(sentences):
        raise SystemExit(f"{path}: {len(blocks)} sentence blocks but {len(sentences)} sentences read")
    kept = [b for b, s in zip(blocks, sentences) if text_key(s) not in excluded]
    return "\n\n".join(kept) + "\n\n", len(blocks) - len(kept)


def restricted(text: str, keep: set[str]) -> tuple[str, int]:
    """``text`` with every feature whose name is not in ``keep`` removed from the word lines (``_`` when none is
    left), and how many features were removed."""
    out, removed = [], 0
    for line in text.splitlines():
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit() and cols[5] != "_":
            pairs = cols[5].split("|")
            kept = [p for p in pairs if p.split("=", 1)[0] in keep]
            removed += len(pairs) - len(kept)
            cols[5] = "|".join(kept) or "_"
            line = "\t".join(cols)
        out.append(line)
    return "\n".join(out).rstrip("\n") + "\n\n", removed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", type=Path, help="The target treebank's training CoNLL-U (.xz and .gz read too).")
    parser.add_argument("extra", type=Path, nargs="+", help="Dev splits of the language's other treebanks.")
    parser.add_argument("--exclude", type=Path, nargs="+", required=True, help="The target's dev and test: their sentences are dropped from the extra files.")
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args()
    target = read(args.target)
    keep = feature_names(target)
    excluded = {text_key(s) for path in args.exclude for s in read_conllu(str(path))}
    parts, record = [target.rstrip("\n") + "\n\n"], {}
    for path in args.extra:
        released = read(path)
        kept, dropped = without(released, path, excluded)
        text, removed = restricted(kept, keep)
        parts.append(text)
        record[path.name] = {"sentences": text.count("\n\n"), "dropped_in_target_dev_or_test": dropped,
                             "features_removed": removed, "names_removed": sorted(feature_names(released) - keep)}
    args.output.write_text("".join(parts), encoding="utf-8")
    print(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
