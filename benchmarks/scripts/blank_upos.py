"""Write a copy of a CoNLL-U file with every UPOS set to ``_`` (to measure a tagging head: parse the copy, then
``spandep evaluate GOLD PRED`` reports UPOS accuracy against the original).

    .venv/bin/python benchmarks/scripts/blank_upos.py ../shared/data/en_ewt/en_ewt-ud-test.conllu /tmp/test-noupos.conllu
"""

from __future__ import annotations

import sys
from dataclasses import replace

from spandep.data.conllu import read_conllu
from spandep.data.writers import write_sentences


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(f"usage: {sys.argv[0]} IN.conllu OUT.conllu")
    blank = (replace(s, words=[replace(w, upos="_") for w in s.words]) for s in read_conllu(sys.argv[1]))
    write_sentences(blank, sys.argv[2], "conllu")


if __name__ == "__main__":
    main()
