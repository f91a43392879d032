"""The span parser's gain over the Biaffine parser (test, no punctuation) against the size of each treebank's
training split, from the suite's result files, drawn as one PNG and printed as a table.

    .venv/bin/python -m benchmarks.scripts.plot_gain --out docs/span_gain_by_treebank.png \\
        en_ewt:biaffine-minilm:span-minilm-word-dp cs_cltt:biaffine-e5:span-e5-dp it_partut:biaffine-e5:span-e5-dp

Each argument is DATASET:BIAFFINE_SYSTEM:SPAN_SYSTEM (benchmarks/results/<dataset>__<system>.json must exist for
both). Needs matplotlib (``pip install 'spandep[bench]'``).
"""

from __future__ import annotations

import argparse
import json

import matplotlib

from benchmarks.suite.systems import REPO, RESULTS
from spandep.training.config import load_config
from spandep.training.trainer import read_treebank

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def train_sentences(config: str) -> int:
    """How many training sentences the run read: its config's train file, cut to ``max_train_sentences``."""
    data = load_config(REPO / config)["data"]
    return len(read_treebank(data["train"], data["format"], data["max_train_sentences"]))


def gains(pairs: list[str]) -> list[dict[str, object]]:
    """Per pair: dataset, training sentences, both systems' scores and the span − Biaffine differences."""
    rows = []
    for pair in pairs:
        dataset, biaffine, span = pair.split(":")
        b, s = (json.loads((RESULTS / f"{dataset}__{name}.json").read_text()) for name in (biaffine, span))
        rows.append({
            "dataset": dataset, "encoder": s["encoder"], "train_sentences": train_sentences(s["config"]),
            "biaffine": (b["UAS_nopunct"], b["LAS_nopunct"]), "span": (s["UAS_nopunct"], s["LAS_nopunct"]),
            "gain_uas": s["UAS_nopunct"] - b["UAS_nopunct"],
            "gain_las": s["LAS_nopunct"] - b["LAS_nopunct"] if s.get("labelled", True) else None,  # PTB sample: UAS only
        })
    return sorted(rows, key=lambda r: r["train_sentences"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pairs", nargs="+", help="DATASET:BIAFFINE_SYSTEM:SPAN_SYSTEM")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    rows = gains(args.pairs)
    print("| treebank | encoder | training sentences | Biaffine UAS / LAS | span UAS / LAS | gain UAS / LAS |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        las = (f"{r['biaffine'][1]:.2f}", f"{r['span'][1]:.2f}", f"{r['gain_las']:+.2f}") if r["gain_las"] is not None else ("–",) * 3
        print(f"| {r['dataset']} | {r['encoder']} | {r['train_sentences']:,} | {r['biaffine'][0]:.2f} / {las[0]} | "
              f"{r['span'][0]:.2f} / {las[1]} | {r['gain_uas']:+.2f} / {las[2]} |")
    fig, ax = plt.subplots(figsize=(8, 4.5))
    markers = {encoder: "os^D"[i % 4] for i, encoder in enumerate(sorted({r["encoder"] for r in rows}))}
    for key, label, colour in (("gain_uas", "UAS", "tab:blue"), ("gain_las", "LAS", "tab:orange")):
        for encoder, marker in markers.items():
            points = [r for r in rows if r["encoder"] == encoder and r[key] is not None]
            ax.plot([r["train_sentences"] for r in points], [r[key] for r in points], marker=marker, color=colour,
                    linestyle="none", label=f"{label}, {encoder}")
    for r in rows:
        ax.annotate(r["dataset"], (r["train_sentences"], r["gain_uas"]), textcoords="offset points",  # marker: encoder
                    xytext=(4, 4), fontsize=7)
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("training sentences (log scale)")
    ax.set_ylabel("span parser − Biaffine parser (points, test, no punct)")
    ax.set_title("Span parser's gain over the Biaffine parser, same encoder", fontsize=10)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
