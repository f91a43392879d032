"""What every parser type is: an encoder, its own scorers, output heads, saved inference settings, and ``parse``.

A parser type is a :class:`Parser` subclass registered in ``spandep.models.PARSERS``. It declares

* ``name``: its registry name, the ``type`` of a training config's ``[model]`` table;
* ``config_defaults``: its ``[model]`` settings and their defaults (constructor arguments);
* ``decoders``: the user-facing decoder names (``mst``, ``projective``) mapped to algorithms of
  ``spandep.decoding.DECODERS``;
* ``inference_defaults``: the :class:`~spandep.options.InferenceOptions` settings it honours, with defaults;
* optionally ``settings_problem``: a check of its ``[model]`` settings when a training config is read;

and implements :meth:`Parser.loss` and :meth:`Parser.parse`; a type whose parse is a costly pass and a cheap
decoding also implements :meth:`Parser.score` (with ``scoring_settings``), so that a sweep runs the pass once. Output
heads (``spandep.models.heads``) attach to any
parser type: they read the encoder's word vectors, train with the parser's loss (:meth:`Parser.heads_loss`) and
fill their column (:meth:`Parser.annotate`). Each parse carries its arcs' scores (:class:`ArcScores`), from which
the confidence of every head and label follows (:attr:`Parser.calibration`, ``models/confidence.py``).

A model trained on several treebanks (``treebanks``, ``models/treebanks.py``) reads the word vectors of
:meth:`Parser.word_vectors` (the encoder's, with the treebank's embedding after them: ``width`` wide) and predicts
for the treebank its options name (:meth:`Parser.allowed`); a subclass builds its scorers ``width`` wide.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch
from torch import nn

from spandep.data.batching import token_batches
from spandep.data.sentence import Sentence
from spandep.data.vocab import build_vocab
from spandep.decoding import DECODERS, ConstraintError, Fixed, eisner
from spandep.encoders.base import WordEncoder, batch_cost, sentence_features
from spandep.errors import InputFormatError, OptionError
from spandep.hardware import native_bfloat16
from spandep.options import InferenceOptions, InferenceStats
from spandep.models.confidence import ArcScores, Calibration, ChosenArcScores
from spandep.models.heads import HEADS, IGNORE, HeadInput, OutputHead
from spandep.models.treebanks import LABELS, Treebanks
from spandep.registry import SettingsCheck

__all__ = ["Parse", "Parser", "Scores", "fallback_labels", "given_constraints", "keep_labels"]


@dataclass(frozen=True)
class Parse:
    """What a parser predicts for one sentence: heads (0 = ROOT) and dependency labels of words ``1..n``, the
    columns its output heads fill (``{"upos": [...]}``), each one value per word, and the scores its confidence is
    read from (``None`` for a sentence decoded without any: empty, or too long for a span linker and parsed from
    span scores alone)."""

    heads: list[int]
    labels: list[str]
    columns: dict[str, list[str]] = field(default_factory=dict)
    scores: ArcScores | ChosenArcScores | None = field(default=None, compare=False)  # confidence inputs; parses compare by tree, labels, columns


def fallback_labels(labels: Sequence[str]) -> tuple[str, str]:
    """Labels of arcs that no model scored (a sentence decoded without the span linker, a long sentence's fallback
    arcs): ``root`` for the ROOT child, ``dep`` (or the first other label) elsewhere; both fall back to
    ``labels[0]``."""
    root = "root" if "root" in labels else labels[0]
    other = "dep" if "dep" in labels else next((x for x in labels if x != "root"), labels[0])
    return root, other


def given_constraints(sentence: Sentence, options: InferenceOptions, projective: bool) -> Fixed | None:
    """The heads ``sentence`` gives (its integer HEADs) and the word ranges its ``# subtrees = 2-4 7-9`` comment says
    are subtrees, when ``options.keep`` keeps them; ``None`` when it gives none or they are not kept. What no tree
    keeps (``projective``: no projective tree, for a decoder without a non-projective fallback) is an
    :class:`InputFormatError` naming the sentence and the words."""
    subtrees = sentence.comment("subtrees")
    if not options.keep or (all(h is None for h in sentence.heads) and subtrees is None):
        return None
    sent_id = sentence.comment("sent_id")
    where = f"sentence {sent_id}: " if sent_id else ""
    try:
        ranges = (subtrees or "").split()
        if not all(re.fullmatch(r"[0-9]+-[0-9]+", r) for r in ranges):
            raise ValueError(f"'# subtrees = {subtrees}': give word ranges such as 2-4 7-9")
        fixed = Fixed.of(sentence.heads, [(int(r.split("-")[0]), int(r.split("-")[1])) for r in ranges])
        n = len(sentence)
        if projective:  # a projective tree keeping them exists when Eisner over no scores keeps them
            eisner(torch.zeros((1, n + 1, n + 1)), torch.tensor([n]), [fixed])
        else:
            fixed.check(n, projective=False)
    except (ConstraintError, ValueError) as exc:
        raise InputFormatError(sentence.source, sentence.line, f"{where}cannot keep the given heads: {exc}") from None
    return fixed


def keep_labels(parses: list[Parse], sentences: Sequence[Sentence], options: InferenceOptions | None) -> list[Parse]:
    """``parses`` with each DEPREL the input gives with a HEAD kept when ``options.keep`` keeps deprels (the label
    choice restricted to the given one; its probability 1: it is the user's)."""
    if options is None or options.keep != "heads,deprels":
        return parses
    out = []
    for parse, sentence in zip(parses, sentences):
        given = [w.head is not None and w.deprel != "_" for w in sentence.words]
        if not any(given):
            out.append(parse)
            continue
        labels = [w.deprel if g else label for w, g, label in zip(sentence.words, given, parse.labels)]
        scores = parse.scores
        if scores is not None:
            scores = replace(scores, label_probs=np.where(given, 1.0, scores.label_probs))  # (n,)
        out.append(replace(parse, labels=labels, scores=scores))
    return out


def _in_order(heads: dict[str, Any]) -> list[str]:
    """The names of ``heads`` in an order where each comes after the heads that fill the columns it reads."""
    order: list[str] = []
    while len(order) < len(heads):
        pending = [n for n in heads if n not in order]
        waiting = {heads[n].column for n in pending}
        order.append(next((n for n in pending if not set(heads[n].reads) & (waiting - {heads[n].column})), pending[0]))
    return order


class Parser(SettingsCheck, nn.Module):
    """The base of every parser type (see the module docstring)."""

    name: ClassVar[str]
    config_defaults: ClassVar[dict[str, Any]] = {}
    decoders: ClassVar[dict[str, str]] = {}
    inference_defaults: ClassVar[dict[str, Any]] = {}
    projective_fallback: ClassVar[bool] = False  # its projective decoder gives a non-projective tree when none keeps the given heads
    scoring_settings: ClassVar[tuple[str, ...]] = ()  # settings that change what :meth:`score` computes, not just its decoding
    config: dict[str, Any]  # the saved config, set by ``spandep.storage.model_io.load_model``

    def __init__(
        self, encoder: WordEncoder, labels: Sequence[str], inference: dict[str, Any] | None = None, treebanks: dict[str, Any] | None = None
    ) -> None:
        super().__init__()
        self.encoder = encoder
        self.labels = list(labels)
        self.label_index = {r: i for i, r in enumerate(self.labels)}
        self.treebanks = Treebanks(**treebanks) if treebanks is not None else None
        self.width = encoder.out_dim + (self.treebanks.dim if self.treebanks is not None else 0)  # word vectors' width
        self.heads = nn.ModuleDict()
        self.calibration = Calibration()
        per_treebank = self.treebanks.inference.values() if self.treebanks is not None else ()
        unknown = sorted(set(inference or {}).union(*per_treebank) - set(self.inference_defaults))
        if unknown:
            raise ValueError(self._not_mine(unknown))
        self.inference = InferenceOptions.from_dict({**self.inference_defaults, **(inference or {})})

    # ------------------------------------------------------------------ construction
    @classmethod
    def config_from_data(cls, settings: dict[str, Any], train: Sequence[Sentence]) -> dict[str, Any]:
        """Constructor arguments of a fresh parser from its ``[model]`` settings (defaults filled) and the training
        data: here the label set, every DEPREL of the training data."""
        return {"labels": build_vocab(r for s in train for r in s.deprels), **settings}

    @classmethod
    def from_config(cls, encoder: WordEncoder, config: dict[str, Any], folder: Path | None = None) -> Parser:
        """Build over ``encoder`` from a config (``config_from_data`` plus ``heads`` and ``inference``, or a saved
        model's); ``folder``: the saved model's folder, for parts that keep files there (``None``: from their
        base packages)."""
        args = {k: v for k, v in config.items() if k not in ("model_type", "heads", "calibration")}
        model = cls(encoder, **args, **cls.saved_files(folder))
        model.attach_heads(config.get("heads") or {})
        model.calibration = Calibration.from_dict(config.get("calibration"))
        return model

    @classmethod
    def saved_files(cls, folder: Path | None) -> dict[str, Any]:
        """Constructor arguments pointing at this type's own files in a saved model's ``folder`` (none here)."""
        return {}

    @classmethod
    def upgrade_v1(cls, model: dict[str, Any], state: dict[str, torch.Tensor], training: dict[str, Any]) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
        """A format-1 ``model`` table and weights in format 2 (``training``: the saved training config)."""
        return model, state

    def attach_heads(self, heads: dict[str, dict[str, Any]]) -> None:
        """Build the output heads a config names (``{name: head config}``, in place of any of those names) over the
        encoder's word vectors; a head with ``layer`` set reads that transformer layer's output beside them, which
        the encoder then taps (:meth:`~spandep.encoders.base.WordEncoder.tap`)."""
        layers = self.tap_layers(heads)
        for name, head_config in heads.items():
            self.heads[name] = HEADS.get(name).from_config(self.width + (self.encoder.layer_width if layers[name] else 0), head_config)

    def head_layers(self, heads: dict[str, dict[str, Any]]) -> dict[str, int]:
        """The ``layer`` (0: none) of each of the model's heads once the head configs ``heads`` are attached in
        their place."""
        given = {name: c.get("layer") or 0 for name, c in heads.items()}
        bad = [name for name, layer in given.items() if not isinstance(layer, int) or isinstance(layer, bool)]
        if bad:
            raise OptionError(f"heads.{bad[0]}.layer = {given[bad[0]]!r}: a layer is a whole number (1 = the lowest; 0: none)")
        return {name: int(head.layer) for name, head in self.heads.items()} | given

    def tap_layers(self, heads: dict[str, dict[str, Any]]) -> dict[str, int]:
        """The encoder made to tap every layer that the heads read once ``heads`` are attached (:meth:`head_layers`,
        which it returns)."""
        layers = self.head_layers(heads)
        self.encoder.tap(sorted(set(layers.values()) - {0}))
        return layers

    def head_vectors(self, x: torch.Tensor, head: OutputHead) -> torch.Tensor:
        """What ``head`` reads of word vectors ``(batch, 1 + n, width + taps)`` (:meth:`word_vectors`): the parser's
        vectors, and its ``layer``'s output after them where it has one → ``(batch, 1 + n, width [+ layer])``."""
        if not head.layer:
            return x[..., : self.width]  # (batch, 1 + n, width)
        start = self.width + self.encoder.taps.index(head.layer) * self.encoder.layer_width
        return torch.cat([x[..., : self.width], x[..., start : start + self.encoder.layer_width]], -1)  # (batch, 1 + n, width + layer)

    def export_config(self) -> dict[str, Any]:
        """The saved ``model`` table: what :meth:`from_config` rebuilds this parser from."""
        return {
            "model_type": self.name,
            "labels": self.labels,
            **({"treebanks": self.treebanks.export_config()} if self.treebanks is not None else {}),
            **self.hparams(),
            "heads": {name: head.export_config() for name, head in self.heads.items()},
            "inference": self.inference.given(),
            "calibration": self.calibration.to_dict(),
        }

    def hparams(self) -> dict[str, Any]:
        """This type's own constructor arguments (``config_defaults``' keys, resolved)."""
        raise NotImplementedError

    def pretrained_parameters(self) -> list[nn.Parameter]:
        """Parameters that come from base packages (the encoder's, and any other part's pretrained module)."""
        return self.encoder.pretrained_parameters()

    # ------------------------------------------------------------------ inference settings
    def _not_mine(self, names: Sequence[str]) -> str:
        return (
            f"inference setting(s) {', '.join(names)} do not apply to a {self.name} parser; "
            f"it takes {', '.join(sorted(self.inference_defaults))}"
        )

    def treebank_of(self, options: InferenceOptions | None) -> str | None:
        """The treebank a parse with ``options`` is as: theirs, else the one treebank of a model cut to it
        (``spandep export --treebank``), else none."""
        given = options.treebank if options is not None else None
        return given if self.treebanks is None else self.treebanks.named(given)

    def settings(self, options: InferenceOptions | None = None) -> InferenceOptions:
        """The settings a parse runs with: the saved ones (in a model of several treebanks, those saved for the
        treebank of ``options`` over the shared ones) with ``options``' given ones over them; ``ValueError`` for a
        setting this type does not have."""
        options = options or InferenceOptions()
        unknown = sorted(set(options.given()) - set(self.inference_defaults))
        if unknown:
            raise ValueError(self._not_mine(unknown))
        saved = self.inference
        options = replace(options, treebank=self.treebank_of(options))
        if self.treebanks is not None:
            self.treebanks.index(options.treebank)
            saved = self.treebanks.saved_settings(str(options.treebank), saved)
        elif options.treebank is not None:
            raise ValueError(f"treebank {options.treebank!r} given, but this model was trained on one treebank: leave treebank out")
        settings = options.over(saved)
        if self.encoder.held_bfloat16 and settings.precision != "bfloat16":
            raise ValueError(f"precision {settings.precision!r}: this model holds its encoder in bfloat16 (it was loaded to "
                             "parse in bfloat16); load it with precision='float32' (spandep parse --precision float32)")
        return settings

    def constraints(self, sentence: Sentence, options: InferenceOptions) -> Fixed | None:
        """What a parse of ``sentence`` with ``options`` (complete settings) keeps (:func:`given_constraints`): an
        :class:`InputFormatError` for given heads that this type's decoder cannot keep."""
        return given_constraints(sentence, options, projective=options.decoder == "projective" and not self.projective_fallback)

    def decoder(self, options: InferenceOptions) -> Callable[..., Any]:
        """The algorithm of the user-facing decoder ``options.decoder`` for this type."""
        return DECODERS.get(self.decoders[str(options.decoder)])

    def bfloat16(self, options: InferenceOptions) -> bool:
        """Whether a parse with ``options`` (complete settings) runs its matrix products in bfloat16: ``precision =
        "bfloat16"`` on a device that computes it natively, the encoder not quantised to int8."""
        return options.precision == "bfloat16" and not self.encoder.int8 and native_bfloat16(self.device())

    def products(self, options: InferenceOptions) -> torch.autocast:
        """The context in which a parse with ``options`` runs the matrix products after the encoder (the output heads',
        a span model's proposal, the word-level scorer; not a span model's linker: ``SpanParts``): ``torch.autocast``
        to bfloat16 under :meth:`bfloat16`, else off."""
        return torch.autocast(self.device().type, dtype=torch.bfloat16, enabled=self.bfloat16(options))

    # ------------------------------------------------------------------ treebanks
    def word_vectors(self, batch: dict[str, Any], bfloat16: bool = False) -> torch.Tensor:
        """The encoder's word vectors of a batch, with each sentence's treebank embedding (``batch["treebank"]``)
        after them in a multi-treebank model → ``(batch, 1 + n, width)``, then the layers the encoder taps for the
        heads (:meth:`head_vectors`; the parser reads the first ``width`` values); ``bfloat16``: the encoder's matrix
        products in bfloat16 (``torch.autocast``), its vectors given back in float32."""
        with torch.autocast(self.device().type, dtype=torch.bfloat16, enabled=bfloat16):
            x = self.encoder(batch).float()  # (batch, 1 + n, d + taps)
        if self.treebanks is None:
            return x
        d = self.encoder.out_dim
        return torch.cat([self.treebanks.vectors(x[..., :d], batch["treebank"]), x[..., d:]], -1)  # (batch, 1 + n, width + taps)

    def inference_batch(self, features: Sequence[dict[str, Any]], options: InferenceOptions) -> dict[str, Any]:
        """The encoder's batch of ``features`` on the model's device, each sentence of the treebank ``options``
        name in a multi-treebank model."""
        device = self.device()
        batch = {key: v.to(device) for key, v in self.encoder.collate(list(features)).items()}
        if self.treebanks is not None:
            batch["treebank"] = torch.full((len(features),), self.treebanks.index(options.treebank), dtype=torch.long)  # (batch,)
        return batch

    def encoded_batches(
        self, sentences: Sequence[Sentence], options: InferenceOptions
    ) -> Iterator[tuple[list[int], dict[str, Any], torch.Tensor]]:
        """The non-empty ``sentences`` in batches of at most ``options.batch_tokens`` encoder pieces, each encoded:
        the batch's sentence indices, its encoder batch (``word_mask`` included) and its word vectors
        ``(batch, 1 + n, width)`` (:meth:`word_vectors`). Every parser type's ``parse`` starts with it; alone it is the
        encoder's share of a parse, the floor of its cost (``spandep benchmark-speed --encoder-only``)."""
        todo = [i for i, s in enumerate(sentences) if len(s) > 0]
        features = {i: sentence_features(self.encoder, sentences[i].forms, sentences[i].upos) for i in todo}
        bfloat16 = self.bfloat16(options)
        for batch_ids in token_batches([batch_cost(features[i]) for i in todo], options.batch_tokens):
            idx = [todo[j] for j in batch_ids]
            batch = self.inference_batch([features[i] for i in idx], options)
            yield idx, batch, self.word_vectors(batch, bfloat16)  # (batch, 1 + n, width)

    def allowed(self, part: str, options: InferenceOptions) -> torch.Tensor | None:
        """The classes of ``part`` (``"labels"`` or a head's name) that the treebank ``options`` name allows
        ``(classes,)``; ``None`` (all) in a single-treebank model."""
        return None if self.treebanks is None else self.treebanks.mask(part, options.treebank)

    def label_names(self, options: InferenceOptions) -> list[str]:
        """The dependency labels a parse with ``options`` may give."""
        allowed = self.allowed(LABELS, options)
        return self.labels if allowed is None else [r for r, ok in zip(self.labels, allowed.tolist()) if ok]

    # ------------------------------------------------------------------ heads
    def annotate(
        self, x: torch.Tensor, word_mask: torch.Tensor, forms: Sequence[Sequence[str]], options: InferenceOptions
    ) -> list[dict[str, list[str]]]:
        """The output heads' columns of each sentence of a batch, from word vectors ``(batch, 1 + n, width + taps)``
        (:meth:`word_vectors`) and the sentences' forms; a head whose classes the treebank of ``options`` has none of
        fills no column."""
        allowed = {name: self.allowed(name, options) for name in self.heads}
        active = {name: head for name, head in self.heads.items() if allowed[name] is None or bool(allowed[name].any())}
        if not active:
            return [{} for _ in forms]
        inputs = HeadInput.of(x, word_mask, forms)
        columns = {column: [["_"] * len(words) for words in forms] for head in active.values() for column in head.reads}  # unfilled: unknown
        per_head: dict[str, list[list[str]]] = {}
        with self.products(options):
            for name in _in_order(active):  # a head conditioned on another's column after it
                head = active[name]
                head_inputs = replace(inputs, vectors=self.head_vectors(x, head), columns={c: columns[c] for c in head.reads})
                per_head[name] = head.predict(head_inputs, allowed[name])
                columns[head.column] = per_head[name]
        per_head = {name: head.refine(per_head[name], forms, columns, options.treebank) for name, head in active.items()}
        return [{name: values[b] for name, values in per_head.items()} for b in range(x.size(0))]

    def heads_loss(self, x: torch.Tensor, batch: dict[str, Any]) -> torch.Tensor | float:
        """The output heads' losses on word vectors ``(batch, 1 + n, width + taps)``, each times its ``weight`` (0
        without heads)."""
        inputs = HeadInput.of(x, batch["word_mask"], batch["forms"], batch.get("columns"))
        return sum(
            (head.weight * head.loss(replace(inputs, vectors=self.head_vectors(x, head)), batch[f"gold_{name}"]) for name, head in self.heads.items()),
            0.0,
        )

    # ------------------------------------------------------------------ training
    def training_features(self, sentence: Sentence, treebank: str | None = None) -> dict[str, Any]:
        """One training sentence's features, computed once: the encoder's, gold heads and label ids, and each output
        head's gold ids (position 0, ROOT, is padding), the forms (for the heads' word features) and, in a
        multi-treebank model, the id of its ``treebank``."""
        f = sentence_features(self.encoder, sentence.forms, sentence.upos)
        if self.treebanks is not None:
            f["treebank"] = self.treebanks.index(treebank)
        f["forms"] = sentence.forms
        for column in self._read_columns():
            f[f"column_{column}"] = [getattr(w, column) for w in sentence.words]
        f["heads"] = np.asarray([0] + [int(h or 0) for h in sentence.heads], dtype=np.int64)  # trees checked on reading
        f["rels"] = np.asarray([0] + [self.label_index[r] for r in sentence.deprels], dtype=np.int64)
        for name, head in self.heads.items():
            f[f"gold_{name}"] = np.asarray([IGNORE] + head.gold_ids(sentence), dtype=np.int64)
        return f

    def training_batch(self, features: Sequence[dict[str, Any]], device: torch.device) -> dict[str, Any]:
        """A padded training batch on ``device`` from :meth:`training_features` outputs."""
        batch: dict[str, Any] = dict(self.encoder.collate(list(features)))
        width = batch["word_mask"].size(1)
        for key in ("heads", "rels", *(f"gold_{name}" for name in self.heads)):
            t = torch.full((len(features), width), 0 if key in ("heads", "rels") else IGNORE, dtype=torch.long)  # (batch, 1 + n)
            for b, f in enumerate(features):
                t[b, : len(f[key])] = torch.from_numpy(f[key])
            batch[key] = t
        if self.treebanks is not None:
            batch["treebank"] = torch.tensor([f["treebank"] for f in features], dtype=torch.long)  # (batch,)
        columns = {column: [f[f"column_{column}"] for f in features] for column in self._read_columns()}  # gold, for conditioned heads
        return {key: v.to(device) for key, v in batch.items()} | {"forms": [f["forms"] for f in features]} | ({"columns": columns} if columns else {})

    def _read_columns(self) -> list[str]:
        """The columns some output head is conditioned on (``OutputHead.reads``), in a stable order."""
        return sorted({column for head in self.heads.values() for column in head.reads})

    def loss(self, batch: dict[str, Any]) -> torch.Tensor:
        """The training loss of one :meth:`training_batch` (output heads' losses included)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ parsing
    def parse(
        self, sentences: Sequence[Sentence], options: InferenceOptions | None = None, stats: InferenceStats | None = None
    ) -> list[Parse]:
        """A well-formed tree (and the heads' columns) for each sentence, in order; an empty sentence gets empty
        lists. ``options`` over the saved settings (:meth:`settings`); ``stats`` accumulates the run's counters."""
        raise NotImplementedError

    def score(self, sentences: Sequence[Sentence], options: InferenceOptions | None = None) -> Scores:
        """The model's pass over ``sentences`` with ``options``, to decode under other settings that keep its
        ``scoring_settings`` (``spandep tune``'s sweep). Here nothing is kept: each decoding parses again."""
        return Scores(self, list(sentences))

    def device(self) -> torch.device:
        return next(self.parameters()).device


class Scores:
    """A parser's pass over some sentences (:meth:`Parser.score`): :meth:`decode` gives their parses under any
    settings that keep the pass's ``Parser.scoring_settings``, :meth:`report` what the pass says about itself. This
    one keeps nothing of the pass: each decoding is a parse."""

    def __init__(self, parser: Parser, sentences: list[Sentence]) -> None:
        self.parser = parser
        self.sentences = sentences

    def decode(self, options: InferenceOptions) -> tuple[list[Parse], InferenceStats]:
        """The parses with ``options`` (over the saved settings) and their counters."""
        stats = InferenceStats()
        return self.parser.parse(self.sentences, options, stats), stats

    def report(self, gold: Sequence[Sentence]) -> dict[str, Any]:
        """Figures of the pass against the ``gold`` trees of its sentences (none here)."""
        return {}
