"""Heads-only fine-tuning of a trained model (issue 45, ``spandep train-heads``): the output heads (UPOS, XPOS,
FEATS, lemma) trained further over the frozen encoder, each head's best epoch chosen on dev by its own score.

Why: the trainer chooses the epoch of the whole model on dev LAS (or LAS + MLAS), and the heads often peak at other
epochs than the trees. Here the encoder and the parser do not train at all: the word vectors the heads read are
computed once per sentence (eval mode, as a parse computes them) and kept on disk, float32, in the output folder
(``cache/``, read through a memory map: memory stays bounded whatever the treebank's size); then each epoch trains
every head with Adam on them and scores each on dev (the share of dev words whose column the model fills as the gold
file has it, the other heads' columns predicted). Epoch 0 is the input's weights, so a head's chosen epoch is never
worse than the input on dev. Each epoch's weights are scored as they will be stored (float16, int8 where the input
stores them so: ``quantised``).

The new model folder is the input's copied, with only the heads' tensors of ``model.safetensors`` replaced (a head
that keeps epoch 0 keeps its stored bytes) and the run's record under ``training.heads_finetune`` of ``config.json``
(an input made by an earlier run keeps that run's record under its ``input``): every other tensor, hence every
tree, is byte for byte the input's. Layout of the output folder::

    output/model/        the model with the chosen heads
    output/checkpoint/   resumable state: heads, Adam moments, each head's best weights so far (``checkpoint.py``)
    output/cache/        the word vectors of train and dev
    output/run.json      the run's settings (a resumed run must keep them, but for ``epochs`` and ``threads``)
    output/train.log     one line per epoch

docs/heads.md, "Heads fine-tuned on a trained model".
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors import safe_open
from safetensors.torch import save_file

from spandep.data.batching import token_batches
from spandep.data.output import cached_array, relative_paths, sibling_folder, usual_permissions
from spandep.data.sentence import Sentence
from spandep.errors import ModelError, OptionError
from spandep.models import Parser
from spandep.models.heads import HEADS, IGNORE
from spandep.models.heads import STATE_PREFIX as PREFIX
from spandep.options import InferenceOptions
from spandep.quantised import ALL_MIN_ELEMENTS, MIN_ELEMENTS, halved, int8_names, loaded, quantize
from spandep.storage.model_io import CURRENT, load_model, read_model_config, write_model_config
from spandep.training.checkpoint import changed_settings, has_checkpoint, load_checkpoint, run_lock, save_checkpoint
from spandep.training.trainer import read_treebank, seed_everything

log = logging.getLogger("spandep.train_heads")


@dataclass(frozen=True)
class HeadsSettings:
    """A run: the model folder, the training and dev files (CoNLL-U), where to write, and how to train."""

    model: str
    train: str
    dev: str
    output: str
    epochs: int = 20
    lr: float = 1e-3
    batch_words: int = 2000
    seed: int = 1
    threads: int = 0
    rebuild: dict[str, dict[str, Any]] = field(default_factory=dict)
    int8: bool = False  # every head matrix of MIN_ELEMENTS values or more stored in int8, the input's own included

    def table(self) -> dict[str, dict[str, Any]]:
        """The settings as ``checkpoint.changed_settings`` compares them (``epochs``, ``threads``, ``output`` may
        change when a run resumes)."""
        return {"training": relative_paths(asdict(self))}


class VectorCache:
    """The frozen model's word vectors of ``sentences`` (ROOT first), kept in a float32 ``.npy`` file under
    ``folder`` and read back through a memory map; written once (atomically), reused when the run resumes."""

    def __init__(self, model: Parser, sentences: Sequence[Sentence], path: Path, batch_words: int) -> None:
        self.lengths = [len(s) + 1 for s in sentences]
        self.offsets = np.concatenate([[0], np.cumsum(self.lengths)])
        shape = (int(self.offsets[-1]), model.width + model.encoder.tap_dim)
        self.vectors = cached_array(path, shape, lambda out: self._write(model, sentences, out, batch_words))  # (words + sentences, width)
        if self.vectors.shape[0] != self.offsets[-1]:
            raise OptionError(f"{path} holds vectors of other sentences: remove {path.parent} and run again")

    def _write(self, model: Parser, sentences: Sequence[Sentence], out: np.ndarray, batch_words: int) -> None:
        """The word vectors of ``sentences`` into ``out`` (words + sentences, width), each sentence at its offset."""
        with torch.no_grad():
            for idx, batch, x in model.encoded_batches(sentences, InferenceOptions(batch_tokens=batch_words)):  # x: (batch, 1 + n, width)
                for b, i in enumerate(idx):
                    out[self.offsets[i] : self.offsets[i + 1]] = x[b, : self.lengths[i]].float().cpu().numpy()  # (1 + n_i, width)

    def batch(self, idx: Sequence[int]) -> tuple[torch.Tensor, torch.Tensor]:
        """The padded vectors ``(batch, 1 + n, width)`` and word mask ``(batch, 1 + n)`` of sentences ``idx``."""
        width = max(self.lengths[i] for i in idx)
        x = torch.zeros(len(idx), width, self.vectors.shape[1])  # (batch, 1 + n, width)
        mask = torch.zeros(len(idx), width, dtype=torch.bool)  # (batch, 1 + n)
        for b, i in enumerate(idx):
            x[b, : self.lengths[i]] = torch.from_numpy(np.array(self.vectors[self.offsets[i] : self.offsets[i + 1]]))  # (1 + n_i, width)
            mask[b, : self.lengths[i]] = True
        return x, mask


def stored_form(state: dict[str, torch.Tensor], compact: dict[str, Any] | None, int8: bool = False) -> dict[str, torch.Tensor]:
    """The heads' tensors as the input model stores its own: float16 in a compact folder, int8 (with scales) for
    the names it keeps in int8 (``quantised``) and, where it keeps its heads' matrices so, for every head matrix
    of ``ALL_MIN_ELEMENTS`` values or more (a rebuilt head's new ones too), float32 otherwise. ``int8`` (a compact
    folder): every head matrix of ``MIN_ELEMENTS`` values or more in int8 as well."""
    if not compact:
        return {k: v.detach().cpu().contiguous() for k, v in state.items()}
    half = halved({k: v.detach().cpu().contiguous() for k, v in state.items()})
    listed = set(compact.get("int8", ()))
    if any(n.startswith(PREFIX) for n in listed):
        listed |= {n for n, v in half.items() if v.numel() >= ALL_MIN_ELEMENTS}
    if int8:
        listed |= {n for n, v in half.items() if v.numel() >= MIN_ELEMENTS}
    return quantize(half, listed & set(half), min_elements=0)[0]


def loaded_form(stored: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The float32 weights ``stored`` loads as (``storage.model_io.load_model``'s reading: a tensor with a scale
    beside it is int8)."""
    return {k: v.float() if v.is_floating_point() else v for k, v in loaded(stored).items()}


class HeadsTrainer:
    """Fine-tunes the output heads of one model folder; ``run()`` resumes from the output folder's checkpoint."""

    def __init__(self, settings: HeadsSettings, model_folder: Path) -> None:
        self.settings, self.folder, self.out = settings, Path(model_folder), Path(settings.output)
        if settings.threads:
            torch.set_num_threads(settings.threads)
        seed_everything(settings.seed)
        self.config = read_model_config(self.folder)
        if self.config["format_version"] not in CURRENT:
            raise ModelError(f"{self.folder}: a format-{self.config['format_version']} folder; save it again with this spandep first (spandep export)")
        self.model = load_model(self.folder)
        if self.model.treebanks is not None:
            raise OptionError(f"{self.folder} is trained on several treebanks; spandep train-heads takes a model of one")
        if not len(self.model.heads):
            raise OptionError(f"{self.folder} has no output heads (UPOS, FEATS, lemma...) to train")
        with safe_open(str(self.folder / "model.safetensors"), framework="pt") as fh:
            self.stored = {k: fh.get_tensor(k) for k in fh.keys()}
            self.metadata = fh.metadata() or {}
        self.compact = self.config.get("compact")
        if settings.int8 and not self.compact:
            raise OptionError(f"--int8: {self.folder} is a full folder; its heads are stored in int8 only in a compact one (spandep export)")
        self.train = read_treebank(settings.train, "conllu")
        self.dev = read_treebank(settings.dev, "conllu")
        for p in self.model.parameters():
            p.requires_grad_(False)
        self.rebuilt = {name: self._rebuilt_config(name, changes) for name, changes in settings.rebuild.items()}
        # the cached vectors hold every layer that an input head or a rebuilt one reads, whichever is kept
        try:
            self.taps = sorted((set(self.model.head_layers({}).values()) | set(self.model.head_layers(self.rebuilt).values())) - {0})
            self.model.encoder.tap(self.taps)
        except ValueError as exc:
            raise OptionError(f"--set: {exc}") from None

    def _rebuilt_config(self, name: str, changes: dict[str, Any]) -> dict[str, Any]:
        """The config of head ``name`` built anew with ``changes`` over the input's settings (from the training data,
        as ``spandep train`` makes it); a head the model lacks or a setting the head lacks is refused."""
        if name not in self.model.heads:
            raise OptionError(f"--set {name}.…: {self.folder} has no {name} head (it has {', '.join(self.model.heads)})")
        head = HEADS.get(name)
        unknown = sorted(set(changes) - set(head.config_defaults))
        if unknown:
            raise OptionError(f"--set {name}.{unknown[0]}: the {name} head takes {', '.join(head.config_defaults)}")
        given = self.config["model"]["heads"][name]
        settings = {k: given.get(k, v) for k, v in head.config_defaults.items()} | changes
        try:
            return head.config_from_data(settings, self.train)
        except ValueError as exc:
            raise OptionError(f"--set {name}.…: {exc}") from None

    def _set_heads(self, rebuilt: dict[str, dict[str, Any]]) -> None:
        """Heads ``rebuilt`` (name: config) built anew in place of the model's, the training sentences' gold ids in
        their classes (a rebuilt head's classes are those of the training file, not the input's), and the optimizer
        over every head."""
        self._attach(rebuilt)
        self.gold = [self._gold(s) for s in self.train]  # in the classes of the heads as built now
        for p in self.model.heads.parameters():
            p.requires_grad_(True)
        self.optimizer = torch.optim.Adam(self.model.heads.parameters(), lr=self.settings.lr)

    def _attach(self, heads: dict[str, dict[str, Any]]) -> None:
        """Heads built from their configs in place of the model's, reading the cached vectors' layers (:attr:`taps`;
        the saved folder taps only what its heads read)."""
        self.model.attach_heads(heads)
        self.model.encoder.tap(self.taps)

    def run(self) -> dict[str, Any]:
        """Train to the end (resuming), write ``output/model``; returns the run's record."""
        self.out.mkdir(parents=True, exist_ok=True)
        with run_lock(self.out):
            self._check_resumable()
            self.train_x = VectorCache(self.model, self.train, self.out / "cache" / "train.npy", self.settings.batch_words)
            self.dev_x = VectorCache(self.model, self.dev, self.out / "cache" / "dev.npy", self.settings.batch_words)
            best: dict[str, torch.Tensor] = {}
            resumed = has_checkpoint(self.out / "checkpoint")
            state = None if resumed else self._start(best)  # epoch 0 scores the input's heads, before any is rebuilt
            self._set_heads(self.rebuilt)
            state = load_checkpoint(self.out / "checkpoint", self.model.heads, self.optimizer, best) or state
            while state["epoch"] < self.settings.epochs:
                self._epoch(state, best)
                save_checkpoint(self.out / "checkpoint", self.model.heads, self.optimizer, state, best)
            return self._finish(state, best)

    def _start(self, best: dict[str, torch.Tensor]) -> dict[str, Any]:
        """Epoch 0: the input's weights (with ``int8``, as this run stores them), scored on dev; each head's best so far."""
        stored = self.stored
        if self.settings.int8:
            stored = stored_form({PREFIX + k: v for k, v in self.model.heads.state_dict().items()}, self.compact, int8=True)
            self._load_heads(stored)
        scores = self.dev_scores()
        best.update({k: v for k, v in stored.items() if k.startswith(PREFIX)})
        self._log(f"epoch 0 (input) {self._figures(scores)}")
        return {"step": 0, "epoch": 0, "best": {name: {"epoch": 0, "score": s} for name, s in scores.items()}, "history": [{"epoch": 0, **scores}]}

    def _epoch(self, state: dict[str, Any], best: dict[str, torch.Tensor]) -> None:
        """One epoch over the training vectors, then each head's dev score with its weights as stored."""
        self.model.heads.train()
        batches = token_batches(self.train_x.lengths, self.settings.batch_words, shuffle=True, seed=self.settings.seed * 1000 + state["epoch"])
        total = 0.0
        for idx in batches:
            x, mask = self.train_x.batch(idx)  # (batch, 1 + n, width), (batch, 1 + n)
            loss = self.model.heads_loss(x, self._gold_batch(idx, mask))
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()  # type: ignore[union-attr]
            self.optimizer.step()
            total += float(loss.detach())  # type: ignore[union-attr]
            state["step"] += 1
        state["epoch"] += 1
        trained = {k: v.clone() for k, v in self.model.heads.state_dict().items()}
        stored = stored_form({PREFIX + k: v for k, v in trained.items()}, self.compact, self.settings.int8)
        self._load_heads(stored)
        scores = self.dev_scores()
        chosen = []
        for name, score in scores.items():
            if score > state["best"][name]["score"]:
                state["best"][name] = {"epoch": state["epoch"], "score": score}
                for key in [k for k in best if k.startswith(f"{PREFIX}{name}.")]:  # a rebuilt head's keys may differ
                    del best[key]
                best.update({k: v for k, v in stored.items() if k.startswith(f"{PREFIX}{name}.")})
                chosen.append(name)
        self.model.heads.load_state_dict(trained)
        state["history"].append({"epoch": state["epoch"], "loss": round(total / max(1, len(batches)), 4), **scores})
        self._log(f"epoch {state['epoch']} loss {total / max(1, len(batches)):.4f} {self._figures(scores)}" + (f" best: {', '.join(chosen)}" if chosen else ""))

    def _load_heads(self, stored: dict[str, torch.Tensor]) -> None:
        """The heads' weights from their stored form (``PREFIX`` keys), as loading the saved model reads them."""
        self.model.heads.load_state_dict({k.removeprefix(PREFIX): v for k, v in loaded_form(stored).items()})

    def dev_scores(self) -> dict[str, float]:
        """Per head, the percentage of dev words whose predicted column equals the gold one (the heads as they are
        now, each reading the others' predicted columns)."""
        self.model.heads.eval()
        right = dict.fromkeys(self.model.heads, 0)
        words = 0
        with torch.no_grad():
            for idx in token_batches(self.dev_x.lengths, self.settings.batch_words):
                x, mask = self.dev_x.batch(idx)  # (batch, 1 + n, width), (batch, 1 + n)
                columns = self.model.annotate(x, mask, [self.dev[i].forms for i in idx], InferenceOptions())
                for i, predicted in zip(idx, columns):
                    words += len(self.dev[i])
                    for name, values in predicted.items():
                        gold = [getattr(w, self.model.heads[name].column) for w in self.dev[i].words]
                        right[name] += sum(p == g for p, g in zip(values, gold))
        return {name: round(100.0 * n / max(1, words), 2) for name, n in right.items()}

    def _gold(self, sentence: Sentence) -> dict[str, Any]:
        """A training sentence's gold ids per head (ROOT first) and its columns the heads read."""
        reads = {c for head in self.model.heads.values() for c in head.reads}
        return {
            "forms": sentence.forms, "columns": {c: [getattr(w, c) for w in sentence.words] for c in reads},
            **{name: [IGNORE] + head.gold_ids(sentence) for name, head in self.model.heads.items()},
        }

    def _gold_batch(self, idx: Sequence[int], mask: torch.Tensor) -> dict[str, Any]:
        """What ``Parser.heads_loss`` reads of a batch: word mask, forms, gold columns, each head's padded gold ids."""
        gold = [self.gold[i] for i in idx]
        batch: dict[str, Any] = {"word_mask": mask, "forms": [g["forms"] for g in gold]}
        batch["columns"] = {c: [g["columns"][c] for g in gold] for c in gold[0]["columns"]}
        for name in self.model.heads:
            ids = torch.full(mask.shape, IGNORE, dtype=torch.long)  # (batch, 1 + n)
            for b, g in enumerate(gold):
                ids[b, : len(g[name])] = torch.tensor(g[name], dtype=torch.long)  # (1 + n_b,)
            batch[f"gold_{name}"] = ids
        return batch

    def _finish(self, state: dict[str, Any], best: dict[str, torch.Tensor]) -> dict[str, Any]:
        """Each head at its best epoch (as stored: a head that keeps epoch 0 keeps the input's bytes), scored on dev
        together, written to ``output/model`` beside the input's other tensors."""
        tensors = {k: v for k, v in self.stored.items() if not k.startswith(PREFIX)} | best
        kept = {name: self.config["model"]["heads"][name] for name in self.rebuilt if state["best"][name]["epoch"] == 0}
        self._attach(kept)  # a rebuilt head that never beat the input's: the input's head again
        self._load_heads(best)
        after = self.dev_scores()
        record = {
            "settings": asdict(self.settings), "chosen_epochs": {n: b["epoch"] for n, b in state["best"].items()},
            "dev_before": state["history"][0], "dev_after": after, "history": state["history"],
        }
        self._log(f"chosen epochs {record['chosen_epochs']}; dev {self._figures(after)}")
        self._save(tensors, record)
        return record

    def _save(self, tensors: dict[str, torch.Tensor], record: dict[str, Any]) -> None:
        """The input folder copied to ``output/model`` with ``tensors`` as its weights and ``record`` in its config,
        built beside it and swapped into place."""
        final = self.out / "model"
        tmp = sibling_folder(final, "choose a writable --output")
        try:
            shutil.copytree(self.folder, tmp, dirs_exist_ok=True)
            save_file(tensors, str(tmp / "model.safetensors"), metadata=self.metadata)
            heads = {**self.config["model"]["heads"], **{n: self.model.heads[n].export_config() for n in self.rebuilt}}
            training = self.config.get("training", {})  # an input made by train-heads keeps that run's record under "input"
            config = {
                **self.config, "model": {**self.config["model"], "heads": heads}, **self._compact(tensors),
                "training": {**training, "heads_finetune": relative_paths(record | ({"input": training["heads_finetune"]} if "heads_finetune" in training else {}))},
            }
            write_model_config(tmp, config)
            usual_permissions(tmp)
            shutil.rmtree(final, ignore_errors=True)
            os.replace(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise

    def _compact(self, tensors: dict[str, torch.Tensor]) -> dict[str, Any]:
        """The output's ``compact`` entry: the input's, its int8 list naming the tensors now stored in int8."""
        if not self.compact:
            return {}
        now = set(int8_names(tensors))
        listed = [n for n in self.compact.get("int8", ()) if not n.startswith(PREFIX) or n in now]
        names = listed + sorted(now - set(listed))
        return {"compact": {**self.compact, "int8": names}}

    def _check_resumable(self) -> None:
        """A run resumed under other settings than it started with fails, naming them; the first run writes them."""
        saved = self.out / "run.json"
        if saved.is_file() and has_checkpoint(self.out / "checkpoint"):
            changed = changed_settings({"training": json.loads(saved.read_text(encoding="utf-8"))}, self.settings.table())
            if changed:
                raise OptionError(f"{self.out} holds a run started with other settings ({'; '.join(changed)}): resume it with the same ones, or use another --output")
        saved.write_text(json.dumps(self.settings.table()["training"], indent=2) + "\n", encoding="utf-8")

    @staticmethod
    def _figures(scores: dict[str, float]) -> str:
        return " ".join(f"{name}={score:.2f}" for name, score in scores.items())

    def _log(self, line: str) -> None:
        """``line`` to the log and to ``train.log``."""
        log.info(line)
        with open(self.out / "train.log", "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
