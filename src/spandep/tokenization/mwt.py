"""Multiword-token expansion learned from a treebank's training file.

Once the network has said a token is a multiword token, its words come from, in order:

1. the words seen most often under that exact surface form in training ("du" → "de le");
2. the same for the lowercased form, with the case of the surface put back (all capitals, or a capital first);
3. a suffix rule: every training multiword token gives one, "surface = stem + suffix, words = stem + first-word
   ending, then the other words", where the stem is the longest common prefix of the surface and its first word
   (it "farlo" → stem "far", suffix "lo": "far" + "", "lo"; en "don't" → "do" + "", "n't"); the longest suffix of
   the token with a rule seen at least ``min_rule_count`` times, with a non-empty stem left, gives the words;
4. a prefix rule, for the languages that write their clitics before the word (Hebrew ``והרווחה`` → ``ו`` ``ה``
   ``רווחה``): every training multiword token whose last word ends its surface gives "surface = prefix + last word,
   words = the prefix's words, then the last word"; the longest prefix of the token with a rule seen at least
   ``min_rule_count`` times, with a non-empty word left, gives the words (the words of that prefix seen most often);
5. nothing: the token stays a single word.

``rates`` counts, per lowercased surface seen as a multiword token, how often it was one and how often it was seen at
all, for the option of deciding by the lexicon where the form is known.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MwtLexicon"]

Words = tuple[str, ...]


def _common_prefix(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _cased(surface: str, words: Words) -> Words:
    """``words`` (lowercase) with the case of ``surface``: copied character by character where the words spell the
    surface, else all capitals or a capital first as the surface has."""
    if "".join(words) == surface.lower() and len(surface.lower()) == len(surface):
        cuts = [0]
        for w in words:
            cuts.append(cuts[-1] + len(w))
        return tuple(surface[a:b] for a, b in zip(cuts, cuts[1:]))
    if len(surface) > 1 and surface.isupper():
        return tuple(w.upper() for w in words)
    if surface[:1].isupper():
        return (words[0][:1].upper() + words[0][1:],) + words[1:]
    return words


def _most_common(counts: dict[str, Counter[Words]]) -> dict[str, Words]:
    return {k: c.most_common(1)[0][0] for k, c in counts.items()}


@dataclass
class MwtLexicon:
    """What :meth:`expand` needs (module docstring); JSON-serialisable through :meth:`to_json`."""

    exact: dict[str, Words] = field(default_factory=dict)
    lower: dict[str, Words] = field(default_factory=dict)
    rules: dict[str, tuple[str, Words, int]] = field(default_factory=dict)  # suffix → (first-word ending, rest, count)
    rates: dict[str, tuple[int, int]] = field(default_factory=dict)  # lowercased surface → (as MWT, seen)
    min_rule_count: int = 2
    prefixes: dict[str, tuple[Words, int]] = field(default_factory=dict)  # lowercased prefix → (its words, count)

    @classmethod
    def learn(cls, tokens: Iterable[tuple[str, Words]], min_rule_count: int = 2) -> "MwtLexicon":
        """From ``(surface, words)`` of every training token (``words`` is ``()`` for a plain token)."""
        exact: dict[str, Counter[Words]] = defaultdict(Counter)
        lower: dict[str, Counter[Words]] = defaultdict(Counter)
        rules: dict[str, Counter[tuple[str, Words]]] = defaultdict(Counter)
        prefixes: dict[str, Counter[Words]] = defaultdict(Counter)
        seen: Counter[str] = Counter()
        for surface, words in tokens:
            low = surface.lower()
            seen[low] += 1
            if not words:
                continue
            low_words = tuple(w.lower() for w in words)
            exact[surface][words] += 1
            lower[low][low_words] += 1
            stem = _common_prefix(low, low_words[0])
            if stem:
                rules[low[stem:]][(low_words[0][stem:], low_words[1:])] += 1
            if len(low) > len(low_words[-1]) and low.endswith(low_words[-1]):
                prefixes[low[: len(low) - len(low_words[-1])]][low_words[:-1]] += 1
        best_rules = {}
        for suffix, outcomes in rules.items():
            (ending, rest), count = outcomes.most_common(1)[0]
            best_rules[suffix] = (ending, rest, count)
        rates = {low: (sum(c.values()), seen[low]) for low, c in lower.items()}
        best_prefixes = {prefix: c.most_common(1)[0] for prefix, c in prefixes.items()}
        return cls(_most_common(exact), _most_common(lower), best_rules, rates, min_rule_count, best_prefixes)

    def expand(self, surface: str) -> Words:
        """The words of the multiword token ``surface``, or ``()`` where nothing applies (module docstring)."""
        if surface in self.exact:
            return self.exact[surface]
        low = surface.lower()
        if low in self.lower:
            return _cased(surface, self.lower[low])
        for cut in range(1, len(low)):
            rule = self.rules.get(low[cut:])
            if rule is not None and rule[2] >= self.min_rule_count:
                ending, rest, _ = rule
                return _cased(surface, (low[:cut] + ending,) + rest)
        for cut in range(len(low) - 1, 0, -1):
            found = self.prefixes.get(low[:cut])
            if found is not None and found[1] >= self.min_rule_count:
                return _cased(surface, found[0] + (low[cut:],))
        return ()

    def known_rate(self, surface: str) -> float | None:
        """How often the lowercased ``surface`` was a multiword token in training, or None if it never was."""
        counts = self.rates.get(surface.lower())
        return None if counts is None else counts[0] / counts[1]

    def to_json(self) -> dict[str, Any]:
        return {
            "exact": {k: list(v) for k, v in self.exact.items()},
            "lower": {k: list(v) for k, v in self.lower.items()},
            "rules": {k: [e, list(r), n] for k, (e, r, n) in self.rules.items()},
            "rates": {k: list(v) for k, v in self.rates.items()},
            "min_rule_count": self.min_rule_count,
            "prefixes": {k: [list(w), n] for k, (w, n) in self.prefixes.items()},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "MwtLexicon":
        return cls(
            {k: tuple(v) for k, v in data["exact"].items()},
            {k: tuple(v) for k, v in data["lower"].items()},
            {k: (e, tuple(r), int(n)) for k, (e, r, n) in data["rules"].items()},
            {k: (int(a), int(b)) for k, (a, b) in data["rates"].items()},
            int(data["min_rule_count"]),
            {k: (tuple(w), int(n)) for k, (w, n) in data.get("prefixes", {}).items()},  # none in a lexicon learned before
        )
