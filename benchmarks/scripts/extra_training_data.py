"""A training file of one treebank plus sentences of another treebank of the same language, none of which share a
sentence or an 8-word run with the evaluation splits.

it_partut is small (1,781 training sentences); ``../shared/data/ud22_devtest_only/it_isdt`` holds ISDT's UD 2.2
dev and test, annotated by the same guidelines. They are not disjoint from ParTUT: 139 ISDT dev sentences are
ParTUT dev sentences and 58 ISDT test sentences ParTUT test sentences (both treebanks draw on the same texts). This
writes OUT as TRAIN followed by every EXTRA sentence that has no 8-word run of forms in common with any sentence of
the ``--exclude`` files (the dev and test splits the model is chosen and scored on), and prints the counts.

    python -m benchmarks.scripts.extra_training_data runs/data/it_partut-isdt-train.conllu \
        ../shared/data/it_partut/it_partut-ud-train.conllu ../shared/data/ud22_devtest_only/it_isdt/it_isdt-ud-{dev,test}.conllu \
        --exclude ../shared/data/it_partut/it_partut-ud-{dev,test}.conllu
"""

from __future__ import annotations

import argparse
from pathlib import Path

from spandep.data.conllu import format_sentence, read_conllu
from spandep.data.sentence import Sentence
from spandep.data.output import write_blocks

RUN = 8  # words in a run that makes two sentences overlap


def runs(sentence: Sentence) -> set[tuple[str, ...]]:
    """The sentence's runs of RUN lowercased forms (the whole sentence where it is shorter)."""
    forms = [form.lower() for form in sentence.forms]
    return {tuple(forms[i : i + RUN]) for i in range(max(1, len(forms) - RUN + 1))}


def disjoint(extra: list[Sentence], excluded: list[Sentence]) -> list[Sentence]:
    """The sentences of ``extra`` that share no run with a sentence of ``excluded``."""
    seen = set().union(*(runs(s) for s in excluded)) if excluded else set()
    return [s for s in extra if not runs(s) & seen]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the training file to write")
    parser.add_argument("train", type=Path, help="the treebank's own training split (kept whole, first)")
    parser.add_argument("extra", type=Path, nargs="+", help="files of another treebank of the language")
    parser.add_argument("--exclude", type=Path, nargs="+", required=True, help="the splits nothing may overlap (dev, test)")
    args = parser.parse_args(argv)
    excluded = [s for path in args.exclude for s in read_conllu(path)]
    train = list(read_conllu(args.train))
    extra = [s for path in args.extra for s in read_conllu(path)]
    kept = disjoint(extra, excluded)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_blocks((format_sentence(s) for s in train + kept), args.out)
    words = sum(len(s.forms) for s in kept)
    print(f"{args.out}: {len(train)} training sentences + {len(kept)} of {len(extra)} extra ({words:,} words; "
          f"{len(extra) - len(kept)} left out for overlapping {', '.join(p.name for p in args.exclude)})")


if __name__ == "__main__":
    main()
