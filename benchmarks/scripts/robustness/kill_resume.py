"""kill -9 a training run at random moments, resume it, and check it ends with the same weights as an
uninterrupted run with the same seed (the in-process version is tests/test_training.py).

Writes a tiny config (word + char BiLSTM encoder, Biaffine or span model) over the first N sentences of EWT
train, runs ``spandep train`` once without interruption (A), then again in a fresh folder (B) that is killed
with SIGKILL ``--kills`` times (each time once it has written a new checkpoint, at a random moment up to one
checkpoint interval later, so kills land mid-step, mid-evaluation or mid-write) and restarted with the same
command until it finishes. After each kill it checks the checkpoint folder (``latest.json`` names a complete, loadable
checkpoint; no stray temporary files besides the one being written). At the end it compares every tensor of
A/model and B/model, and the dev scores of their train.log. Prints one JSON report (``--out`` writes it too).

    .venv/bin/python benchmarks/scripts/robustness/kill_resume.py --sentences 400 --epochs 3 --kills 3
    .venv/bin/python benchmarks/scripts/robustness/kill_resume.py --model span --sentences 400 --epochs 3 --kills 3

Nothing is written into the repository: the runs go to a temporary folder (kept with ``--work DIR``).
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
from safetensors.torch import load_file

EWT = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "en_ewt"
SPANDEP = [sys.executable, "-m", "spandep.cli.main"]
MODELS = {
    "biaffine": 'type = "biaffine"\narc_mlp = 64\nrel_mlp = 32\n',
    "span": 'type = "span"\nspan_mlp = 64\nquery_rate = 0.7\nnoisy_rate = 0.3\n'
    'linker = { format = "late", dim = 32, layers = 1, heads = 2, ff = 64, mlp = 32, label_mlp = 16 }\n',
}


def write_config(path: Path, model: str, sentences: int, epochs: int, seed: int, every: int) -> Path:
    path.write_text(
        f'[data]\ntrain = "{EWT / "en_ewt-ud-train.conllu"}"\ndev = "{EWT / "en_ewt-ud-dev.conllu"}"\n'
        f"max_train_sentences = {sentences}\n\n"
        '[encoder]\ntype = "bilstm"\nword_dim = 32\nchar_dim = 16\nchar_out = 32\nhidden = 64\nlayers = 1\nmin_freq = 1\n\n'
        f"[model]\n{MODELS[model]}\n"
        f"[training]\nepochs = {epochs}\nbatch_tokens = 500\nlr = 2e-3\nseed = {seed}\ncheckpoint_every = {every}\n"
        "patience = 99\nthreads = 1\neval_batch_tokens = 4000\n",
        encoding="utf-8",
    )
    return path


def train(config: Path, output: Path) -> subprocess.Popen:
    return subprocess.Popen([*SPANDEP, "train", str(config), "--output", str(output)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def checkpoint_state(folder: Path) -> dict:
    """What a kill left in ``folder/checkpoint``: the step ``latest.json`` names, and whether its files load."""
    ckpt = folder / "checkpoint"
    latest = ckpt / "latest.json"
    if not latest.is_file():
        return {"step": None, "complete": True, "stray": sorted(p.name for p in ckpt.glob(".*"))}
    name = json.loads(latest.read_text())["name"]
    try:
        json.loads((ckpt / f"{name}.json").read_text())
        load_file(str(ckpt / f"{name}.safetensors"))
        complete = True
    except (OSError, ValueError) as exc:
        complete = f"{type(exc).__name__}: {exc}"
    return {"step": int(name.split("-")[1]), "complete": complete, "stray": sorted(p.name for p in ckpt.glob(".*"))}


def dev_scores(folder: Path) -> list[str]:
    """The dev-score part of each train.log line (time and loss fields differ between runs)."""
    lines = (folder / "train.log").read_text().splitlines()
    return [" ".join(f for f in line.split() if f.split("=")[0] in ("epoch", "step", "UAS", "LAS", "UAS_nopunct", "LAS_nopunct")) for line in lines]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=sorted(MODELS), default="biaffine")
    ap.add_argument("--sentences", type=int, default=400, help="EWT train sentences")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--checkpoint-every", type=int, default=5)
    ap.add_argument("--kills", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1, help="training seed and seed of the kill moments")
    ap.add_argument("--work", help="folder for the runs (default: a temporary one, removed)")
    ap.add_argument("--out", help="also write the JSON report here")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.work or tmp)
        work.mkdir(parents=True, exist_ok=True)
        config = write_config(work / "tiny.toml", args.model, args.sentences, args.epochs, args.seed, args.checkpoint_every)

        started = time.monotonic()
        if train(config, work / "A").wait() != 0:
            sys.exit("the uninterrupted run failed")
        straight = time.monotonic() - started

        steps = checkpoint_state(work / "A")["step"]
        between = straight / steps * args.checkpoint_every  # rough seconds between two checkpoints
        rng = random.Random(args.seed)
        kills = []
        for _ in range(args.kills):
            # kill mid-run: once the run has written a checkpoint past the last one, at a random moment after it
            before = checkpoint_state(work / "B")["step"] or 0
            proc = train(config, work / "B")
            while proc.poll() is None and (checkpoint_state(work / "B")["step"] or 0) <= before:
                time.sleep(0.02)
            time.sleep(rng.uniform(0, between))
            if proc.poll() is not None:
                kills.append({"killed": False, "note": "finished before the kill"})
                break
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            kills.append({"killed": True, **checkpoint_state(work / "B")})
        restarts = 0
        while (code := train(config, work / "B").wait()) != 0 or not (work / "B" / "model").is_dir():
            restarts += 1
            if restarts > 3:
                sys.exit(f"resuming failed (exit {code})")

        a, b = load_file(str(work / "A" / "model" / "model.safetensors")), load_file(str(work / "B" / "model" / "model.safetensors"))
        differing = sorted(k for k in a.keys() | b.keys() if k not in a or k not in b or not torch.equal(a[k], b[k]))
        report = {
            "model": args.model,
            "train_sentences": args.sentences,
            "epochs": args.epochs,
            "checkpoint_every": args.checkpoint_every,
            "uninterrupted_seconds": round(straight, 1),
            "kills": kills,
            "final_step": checkpoint_state(work / "B")["step"],
            "tensors": len(a),
            "differing_tensors": differing,
            "same_weights": not differing,
            "same_dev_scores": dev_scores(work / "A") == dev_scores(work / "B"),
            "train_log_lines": [len(dev_scores(work / "A")), len(dev_scores(work / "B"))],
        }
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    sys.exit(0 if report["same_weights"] and all(k.get("complete", True) is True for k in kills) else 1)


if __name__ == "__main__":
    main()
