"""Output formats besides CoNLL-U: JSON Lines, and pictures of the trees drawn by spaCy's displaCy (SVG, HTML).

- ``jsonl``: one JSON object per sentence, streamed: ``id`` and ``text`` (when the sentence has ``# sent_id`` /
  ``# text`` comments), then parallel lists ``tokens``, ``heads`` (1-based, 0 = root), ``deprels``, ``upos``,
  ``xpos``, ``feats``, ``lemmas`` (``null`` where unknown) and, for parsed sentences, ``head_probs``,
  ``label_probs`` and the sentence's ``confidence``.
- ``conllu`` with ``confidence=True``: each word's MISC gets ``HeadProb=…|LabelProb=…`` and the sentence a
  ``# confidence = …`` comment (CoNLL-U is otherwise written as read, plus the parse).
- ``svg``: one SVG picture holding every tree, one below the other (a single sentence gives a plain displaCy SVG).
- ``html``: one HTML page with one figure per tree, titled with the sentence's text (or id).

Pictures need spaCy (``pip install 'spandep[spacy]'``) and are built in memory: meant for tens or hundreds of
sentences, not for corpora. Every format is written atomically by :func:`~spandep.data.conllu.write_blocks`.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

from spandep.data.conllu import format_sentence, write_blocks
from spandep.data.sentence import Sentence

__all__ = [
    "OUTPUT_FORMATS", "confidence_in_misc", "displacy_parse", "render_html", "render_svg", "sentence_record", "write_sentences",
]

OUTPUT_FORMATS = ("conllu", "jsonl", "svg", "html")
SVG_GAP = 20  # pixels between two stacked trees
_SIZE = re.compile(r'width="([0-9.]+)" height="([0-9.]+)"')
DIGITS = 4  # decimals of the probabilities written out


def _known(value: str) -> str | None:
    return None if value == "_" else value


def sentence_record(sentence: Sentence) -> dict[str, Any]:
    """The JSON object of one sentence (the ``jsonl`` format's line, the API's ``Doc.to_json`` item)."""
    record: dict[str, Any] = {}
    for key, comment in (("id", "sent_id"), ("text", "text")):
        value = sentence.comment(comment)
        if value is not None:
            record[key] = value
    record["tokens"] = sentence.forms
    record["heads"] = sentence.heads
    record["deprels"] = [_known(r) for r in sentence.deprels]
    for key, column in (("upos", "upos"), ("xpos", "xpos"), ("feats", "feats"), ("lemmas", "lemma")):
        record[key] = [_known(getattr(w, column)) for w in sentence.words]
    if sentence.confidence is not None:
        record["head_probs"] = [_rounded(w.head_prob) for w in sentence.words]
        record["label_probs"] = [_rounded(w.label_prob) for w in sentence.words]
        record["confidence"] = _rounded(sentence.confidence)
    return record


def _rounded(p: float | None) -> float | None:
    return None if p is None else round(p, DIGITS)


def confidence_in_misc(sentence: Sentence) -> Sentence:
    """A copy whose words' MISC carries ``HeadProb`` and ``LabelProb`` and whose comments end with ``# confidence``
    (unchanged where the sentence has no confidence)."""
    if sentence.confidence is None:
        return sentence
    words = []
    for w in sentence.words:
        probs = f"HeadProb={w.head_prob:.{DIGITS}f}|LabelProb={w.label_prob:.{DIGITS}f}"
        words.append(replace(w, misc=probs if w.misc == "_" else f"{w.misc}|{probs}"))
    comments = [*sentence.comments, f"# confidence = {sentence.confidence:.{DIGITS}f}"]
    return replace(sentence, words=words, comments=comments)


def displacy_parse(sentence: Sentence) -> dict[str, Any]:
    """displaCy's manual-mode input for one sentence: words with their UPOS as tag, one arc per non-root word."""
    words = [{"text": w.form, "tag": html.escape(_known(w.upos) or "")} for w in sentence.words]
    arcs = []
    for i, w in enumerate(sentence.words):
        if w.head:  # None (unparsed) and 0 (root) draw no arc
            head = w.head - 1
            label = html.escape(_known(w.deprel) or "")
            arcs.append({"start": min(i, head), "end": max(i, head), "label": label, "dir": "left" if i < head else "right"})
    title = sentence.comment("text") or sentence.comment("sent_id")
    return {"words": words, "arcs": arcs, "title": html.escape(title) if title else None}


def _render(parses: list[dict[str, Any]], page: bool) -> str:
    try:
        from spacy import displacy
    except ImportError as exc:
        raise ImportError("pictures of trees need spaCy: pip install 'spandep[spacy]'") from exc
    return str(displacy.render(parses, style="dep", manual=True, page=page, jupyter=False))


def render_svg(sentences: Iterable[Sentence]) -> str:
    """One standalone SVG with the tree of every sentence, stacked top to bottom."""
    pieces: list[str] = []
    width = height = 0.0
    for sentence in sentences:
        svg = _render([{**displacy_parse(sentence), "title": None}], page=False)
        size = _SIZE.search(svg)
        assert size is not None, "displaCy's SVG has a width and a height"
        pieces.append(svg.replace("<svg ", f'<svg x="0" y="{height:g}" ', 1))
        width = max(width, float(size.group(1)))
        height += float(size.group(2)) + SVG_GAP
    height = max(height - SVG_GAP, 0.0)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="{width:g}" '
        f'height="{height:g}" viewBox="0 0 {width:g} {height:g}" style="background: #ffffff">\n'
        + "\n".join(pieces)
        + "\n</svg>\n"
    )


def render_html(sentences: Iterable[Sentence]) -> str:
    """One standalone HTML page with a figure per sentence (displaCy's page layout)."""
    return _render([displacy_parse(s) for s in sentences], page=True) + "\n"


def _rendered(render: Callable[[Iterable[Sentence]], str], sentences: Iterable[Sentence]) -> Iterator[str]:
    yield render(sentences)  # lazily: write_blocks checks the target before the sentences are parsed


def write_sentences(
    sentences: Iterable[Sentence], path_or_file: str | Path | IO[str], fmt: str = "conllu", confidence: bool = False
) -> None:
    """Write parsed ``sentences`` in one of :data:`OUTPUT_FORMATS` to a path, ``"-"`` (stdout) or a text stream;
    ``confidence``: CoNLL-U with the probabilities in MISC (:func:`confidence_in_misc`)."""
    if fmt == "conllu":
        blocks: Iterable[str] = (format_sentence(confidence_in_misc(s) if confidence else s) for s in sentences)
    elif fmt == "jsonl":
        blocks = (json.dumps(sentence_record(s), ensure_ascii=False) + "\n" for s in sentences)
    elif fmt in ("svg", "html"):
        blocks = _rendered(render_svg if fmt == "svg" else render_html, sentences)
    else:
        raise ValueError(f"unknown output format {fmt!r}; use one of {', '.join(OUTPUT_FORMATS)}")
    write_blocks(blocks, path_or_file)
