"""In-memory sentence types shared by readers, writers, models and evaluation.

A :class:`Sentence` keeps everything a CoNLL-U block holds so that writing it back is lossless:
comment lines, the ten columns of every syntactic word, and the multiword-token / empty-node lines
at their original positions. Models only look at ``words``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

ROOT_HEAD = 0


@dataclass
class Token:
    """One syntactic word (a CoNLL-U line with an integer ID). Columns are kept as raw strings except
    ``id`` and ``head``; ``head`` is ``None`` where the file has ``_``. A parser sets ``head_prob`` and
    ``label_prob``, the probabilities of its chosen head and label (``None`` where unknown; not CoNLL-U columns)."""

    id: int
    form: str
    lemma: str = "_"
    upos: str = "_"
    xpos: str = "_"
    feats: str = "_"
    head: int | None = None
    deprel: str = "_"
    deps: str = "_"
    misc: str = "_"
    head_prob: float | None = None
    label_prob: float | None = None


@dataclass
class Sentence:
    """A sentence: ``words`` are the syntactic words with ids 1..n in order.

    ``extra_lines`` holds multiword-token ranges and empty nodes as ``(k, raw_line)``: the raw line is
    written just before ``words[k]`` (``k == len(words)`` means after the last word).
    ``source`` and ``line`` locate the sentence in its input for error messages. ``confidence``: a parser's
    score of its tree, the expected share of words with the right head and label (``None`` where unknown).
    """

    words: list[Token]
    comments: list[str] = field(default_factory=list)
    extra_lines: list[tuple[int, str]] = field(default_factory=list)
    source: str = "<memory>"
    line: int = 0
    confidence: float | None = None

    def __len__(self) -> int:
        return len(self.words)

    @property
    def forms(self) -> list[str]:
        return [w.form for w in self.words]

    @property
    def heads(self) -> list[int | None]:
        return [w.head for w in self.words]

    @property
    def deprels(self) -> list[str]:
        return [w.deprel for w in self.words]

    @property
    def upos(self) -> list[str]:
        return [w.upos for w in self.words]

    def comment(self, key: str) -> str | None:
        """The value of the ``# key = value`` comment (e.g. ``sent_id``, ``text``), or None."""
        prefix = f"# {key} ="
        for line in self.comments:
            if line.startswith(prefix):
                return line[len(prefix):].strip()
        return None

    def blanked(self, columns: tuple[str, ...]) -> "Sentence":
        """A copy with ``columns`` (``Token`` attributes: ``"upos"``, ``"feats"``, ...) ``_`` for every word."""
        blank = dict.fromkeys(columns, "_")
        return replace(self, words=[replace(w, **blank) for w in self.words])

    @classmethod
    def from_tokens(cls, forms: list[str], source: str = "<memory>", line: int = 0) -> "Sentence":
        """A sentence with only word forms, as for pre-tokenised input."""
        return cls(words=[Token(id=i + 1, form=f) for i, f in enumerate(forms)], source=source, line=line)
