"""The spaCy pipeline component ``"spandep"``: dependency trees (and tags, features and lemmas where the model
predicts them) with their confidence on spaCy Docs.

``nlp = spacy.blank("en"); nlp.add_pipe("spandep", config={"model": None})`` (a shipped model's name such as
``"en"``, a model folder, or ``None``: ``$SPANDEP_MODEL``, else the shipped default; other settings: ``decoder``,
``batch_tokens``, ``treebank`` (a model trained on several: the one to parse as) and ``inference``, a table of the
model's inference settings such as ``{"k": 5}``, as in :func:`spandep.load`).

- Sentences: a Doc whose sentence boundaries are already set (a ``sentencizer`` or ``senter`` earlier in the
  pipeline, or ``sent_starts`` given by hand) is parsed one sentence at a time; otherwise its text is split into
  sentences by the model's tokenizer, as ``spandep parse --input-format text`` does (a sentence starts at the first
  spaCy token at or after its first character). Either way spaCy's tokens are kept.
- Sets ``token.head`` (a root is its own head), ``token.dep_`` (UD relations; the root's is ``root``) and, where
  the model has the output heads, ``token.pos_`` (UPOS), ``token.tag_`` (XPOS), ``token.morph`` (FEATS) and
  ``token.lemma_``; ``doc.sents`` then follows the trees. Annotations already on the Doc are kept (and POS tags are
  given to models that take UPOS as input).
- Confidence (extension attributes): ``token._.head_prob`` and ``token._.label_prob``, the probabilities of the
  token's chosen head and label, and ``span._.confidence`` of a sentence (``doc.sents``), the mean over its words of
  their product (its expected LAS); ``None`` where unknown (whitespace tokens).
- Whitespace tokens are not parsed: each is attached to the word before it in its sentence (else the one after)
  with the label ``dep``.

The factory is registered through the ``spacy_factories`` entry point, so ``add_pipe("spandep")`` works without
importing spandep; importing this module registers it too. spaCy loads the module whenever it builds a pipeline,
so it imports nothing heavy: the parser is loaded when the component is made.
"""

from bisect import bisect_left
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
from spacy.language import Language
from spacy.parts_of_speech import IDS as POS_IDS
from spacy.tokens import Doc, Span
from spacy.tokens import Token as SpacyToken
from spacy.util import minibatch

from spandep.data.sentence import Sentence, Token
from spandep.options import DEFAULT_BATCH_TOKENS
from spandep.tokenization.text import token_ranges

if TYPE_CHECKING:
    from spandep.api import Pipeline
    from spandep.tokenization.text import Tokenizer

__all__ = ["SPACE_LABEL", "SpandepComponent", "make_spandep"]

SPACE_LABEL = "dep"  # relation of a whitespace token to the word before it
COLUMNS = (("TAG", "xpos"), ("LEMMA", "lemma"), ("MORPH", "feats"))  # spaCy attribute, Token column


def _sentence_confidence(span: Span) -> float | None:
    """The mean over the span's words of head probability × label probability (``None`` without any)."""
    probs = [t._.head_prob * t._.label_prob for t in span if t._.head_prob is not None]
    return sum(probs) / len(probs) if probs else None


for _name in ("head_prob", "label_prob"):
    if not SpacyToken.has_extension(_name):
        SpacyToken.set_extension(_name, default=None)
if not Span.has_extension("confidence"):
    Span.set_extension("confidence", getter=_sentence_confidence)


def sentence_ranges(doc: Doc, tokenizer: "Tokenizer") -> list[tuple[int, int]]:
    """Token ranges ``[start, end)`` of the Doc's sentences (its own boundaries, else ``tokenizer``'s); whitespace-only
    stretches join the sentence before them (leading whitespace the first one), so each range has a word."""
    if doc.has_annotation("SENT_START"):
        starts = [sent.start for sent in doc.sents]
    else:
        offsets = [t.idx for t in doc]
        starts = []
        for sentence in tokenizer.iter_sentences(doc.text):
            i = bisect_left(offsets, token_ranges(sentence)[0][0])
            if i < len(doc) and (not starts or starts[-1] != i):
                starts.append(i)
    kept = [s for s, e in zip(starts, [*starts[1:], len(doc)]) if not all(t.is_space for t in doc[s:e])]
    if not kept:
        return []
    kept[0] = 0
    return list(zip(kept, [*kept[1:], len(doc)]))


class SpandepComponent:
    """Parses each Doc's sentences with a spandep :class:`~spandep.api.Pipeline`, batching across Docs."""

    def __init__(self, parser: "Pipeline", name: str = "spandep", batch_size: int = 64) -> None:
        self.parser = parser
        self.name = name
        self.batch_size = batch_size

    def __call__(self, doc: Doc) -> Doc:
        return next(self.pipe([doc]))

    def pipe(self, docs: Iterable[Doc], batch_size: int | None = None) -> Iterator[Doc]:
        """Parse Docs ``batch_size`` at a time (their sentences batched together), yielding them in order."""
        for batch in minibatch(docs, batch_size or self.batch_size):
            units = [(k, start, end) for k, doc in enumerate(batch) for start, end in sentence_ranges(doc, self.parser.tokenizer)]
            sentences = [_sentence(batch[k][start:end]) for k, start, end in units]
            trees: list[list[tuple[int, int, Sentence]]] = [[] for _ in batch]
            for (k, start, end), parsed in zip(units, self.parser.parse_sentences(sentences)):
                trees[k].append((start, end, parsed))
            for doc, doc_trees in zip(batch, trees):
                _set_trees(doc, doc_trees)
                yield doc


def _sentence(span: Span) -> Sentence:
    """The words (non-whitespace tokens) of ``span`` as a spandep sentence, with the POS tags, tags, lemmas and
    features the Doc has (``_`` elsewhere: the model fills those)."""
    present = [(attr, column) for attr, column in (("POS", "upos"), *COLUMNS) if span.doc.has_annotation(attr)]
    words = []
    for i, t in enumerate(t for t in span if not t.is_space):
        given = {"upos": t.pos_, "xpos": t.tag_, "lemma": t.lemma_, "feats": str(t.morph)}
        words.append(Token(i + 1, t.text, **{column: given[column] or "_" for _, column in present}))
    return Sentence(words)


def _set_trees(doc: Doc, trees: list[tuple[int, int, Sentence]]) -> None:
    """Write the parsed sentences of token ranges ``[start, end)`` into ``doc`` with one ``Doc.from_array``."""
    if not trees:
        return
    n = len(doc)
    heads = np.arange(n, dtype=np.int64)  # (n,) absolute head index; a root points at itself
    deps = np.zeros(n, dtype=np.uint64)  # (n,) label string ids
    pos = doc.to_array(["POS"]).astype(np.uint64).reshape(n)  # (n,) POS ids, kept where the model gives none
    kept = doc.to_array([attr for attr, _ in COLUMNS]).astype(np.uint64).reshape(n, len(COLUMNS))  # (n, 3) likewise
    space = doc.vocab.strings.add(SPACE_LABEL)
    for start, end, sentence in trees:
        words = [i for i in range(start, end) if not doc[i].is_space]
        for i, w in zip(words, sentence.words):
            heads[i] = words[w.head - 1] if w.head else i
            deps[i] = doc.vocab.strings.add(w.deprel)
            pos[i] = POS_IDS.get(w.upos, pos[i])
            for j, (attr, column) in enumerate(COLUMNS):
                value = getattr(w, column)
                if value != "_":  # unknown, or for FEATS no features: what the Doc has is kept
                    kept[i, j] = doc.vocab.morphology.add(value) if attr == "MORPH" else doc.vocab.strings.add(value)
            doc[i]._.head_prob, doc[i]._.label_prob = w.head_prob, w.label_prob
        previous = words[0]
        for i in range(start, end):
            if doc[i].is_space:
                heads[i], deps[i] = previous, space
            else:
                previous = i
    relative = (heads - np.arange(n)).view(np.uint64)  # (n,) spaCy's relative heads, two's complement
    columns = np.concatenate([np.stack([relative, deps, pos], axis=1), kept], axis=1)  # (n, 6)
    doc.from_array(["HEAD", "DEP", "POS", *(attr for attr, _ in COLUMNS)], columns)  # type: ignore[arg-type]  # thinc's Ints2d is an ndarray


@Language.factory(
    "spandep",
    default_config={"model": None, "decoder": None, "batch_tokens": DEFAULT_BATCH_TOKENS, "treebank": None, "inference": {}},
    assigns=[
        "token.head", "token.dep", "token.pos", "token.tag", "token.lemma", "token.morph", "token.is_sent_start",
        "doc.sents", "token._.head_prob", "token._.label_prob",
    ],
)
def make_spandep(
    nlp: Language,
    name: str,
    model: str | None,
    decoder: str | None,
    batch_tokens: int,
    treebank: str | None,
    inference: dict[str, Any],
) -> SpandepComponent:
    """Load the parser (``model``: a shipped model's name, a model folder, ``None`` for the default) as a spaCy component."""
    from spandep.api import load

    return SpandepComponent(load(model, decoder=decoder, batch_tokens=batch_tokens, treebank=treebank, **inference), name)
