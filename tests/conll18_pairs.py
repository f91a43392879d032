"""Gold / system CoNLL-U pairs for the CoNLL 2018 scorer tests: a real treebank excerpt with a system file made
from it by a seeded random retokenisation (tokens merged and split, multiword tokens dropped, added, regrouped
and re-expanded, sentence boundaries moved, heads, labels, tags, features and lemmas changed), and wholly random
documents that spell the same random text."""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field, replace

from spandep.data.conllu import format_sentence, read_conllu
from spandep.data.sentence import Sentence, Token

LABELS = ("nsubj", "obj", "obl", "obl:tmod", "nmod", "det", "case", "cc", "conj", "punct", "amod", "aux:pass", "mark")
UPOS = ("NOUN", "VERB", "ADP", "DET", "PUNCT")


@dataclass
class Tok:
    """A token: one word, or a multiword token (``mwt``) with its words. While a document is built, a word's ``id``
    is a key through the whole document (kept by the system words made from a gold word) and its ``head`` is its
    head's key (None: the root)."""

    form: str
    words: list[Token]
    mwt: bool = False


@dataclass
class Doc:
    sentences: list[list[Tok]] = field(default_factory=list)


def from_sentences(sentences: list[Sentence]) -> Doc:
    """A :class:`Doc` of read sentences (empty nodes left out); keys number the words through the document."""
    doc = Doc()
    base = 0
    for sent in sentences:
        ranges = {}
        for _, line in sent.extra_lines:
            cols = line.split("\t")
            if "-" in cols[0] and not cols[0].startswith("#"):
                first, last = map(int, cols[0].split("-"))
                ranges[first] = (last, cols[1])
        toks: list[Tok] = []
        i = 0
        while i < len(sent.words):
            last, form = ranges.get(i + 1, (i + 1, sent.words[i].form))
            words = [
                Token(base + w.id, w.form, w.lemma, w.upos, w.xpos, w.feats,
                      None if w.head == 0 else base + w.head, w.deprel)
                for w in sent.words[i:last]
            ]
            toks.append(Tok(form, words, mwt=(i + 1) in ranges))
            i = last
        doc.sentences.append(toks)
        base += len(sent.words)
    return doc


def to_conllu(doc: Doc, rng: random.Random) -> str:
    """CoNLL-U text of ``doc``; the heads of each sentence are made a tree first (:func:`_tree`)."""
    blocks = []
    for toks in doc.sentences:
        words = [w for t in toks for w in t.words]
        local = {w.id: i + 1 for i, w in enumerate(words)}
        heads = _tree([local.get(w.head, -1) if w.head is not None else 0 for w in words], rng)
        lines = []
        n = 0
        for t in toks:
            if t.mwt:
                lines.append(f"{n + 1}-{n + len(t.words)}\t{t.form}" + "\t_" * 8)
            for w in t.words:
                n += 1
                columns = (n, w.form, w.lemma, w.upos, w.xpos, w.feats, heads[n - 1], w.deprel, "_", "_")
                lines.append("\t".join(map(str, columns)))
        blocks.append("\n".join(lines) + "\n\n")
    return "".join(blocks)


def _tree(heads: list[int], rng: random.Random) -> list[int]:
    """A tree close to ``heads`` (1-based; 0 root, -1 unknown): the first root stays the only root, unknown heads
    and self-loops get a random head, and every cycle is broken by attaching one of its words to the root."""
    n = len(heads)
    root = next((i for i, h in enumerate(heads) if h == 0), rng.randrange(n))
    out = [0 if i == root else h if h > 0 and h != i + 1 else rng.choice([j + 1 for j in range(n) if j != i] or [0])
           for i, h in enumerate(heads)]
    for start in range(n):
        seen: set[int] = set()
        node = start
        while out[node] != 0 and node not in seen:
            seen.add(node)
            node = out[node] - 1
        if out[node] != 0:  # walked back into a cycle through ``node``
            out[node] = root + 1
    return out


def _maybe(rng: random.Random, p: float) -> bool:
    return rng.random() < p


def _noisy(w: Token, rng: random.Random, keys: list[int]) -> Token:
    """``w`` with some of its columns changed (head, label, subtype, UPOS, XPOS, features, lemma)."""
    if _maybe(rng, 0.1):
        w = replace(w, head=rng.choice(keys))
    if _maybe(rng, 0.1):
        w = replace(w, deprel=rng.choice(LABELS))
    elif _maybe(rng, 0.1):  # a subtype added or removed: only the full-label LAS sees it
        w = replace(w, deprel=w.deprel.split(":")[0] if ":" in w.deprel else w.deprel + ":sub")
    if _maybe(rng, 0.1):
        w = replace(w, upos=rng.choice(UPOS))
    if _maybe(rng, 0.05):
        w = replace(w, xpos="X")
    if _maybe(rng, 0.1):
        w = replace(w, feats=rng.choice(["_", "Number=Sing", "Typo=Yes|" + w.feats if w.feats != "_" else "Typo=Yes"]))
    if _maybe(rng, 0.1):
        w = replace(w, lemma=w.lemma.upper())
    return w


def _retokenise(toks: list[Tok], rng: random.Random, next_key: list[int]) -> list[Tok]:
    """One sentence's tokens with random merges, splits and multiword-token changes."""

    def new_word(form: str) -> Token:
        next_key[0] += 1
        return Token(next_key[0], form, form, rng.choice(UPOS), "_", "_", None, rng.choice(LABELS))

    out: list[Tok] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        r = rng.random() if _maybe(rng, 0.6 if t.mwt else 0.3) else 1.0  # r >= 0.8: the token is kept
        if t.mwt and r < 0.2:  # the multiword token not expanded: one word, the first word's key and columns
            out.append(Tok(t.form, [replace(t.words[0], form=t.form)]))
        elif t.mwt and r < 0.35:  # expanded into other words: the first one changed, one word dropped or added
            words = [replace(t.words[0], form=t.words[0].form + "x")] + t.words[1:]
            words = words[:-1] if len(words) > 2 and _maybe(rng, 0.5) else words + [new_word(t.form)]
            out.append(Tok(t.form, words, mwt=True))
        elif t.mwt and r < 0.5 and len(t.form) > 1:  # split into two plain tokens
            cut = rng.randrange(1, len(t.form))
            first, second = replace(t.words[0], form=t.form[:cut]), new_word(t.form[cut:])
            out += [Tok(first.form, [first]), Tok(second.form, [second])]
        elif nxt is not None and r < 0.6:  # merged with the next token into one multiword token, words kept
            out.append(Tok(t.form + nxt.form, t.words + nxt.words, mwt=True))
            i += 1
        elif not t.mwt and nxt is not None and not nxt.mwt and r < 0.7:  # merged with the next into one word
            out.append(Tok(t.form + nxt.form, [replace(t.words[0], form=t.form + nxt.form)]))
            i += 1
        elif not t.mwt and len(t.form) > 1 and r < 0.8:  # split: two tokens or a multiword token of two words
            cut = rng.randrange(1, len(t.form))
            first, second = replace(t.words[0], form=t.form[:cut]), new_word(t.form[cut:])
            out += [Tok(t.form, [first, second], mwt=True)] if _maybe(rng, 0.5) else [
                Tok(first.form, [first]), Tok(second.form, [second])]
        else:
            out.append(t)
        i += 1
    return out


def system_doc(gold: Doc, rng: random.Random) -> Doc:
    """A system version of ``gold``: about one token in four retokenised, sentence boundaries removed and added,
    columns made noisy."""
    next_key = [max(w.id for s in gold.sentences for t in s for w in t.words)]
    flat: list[Tok] = []
    ends: set[int] = set()
    for toks in gold.sentences:
        flat += _retokenise(toks, rng, next_key)
        ends.add(len(flat))
    ends = {e for e in ends if not _maybe(rng, 0.2)} | {rng.randrange(1, len(flat)) for _ in range(len(ends) // 5)}
    ends.add(len(flat))
    keys = [w.id for t in flat for w in t.words]
    doc = Doc()
    start = 0
    for end in sorted(ends):
        doc.sentences.append([Tok(t.form, [_noisy(w, rng, keys) for w in t.words], t.mwt) for t in flat[start:end]])
        start = end
    return doc


def excerpt(path: str, first: int, count: int) -> tuple[str, list[Sentence]]:
    """The CoNLL-U text of sentences ``first .. first + count - 1`` of ``path`` (as in the file) and those sentences."""
    sentences = list(itertools.islice(read_conllu(path), first, first + count))
    return "".join(map(format_sentence, sentences)), sentences


def random_pair(rng: random.Random) -> tuple[str, str]:
    """Two random documents over the same random text, each with its own tokens, multiword tokens (with random
    word forms), sentences, trees and columns; some tokens hold a space."""
    text = "".join(rng.choice("aAbB.é") for _ in range(rng.randint(1, 40)))
    return to_conllu(_random_doc(text, rng), rng), to_conllu(_random_doc(text, rng), rng)


def _random_doc(text: str, rng: random.Random) -> Doc:
    flat: list[Tok] = []
    key = 0
    i = 0
    while i < len(text):
        form = text[i:i + rng.randint(1, 4)]
        i += len(form)
        if len(form) > 1 and _maybe(rng, 0.1):
            form = form[0] + rng.choice(" \u00a0\u3000") + form[1:]
        mwt = _maybe(rng, 0.35)
        forms = [rng.choice(["a", "b", "ab", "A", "é", form]) for _ in range(rng.randint(1, 3))] if mwt else [form]
        words = []
        for f in forms:
            key += 1
            words.append(Token(key, f, rng.choice(["_", "a", "b"]), rng.choice(UPOS), rng.choice("XY"),
                              rng.choice(["_", "Number=Sing", "Number=Sing|Typo=Yes", "Case=Nom|Number=Plur"]),
                              None, rng.choice(LABELS + ("root",))))
        flat.append(Tok(form, words, mwt))
    keys = [w.id for t in flat for w in t.words]
    for t in flat:
        for w in t.words:
            w.head = rng.choice(keys) if _maybe(rng, 0.9) else None
    ends = sorted({rng.randrange(1, len(flat) + 1) for _ in range(rng.randint(0, 4))} | {len(flat)})
    return Doc([flat[a:b] for a, b in zip([0] + ends, ends)])
