"""Output-head design choices measured cheaply: the heads trained on frozen encoder vectors cached once.

``python benchmarks/scripts/heads_probe.py --cache runs/ewt_minilm.pt`` encodes EWT train and dev once with the
pretrained all-MiniLM-L6-v2 encoder (frozen, layer mix at its initial equal weights), then trains each variant of
the output heads on the cached word vectors and prints dev accuracies: FEATS as whole bundles against one classifier
per feature, and each head with and without the casing feature. The numbers are in docs/design.md ("Output heads").
Frozen vectors understate what joint training reaches; they are for comparing variants, not for the bars.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from spandep.data.conllu import read_conllu
from spandep.data.sentence import Sentence
from spandep.encoders.transformer import TransformerEncoder
from spandep.models.heads import HEADS, IGNORE, HeadInput, OutputHead
from spandep.models.heads.feats import NO_FEATURES

EWT = Path(__file__).resolve().parents[3] / "shared" / "data" / "en_ewt"  # ../shared/data beside the repository


def encode(sentences: Sequence[Sentence], encoder: TransformerEncoder, batch: int = 32) -> list[torch.Tensor]:
    """Word vectors ``(1 + n, d)`` (float16) of each sentence."""
    out: list[torch.Tensor] = []
    with torch.inference_mode():
        for lo in range(0, len(sentences), batch):
            chunk = sentences[lo : lo + batch]
            x = encoder(encoder.collate([encoder.featurize(s.forms) for s in chunk]))  # (batch, 1 + n, d)
            out.extend(x[b, : len(s) + 1].half() for b, s in enumerate(chunk))
    return out


class FeatureClassifiers(nn.Module):
    """The alternative to bundles: one classifier per feature name (its values plus "absent"); a word's bundle is
    every feature whose predicted value is not "absent", in UD's order."""

    def __init__(self, n_in: int, train: Sequence[Sentence], dropout: float = 0.33) -> None:
        super().__init__()
        values: dict[str, set[str]] = {}
        for s in train:
            for w in s.words:
                for name, value in self.split(w.feats).items():
                    values.setdefault(name, set()).add(value)
        self.names = sorted(values, key=str.lower)
        self.values = [[NO_FEATURES, *sorted(values[n])] for n in self.names]
        self.dropout = nn.Dropout(dropout)
        self.out = nn.ModuleList(nn.Linear(n_in, len(v)) for v in self.values)

    @staticmethod
    def split(feats: str) -> dict[str, str]:
        return dict(f.split("=", 1) for f in feats.split("|")) if feats != "_" else {}

    def gold(self, sentence: Sentence) -> list[list[int]]:
        rows = []
        for w in sentence.words:
            given = self.split(w.feats)
            rows.append([v.index(given.get(n, NO_FEATURES)) if given.get(n, NO_FEATURES) in v else IGNORE for n, v in zip(self.names, self.values)])
        return rows

    def loss(self, x: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
        x = self.dropout(x)  # (batch, 1 + n, d)
        return sum(F.cross_entropy(out(x).flatten(0, 1), gold[..., j].flatten(), ignore_index=IGNORE) for j, out in enumerate(self.out))  # type: ignore[return-value]

    def predict(self, x: torch.Tensor, lengths: Sequence[int]) -> list[list[str]]:
        best = torch.stack([out(x).argmax(-1) for out in self.out], -1).tolist()  # (batch, 1 + n, features)
        named = list(zip(self.names, self.values))
        return [
            ["|".join(f"{name}={v[k]}" for (name, v), k in zip(named, row[i]) if k) or "_" for i in range(1, n + 1)]
            for row, n in zip(best, lengths)
        ]


def batches(n: int, size: int, shuffle: bool) -> list[list[int]]:
    order = torch.randperm(n).tolist() if shuffle else list(range(n))
    return [order[i : i + size] for i in range(0, n, size)]


def padded(vectors: list[torch.Tensor], sentences: Sequence[Sentence], ids: list[int]) -> HeadInput:
    width = max(len(sentences[i]) for i in ids) + 1
    x = torch.zeros(len(ids), width, vectors[0].size(-1))  # (batch, 1 + n, d)
    mask = torch.zeros(len(ids), width, dtype=torch.bool)  # (batch, 1 + n)
    for b, i in enumerate(ids):
        m = len(sentences[i]) + 1
        x[b, :m], mask[b, :m] = vectors[i].float(), True
    return HeadInput.of(x, mask, [sentences[i].forms for i in ids])


def run(variant: str, settings: dict[str, Any], data: dict[str, Any], epochs: int, seed: int) -> dict[str, Any]:
    """Train one head variant on the cached train vectors; its dev accuracy (exact match of the column)."""
    torch.manual_seed(seed)
    train, dev = data["train"], data["dev"]
    d = data["train_x"][0].size(-1)
    if variant == "feats-split":
        head: Any = FeatureClassifiers(d, train)
        column = "feats"
    else:
        cls = HEADS.get(variant)
        head = cls.from_config(d, cls.config_from_data({**cls.config_defaults, **settings}, train))
        column = cls.column
    gold = [torch.tensor(head.gold(s) if variant == "feats-split" else head.gold_ids(s)) for s in train]
    opt = torch.optim.Adam(head.parameters(), lr=2e-3)
    t0 = time.perf_counter()
    for _ in range(epochs):
        head.train()
        for ids in batches(len(train), 64, True):
            inputs = padded(data["train_x"], train, ids)
            g = torch.full((*inputs.word_mask.shape, *gold[ids[0]].shape[1:]), IGNORE, dtype=torch.long)  # (batch, 1 + n[, features])
            for b, i in enumerate(ids):
                g[b, 1 : len(train[i]) + 1] = gold[i]
            loss = head.loss(inputs.vectors, g) if variant == "feats-split" else head.loss(inputs, g)
            opt.zero_grad()
            loss.backward()
            opt.step()
    head.eval()
    right = total = 0
    with torch.inference_mode():
        for ids in batches(len(dev), 256, False):
            inputs = padded(data["dev_x"], dev, ids)
            pred = head.predict(inputs.vectors, [len(dev[i]) for i in ids]) if variant == "feats-split" else head.predict(inputs)
            for i, values in zip(ids, pred):
                for w, v in zip(dev[i].words, values):
                    right += v == getattr(w, column)
                    total += 1
    classes = len(head.tags) if isinstance(head, OutputHead) else sum(len(v) for v in head.values)
    return {"variant": variant, **settings, "dev_accuracy": round(100 * right / total, 2), "classes": classes,
            "seconds": round(time.perf_counter() - t0, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, required=True, help="cached vectors (.pt): written on the first run")
    parser.add_argument("--train-sentences", type=int, default=0, help="first N training sentences (0: all)")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", nargs="*", help="numbers of the variants to run (0-based, default: all)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    train = list(read_conllu(EWT / "en_ewt-ud-train.conllu"))
    dev = list(read_conllu(EWT / "en_ewt-ud-dev.conllu"))
    if args.train_sentences:
        train = train[: args.train_sentences]
    if args.cache.exists():
        data = torch.load(args.cache)
    else:
        encoder = TransformerEncoder("all-MiniLM-L6-v2", mix_layers=4, dropout=0.0).eval()
        data = {"train_x": encode(train, encoder), "dev_x": encode(dev, encoder)}
        torch.save(data, args.cache)
    data["train_x"] = data["train_x"][: len(train)]
    data.update(train=train, dev=dev)
    variants = [
        ("upos", {"casing": 0}), ("upos", {"casing": 16}),
        ("xpos", {"casing": 0}), ("xpos", {"casing": 16}),
        ("feats", {"casing": 0}), ("feats", {"casing": 16}), ("feats-split", {}),
        ("lemma", {"casing": 0}), ("lemma", {"casing": 16}),
        ("upos", {"casing": 16, "hidden": 256}), ("lemma", {"casing": 16, "hidden": 256}),
        ("upos", {"casing": 16, "suffix": 32}), ("xpos", {"casing": 16, "suffix": 32}),
        ("feats", {"casing": 16, "suffix": 32}), ("lemma", {"casing": 16, "suffix": 32}),
        ("lemma", {"casing": 16, "suffix": 32, "hidden": 256}),
    ]
    for number, (variant, settings) in enumerate(variants):
        if args.only and str(number) not in args.only:
            continue
        print(json.dumps(run(variant, settings, data, args.epochs, args.seed)), flush=True)


if __name__ == "__main__":
    main()
