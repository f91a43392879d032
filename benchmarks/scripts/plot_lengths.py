"""Accuracy by sentence length, dependency length and span length for several systems, from ``spandep evaluate
--json`` files, drawn as one PNG (paper §5's length analysis).

    .venv/bin/python benchmarks/scripts/plot_lengths.py --out docs/length_analysis_en_ewt_test.png \\
        Biaffine=benchmarks/results/legacy/en_ewt_test__ewt-biaffine-minilm.json \\
        "span run 4"=benchmarks/results/legacy/en_ewt_test__ewt-span-minilm-word.json

Needs matplotlib (``pip install 'spandep[bench]'``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PANELS = (("by_sentence_length", "sentence length (words)"), ("by_dependency_length", "dependency length (|head − dependent|)"),
          ("by_span_length", "length of the dependent's subtree span"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("systems", nargs="+", help="LABEL=evaluate.json")
    ap.add_argument("--out", required=True)
    ap.add_argument("--metric", default="las", choices=("uas", "las"))
    args = ap.parse_args()
    reports = [(label, json.loads(Path(path).read_text(encoding="utf-8"))) for label, path in (s.split("=", 1) for s in args.systems)]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for ax, (key, title) in zip(axes, PANELS):
        bins = [b["bin"] for b in reports[0][1][key]]
        for label, report in reports:
            rows = {b["bin"]: b for b in report[key]}
            ax.plot(range(len(bins)), [rows[b][args.metric] for b in bins], marker="o", label=label)
        words = [rows[b]["words"] for b in bins]
        ax.set_xticks(range(len(bins)), [f"{b}\n({w:,})" for b, w in zip(bins, words)], fontsize=7)
        ax.set_xlabel(f"{title}\n(words in each bin in brackets)")
        ax.set_ylabel(f"{args.metric.upper()} (%)")
        ax.grid(alpha=0.3)
    axes[0].legend()
    fig.suptitle(f"{args.metric.upper()} by length, {reports[0][1].get('gold_source', '')}".strip(", "), fontsize=10)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
