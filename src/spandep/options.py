"""Inference options: one object from the API, the CLI, the workers and the integrations down to the model.

Every model setting is optional: ``None`` keeps the model's own value, chosen on dev and saved with it
(``config.json``'s ``inference`` table). ``decoder`` has one user-facing vocabulary for every parser type,
``mst`` (non-projective) or ``projective``; each parser type maps it to its own algorithm
(``Parser.decoders``). Options a parser type does not have (``k`` for a Biaffine parser) are refused by the
parser (:meth:`spandep.models.base.Parser.settings`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from spandep.limits import limit

__all__ = ["DECODER_NAMES", "KEEP_CHOICES", "LABEL_SOURCES", "MODEL_SETTINGS", "PRECISIONS", "InferenceOptions", "InferenceStats"]

DECODER_NAMES = ("mst", "projective")
LABEL_SOURCES = ("linker", "word")
PRECISIONS = ("float32", "bfloat16")  # of the matrix products (docs/speed.md, "bfloat16")
KEEP_CHOICES = ("heads", "heads,deprels")  # what of the input's tree a parse keeps (docs/constrained.md)
DEFAULT_BATCH_TOKENS = 1000  # 8 % faster than 4,000 with the same parses (BENCHMARKS.md, issue 48); every front end's default


def _check_limit(name: str, value: object) -> None:
    problem = limit(name).problem(value)
    if problem:
        raise ValueError(problem)


def _check_choice(name: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"unknown {name} {value!r}; use {' or '.join(choices)}")


def _check_bool(name: str, value: object) -> None:
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be true or false, not {value!r}")


@dataclass(frozen=True)
class InferenceOptions:
    """How to parse. ``decoder``: ``mst`` | ``projective``. Span models: ``k`` spans proposed per word, ``lam``
    the weight of link scores against span scores, ``retrieval`` (each query's best parent span becomes a
    candidate), ``mutual`` (add the child-side link score), ``arc_weight`` (weight of the word-level head's arc
    log-probabilities in the link scores), ``label_source`` (``linker`` | ``word``) and ``prune`` (a word's proposed
    spans after its best are kept only where their probability is at least this share of the best's: fewer MRC
    queries; 0 keeps all ``k``). ``precision``: the matrix products' ``float32`` or ``bfloat16`` (the encoder's, the output heads', a span model's
    proposal and word scorer, a Biaffine model's scorer; a span model's linker stays float32; where the processor computes it natively, else
    float32; the model's saved choice was checked on dev). ``batch_tokens``: padded
    tokens per batch (lower it if memory runs out). ``treebank``: which of a multi-treebank model's treebanks to
    parse as (its embedding, its labels and classes; docs/design.md, "Several treebanks"); like ``batch_tokens`` it
    is a choice of the run, never a saved model setting. ``enhanced``: write each parsed sentence's enhanced graph
    (DEPS) by the rules of :mod:`spandep.enhancement`, another choice of the run (docs/enhanced.md). ``keep``: ``heads`` keeps every HEAD the input gives (an
    integer; ``_`` is free) and completes the tree around them, ``heads,deprels`` also each DEPREL given with a HEAD
    (docs/constrained.md); a choice of the run too."""

    decoder: str | None = None
    k: int | None = None
    lam: float | None = None
    retrieval: bool | None = None
    mutual: bool | None = None
    arc_weight: float | None = None
    label_source: str | None = None
    prune: float | None = None
    precision: str | None = None
    batch_tokens: int = DEFAULT_BATCH_TOKENS
    treebank: str | None = None
    enhanced: bool = False
    keep: str | None = None

    def __post_init__(self) -> None:
        checks = {
            "decoder": lambda v: _check_choice("decoder", v, DECODER_NAMES),
            "k": lambda v: _check_limit("k", v),
            "lam": lambda v: _check_limit("lam", v),
            "retrieval": lambda v: _check_bool("retrieval", v),
            "mutual": lambda v: _check_bool("mutual", v),
            "arc_weight": lambda v: _check_limit("arc_weight", v),
            "label_source": lambda v: _check_choice("label_source", v, LABEL_SOURCES),
            "prune": lambda v: _check_limit("prune", v),
            "precision": lambda v: _check_choice("precision", v, PRECISIONS),
            "keep": lambda v: _check_choice("keep", v, KEEP_CHOICES),
        }
        for name, check in checks.items():
            value = getattr(self, name)
            if value is not None:
                check(value)
        _check_limit("batch_tokens", self.batch_tokens)
        _check_bool("enhanced", self.enhanced)
        if self.treebank is not None and (not isinstance(self.treebank, str) or not self.treebank):
            raise ValueError(f"treebank must be a treebank's name, not {self.treebank!r}")

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> InferenceOptions:
        """Options from a plain dict (a saved model's ``inference`` table, keyword arguments); unknown keys are a
        ``ValueError`` naming the known ones."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown inference option(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        return cls(**values)

    def given(self) -> dict[str, Any]:
        """The model settings set here (not ``None``), without the run's own choices (``RUN_CHOICES``)."""
        return {k: v for k, v in asdict(self).items() if v is not None and k not in RUN_CHOICES}

    def over(self, saved: InferenceOptions) -> InferenceOptions:
        """``saved`` with the settings given here put over it (the run's choices, ``RUN_CHOICES``, from here)."""
        return replace(saved, batch_tokens=self.batch_tokens, treebank=self.treebank, enhanced=self.enhanced, keep=self.keep, **self.given())


RUN_CHOICES = ("batch_tokens", "treebank", "enhanced", "keep")  # options of a run, not settings a model saves
MODEL_SETTINGS = tuple(f.name for f in fields(InferenceOptions) if f.name not in RUN_CHOICES)


@dataclass
class InferenceStats:
    """Counters of parsing runs, accumulated with :meth:`add`; a parser type fills those that apply to it.

    ``queries``: MRC queries run (deduplicated per sentence, retrieval round included); ``retrieved_spans``: new
    candidates added by retrieval; ``dp_fallbacks``: sentences where the projective span decoder found no projective
    tree among the candidates and returned the non-projective one's; ``too_long``: sentences decoded without the
    linker because their queries exceed its length limit; ``windowed``: sentences longer than
    ``spandep.pipeline.long.LONG_SENTENCE_WORDS`` parsed in overlapping windows (each counts once in ``sentences``;
    the other counters add their windows' counts, so ``too_long`` may count windows).
    """

    sentences: int = 0
    queries: int = 0
    retrieved_spans: int = 0
    dp_fallbacks: int = 0
    too_long: int = 0
    windowed: int = 0
    seconds: float = 0.0

    def add(self, other: InferenceStats) -> None:
        """Accumulate another run's counters into this one."""
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))
