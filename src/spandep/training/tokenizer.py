"""Training a tokenizer on a treebank's CoNLL-U (``spandep train-tokenizer``): resumable, early-stopped on dev.

Targets, per character of each training paragraph's raw text (:mod:`.corpus`): ``token`` (1 where a gold token
ends; read on every non-whitespace character), ``sentence`` and ``mwt`` (1 where a sentence / a multiword token
ends; read where a gold token ends). Each epoch cuts every paragraph into pieces of ``window`` characters from a
random offset (drawn from the seed and the epoch, so a resumed run sees the same pieces) and shuffles them; with
``min_batches``, a small treebank's epoch passes over its text again from new offsets until it has that many. With
``augment`` above 0, each epoch first rewrites that share of the training sentences into typographic and casing
variants and joins some paragraphs to the one before (:func:`~spandep.tokenization.variants.training_paragraphs`, drawn from
the seed and the epoch); the targets are built from the rewritten paragraphs' own spans, and the character list
and the multiword-token lexicon from the training text and one rewriting of every sentence, so the variants'
characters have embeddings and their multiword tokens (it "dell’") their words. The lexicon of the opt-in word
feature (:mod:`~spandep.tokenization.features`) is learnt from the training text's tokens as they are. With encoder
features (:mod:`~spandep.tokenization.encoder_features`, ``net.encoder``), the piece vectors of the training and dev
text are computed once into ``OUT/cache/*.npy`` (read through a memory map, reused when the run resumes), so the
text cannot change between epochs: there ``augment`` is drawn once (the draw of epoch 0) and its paragraphs are
trained on beside the originals, every epoch.

After each epoch the dev file's raw text is tokenized with the default thresholds (0.5) and scored
(:mod:`.selection`); the best epoch's weights are kept. The learning rate is halved after ``lr_decay_patience``
epochs without a better dev score (if set); training stops after ``patience`` epochs without one, or at
``epochs``. Then the decoding settings (sentence threshold, multiword-token decision, sentence length bound) are
chosen on dev by the same score, and the tokenizer is written to ``OUT/tokenizer``.

Everything is written atomically; ``OUT/checkpoint`` holds the newest epoch (weights, optimiser, history), so
running the same command again resumes where an interrupted run stopped.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_file, save_file

from spandep.data.output import relative_paths
from spandep.encoders.bases import resolve_model_path
from spandep.errors import OptionError
from spandep.tokenization.corpus import GoldParagraph, raw_text, read_dictionary, read_paragraphs
from spandep.tokenization.encoder_features import PieceVectors, cached_vectors
from spandep.tokenization.features import CharFeatures
from spandep.tokenization.model import HEADS, CharTagger, CharVocab, NetConfig
from spandep.tokenization.mwt import MwtLexicon
from spandep.tokenization.selection import DevScores, gold_sentences, span_scores
from spandep.tokenization.text import paragraphs
from spandep.tokenization.trained import Thresholds, TrainedTokenizer
from spandep.tokenization.variants import training_paragraphs
from spandep.training.checkpoint import load_checkpoint, run_lock, save_checkpoint

__all__ = ["TrainSettings", "train_tokenizer"]

log = logging.getLogger(__name__)
SENTENCE_GRID = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
MAX_TOKENS_GRID = (0, 100, 50)  # sentence length bounds tried on dev (0: none), the fallback of text without sentence punctuation


@dataclass(frozen=True)
class TrainSettings:
    """Everything a run depends on (stored in the checkpoint and in the tokenizer's config)."""

    net: NetConfig = field(default_factory=NetConfig)
    epochs: int = 100
    patience: int = 20
    batch_size: int = 32
    window: int = 256
    lr: float = 2e-3
    lr_decay_patience: int = 0  # halve the learning rate after this many epochs without a better dev score (0: never)
    min_char_count: int = 2
    seed: int = 1
    augment: float = 0.3  # share of training sentences rewritten into typographic variants each epoch (0: none; 0.3 chosen on fr_sequoia dev)
    min_batches: int = 0  # an epoch passes over the training text again (new offsets) until it has this many batches (0: one pass)
    dictionary: str = ""  # a word list of the language for the dictionary flags (net.dictionary; read_dictionary's format)


def _targets(p: GoldParagraph) -> tuple[np.ndarray, np.ndarray]:
    """``(n_chars, 3)`` targets and masks of :data:`~.model.HEADS` for one paragraph."""
    n = len(p.text)
    target = np.zeros((n, len(HEADS)), dtype=np.float32)  # (n_chars, 3)
    mask = np.zeros((n, len(HEADS)), dtype=np.float32)  # (n_chars, 3)
    mask[:, 0] = [not c.isspace() for c in p.text]
    for sentence in p.sentences:
        for t in sentence:
            target[t.end - 1, 0] = 1.0
            mask[t.end - 1, 1:] = 1.0
            target[t.end - 1, 2] = float(bool(t.words))
        target[sentence[-1].end - 1, 1] = 1.0
    return target, mask


class _Data:
    """Encoded training paragraphs (an epoch's variants of them, with ``augment``) and the pieces of an epoch;
    ``vectors``: each paragraph's encoder features (n_chars, columns), or ``None``."""

    def __init__(self, paras: list[GoldParagraph], vocab: CharVocab, window: int, augment: float = 0.0,
                 vectors: list[np.ndarray] | None = None) -> None:
        self.paras, self.vocab, self.window, self.augment, self.vectors = paras, vocab, window, augment, vectors
        self._encode(paras)

    def _encode(self, paras: list[GoldParagraph]) -> None:
        self.ids = [self.vocab.encode(p.text) for p in paras]
        self.targets = [_targets(p) for p in paras]

    def batches(self, epoch: int, seed: int, batch_size: int, min_batches: int = 0) -> list[list[tuple[int, int, int]]]:
        """The epoch's pieces in shuffled batches: one pass over the paragraphs, or more passes (each from new
        random offsets) until there are at least ``min_batches`` batches."""
        if self.augment > 0:
            self._encode(training_paragraphs(self.paras, self.augment, seed, epoch))
        rng = np.random.default_rng([seed, epoch])
        pieces: list[tuple[int, int, int]] = []
        while True:
            for k, ids in enumerate(self.ids):
                cuts = [0, *range(int(rng.integers(1, self.window + 1)), len(ids), self.window), len(ids)]
                pieces.extend((k, a, b) for a, b in zip(cuts, cuts[1:]) if b > a)
            if not pieces or len(pieces) >= min_batches * batch_size:
                break
        order = rng.permutation(len(pieces))
        return [[pieces[i] for i in order[s : s + batch_size]] for s in range(0, len(order), batch_size)]

    def tensors(self, batch: list[tuple[int, int, int]]) -> tuple[torch.Tensor, ...]:
        width = max(b - a for _, a, b in batch)
        ids = np.zeros((len(batch), width, self.ids[0].shape[1]), dtype=np.int64)  # (batch, n_chars, 2 + features)
        target = np.zeros((len(batch), width, len(HEADS)), dtype=np.float32)  # (batch, n_chars, 3)
        mask = np.zeros((len(batch), width, len(HEADS)), dtype=np.float32)  # (batch, n_chars, 3)
        for row, (k, a, b) in enumerate(batch):
            ids[row, : b - a] = self.ids[k][a:b]
            target[row, : b - a] = self.targets[k][0][a:b]
            mask[row, : b - a] = self.targets[k][1][a:b]
        lengths = torch.tensor([b - a for _, a, b in batch])  # (batch,)
        vectors = None if self.vectors is None else torch.from_numpy(np.stack(
            [np.pad(self.vectors[k][a:b], ((0, width - (b - a)), (0, 0))) for k, a, b in batch]))  # (batch, n_chars, columns)
        return torch.from_numpy(ids), lengths, torch.from_numpy(target), torch.from_numpy(mask), vectors


def _loss(net: CharTagger, data: _Data, batch: list[tuple[int, int, int]]) -> torch.Tensor:
    ids, lengths, target, mask, vectors = data.tensors(batch)
    logits = net(ids, lengths, vectors)  # (batch, n_chars, 3)
    losses = torch.nn.functional.binary_cross_entropy_with_logits(logits, target, reduction="none")  # (batch, n_chars, 3)
    per_head = (losses * mask).sum(dim=(0, 1)) / mask.sum(dim=(0, 1)).clamp(min=1.0)  # (3,)
    return per_head.sum()


def _atomic_json(path: Path, data: Any) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)


def _evaluate(tokenizer: TrainedTokenizer, dev: list[GoldParagraph]) -> DevScores:
    text = raw_text(dev)
    system = [s for para in tokenizer.split(text, paragraphs(text)) for s in para]
    return span_scores(text, gold_sentences(dev), system)


def choose_settings(tokenizer: TrainedTokenizer, dev: list[GoldParagraph]) -> tuple[TrainedTokenizer, list[dict[str, Any]]]:
    """The decoding settings with the best dev score, and every setting's scores."""
    text = raw_text(dev)
    paras = paragraphs(text)
    probs, ids = tokenizer.probabilities(text, paras)
    gold = gold_sentences(dev)
    best, tried = tokenizer, []
    best_total = -1.0
    for decision in ("net", "lexicon"):
        for sentence in SENTENCE_GRID:
            for most in MAX_TOKENS_GRID:
                candidate = tokenizer.with_settings(Thresholds(sentence=sentence), decision, most)
                system = [s for p, pr in zip(paras, probs) for s in candidate.decode(text, p, pr, ids[p[0] : p[1], 1])]
                scores = span_scores(text, gold, system)
                tried.append({"mwt_decision": decision, "sentence_threshold": sentence, "max_tokens": most, **asdict(scores)})
                if scores.total > best_total + 1e-9:
                    best, best_total = candidate, scores.total
    return best, tried


def _net(vocab: CharVocab, settings: TrainSettings, pieces: PieceVectors | None) -> CharTagger:
    torch.manual_seed(settings.seed)
    return CharTagger(len(vocab), settings.net, pieces.width if pieces else 0)


def _pieces(settings: TrainSettings) -> PieceVectors | None:
    """The encoder features' reader of ``settings.net.encoder`` (``None`` without one); an :class:`OptionError` for
    an encoder this machine lacks or layers it has not."""
    net = settings.net
    if not net.encoder:
        return None
    try:
        return PieceVectors(net.encoder, resolve_model_path(net.encoder), net.encoder_layers)
    except (OSError, ValueError) as exc:
        raise OptionError(f"--encoder {net.encoder}: {exc}") from None


def _paragraph_vectors(pieces: PieceVectors | None, paras: list[GoldParagraph], cache: Path) -> list[np.ndarray] | None:
    """Each paragraph's encoder features, from one cache file of their texts end to end (``None`` without
    ``pieces``)."""
    if pieces is None:
        return None
    ends = np.cumsum([len(p.text) for p in paras]).tolist()
    spans = list(zip([0, *ends[:-1]], ends))
    vectors = cached_vectors(pieces, "".join(p.text for p in paras), spans, cache, "train")  # (n_chars, columns)
    return [vectors[a:b] for a, b in spans]


def train_tokenizer(train: Path, dev: Path, out: Path, settings: TrainSettings) -> dict[str, Any]:
    """Train (or resume) a tokenizer into ``out`` (module docstring); returns the final record."""
    out.mkdir(parents=True, exist_ok=True)
    with run_lock(out):
        return _run(train, dev, out, settings)


def seen_paragraphs(train_paras: list[GoldParagraph], augment: float, seed: int) -> list[GoldParagraph]:
    """The paragraphs a tokenizer's characters and multiword-token lexicon are learned from: the training ones and,
    with augmentation, one rewritten copy of each (drawn from ``seed``)."""
    return train_paras + (training_paragraphs(train_paras, 1.0, seed, 0) if augment > 0 else [])


def learn_lexicon(seen: list[GoldParagraph]) -> MwtLexicon:
    """The multiword-token lexicon of the paragraphs ``seen`` (:func:`seen_paragraphs`)."""
    return MwtLexicon.learn((p.text[t.start : t.end], t.words) for p in seen for s in p.sentences for t in s)


def _run(train: Path, dev: Path, out: Path, settings: TrainSettings) -> dict[str, Any]:
    train_paras, dev_paras = read_paragraphs(train), read_paragraphs(dev)
    seen = seen_paragraphs(train_paras, settings.augment, settings.seed)
    words = (p.text[t.start : t.end] for p in train_paras for s in p.sentences for t in s)
    dictionary = read_dictionary(Path(settings.dictionary)) if settings.net.dictionary else None
    features = CharFeatures.learn(settings.net.ngram_buckets, settings.net.lexicon_lengths, words, dictionary)
    vocab = CharVocab.build((p.text for p in seen), settings.min_char_count, features)
    lexicon = learn_lexicon(seen)
    pieces = _pieces(settings)
    if pieces is not None and settings.augment > 0:  # fixed text under cached vectors: one draw, beside the originals
        train_paras = train_paras + training_paragraphs(train_paras, settings.augment, settings.seed, 0)
    augment = 0.0 if pieces is not None else settings.augment
    data = _Data(train_paras, vocab, settings.window, augment, _paragraph_vectors(pieces, train_paras, out / "cache"))
    if pieces is not None:
        dev_text = raw_text(dev_paras)
        cached_vectors(pieces, dev_text, paragraphs(dev_text), out / "cache", "dev")
    net = _net(vocab, settings, pieces)
    optimizer = torch.optim.Adam(net.parameters(), lr=settings.lr)
    meta = load_checkpoint(out / "checkpoint", net, optimizer) or {
        "step": 0, "best_epoch": 0, "best_total": -1.0, "last_decay": 0, "history": [], "settings": asdict(settings)
    }
    if meta["settings"] != json.loads(json.dumps(asdict(settings))):
        log.warning("resuming with the settings of the checkpoint: %s", meta["settings"])
    epoch = int(meta["step"])
    while epoch < settings.epochs and epoch - int(meta["best_epoch"]) < settings.patience:
        epoch += 1
        started = time.perf_counter()
        net.train()
        total = 0.0
        batches = data.batches(epoch, settings.seed, settings.batch_size, settings.min_batches)
        for batch in batches:
            optimizer.zero_grad()
            loss = _loss(net, data, batch)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 5.0)
            optimizer.step()
            total += float(loss.detach())
        scores = _evaluate(TrainedTokenizer(vocab, net, lexicon, pieces=pieces), dev_paras)
        seconds = time.perf_counter() - started
        lr = optimizer.param_groups[0]["lr"]
        meta["history"].append(
            {"epoch": epoch, "loss": total / len(batches), **asdict(scores), "lr": lr, "seconds": round(seconds, 1)}
        )
        log.info("epoch %d loss %.4f dev tokens %.2f sentences %.2f words %.2f (%.0f s)", epoch, total / len(batches),
                 scores.tokens, scores.sentences, scores.words, seconds)
        if scores.total > meta["best_total"]:
            meta["best_epoch"], meta["best_total"] = epoch, scores.total
            tmp = out / ".best.safetensors.tmp"
            save_file({k: v.detach().clone() for k, v in net.state_dict().items()}, str(tmp))
            os.replace(tmp, out / "best.safetensors")
        since = epoch - max(int(meta["best_epoch"]), int(meta.get("last_decay", 0)))
        if settings.lr_decay_patience and since >= settings.lr_decay_patience:
            for group in optimizer.param_groups:
                group["lr"] /= 2
            meta["last_decay"] = epoch
        meta["step"] = epoch
        save_checkpoint(out / "checkpoint", net, optimizer, meta)
    net.load_state_dict(load_file(str(out / "best.safetensors")))
    tokenizer, tried = choose_settings(TrainedTokenizer(vocab, net, lexicon, pieces=pieces), dev_paras)
    record = {
        "train_file": relative_paths(str(train)), "dev_file": relative_paths(str(dev)), "settings": asdict(settings), "best_epoch": meta["best_epoch"],
        "epochs_run": epoch, "history": meta["history"], "decoding_on_dev": tried,
        "dev_scores": asdict(_evaluate(tokenizer, dev_paras)),
    }
    tmp_dir = out / ".tokenizer.tmp"
    shutil.rmtree(tmp_dir, ignore_errors=True)
    tokenizer.save(tmp_dir, record)
    shutil.rmtree(out / "tokenizer", ignore_errors=True)
    os.replace(tmp_dir, out / "tokenizer")
    _atomic_json(out / "record.json", record)
    return record
