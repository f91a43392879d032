"""What a training step costs with a LoRA adapter against full fine-tuning, and what each ships.

For each base encoder (all-mpnet-base-v2, all-MiniLM-L6-v2) and each way of training it, the accurate recipe's span
parser with its four annotation heads (``configs/ewt-span-mpnet-lora.toml``, its encoder swapped) is built on EWT
train (vocabularies and label sets from all of it) and timed with one torch thread on one fixed batch: the middle one
of train's length-bucketed batches of ``[training] batch_tokens`` padded word pieces.

- ``full``: every pretrained weight but the word-piece embeddings trains (at ``encoder_lr``), as in run 4;
- ``lora``: every pretrained weight frozen, LoRA (the recipe's r, alpha, dropout) on each linear layer of the
  transformer layers (``TARGETS``; not the pooler, whose output the encoder never reads).

Per variant: ``step_s``, seconds per training step (forward, backward, clipping, AdamW: the trainer's own step),
the median of ``--steps`` after one warm-up; ``parse_s``, the model parsing that batch's sentences in eval mode,
median of ``--steps`` after one warm-up (with an adapter: ``unmerged`` and ``merged`` into the base weights, and
whether the two parses are the same); trainable parameters; the compact export's size (float16; what
``spandep export`` writes, the raw-text tokenizer included) and the compact int8 export's.

    PYTHONPATH=src:. OMP_NUM_THREADS=1 python -m benchmarks.scripts.adapter_step_cost --ewt ../shared/data/en_ewt

writes ``benchmarks/results/adapters/step_cost.json`` (docs/design.md, "Adapters").
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from benchmarks.suite.record import checkout, machine, write_json
from benchmarks.suite.systems import DATA, REPO
from spandep.data.batching import token_batches
from spandep.storage.model_io import save_model
from spandep.training.config import load_config
from spandep.training.trainer import Trainer

TARGETS = {  # each base's linear layers in its transformer layers (attention and feed-forward)
    "all-mpnet-base-v2": ["q", "k", "v", "o", "intermediate.dense", "output.dense"],
    "all-MiniLM-L6-v2": ["query", "key", "value", "output.dense", "intermediate.dense"],
}
OUT = REPO / "benchmarks" / "results" / "adapters" / "step_cost.json"


def median_seconds(run: Callable[[], Any], times: int) -> float:
    """The median wall-clock seconds of ``times`` calls of ``run`` after one warm-up call."""
    run()
    seconds = []
    for _ in range(times):
        start = time.perf_counter()
        run()
        seconds.append(time.perf_counter() - start)
    return round(statistics.median(seconds), 3)


def folder_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def measure(config: Path, ewt: Path, base: str, adapter: bool, steps: int, scratch: Path) -> dict[str, Any]:
    """One variant's step and parse times, trainable parameters and export sizes."""
    cfg = load_config(config, overrides={
        "data": {"train": str(ewt / "en_ewt-ud-train.conllu"), "dev": str(ewt / "en_ewt-ud-dev.conllu")},
        "training": {"output": str(scratch / "run"), "threads": 1},
    })
    cfg["encoder"]["model"] = base
    cfg["encoder"]["adapter"] = {**cfg["encoder"]["adapter"], "targets": TARGETS[base]} if adapter else None
    trainer = Trainer(cfg)
    model = trainer.model
    chosen = token_batches(trainer.lengths, cfg["training"]["batch_tokens"])
    chosen = chosen[len(chosen) // 2]
    batch = trainer._batch(chosen)
    sentences = [trainer.train[i] for i in chosen]
    model.train()
    result: dict[str, Any] = {
        "base": base, "training": "lora" if adapter else "full", "adapter": cfg["encoder"]["adapter"],
        "batch_sentences": len(chosen), "batch_padded_pieces": len(chosen) * max(trainer.lengths[i] for i in chosen),
        "trainable_parameters": sum(p.numel() for p in model.parameters() if p.requires_grad),
        "step_s": median_seconds(lambda: trainer._step(batch, trainer.total_steps // 2), steps),
    }
    model.eval()
    tokenizer = Path(cfg["data"]["tokenizer"])
    for name, int8 in (("compact", None), ("compact_int8", "encoder")):
        save_model(model, scratch / name, compact=True, int8=int8, tokenizer=tokenizer)
        result[f"{name}_bytes"] = folder_bytes(scratch / name)
    result["tokenizer_bytes"] = folder_bytes(tokenizer)
    parse_s = median_seconds(lambda: model.parse(sentences), steps)
    if adapter:
        unmerged = [p.heads for p in model.parse(sentences)]
        model.encoder.merge_adapter()
        merged = [p.heads for p in model.parse(sentences)]
        result["parse_s"] = {"unmerged": parse_s, "merged": median_seconds(lambda: model.parse(sentences), steps)}
        result["merged_parse_same"] = unmerged == merged
    else:
        result["parse_s"] = parse_s
    print(json.dumps(result), flush=True)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", type=Path, default=REPO / "configs" / "ewt-span-mpnet-lora.toml")
    ap.add_argument("--ewt", type=Path, default=DATA / "en_ewt", help="Folder of en_ewt-ud-{train,dev}.conllu.")
    ap.add_argument("--bases", nargs="+", default=list(TARGETS), choices=list(TARGETS))
    ap.add_argument("--steps", type=int, default=3, help="Timed calls per figure, after one warm-up.")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    torch.set_num_threads(1)
    runs = []
    for base in args.bases:
        for adapter in (False, True):
            with tempfile.TemporaryDirectory() as scratch:
                torch.manual_seed(1)
                runs.append(measure(args.config, args.ewt, base, adapter, args.steps, Path(scratch)))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "schema": "spandep-adapter-step-cost/1",
        "command": "PYTHONPATH=src:. OMP_NUM_THREADS=1 python -m benchmarks.scripts.adapter_step_cost " + " ".join(sys.argv[1:]),
        **checkout(), "machine": machine(), "torch": torch.__version__, "torch_threads": 1,
        "date": time.strftime("%Y-%m-%d"), "runs": runs,
    }
    write_json(args.out, record, indent=1)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
