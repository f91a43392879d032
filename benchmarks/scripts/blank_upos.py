"""Write a copy of a CoNLL-U file with every UPOS (or the columns named) set to ``_`` (to measure the output heads:
parse the copy, then ``spandep evaluate GOLD PRED`` reports their accuracies against the original).

    .venv/bin/python benchmarks/scripts/blank_upos.py ../shared/data/en_ewt/en_ewt-ud-test.conllu runs/test-noupos.conllu
    .venv/bin/python benchmarks/scripts/blank_upos.py IN.conllu OUT.conllu upos xpos feats lemma
"""

from __future__ import annotations

import sys
from dataclasses import replace

from spandep.data.conllu import read_conllu
from spandep.data.writers import write_sentences

COLUMNS = ("upos", "xpos", "feats", "lemma")


def main() -> None:
    columns = sys.argv[3:] or ["upos"]
    if len(sys.argv) < 3 or not set(columns) <= set(COLUMNS):
        sys.exit(f"usage: {sys.argv[0]} IN.conllu OUT.conllu [{' '.join(COLUMNS)}]  (default: upos)")
    blank = (replace(s, words=[replace(w, **dict.fromkeys(columns, "_")) for w in s.words]) for s in read_conllu(sys.argv[1]))
    write_sentences(blank, sys.argv[2], "conllu")


if __name__ == "__main__":
    main()
