"""How non-projective each treebank of the suite is: the share of sentences with crossing arcs, per split.

The span DP decoder can only build projective trees, so a treebank with many crossing arcs is one where the
Biaffine parser's MST decoder has room the span DP has not; this prints the rates as a Markdown table.

    .venv/bin/python -m benchmarks.scripts.nonprojectivity [--splits train test]
"""

from __future__ import annotations

import argparse

from benchmarks.suite.systems import DATASETS
from spandep.data.conllu import read_conllu
from spandep.data.trees import is_projective


def nonprojective_share(path: str) -> tuple[int, float]:
    """Sentences in a CoNLL-U file and the percentage of them with at least one crossing arc."""
    sentences = list(read_conllu(path))
    crossing = sum(not is_projective(s.heads) for s in sentences)
    return len(sentences), 100.0 * crossing / max(len(sentences), 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", nargs="+", default=["train", "test"], choices=["train", "dev", "test"])
    args = ap.parse_args()
    print("| treebank | " + " | ".join(f"{split}: sentences, non-projective" for split in args.splits) + " |")
    print("|---" * (len(args.splits) + 1) + "|")
    for name, dataset in DATASETS.items():
        cells = [nonprojective_share(str(getattr(dataset, split))) for split in args.splits]
        print(f"| {name} | " + " | ".join(f"{n:,}, {share:.1f} %" for n, share in cells) + " |")


if __name__ == "__main__":
    main()
