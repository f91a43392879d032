"""The fill rule on gold files: parse a CoNLL-U file with every column given and count what changed but the tree.

For each shipped model (default: every one whose base encoder is installed here) its treebank's test split (every
column given) is parsed by ``spandep parse FILE -o OUT`` and compared with its input, sentence by sentence and word
by word: comments, multiword-token and empty-node lines, and every column. HEAD and DEPREL are the parser's; DEPS,
the enhanced graph over the input's tree, is ``_`` where the tree changed and the input's elsewhere; every other
column must be identical (docs/design.md, "The fill rule"). One JSON report; exit status 1 if anything else changed.

    PYTHONPATH=src:. .venv/bin/python -m benchmarks.scripts.robustness.fill_rule --threads 2 \\
        --out benchmarks/results/robustness/fill_rule.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.suite.systems import DATA, REPO
from spandep.data.conllu import read_conllu
from spandep.storage.catalogue import read_catalogue

COLUMNS = ("form", "lemma", "upos", "xpos", "feats", "misc")
TEST_FILES = {  # a shipped model -> its treebank's test split under the data folder
    "en": "en_ewt/en_ewt-ud-test.conllu", "en-accurate": "en_ewt/en_ewt-ud-test.conllu",
    "fr": "fr_sequoia/fr_sequoia-ud-test.conllu", "it": "it_partut/it_partut-ud-test.conllu",
    "ru": "ru_taiga/ru_taiga-ud-test.conllu", "no": "no_nynorsklia/no_nynorsklia-ud-test.conllu",
    "cs": "cs_cltt/cs_cltt-ud-test.conllu", "zh": "zh_gsd_v1/zh_gsd_v1-ud-test.conllu",
}


def compare(gold_path: Path, out_path: Path) -> dict[str, int]:
    """Counts of what differs between a gold file and its parse: per column, plus sentences, comments, extra lines,
    DEPS not cleared where the tree changed (or cleared where it did not), and trees changed."""
    gold, pred = list(read_conllu(gold_path)), list(read_conllu(out_path))
    counts = {"sentences": len(gold), "words": 0, "trees_changed": 0, "sentence_count_differs": int(len(gold) != len(pred)),
              "comments_differ": 0, "extra_lines_differ": 0, "deps_wrong": 0, **{c: 0 for c in COLUMNS}}
    for g, p in zip(gold, pred):
        counts["words"] += len(g)
        counts["comments_differ"] += g.comments != p.comments
        counts["extra_lines_differ"] += g.extra_lines != p.extra_lines
        changed = g.heads != p.heads or g.deprels != p.deprels
        counts["trees_changed"] += changed
        for gw, pw in zip(g.words, p.words):
            for c in COLUMNS:
                counts[c] += getattr(gw, c) != getattr(pw, c)
            counts["deps_wrong"] += pw.deps != ("_" if changed else gw.deps)
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("SPANDEP_DATA", DATA)))
    ap.add_argument("--models", help="comma-separated shipped names (default: every one listed in this script)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=Path, help="also write the JSON report here")
    args = ap.parse_args(argv)
    names = args.models.split(",") if args.models else list(TEST_FILES)
    _, shipped = read_catalogue()
    rows, failed = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            gold = args.data / TEST_FILES[name]
            out = Path(tmp) / f"{name}.conllu"
            cmd = [sys.executable, "-m", "spandep.cli.main", "parse", str(gold), "-o", str(out), "--model", name, "--threads", str(args.threads)]
            run = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
            if run.returncode != 0:
                rows.append({"model": name, "file": TEST_FILES[name], "error": run.stderr.strip().splitlines()[-1:]})
                failed += 1
                continue
            counts = compare(gold, out)
            altered = sum(counts[k] for k in (*COLUMNS, "deps_wrong", "comments_differ", "extra_lines_differ", "sentence_count_differs"))
            failed += altered > 0
            rows.append({"model": name, "treebank": shipped[name].treebank, "file": TEST_FILES[name], "altered": altered, **counts})
            print(json.dumps(rows[-1]), flush=True)
    report = {
        "schema": "spandep-fill-rule/1",
        "command": "python -m benchmarks.scripts.robustness.fill_rule " + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs", "rows": rows,
    }
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
