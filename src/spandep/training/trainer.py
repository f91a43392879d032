"""The training loop: token-budget batches, AdamW with warm-up and linear decay, dev selection, resumable.

Layout of an output folder::

    output/model/        best model so far (chosen on dev), loadable with ``spandep parse --model``
    output/checkpoint/   resumable state (see ``checkpoint.py``)
    output/config.json   the resolved training config
    output/train.log     one line per epoch (also printed)
    output/train.lock    held while a process trains into the folder (one writer at a time)

Several treebanks (``[data] treebanks``, ``training/treebanks.py``): one model over all of them, mixed batches,
each treebank's dev figures per epoch and the best epoch chosen on their macro average.

The best epoch (``[training] select``): the one with the best dev LAS without punctuation (``"las"``, then UAS), or
with the best sum of that LAS and the CoNLL 2018 MLAS of dev parsed with every column but FORM predicted
(``"las+mlas"``, issue 45: the heads often peak at other epochs than the trees; UFeats, Lemmas and MLAS are then
logged each epoch). docs/heads.md, "Morphology heads".
"""

from __future__ import annotations

import contextlib
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
from spandep.data.udv1 import to_v2
from spandep.encoders.base import batch_cost
from spandep.errors import OptionError
from spandep.evaluation.conll18 import evaluate_conll18
from spandep.evaluation.metrics import evaluate
from spandep.options import InferenceOptions
from spandep.models import Parser, build_model, config_from_data
from spandep.storage.model_io import resolve_device, save_model
from spandep.pipeline.predict import with_tree
from spandep.training.averaging import WeightAverage
from spandep.training.checkpoint import changed_settings, has_checkpoint, load_checkpoint, run_lock, save_checkpoint
from spandep.training.config import check_resources
from spandep.training.init import initialise, source_classes
from spandep.training.treebanks import epoch_sentences, macro_scores, treebank_files

log = logging.getLogger("spandep.train")
MORPHOLOGY = ("UPOS", "UFeats", "Lemmas", "MLAS")  # CoNLL 2018 figures logged under [training] select = "las+mlas"
FORM_ONLY = ("lemma", "upos", "xpos", "feats", "deps")  # the columns blanked for those: the heads predict them all


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def read_treebank(path: str, fmt: str, limit: int = 0, ud_version: int = 2) -> list[Sentence]:
    """All sentences of a training or dev file, checked to be trees; a UD v1 file's with v2 relations."""
    sentences = list(check_trees(read_conllu(path, fmt)))
    sentences = [to_v2(s) for s in sentences] if ud_version == 1 else sentences
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
        check_resources(cfg)  # a missing encoder folder fails before the data is read
        self.cfg = cfg
        tr = cfg["training"]
        self.out = Path(tr["output"])
        if tr["threads"]:
            torch.set_num_threads(tr["threads"])
        seed_everything(tr["seed"])
        data = cfg["data"]
        self.treebanks = treebank_files(cfg)
        trains = {t.name: read_treebank(t.train, data["format"], data["max_train_sentences"], t.ud_version) for t in self.treebanks}
        chosen = data.get("train_treebanks") or list(trains)  # [data] train_treebanks: the others only give labels and classes
        self.devs = {t.name: read_treebank(t.dev, data["format"], data["max_dev_sentences"], t.ud_version) for t in self.treebanks if t.name in chosen}
        self.train = [s for part in trains.values() for s in part]
        self.device = resolve_device(tr["device"])
        several = trains if self.treebanks[0].name is not None else None
        first = source_classes(tr["init"]) if tr["init"] else None  # the class ids of the model it starts from, resumed too
        self.model = build_model(config_from_data(cfg, self.train, several, first)).to(self.device)  # type: ignore[arg-type]
        resuming = has_checkpoint(self.out / "checkpoint")  # then its weights replace any others: no weights to read
        self.init_note = self._initialise(tr["init"]) if tr["init"] and not resuming else None
        trained = [(name, s) for name, part in trains.items() if name in chosen for s in part]
        self.train_feats = [self.model.training_features(s, name) for name, s in tqdm(trained, desc="featurise train", leave=False)]
        self.lengths = [batch_cost(f) for f in self.train_feats]
        self.sizes = [len(part) for name, part in trains.items() if name in chosen]
        counts = [len(self.epoch_batches(epoch)) for epoch in range(tr["epochs"])]
        self.batches_per_epoch, self.total_steps = counts[0], sum(counts)
        self.optimizer = build_optimizer(self.model, cfg)
        self.average = WeightAverage(self.model, tr["ema"]) if tr["ema"] else None

    def epoch_batches(self, epoch: int) -> list[list[int]]:
        """The batches of an epoch (training sentence indices): all sentences, or with ``[data] sampling_exponent``
        each treebank's share (``training/treebanks.py``), length-bucketed and shuffled by the epoch's seed."""
        tr, seed = self.cfg["training"], self.cfg["training"]["seed"] * 1000 + epoch
        exponent, cap = self.cfg["data"].get("sampling_exponent", 1.0), self.cfg["data"].get("treebank_cap", 0)
        if exponent == 1.0 and not cap:
            return token_batches(self.lengths, tr["batch_tokens"], shuffle=True, seed=seed)
        chosen = epoch_sentences(self.sizes, exponent, seed, cap)
        batches = token_batches([self.lengths[i] for i in chosen], tr["batch_tokens"], shuffle=True, seed=seed)
        return [[chosen[j] for j in batch] for batch in batches]

    def _batch(self, idx: list[int]) -> dict[str, Any]:
        """The training batch of the sentences ``idx``."""
        return self.model.training_batch([self.train_feats[i] for i in idx], self.device)

    def evaluate_dev(self) -> dict[str, float]:
        """The dev figures (``METRICS``); for several treebanks their macro averages, then each one's."""
        scores = {name: self._dev_scores(name, dev) for name, dev in self.devs.items()}
        return scores[None] if None in scores else macro_scores(scores)  # type: ignore[arg-type]

    def _dev_scores(self, treebank: str | None, dev: list[Sentence]) -> dict[str, float]:
        parses = self.model.parse(dev, InferenceOptions(batch_tokens=self.cfg["training"]["eval_batch_tokens"], treebank=treebank))
        pred = [with_tree(s, p) for s, p in zip(dev, parses)]
        r = evaluate(dev, pred)
        scores = {"UAS": r.uas or 0.0, "LAS": r.las or 0.0, "UAS_nopunct": r.uas_no_punct or 0.0, "LAS_nopunct": r.las_no_punct or 0.0}
        if self.cfg["training"]["select"] == "las":
            return scores
        annotated = [with_tree(s.blanked(FORM_ONLY), p) for s, p in zip(dev, parses)]  # as parsed from its forms alone
        full = evaluate_conll18(dev, annotated, gold_source="dev", system_source="<dev parse>")
        figures = dict(full.metrics())
        return scores | {m: figures[m].f1 for m in MORPHOLOGY}

    def _key(self, scores: dict[str, float]) -> tuple[float, float]:
        """What the best epoch maximises (``[training] select``)."""
        first = scores["LAS_nopunct"] + (scores["MLAS"] if self.cfg["training"]["select"] == "las+mlas" else 0.0)
        return first, scores["UAS_nopunct"]

    def run(self) -> dict[str, Any]:
        """Train to the end (resuming from the output folder's checkpoint); one process per output folder."""
        self.out.mkdir(parents=True, exist_ok=True)
        with run_lock(self.out):
            return self._train()

    def _train(self) -> dict[str, Any]:
        tr = self.cfg["training"]
        ckpt_dir = self.out / "checkpoint"
        self._check_resumable(ckpt_dir)
        (self.out / "config.json").write_text(json.dumps(self.cfg, indent=2) + "\n", encoding="utf-8")
        extra: dict[str, torch.Tensor] = {}
        state = load_checkpoint(ckpt_dir, self.model, self.optimizer, extra) or {
            "step": 0, "epoch": 0, "batch": 0, "best": None, "bad_epochs": 0, "history": [], "train_seconds": 0.0,
        }
        if self.init_note:
            self._log(self.init_note)
        if state["step"]:
            if self.average:
                self.average.load(extra)
            log.info("resuming from step %d (epoch %d, batch %d)", state["step"], state["epoch"] + 1, state["batch"])
        elif len(self.devs) > 1:
            self._log(f"dev: {len(self.devs)} treebanks ({', '.join(map(str, self.devs))}); UAS, LAS and their _nopunct are "
                      "macro averages over them, and the best epoch is the one with the best macro-average LAS_nopunct")
        started = time.time() - state["train_seconds"]
        self.model.train()
        while state["epoch"] < tr["epochs"] and state["bad_epochs"] < tr["patience"]:
            epoch = state["epoch"]
            batches = self.epoch_batches(epoch)
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
                    save_checkpoint(ckpt_dir, self.model, self.optimizer, state, self._extra())
            bar.close()
            with self.average.applied() if self.average else contextlib.nullcontext():
                self._end_epoch(epoch, state, running, started)
            self.model.train()
            state["epoch"] += 1
            state["batch"] = 0
            save_checkpoint(ckpt_dir, self.model, self.optimizer, state, self._extra())
        return state

    def _initialise(self, folder: str) -> str:
        """The model's weights copied from the trained model in ``folder`` (``[training] init``, training/init.py);
        the log line that says so."""
        notes = initialise(self.model, folder, self.cfg["encoder"])
        fresh, classes = notes["fresh"], notes["classes"]
        return (
            f"weights from {folder}"
            + (f"; heads with other classes, each known class's row kept: {', '.join(classes)}" if classes else "")
            + (f"; heads trained from fresh weights: {', '.join(fresh)}" if fresh else "" if classes else "; every head too")
        )

    def _extra(self) -> dict[str, torch.Tensor]:
        """The checkpoint's tensors beyond the model and the optimiser: the weight averages, if any."""
        return self.average.tensors() if self.average else {}

    def _end_epoch(self, epoch: int, state: dict[str, Any], running: float, started: float) -> None:
        """Score dev with the model's weights as they are (the averages under ``[training] ema``), save the model
        if it is the best so far, log the epoch."""
        scores = self.evaluate_dev()
        key = self._key(scores)
        improved = state["best"] is None or key > tuple(state["best"]["key"])
        if improved:
            state["best"] = {"key": list(key), "epoch": epoch + 1, **scores}
            state["bad_epochs"] = 0
            training = {"config": self.cfg, "epoch": epoch + 1, "dev": scores}
            tokenizer = self.cfg["data"]["tokenizer"]
            own = {t.name: Path(t.tokenizer) for t in self.treebanks if t.name is not None and t.tokenizer}  # several treebanks' own
            save_model(self.model, self.out / "model", training, tokenizer=Path(tokenizer) if tokenizer else None, treebank_tokenizers=own)
        else:
            state["bad_epochs"] += 1
        state["train_seconds"] = time.time() - started
        entry = {"epoch": epoch + 1, "step": state["step"], "minutes": round(state["train_seconds"] / 60, 2), "loss": round(running, 4), **scores}
        state["history"].append(entry)
        self._log(" ".join(f"{k}={v}" for k, v in entry.items()) + (" *best*" if improved else ""))

    def _check_resumable(self, ckpt_dir: Path) -> None:
        """A run resumed under other settings than it was started with (``checkpoint.RESUMABLE`` says which may
        change, such as ``epochs``) fails with the list of them, before anything in the folder is touched."""
        saved = self.out / "config.json"
        if not has_checkpoint(ckpt_dir) or not saved.is_file():
            return
        changed = changed_settings(json.loads(saved.read_text(encoding="utf-8")), json.loads(json.dumps(self.cfg)))
        if changed:
            raise OptionError(
                f"{self.out} holds a run started with other settings ({'; '.join(changed)}): it resumes only under the "
                f"same ones; restore them, or train into another [training] output (or remove {ckpt_dir} to start over)"
            )

    def _log(self, line: str) -> None:
        """``line`` to the log and to ``train.log``."""
        log.info(line)
        with open(self.out / "train.log", "a", encoding="utf-8") as fh:
            fh.write(line + "\n")

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
        if self.average:
            self.average.update(step + 1)
        return loss.item()
