"""Output formats besides CoNLL-U: JSON Lines, and pictures of the trees drawn by spaCy's displaCy (SVG, HTML).

- ``jsonl``: one JSON object per sentence, streamed: ``id`` and ``text`` (when the sentence has ``# sent_id`` /
  ``# text`` comments), then parallel lists ``tokens``, ``heads`` (1-based, 0 = root), ``deprels``, ``upos``,
  ``xpos``, ``feats``, ``lemmas`` (``null`` where unknown), ``deps`` (each word's DEPS, ``head:label|...``) where
  some word has one, and, for parsed sentences, ``head_probs``, ``label_probs`` and the sentence's ``confidence``.
- ``conllu`` with ``confidence=True``: each word's MISC gets ``HeadProb=…|LabelProb=…`` and the sentence a
  ``# confidence = …`` comment (CoNLL-U is otherwise written as read, plus the parse).
- ``svg``: one SVG picture holding every tree, one below the other, each under a caption (its id and text).
- ``html``: one HTML page with one figure per tree, titled with the sentence's id and text; a tree wider than the
  page scrolls sideways.

Trees are drawn compactly: displaCy puts each word 175 px after the one before, so a 60-word sentence was 10,550
px wide; here each word takes the width its form and tag need (and an arc between neighbours the width of its
label), and an arc rises 40 px per nesting level instead of 87.5 (:func:`tree_svg`).

Pictures need spaCy (``pip install 'spandep[spacy]'``) and are built in memory: meant for tens or hundreds of
sentences, not for corpora. Every format is written by :func:`~spandep.data.output.write_blocks`: a file atomically, a
device or FIFO as a stream.
"""

from __future__ import annotations

import html
import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from itertools import count
from pathlib import Path
from typing import IO, Any

from spandep.data.conllu import format_sentence
from spandep.data.output import write_blocks
from spandep.data.sentence import Sentence

__all__ = [
    "OUTPUT_FORMATS", "confidence_in_misc", "displacy_parse", "render_html", "render_svg", "sentence_record", "tree_svg",
    "write_sentences",
]

OUTPUT_FORMATS = ("conllu", "jsonl", "svg", "html")
SVG_GAP = 20  # pixels between two stacked trees
CAPTION_PX = 28  # room for the caption line above each tree of an SVG
# The layout of one tree, in pixels (words are 16 px Arial, arc labels 0.8 em with 1 px letter spacing).
LEVEL_UNIT = 80  # displaCy's ``distance``: an arc rises half of it per nesting level
ARROW_SPACING = 8  # an arc leaves its start word this far right of the word's centre
DISPLACY_OPTIONS = {"distance": LEVEL_UNIT, "offset_x": 0, "word_spacing": 30, "arrow_spacing": ARROW_SPACING}
CHAR_PX = 10.0  # room for a character of a word or tag (twice that for a wide East Asian one)
LABEL_CHAR_PX = 8.5  # room for a character of an arc label
WORD_GAP = 16  # between two words
LEMMA_PX = 32  # room for the lemma line displaCy puts between a word and its tag (2 em)
MARGIN = 20  # left and right of a tree
_SIZE = re.compile(r'width="([0-9.]+)" height="([0-9.]+)"')
DIGITS = 4  # decimals of the probabilities written out
_TOKEN = re.compile(r'<text class="displacy-token".*?</text>', re.S)
_ARROW = re.compile(r'<g class="displacy-arrow">.*?</g>', re.S)
_X = re.compile(r'\bx="[-0-9.]+"')
_ID = re.compile(r'<svg [^>]*\bid="([0-9a-f]{32})-0"')  # the random id displaCy gives a picture
_LABEL = re.compile(r"<text dy=.*?</text>", re.S)  # displaCy's label, written along the arc
# a label written level under the top of its arc (along a short, steep arc its letters ran into each other)
_LABEL_STYLE = 'dy="1.25em" text-anchor="middle" fill="currentColor" style="font-size: 0.8em; letter-spacing: 1px"'
_PATH = re.compile(r'\bd="([^"]*)"')
_POINT = re.compile(r"(-?[0-9.]+),(-?[0-9.]+)")
_PAGE = """<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>spandep trees</title></head>
<body style="margin: 2rem; font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif">
{figures}</body>
</html>
"""
_FIGURE = '<figure style="margin: 0 0 3rem">{title}<div style="overflow-x: auto">{svg}</div></figure>\n'


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
    if any(w.deps != "_" for w in sentence.words):
        record["deps"] = [_known(w.deps) for w in sentence.words]
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
    """displaCy's manual-mode input for one sentence: words with their UPOS as tag (and their lemma, when the
    sentence has lemmas; ``about``: the word's features for its tooltip), one arc per non-root word, and a title
    (``sent_id: text``, either alone when the other is missing; None without both)."""
    lemmas = any(_known(w.lemma) for w in sentence.words)
    words = [
        {"text": w.form, "tag": html.escape(_known(w.upos) or ""), **({"lemma": html.escape(_known(w.lemma) or "")} if lemmas else {}),
         "about": html.escape(_known(w.feats) or "")}
        for w in sentence.words
    ]
    arcs = []
    for i, w in enumerate(sentence.words):
        if w.head:  # None (unparsed) and 0 (root) draw no arc
            head = w.head - 1
            label = html.escape(_known(w.deprel) or "")
            arcs.append({"start": min(i, head), "end": max(i, head), "label": label, "dir": "left" if i < head else "right"})
    title = ": ".join(part for part in (sentence.comment("sent_id"), sentence.comment("text")) if part)
    return {"words": words, "arcs": arcs, "title": html.escape(title) if title else None}


def _text_px(text: str, char_px: float) -> float:
    return char_px * sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in html.unescape(text))


def _layout(parse: dict[str, Any]) -> tuple[list[float], list[float], float]:
    """Each word's centre and width, and the tree's width: a word takes the room its form and tag need, and two
    neighbours joined by an arc leave room for its label between their centres."""
    widths = [max(_text_px(w[key], CHAR_PX) for key in ("text", "tag", "lemma") if key in w) for w in parse["words"]]
    labels = {a["start"]: _text_px(a["label"], LABEL_CHAR_PX) for a in parse["arcs"] if a["end"] - a["start"] == 1}
    centres = [MARGIN + widths[0] / 2]
    for i in range(1, len(widths)):
        centres.append(centres[-1] + max((widths[i - 1] + widths[i]) / 2, labels.get(i - 1, 0.0) + 2 * ARROW_SPACING) + WORD_GAP)
    return centres, widths, centres[-1] + widths[-1] / 2 + MARGIN


def _num(value: float) -> str:
    return f"{round(value, 2):g}"


def _moved_points(path: str, new_x: Callable[[int, float], float]) -> str:
    """An SVG path with the x of its k-th ``x,y`` point replaced by ``new_x(k, x)``."""
    k = count()
    return _POINT.sub(lambda p: f"{_num(new_x(next(k), float(p.group(1))))},{p.group(2)}", path)


def tree_svg(sentence: Sentence, number: int = 0) -> tuple[str, float, float]:
    """The SVG of one tree, its width and its height. displaCy draws it with word ``i`` at ``x = i × LEVEL_UNIT``;
    every x is then moved to the word it belongs to in :func:`_layout` (arc ends stay within their word's width),
    and each label is written level under the top of its arc.
    A word's features are its tooltip (an SVG ``title``); a lemma line makes the picture ``LEMMA_PX`` taller. The
    element ids are ``spandep-tree{number}-…`` (displaCy's are random): the same tree gives the same SVG, and trees
    numbered apart can share a page."""
    parse = displacy_parse(sentence)
    centres, widths, width = _layout(parse)
    svg = _render(parse, number)

    def moved(x: float, word: int) -> float:
        half = widths[word] / 2
        return centres[word] + min(max(x - word * LEVEL_UNIT, -half), half)

    word_ids, arcs = count(), iter(parse["arcs"])  # displaCy draws the words, then the arcs, in the order given

    def token(match: re.Match[str]) -> str:
        i = next(word_ids)
        about = parse["words"][i]["about"]
        moved_token = _X.sub(f'x="{_num(centres[i])}"', match.group())
        return moved_token.replace(">", f"><title>{about}</title>", 1) if about else moved_token

    def arrow(match: re.Match[str]) -> str:
        arc, group = next(arcs), match.group()
        line, head = _PATH.findall(group)  # the arc "M x,y C x,c e,c e,y" and its arrowhead
        points = _POINT.findall(line)
        tip, word = (float(points[0][0]), arc["start"]) if arc["dir"] == "left" else (float(points[-1][0]), arc["end"])
        shift = moved(tip, word) - tip
        line_moved = _moved_points(line, lambda k, x: moved(x, arc["start"] if k < 2 else arc["end"]))
        (x0, y0), (_, c), _, (x3, _) = ((float(x), float(y)) for x, y in _POINT.findall(line_moved))
        label = f'<text class="displacy-label" x="{_num((x0 + x3) / 2)}" y="{_num(0.25 * y0 + 0.75 * c)}" {_LABEL_STYLE}>{arc["label"]}</text>'
        group = _LABEL.sub(label, group.replace(line, line_moved, 1), 1)
        return group.replace(head, _moved_points(head, lambda k, x: x + shift), 1)

    svg = _ARROW.sub(arrow, _TOKEN.sub(token, svg))
    size = _SIZE.search(svg)
    assert size is not None, "displaCy's SVG has a width and a height"
    height = float(size.group(2)) + (LEMMA_PX if parse["words"] and "lemma" in parse["words"][0] else 0)
    svg = svg.replace(f"height: {size.group(2)}px", f"height: {_num(height)}px", 1)  # displaCy's style says it again
    return svg.replace(size.group(), f'width="{_num(width)}" height="{_num(height)}"', 1), width, height


def _render(parse: dict[str, Any], number: int) -> str:
    try:
        from spacy import displacy
    except ImportError as exc:
        raise ImportError("pictures of trees need spaCy: pip install 'spandep[spacy]'") from exc
    svg = str(displacy.render([{**parse, "title": None}], style="dep", manual=True, jupyter=False, options=DISPLACY_OPTIONS))
    random_id = _ID.search(svg)
    assert random_id is not None, "displaCy names its SVG"
    return svg.replace(random_id.group(1), f"spandep-tree{number}")


def render_svg(sentences: Iterable[Sentence]) -> str:
    """One standalone SVG with the tree of every sentence, stacked top to bottom, each under its caption."""
    pieces: list[str] = []
    width = height = 0.0
    for number, sentence in enumerate(sentences):
        svg, tree_width, tree_height = tree_svg(sentence, number)
        caption = displacy_parse(sentence)["title"] or ""
        pieces.append(f'<text x="{MARGIN}" y="{_num(height + CAPTION_PX - 8)}" font-family="Arial" font-size="16">{caption}</text>')
        pieces.append(svg.replace("<svg ", f'<svg x="0" y="{_num(height + CAPTION_PX)}" ', 1))
        width = max(width, tree_width, 2 * MARGIN + _text_px(caption, CHAR_PX))
        height += CAPTION_PX + tree_height + SVG_GAP
    height = max(height - SVG_GAP, 0.0)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="{_num(width)}" '
        f'height="{_num(height)}" viewBox="0 0 {_num(width)} {_num(height)}" style="background: #ffffff">\n'
        + "\n".join(pieces)
        + "\n</svg>\n"
    )


def render_html(sentences: Iterable[Sentence]) -> str:
    """One standalone HTML page with a figure per sentence: its title and its tree, which scrolls sideways when
    wider than the page."""
    figures = []
    for number, sentence in enumerate(sentences):
        title = displacy_parse(sentence)["title"]
        heading = f'<h2 style="margin: 0 0 0.5rem; font-size: 1.2rem">{title}</h2>' if title else ""
        figures.append(_FIGURE.format(title=heading, svg=tree_svg(sentence, number)[0]))
    return _PAGE.format(figures="".join(figures))


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
