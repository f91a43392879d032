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
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

import torch

from benchmarks.suite.systems import DATA, REPO
from spandep.tokenization import RuleTokenizer
from spandep.tokenization.corpus import lossless_problems, raw_text, read_paragraphs
from spandep.tokenization.trained import tokenizer_for

TOKENIZERS = REPO / "runs" / "tokenizers"
_SPACE = re.compile(r"\s+")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("SPANDEP_DATA", DATA)))
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    failed = 0
    for gold in sorted(args.data.glob("**/*test*.conllu")):
        name = gold.parent.name
        tokenizer = tokenizer_for(TOKENIZERS / name)
        text = raw_text(read_paragraphs(gold))
        sentences = tokenizer.tokenize(text)
        found = lossless_problems(text, sentences)
        kind = "rules" if isinstance(tokenizer, RuleTokenizer) else "trained"
        n_chars = len(_SPACE.sub("", text))
        status = "OK" if not found else f"FAILED ({len(found)}): " + "; ".join(found[:3])
        print(f"{gold.relative_to(args.data)}: {kind}, {n_chars} non-whitespace characters, {len(sentences)} sentences: {status}")
        failed += bool(found)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
