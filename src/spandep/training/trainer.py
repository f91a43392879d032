"""The training loop: token-budget batches, AdamW with warm-up and linear decay, dev selection, resumable.

Layout of an output folder::

    output/model/        best model so far (chosen on dev), loadable with ``spandep parse --model``
    output/checkpoint/   resumable state (see ``checkpoint.py``)
    output/config.json   the resolved training config
    output/train.log     one line per epoch (also printed)
    output/train.lock    held while a process trains into the folder (one writer at a time)
"""

from __future__ import annotations

import json
import logging
import math
import random
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from spandep.data.batching import token_batches
from spandep.data.conllu import check_trees, read_conllu
from spandep.data.sentence import Sentence
from spandep.encoders.base import batch_cost
from spandep.evaluation.metrics import evaluate
from spandep.inference import InferenceOptions
from spandep.models import Parser, build_model, config_from_data
from spandep.pipeline.model_io import resolve_device, save_model
from spandep.pipeline.predict import with_tree
from spandep.training.checkpoint import load_checkpoint, run_lock, save_checkpoint

log = logging.getLogger("spandep.train")


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def read_treebank(path: str, fmt: str, limit: int = 0) -> list[Sentence]:
    """All sentences of a training or dev file, checked to be trees."""
    sentences = list(check_trees(read_conllu(path, fmt)))
    return sentences[:limit] if limit else sentences


def build_optimizer(model: Parser, cfg: dict[str, Any]) -> torch.optim.AdamW:
    """Two parameter groups: pretrained weights (the parser's ``pretrained_parameters``) at ``encoder_lr``,
    everything else at ``lr``."""
    tr = cfg["training"]
    pre_ids = {id(p) for p in model.pretrained_parameters()}
    groups = [
        {"params": [p for p in model.parameters() if id(p) in pre_ids and p.requires_grad], "lr": tr["encoder_lr"], "base_lr": tr["encoder_lr"]},
        {"params": [p for p in model.parameters() if id(p) not in pre_ids and p.requires_grad], "lr": tr["lr"], "base_lr": tr["lr"]},
    ]
    groups = [g for g in groups if g["params"]]
    return torch.optim.AdamW(groups, betas=tuple(tr["betas"]), weight_decay=tr["weight_decay"], foreach=True)


def lr_factor(step: int, total: int, warmup: float) -> float:
    """Linear warm-up over ``warmup`` of the real optimiser steps, then linear decay to zero."""
    warm = max(1, int(total * warmup))
    if step < warm:
        return (step + 1) / warm
    return max(0.0, (total - step) / max(1, total - warm))


class Trainer:
    """Trains one model from a resolved config; ``run()`` resumes automatically from the output folder."""

    def __init__(self, cfg: dict[str, Any]) -> None:
        self.cfg = cfg
        tr = cfg["training"]
        self.out = Path(tr["output"])
        if tr["threads"]:
            torch.set_num_threads(tr["threads"])
        seed_everything(tr["seed"])
        data = cfg["data"]
        self.train = read_treebank(data["train"], data["format"], data["max_train_sentences"])
        self.dev = read_treebank(data["dev"], data["format"])
        self.device = resolve_device(tr["device"])
        self.model = build_model(config_from_data(cfg, self.train)).to(self.device)
        self.train_feats = [self.model.training_features(s) for s in tqdm(self.train, desc="featurise train", leave=False)]
        self.lengths = [batch_cost(f) for f in self.train_feats]
        self.batches_per_epoch = len(token_batches(self.lengths, tr["batch_tokens"]))
        self.total_steps = self.batches_per_epoch * tr["epochs"]
        self.optimizer = build_optimizer(self.model, cfg)

    def _batch(self, idx: list[int]) -> dict[str, Any]:
        """The training batch of the sentences ``idx``."""
        return self.model.training_batch([self.train_feats[i] for i in idx], self.device)

    def evaluate_dev(self) -> dict[str, float]:
        parses = self.model.parse(self.dev, InferenceOptions(batch_tokens=self.cfg["training"]["eval_batch_tokens"]))
        pred = [with_tree(s, p) for s, p in zip(self.dev, parses)]
        r = evaluate(self.dev, pred)
        return {"UAS": r.uas or 0.0, "LAS": r.las or 0.0, "UAS_nopunct": r.uas_no_punct or 0.0, "LAS_nopunct": r.las_no_punct or 0.0}

    def run(self) -> dict[str, Any]:
        """Train to the end (resuming from the output folder's checkpoint); one process per output folder."""
        self.out.mkdir(parents=True, exist_ok=True)
        with run_lock(self.out):
            return self._train()

    def _train(self) -> dict[str, Any]:
        tr = self.cfg["training"]
        (self.out / "config.json").write_text(json.dumps(self.cfg, indent=2) + "\n", encoding="utf-8")
        ckpt_dir = self.out / "checkpoint"
        state = load_checkpoint(ckpt_dir, self.model, self.optimizer) or {
            "step": 0, "epoch": 0, "batch": 0, "best": None, "bad_epochs": 0, "history": [], "train_seconds": 0.0,
        }
        if state["step"]:
            log.info("resuming from step %d (epoch %d, batch %d)", state["step"], state["epoch"] + 1, state["batch"])
        started = time.time() - state["train_seconds"]
        self.model.train()
        while state["epoch"] < tr["epochs"] and state["bad_epochs"] < tr["patience"]:
            epoch = state["epoch"]
            batches = token_batches(self.lengths, tr["batch_tokens"], shuffle=True, seed=tr["seed"] * 1000 + epoch)
            bar = tqdm(total=len(batches), initial=state["batch"], desc=f"epoch {epoch + 1}/{tr['epochs']}", leave=False)
            running = 0.0
            for b in range(state["batch"], len(batches)):
                loss = self._step(self._batch(batches[b]), state["step"])
                running = 0.98 * running + 0.02 * loss if running else loss
                state["step"] += 1
                state["batch"] = b + 1
                bar.update(1)
                bar.set_postfix(loss=f"{running:.3f}")
                if state["step"] % tr["checkpoint_every"] == 0 and state["batch"] < len(batches):
                    state["train_seconds"] = time.time() - started
                    save_checkpoint(ckpt_dir, self.model, self.optimizer, state)
            bar.close()
            scores = self.evaluate_dev()
            self.model.train()
            key = (scores["LAS_nopunct"], scores["UAS_nopunct"])
            improved = state["best"] is None or key > tuple(state["best"]["key"])
            if improved:
                state["best"] = {"key": list(key), "epoch": epoch + 1, **scores}
                state["bad_epochs"] = 0
                tokenizer = self.cfg["data"]["tokenizer"]
                training = {"config": self.cfg, "epoch": epoch + 1, "dev": scores}
                save_model(self.model, self.out / "model", training, tokenizer=Path(tokenizer) if tokenizer else None)
            else:
                state["bad_epochs"] += 1
            state["train_seconds"] = time.time() - started
            entry = {"epoch": epoch + 1, "step": state["step"], "minutes": round(state["train_seconds"] / 60, 2), "loss": round(running, 4), **scores}
            state["history"].append(entry)
            line = " ".join(f"{k}={v}" for k, v in entry.items()) + (" *best*" if improved else "")
            log.info(line)
            with open(self.out / "train.log", "a", encoding="utf-8") as fh:
                fh.write(line + "\n")
            state["epoch"] += 1
            state["batch"] = 0
            save_checkpoint(ckpt_dir, self.model, self.optimizer, state)
        return state

    def _step(self, batch: dict[str, Any], step: int) -> float:
        tr = self.cfg["training"]
        factor = lr_factor(step, self.total_steps, tr["warmup"])
        for group in self.optimizer.param_groups:
            group["lr"] = group["base_lr"] * factor
        loss = self.model.loss(batch)
        if not math.isfinite(loss.item()):
            raise FloatingPointError(f"loss became {loss.item()} at step {step}; lower [training] lr or encoder_lr")
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), tr["clip"])
        self.optimizer.step()
        return loss.item()
