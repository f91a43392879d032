"""Zero characters lost or changed: tokenize the raw text of every test split under the data folder and compare.

For each ``*test*.conllu`` under ``--data`` (default ../shared/data, or $SPANDEP_DATA), the raw text is built as
``benchmarks/scripts/tokenizer_scores.py`` builds it and tokenized by the treebank's trained tokenizer
(``runs/tokenizers/<treebank>/tokenizer``) where there is one, else by the rule fallback. Checked:

- the non-whitespace characters of the output tokens (multiword tokens by their surface form), concatenated, are
  exactly those of the input;
- every token's form is the input at its ``TokenRange``;
- every sentence's ``# text`` is its span of the input (line breaks and tabs written as spaces).

One line per treebank; the exit status is 1 if anything was lost or changed.

    python -m benchmarks.scripts.check_lossless

With ``--parsed TEXT CONLLU``, the same checks on a parser's output instead: CONLLU is what ``spandep parse TEXT
--input-format text`` wrote (read back from the file), TEXT the raw text it was given.

    python -m benchmarks.scripts.check_lossless --parsed ewt_test.txt ewt_test.pred.conllu
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

import torch

from benchmarks.suite.systems import DATA, REPO
from spandep.data.conllu import read_conllu
from spandep.tokenization.inputs import read_raw_text
from spandep.data.sentence import Sentence
from spandep.tokenization import RuleTokenizer
from spandep.tokenization.corpus import lossless_problems, raw_text, read_paragraphs
from spandep.tokenization.trained import tokenizer_for

TOKENIZERS = REPO / "runs" / "tokenizers"
_SPACE = re.compile(r"\s+")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("SPANDEP_DATA", DATA)))
    parser.add_argument("--parsed", nargs=2, type=Path, metavar=("TEXT", "CONLLU"), help="check a parser's output file")
    args = parser.parse_args(argv)
    if args.parsed:
        text_file, conllu = args.parsed
        return report(str(conllu), "parsed", read_raw_text(text_file), list(read_conllu(conllu)))
    torch.set_num_threads(1)
    failed = 0
    for gold in sorted(args.data.glob("**/*test*.conllu")):
        name = gold.parent.name
        tokenizer = tokenizer_for(TOKENIZERS / name)
        text = raw_text(read_paragraphs(gold))
        kind = "rules" if isinstance(tokenizer, RuleTokenizer) else "trained"
        failed += report(str(gold.relative_to(args.data)), kind, text, tokenizer.tokenize(text))
    return 1 if failed else 0


def report(name: str, kind: str, text: str, sentences: list[Sentence]) -> int:
    """Print one line on ``sentences`` as the output for ``text``; 1 if a character was lost or changed."""
    found = lossless_problems(text, sentences)
    n_chars = len(_SPACE.sub("", text))
    status = "OK" if not found else f"FAILED ({len(found)}): " + "; ".join(found[:3])
    print(f"{name}: {kind}, {n_chars} non-whitespace characters, {len(sentences)} sentences: {status}")
    return int(bool(found))


if __name__ == "__main__":
    sys.exit(main())
