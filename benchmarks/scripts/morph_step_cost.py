"""What issue 45's morphology heads add to a training step: each config's model built on its training data and
timed with one torch thread on the same fixed batch (the middle one of train's length-bucketed batches), the
configs' steps alternating round by round so that they share the machine's load.

    PYTHONPATH=src:. OMP_NUM_THREADS=1 python -m benchmarks.scripts.morph_step_cost configs/morph/cs_cltt-base.toml configs/morph/cs_cltt-morph.toml

writes ``benchmarks/results/morph/step_cost.json``: per config the seconds of each timed step (forward, backward,
clipping, AdamW: the trainer's own ``_step``), wall-clock and this process's CPU time, their medians, and each
config's median over the first one's (BENCHMARKS.md, "Morphology heads on dev").
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone

import torch

from benchmarks.suite.record import checkout, machine, portable_path, write_json
from benchmarks.suite.systems import REPO
from spandep.data.batching import token_batches
from spandep.training.config import load_config
from spandep.training.trainer import Trainer

OUT = REPO / "benchmarks" / "results" / "morph" / "step_cost.json"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("configs", nargs="+", help="training configs; the first is the one the others are compared with")
    ap.add_argument("--rounds", type=int, default=5, help="timed steps of each config, after one warm-up each")
    args = ap.parse_args()
    torch.set_num_threads(1)
    trainers = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i, config in enumerate(args.configs):
            trainers[config] = Trainer(load_config(config, {"training": {"output": f"{tmp}/{i}", "threads": 1}}))
    first = next(iter(trainers.values()))
    batches = sorted(token_batches(first.lengths, first.cfg["training"]["batch_tokens"]), key=lambda b: sum(first.lengths[i] for i in b))
    middle = batches[len(batches) // 2]
    runs: dict[str, dict[str, list[float]]] = {c: {"wall": [], "cpu": []} for c in trainers}
    for round_ in range(args.rounds + 1):
        for config, trainer in trainers.items():
            batch = trainer._batch(middle)
            wall, cpu = time.perf_counter(), time.process_time()
            trainer._step(batch, 1)
            if round_:  # the first round warms up
                runs[config]["wall"].append(round(time.perf_counter() - wall, 3))
                runs[config]["cpu"].append(round(time.process_time() - cpu, 3))
    medians = {c: {clock: statistics.median(s) for clock, s in r.items()} for c, r in runs.items()}
    base = medians[args.configs[0]]
    write_json(OUT, {
        "schema": "spandep-morph-step-cost/1", "batch_sentences": len(middle), "batch_pieces": sum(first.lengths[i] for i in middle),
        "configs": {portable_path(c): {"seconds": runs[c], "median": medians[c],
                                       "over_first": {k: round(medians[c][k] / base[k], 3) for k in base}} for c in trainers},
        "command": "PYTHONPATH=src:. OMP_NUM_THREADS=1 python -m benchmarks.scripts.morph_step_cost " + " ".join(sys.argv[1:]),
        "machine": machine(), "torch": torch.__version__, **checkout(), "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    })
    print(OUT, {portable_path(c): m for c, m in medians.items()})


if __name__ == "__main__":
    main()
