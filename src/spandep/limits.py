"""Every bound on what comes from outside (a user, a file, a client), in one place.

Each :class:`Limit` has a name, the values it allows (a :class:`~spandep.checks.Range`) and one line saying what it
bounds; a value out of it is one line naming the limit (the command line exits 2, the service answers 400 or 413).
docs/limits.md lists them all (``tests/test_limits.py`` keeps that table equal to :data:`LIMITS`).
"""

from __future__ import annotations

from dataclasses import dataclass

from spandep.checks import Range

__all__ = ["LIMITS", "Limit", "limit"]


@dataclass(frozen=True)
class Limit:
    """A bound: ``name`` (as the option or field it bounds is spelt), ``allowed`` and ``what`` it bounds and why."""

    name: str
    allowed: Range
    what: str

    @property
    def high(self) -> float:
        return self.allowed.high

    def problem(self, value: object, label: str | None = None) -> str | None:
        """"LABEL must be an int in [1, 64], not 1000000000" (``label`` defaults to the name), or ``None``."""
        return self.allowed.problem(label or self.name, value)


LIMITS: dict[str, Limit] = {
    lim.name: lim
    for lim in (
        # inference settings (CLI options, spandep.load(), config [inference], the service's fields)
        Limit("k", Range(1, 64), "span models: spans proposed per word (memory and time grow with k per word)"),
        Limit("lam", Range(0, 1000, integer=False), "span models: weight of link scores against span scores"),
        Limit("arc_weight", Range(0, 1000, integer=False), "span models: weight of the word head's arc scores"),
        Limit("batch_tokens", Range(1, 50_000), "padded words per model batch (memory grows with it)"),
        # input read from a file, standard input or a request
        Limit("line_chars", Range(1, 1_000_000), "characters in one line of any text input; a longer line is an error after reading that many"),
        Limit("token_chars", Range(1, 4096), "characters in one token or word"),
        Limit("sentence_words", Range(1, 100_000), "words in one sentence given to spandep parse or the API"),
        # reading raw text (spandep parse, the API, the service): memory stays bounded on any input
        Limit("paragraph_chars", Range(1, 1_000_000), "raw text: characters of a paragraph tokenized as one; a longer one is cut after the line that reaches this many, and its sentence going on over that line end is ended there (no character is lost)"),
    )
}


def limit(name: str) -> Limit:
    """The limit called ``name`` (a ``KeyError`` for a name not in :data:`LIMITS`: a bug)."""
    return LIMITS[name]
