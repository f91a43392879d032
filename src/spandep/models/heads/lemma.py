"""A lemmatizer head: each word's class is an edit script from its form to its lemma, as in UDPipe 2 and spaCy's
edit-tree lemmatizer, so that ``running → run`` and ``swimming → swim`` are one class.

A script is a casing rule and an edit around the longest common substring of (the lower-cased) form and lemma:
cut ``cut_prefix`` characters from the front and ``cut_suffix`` from the end, then add ``add_prefix`` and
``add_suffix``. Casing rules, tried in this order when a script is induced: ``lower`` (edit the lower-cased form;
the lemma is lower case), ``title`` (then capitalise the first character), ``upper`` (then upper-case all), and
``keep`` (edit the form as it is, which always works: ``iPhone → iPhone``). Induction checks every candidate by
applying it, so applying the induced script to the form gives the lemma back for any Unicode strings.

Rules for forms the scripts do not fit: a predicted script that cuts more characters than the form has or leaves
nothing, or a form with a letter of a writing system (Unicode script: Latin, Cyrillic, ...) that no training form
had, gets the form itself as its lemma.

A lexicon comes first, as in Stanza's lemmatizer: a (form, UPOS) pair seen in the training data gets the lemma it had
there most often, with the UPOS the model predicts beside the lemma (the UPOS head); the scripts serve the other
words. On EWT dev it turned 877 lemma errors of the default model into 672 (250 fixed, 45 broken). Where the FEATS
bundle tells a form's lemmas apart (possessive ``her`` is ``her``, the object ``her`` is ``she``), a second table
keyed by (form, UPOS, FEATS) comes before it: only the triples whose most frequent lemma differs from their pair's.

Opt-in (issue 45, docs/heads.md "Morphology heads"): ``upos_embed = D`` and ``feats_embed = D`` embed the word's
UPOS and FEATS bundle (gold in training, the UPOS and FEATS heads' at inference) beside its vector, so that the
script is chosen knowing the word's tag and features (``-ou`` of a Czech feminine instrumental against an adjective).
"""

from __future__ import annotations

import json
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from spandep.data.languages import treebank_language
from spandep.data.sentence import Sentence, Token
from spandep.models.heads.base import ClassifierHead
from spandep.models.heads.dictionary import Dictionary, checked

CASINGS = ("lower", "title", "upper", "keep")
FALLBACKS = ("language", "all")  # Lemmatizer.fallback: what serves a (form, UPOS) pair a treebank's own lexicon lacks


@dataclass(frozen=True)
class EditScript:
    """How a lemma is made from a form (see the module docstring)."""

    casing: str
    cut_prefix: int
    add_prefix: str
    cut_suffix: int
    add_suffix: str

    def apply(self, form: str) -> str | None:
        """The lemma of ``form``, or ``None`` when the script cuts more than the form has."""
        base = form if self.casing == "keep" else form.lower()
        if self.cut_prefix + self.cut_suffix > len(base):
            return None
        kept = self.add_prefix + base[self.cut_prefix : len(base) - self.cut_suffix] + self.add_suffix
        if self.casing == "title":
            return kept[:1].upper() + kept[1:]
        return kept.upper() if self.casing == "upper" else kept

    def to_tag(self) -> str:
        return json.dumps([self.casing, self.cut_prefix, self.add_prefix, self.cut_suffix, self.add_suffix], ensure_ascii=False)

    @classmethod
    def from_tag(cls, tag: str) -> EditScript:
        casing, cut_prefix, add_prefix, cut_suffix, add_suffix = json.loads(tag)
        return cls(casing, cut_prefix, add_prefix, cut_suffix, add_suffix)


def _common_substring(a: str, b: str) -> tuple[int, int, int]:
    """``(i, j, length)``: the longest common substring ``a[i:i+length] == b[j:j+length]``, leftmost in ``a``."""
    best = (0, 0, 0)
    previous = [0] * (len(b) + 1)
    for i in range(1, len(a) + 1):
        current = [0] * (len(b) + 1)
        for j in range(1, len(b) + 1):
            if a[i - 1] == b[j - 1]:
                current[j] = previous[j - 1] + 1
                if current[j] > best[2]:
                    best = (i - current[j], j - current[j], current[j])
        previous = current
    return best


def _edit(casing: str, form: str, lemma: str) -> EditScript:
    """The edit of ``form`` into ``lemma`` around their longest common substring."""
    i, j, length = _common_substring(form, lemma)
    return EditScript(casing, i, lemma[:j], len(form) - i - length, lemma[j + length :])


def induce_script(form: str, lemma: str) -> EditScript:
    """The first casing rule (``CASINGS`` order) whose script turns ``form`` into ``lemma``; ``keep`` always does."""
    for casing in CASINGS[:-1]:
        script = _edit(casing, form.lower(), lemma.lower())
        if script.apply(form) == lemma:
            return script
    return _edit("keep", form, lemma)


def _most_frequent_lemmas(train: Sequence[Sentence], key: Callable[[Token], tuple[str, ...]]) -> dict[tuple[str, ...], str]:
    """``key(word)`` → the lemma the words of that key had most often in ``train`` (the first seen on a tie), sorted by
    key; words without a UPOS or a lemma are left out."""
    counts: defaultdict[tuple[str, ...], Counter[str]] = defaultdict(Counter)
    for sentence in train:
        for w in sentence.words:
            if w.upos != "_" and w.lemma != "_":
                counts[key(w)][w.lemma] += 1
    return {k: lemmas.most_common(1)[0][0] for k, lemmas in sorted(counts.items())}


def lemma_lexicon(train: Sequence[Sentence]) -> dict[str, dict[str, str]]:
    """UPOS → form → the lemma the (form, UPOS) pair had most often in ``train`` (the first seen on a tie); words
    without a UPOS or a lemma are left out."""
    lexicon: dict[str, dict[str, str]] = {}
    for (upos, form), lemma in _most_frequent_lemmas(train, lambda w: (w.upos, w.form)).items():
        lexicon.setdefault(upos, {})[form] = lemma
    return lexicon


def lemma_feats_lexicon(train: Sequence[Sentence], lexicon: dict[str, dict[str, str]]) -> dict[str, dict[str, dict[str, str]]]:
    """UPOS → FEATS → form → the lemma the (form, UPOS, FEATS) triple had most often in ``train`` (the first seen on
    a tie), only where it is not the lemma ``lexicon`` (:func:`lemma_lexicon` of the same data) gives the pair."""
    table: dict[str, dict[str, dict[str, str]]] = {}
    for (upos, feats, form), lemma in _most_frequent_lemmas(train, lambda w: (w.upos, w.feats, w.form)).items():
        if lemma != lexicon[upos][form]:
            table.setdefault(upos, {}).setdefault(feats, {})[form] = lemma
    return table


def lexicons(train: Sequence[Sentence]) -> dict[str, Any]:
    """Both lexicons of ``train``: ``{"lexicon": ..., "feats_lexicon": ...}`` (:func:`lemma_lexicon`,
    :func:`lemma_feats_lexicon`)."""
    lexicon = lemma_lexicon(train)
    return {"lexicon": lexicon, "feats_lexicon": lemma_feats_lexicon(train, lexicon)}


def treebank_lexicons(trains: Mapping[str, Sequence[Sentence]]) -> dict[str, dict[str, Any]]:
    """Each treebank's lexicons from its training sentences: ``{treebank: {"lexicon": ..., "feats_lexicon": ...}}``."""
    return {name: lexicons(train) for name, train in trains.items()}


def kin(tables: Mapping[str, Mapping[str, Any]], treebank: str) -> list[str]:
    """The other treebanks of ``tables`` (:func:`treebank_lexicons`) of ``treebank``'s language
    (:func:`spandep.data.languages.treebank_language`; one it does not know has none), the one with the most (form,
    UPOS) pairs first."""
    language = treebank_language(treebank)
    if language is None:
        return []
    pairs = {k: sum(map(len, t["lexicon"].values())) for k, t in tables.items() if k != treebank and treebank_language(k) == language}
    return sorted(pairs, key=lambda k: (-pairs[k], k))


def looked_up(tables: Sequence[tuple[dict[str, Any], dict[str, Any]]], lemma: str, form: str, tag: str, bundle: str | None) -> str:
    """The lemma of the first ``(lexicon, feats_lexicon)`` of ``tables`` that knows the word: its (form, UPOS, FEATS)
    triple, else its (form, UPOS) pair; ``lemma`` (the script's) where none does."""
    for lexicon, feats_lexicon in tables:
        by_bundle = feats_lexicon.get(tag, {}).get(bundle, {}) if bundle is not None else {}
        found = by_bundle.get(form) or lexicon.get(tag, {}).get(form)
        if found:
            return found
    return lemma


def writing_systems(form: str) -> set[str]:
    """The Unicode scripts of a form's letters (the first word of each letter's name: LATIN, CYRILLIC, CJK, ...)."""
    return {unicodedata.name(c, "?").split(" ")[0] for c in form if c.isalpha()}


class Lemmatizer(ClassifierHead):
    """Edit scripts as classes (``tags`` are :meth:`EditScript.to_tag` strings); ``writing_systems``: the Unicode
    scripts of the training forms' letters; ``lexicon``: UPOS → form → the lemma it had most often in training;
    ``feats_lexicon``: UPOS → FEATS → form → lemma where the bundle changes it (:func:`lemma_feats_lexicon`);
    ``upos_tags``, ``feats_tags``: the UPOS and bundles seen in training, for ``upos_embed`` and ``feats_embed``;
    ``treebank_lexicons``: in a model of several treebanks, each one's two lexicons from its own training data
    (``{treebank: {"lexicon": ..., "feats_lexicon": ...}}``), read by a parse as that treebank first (else a form takes
    the lemma it had most often in any language: Nynorsk's ``vere`` for Bokmål's ``er``); ``fallback`` says what
    serves a pair its own lacks: ``"language"``, the lexicons of the other treebanks of its language, the one with the
    most pairs first (what training a model of several treebanks writes: the lexicon of them all is then not kept),
    or ``"all"``, the lexicons of all the treebanks together (a folder written before; both chosen on dev,
    docs/heads.md); ``dictionary``: ``{"language": ..., "mode": ...}``, a language's dictionary for the forms no
    lexicon has (``models/heads/dictionary.py``), or ``None``; ``treebank_dictionaries``: in a model of several
    treebanks, ``{treebank: {"language": ..., "mode": ...}}``, each chosen on its treebank's dev split, read by a parse
    as that treebank instead of ``dictionary``."""

    name = "lemma"
    column = "lemma"
    config_defaults = {**ClassifierHead.config_defaults, "upos_embed": 0, "feats_embed": 0}
    stored_apart = ("lexicon", "feats_lexicon", "treebank_lexicons")  # tables of the training words, megabytes of JSON in a pool model

    def __init__(
        self, n_in: int, tags: Sequence[str], writing_systems: Sequence[str] = (), lexicon: dict[str, dict[str, str]] | None = None,
        upos_embed: int = 0, feats_embed: int = 0, upos_tags: Sequence[str] = (), feats_tags: Sequence[str] = (),
        feats_lexicon: dict[str, dict[str, dict[str, str]]] | None = None,
        treebank_lexicons: dict[str, dict[str, Any]] | None = None, fallback: str = "all", dictionary: dict[str, str] | None = None,
        treebank_dictionaries: dict[str, dict[str, str]] | None = None, **settings: Any,
    ) -> None:
        if fallback not in FALLBACKS:
            raise ValueError(f"the lemma head's fallback must be {' or '.join(map(repr, FALLBACKS))}, not {fallback!r}")
        self.dictionary = None if dictionary is None else checked(dictionary)
        self.treebank_dictionaries = {name: checked(setting) for name, setting in (treebank_dictionaries or {}).items()}
        given = {"upos": (upos_tags, upos_embed), "feats": (feats_tags, feats_embed)}
        conditions = {column: (list(vocab), dim) for column, (vocab, dim) in given.items() if dim}
        super().__init__(n_in, tags, conditions=conditions, **settings)
        for column, (vocab, dim) in conditions.items():
            self.hparams |= {f"{column}_embed": dim, f"{column}_tags": vocab}
        self.writing_systems = frozenset(writing_systems)
        self.hparams["writing_systems"] = sorted(self.writing_systems)
        self.lexicon = lexicon or {}
        if lexicon is not None:
            self.hparams["lexicon"] = self.lexicon
        self.feats_lexicon = feats_lexicon or {}
        if feats_lexicon is not None:
            self.hparams["feats_lexicon"] = self.feats_lexicon
        self.treebank_lexicons = treebank_lexicons or {}
        if treebank_lexicons is not None:
            self.hparams["treebank_lexicons"] = self.treebank_lexicons
        self.fallback = fallback
        if fallback != "all":
            self.hparams["fallback"] = fallback
        if self.dictionary is not None:
            self.hparams["dictionary"] = self.dictionary
        if self.treebank_dictionaries:
            self.hparams["treebank_dictionaries"] = self.treebank_dictionaries
        self._kin: dict[str, list[str]] = {}
        self._dictionaries: dict[str | None, Dictionary] = {}
        self.scripts = [EditScript.from_tag(t) for t in self.tags]

    @classmethod
    def columns_read(cls, settings: dict[str, Any]) -> tuple[str, ...]:
        return tuple(column for column in ("upos", "feats") if settings.get(f"{column}_embed"))

    @classmethod
    def gold_class(cls, form: str, value: str) -> str:
        return "_" if value == "_" else induce_script(form, value).to_tag()

    @classmethod
    def config_from_data(cls, settings: dict[str, Any], train: Sequence[Sentence], first: Sequence[str] = ()) -> dict[str, Any]:
        seen = sorted(set().union(*(writing_systems(w.form) for s in train for w in s.words)))
        config = {**super().config_from_data(settings, train, first), "writing_systems": seen, **lexicons(train)}
        for column in ("upos", "feats"):
            if settings[f"{column}_embed"]:
                unknown = {"_"} if column == "upos" else set()  # in FEATS, "_" is a value: no features
                config[f"{column}_tags"] = sorted({getattr(w, column) for s in train for w in s.words} - unknown)
        return config

    @classmethod
    def treebank_config(cls, config: dict[str, Any], trains: Mapping[str, Sequence[Sentence]]) -> dict[str, Any]:
        """Each treebank's own lexicons (:func:`treebank_lexicons`), those of its language serving a pair its own lacks
        (``fallback``): the lexicons of them all are not kept."""
        kept = {k: v for k, v in config.items() if k not in ("lexicon", "feats_lexicon")}
        return {**kept, "treebank_lexicons": treebank_lexicons(trains), "fallback": "language"}

    def tables(self, treebank: str | None = None) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """The ``(lexicon, feats_lexicon)`` pairs a parse as ``treebank`` reads, in order (``fallback``)."""
        own = self.treebank_lexicons.get(treebank) if treebank is not None else None
        tables = [(own["lexicon"], own["feats_lexicon"])] if own else []
        if self.fallback == "language" and treebank is not None:
            if treebank not in self._kin:
                self._kin[treebank] = kin(self.treebank_lexicons, treebank)
            tables += [(self.treebank_lexicons[k]["lexicon"], self.treebank_lexicons[k]["feats_lexicon"]) for k in self._kin[treebank]]
        else:
            tables.append((self.lexicon, self.feats_lexicon))
        return [t for t in tables if t[0]]

    def dictionary_for(self, treebank: str | None, setting: dict[str, str]) -> Dictionary:
        """The dictionary ``setting`` as a parse as ``treebank`` applies it: the forms and lemmas its lexicons know
        (:meth:`tables`) count as seen."""
        tables = self.tables(treebank)
        forms_seen = {form for lexicon, _ in tables for by_form in lexicon.values() for form in by_form}
        lemmas_seen = {lemma for lexicon, _ in tables for by_form in lexicon.values() for lemma in by_form.values()}
        return Dictionary(checked(setting), forms_seen, lemmas_seen)

    def refine(
        self, values: list[list[str]], forms: Sequence[Sequence[str]], columns: dict[str, list[list[str]]], treebank: str | None = None,
    ) -> list[list[str]]:
        """The lexicon's lemma where it knows the word's (form, predicted UPOS, predicted FEATS), else its (form,
        predicted UPOS); the script's elsewhere; then the treebank's (else the head's) dictionary for the forms no
        lexicon has. A parse as a treebank with lexicons of its own reads those first."""
        tables = self.tables(treebank)
        if not tables or "upos" not in columns:
            return values
        bundles = columns.get("feats") or [[None] * len(words) for words in forms]  # no FEATS head: the pairs alone
        values = [
            [looked_up(tables, lemma, form, tag, bundle) for lemma, form, tag, bundle in zip(row, words, tags, feats)]
            for row, words, tags, feats in zip(values, forms, columns["upos"], bundles)
        ]
        setting = self.treebank_dictionaries.get(treebank) if treebank is not None else None
        setting = setting or self.dictionary
        if setting is None:
            return values
        if treebank not in self._dictionaries:
            self._dictionaries[treebank] = self.dictionary_for(treebank, setting)
        dictionary = self._dictionaries[treebank]
        return [
            [dictionary.lemma(lemma, form, tag) for lemma, form, tag in zip(row, words, tags)]
            for row, words, tags in zip(values, forms, columns["upos"])
        ]

    def value(self, tag: str, form: str) -> str:
        if not writing_systems(form) <= self.writing_systems:
            return form
        lemma = self.scripts[self.index[tag]].apply(form)
        return lemma or form  # None (cuts too much) or empty: CoNLL-U has no empty fields
