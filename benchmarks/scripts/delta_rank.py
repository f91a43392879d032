"""How far a treebank's fine-tune moved from the pool, matrix by matrix: could its cut be stored as a small delta?

    python -m benchmarks.scripts.delta_rank runs/cuts/et_ewt_pool runs/cuts/et_ewt --out benchmarks/results/multilingual/finetune/delta_rank__et_ewt.json

``BEFORE`` and ``AFTER`` are two cuts of one treebank with the same tensors (``spandep export MODEL OUT --treebank T``
of the pool folder, and of the pool fine-tuned for T). For every matrix of both (int8 rows read back), the delta
``AFTER − BEFORE``: its norm relative to ``BEFORE``'s, and the rank that keeps 90 % and 99 % of its energy (squared
singular values) against its full rank. A delta of low rank would store in a few rows per matrix; one near full rank
would not. Summed by part (the adapter, the parser, each head).
"""

from __future__ import annotations

import argparse
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file

from benchmarks.suite.record import checkout, machine, portable_path, write_json
from spandep.quantised import loaded

MIN_SIDE = 16  # matrices narrower than this are left out (embeddings of a few rows, biases)


def delta_ranks(before: Path, after: Path) -> dict[str, dict[str, Any]]:
    """Per matrix of both folders' ``model.safetensors``: shape, relative delta norm, ranks at 90 % / 99 % energy."""
    a = loaded(load_file(str(before / "model.safetensors")))
    b = loaded(load_file(str(after / "model.safetensors")))
    if a.keys() != b.keys():
        raise SystemExit(f"delta_rank: {portable_path(before)} and {portable_path(after)} hold other tensors: cut both to one treebank")
    rows = {}
    for name in sorted(b):
        x, y = a[name].float(), b[name].float()
        if x.dim() < 2 or min(x.shape[-2:]) < MIN_SIDE or x.shape != y.shape:
            continue
        d = (y - x).reshape(-1, x.shape[-1])  # (rows, cols)
        energy = torch.linalg.svdvals(d).pow(2).cumsum(0)  # (rank,)
        energy = energy / energy[-1].clamp(min=1e-30)
        rows[name] = {
            "shape": list(x.shape), "relative_norm": round(float((y - x).norm() / x.norm().clamp(min=1e-30)), 4),
            "rank_90": int((energy < 0.9).sum()) + 1, "rank_99": int((energy < 0.99).sum()) + 1, "full_rank": int(min(d.shape)),
        }
    return rows


def by_part(rows: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The matrices grouped by part (``encoder``, ``scorer``, ``heads.NAME``): count, the mean share of full rank that
    keeps 90 % of a delta's energy, the mean relative norm."""
    parts: dict[str, list[dict[str, Any]]] = {}
    for name, row in rows.items():
        first, second = name.split(".")[:2]
        parts.setdefault(f"{first}.{second}" if first == "heads" else first, []).append(row)
    return {
        part: {
            "matrices": len(members),
            "rank_90_share": round(sum(r["rank_90"] / r["full_rank"] for r in members) / len(members), 3),
            "relative_norm": round(sum(r["relative_norm"] for r in members) / len(members), 4),
        }
        for part, members in sorted(parts.items())
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    rows = delta_ranks(args.before, args.after)
    parts = by_part(rows)
    for part, row in parts.items():
        print(part, row)
    write_json(args.out, {
        "schema": "spandep-delta-rank/1", "before": portable_path(args.before), "after": portable_path(args.after),
        "parts": parts, "matrices": rows,
        "command": f"python -m benchmarks.scripts.delta_rank {portable_path(args.before)} {portable_path(args.after)} --out {portable_path(args.out)}",
        "machine": machine(), "torch": torch.__version__, **checkout(), "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    })
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
