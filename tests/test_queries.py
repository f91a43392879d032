"""MRC queries: marker tokens, spliced layouts (paired / inline), positions, types, UPOS alignment, batching."""

from __future__ import annotations

import numpy as np
import pytest
from transformers import AutoTokenizer

from spandep.models.span.queries import (
    MARKERS,
    UPOS_MARKER,
    UPOS_NONE,
    UPOS_OFFSET,
    QueryBuilder,
    QueryTooLongError,
    SentencePieces,
    add_marker_tokens,
)

FORMS = ["The", "unbelievably", "big", "cat", "sat", "."]
UPOS = ["DET", "ADV", "ADJ", "NOUN", "VERB", "PUNCT"]
UPOS_VOCAB = ["ADJ", "ADV", "DET", "NOUN", "PUNCT"]  # VERB deliberately unknown
# MiniLM's uncased WordPiece: "unbelievably" -> un ##bel ##ie ##va ##bly
WORD_PIECES = [["the"], ["un", "##bel", "##ie", "##va", "##bly"], ["big"], ["cat"], ["sat"], ["."]]


@pytest.fixture

def tokenizer(tiny_transformer_dir):
    return AutoTokenizer.from_pretrained(str(tiny_transformer_dir))  # fresh: tests add tokens to it


def tokens(tok, ids) -> list[str]:
    return tok.convert_ids_to_tokens([int(i) for i in ids])


def marked_word_pos(q) -> np.ndarray:
    """Where each word's first piece sits in the marked part of a query of ``FORMS`` (index 0: ``[CLS]``): the
    pieces in order after ``[CLS]``, skipping the four markers."""
    markers, positions, p = set(q.marker_pos.tolist()), [0], 1
    for pieces in WORD_PIECES:
        while p in markers:
            p += 1
        positions.append(p)
        p += len(pieces)
    return np.asarray(positions)


def marked(start: int, root: int, end: int) -> list[str]:
    """The marked sentence built by hand from WORD_PIECES (root 0 = ROOT's span)."""
    out: list[str] = []
    if root == 0:
        out += ["<sos>", "<sor>", "<eor>"]
    for w, pieces in enumerate(WORD_PIECES, start=1):
        if root and w == start:
            out.append("<sos>")
        if root and w == root:
            out.append("<sor>")
        out += pieces
        if root and w == root:
            out.append("<eor>")
        if w == end:
            out.append("<eos>")
    return out


# ----------------------------------------------------------------------------------------- markers
def test_markers_are_new_distinct_special_tokens_and_idempotent(tokenizer, tmp_path) -> None:
    before_special = set(tokenizer.all_special_ids)
    before_len = len(tokenizer)
    ids = add_marker_tokens(tokenizer)
    assert list(ids) == list(MARKERS)
    assert len(set(ids.values())) == 4
    assert not set(ids.values()) & before_special
    assert all(i >= before_len for i in ids.values())  # new ids, not existing vocabulary entries
    assert set(ids.values()) <= set(tokenizer.all_special_ids)  # registered as special tokens
    assert tokenizer.convert_ids_to_tokens(list(ids.values())) == list(MARKERS)
    assert len(tokenizer) == before_len + 4
    assert add_marker_tokens(tokenizer) == ids and len(tokenizer) == before_len + 4  # idempotent
    tokenizer.save_pretrained(str(tmp_path))
    reloaded = AutoTokenizer.from_pretrained(str(tmp_path))
    assert add_marker_tokens(reloaded) == ids and len(reloaded) == before_len + 4


def test_marker_name_taken_by_an_existing_special_token_gets_a_fresh_id(tokenizer) -> None:
    tokenizer.add_special_tokens({"eos_token": "<eos>"})  # a tokenizer whose EOS is literally "<eos>"
    eos_id = tokenizer.eos_token_id
    before_special = set(tokenizer.all_special_ids)
    ids = add_marker_tokens(tokenizer)
    assert ids["<eos>"] != eos_id and not set(ids.values()) & before_special
    assert tokenizer.convert_ids_to_tokens(ids["<eos>"]) == "<spandep_eos>"
    assert add_marker_tokens(tokenizer) == ids


# ----------------------------------------------------------------------------------------- sentence pieces
def test_sentence_pieces_offsets_and_literal_marker_text(tokenizer) -> None:
    builder = QueryBuilder(tokenizer, "paired", max_len=64)
    cached = builder.sentence_pieces(FORMS)
    assert cached.n_words == 6 and cached.offsets.tolist() == [0, 1, 6, 7, 8, 9, 10]
    for w, pieces in enumerate(WORD_PIECES, start=1):
        assert tokens(tokenizer, cached.pieces[cached.offsets[w - 1] : cached.offsets[w]]) == pieces
    # a word that literally reads like a marker must not become the marker; an empty word becomes [UNK]
    odd = builder.sentence_pieces(["a", "<sos>", "x<eos>y", "\u200b"])
    assert not set(odd.pieces.tolist()) & set(builder.markers.values())
    assert tokens(tokenizer, odd.pieces[odd.offsets[1] : odd.offsets[2]])[0] == "<"
    assert tokens(tokenizer, odd.pieces[odd.offsets[3] : odd.offsets[4]]) == ["[UNK]"]


def test_queries_are_spliced_without_calling_the_tokenizer(tokenizer) -> None:
    builder = QueryBuilder(tokenizer, "paired", max_len=64)
    cached = builder.sentence_pieces(FORMS)

    class Forbidden:
        def __getattr__(self, name):
            raise AssertionError(f"tokenizer.{name} used while building a query")

        def __call__(self, *args, **kwargs):
            raise AssertionError("tokenizer called while building a query")

    builder.tokenizer = Forbidden()
    queries = [builder.build(cached, i, 1, 6) for i in range(1, 7)]
    assert builder.collate(queries)["input_ids"].shape == (6, len(queries[0]))


# ----------------------------------------------------------------------------------------- paired
@pytest.mark.parametrize("span", [(4, 3, 4), (2, 2, 4), (1, 1, 1), (5, 1, 6), (6, 6, 6), (0, 1, 6)])
def test_paired_layout(tokenizer, span) -> None:
    root, start, end = span
    builder = QueryBuilder(tokenizer, "paired", max_len=64)
    q = builder.build(builder.sentence_pieces(FORMS), root, start, end)
    plain = [p for pieces in WORD_PIECES for p in pieces]
    expected = ["[CLS]", *marked(start, root, end), "[SEP]", *plain, "[SEP]"]
    assert tokens(tokenizer, q.input_ids) == expected
    assert len(q) == builder.query_length(builder.sentence_pieces(FORMS)) == 2 * len(plain) + 7
    sep = 1 + len(plain) + 4  # first [SEP]
    assert q.context_word_pos[0] == sep  # ROOT as a candidate parent
    assert q.token_type_ids.tolist() == [0] * (sep + 1) + [1] * (len(plain) + 1)
    assert q.attention_mask.tolist() == [1] * len(q)
    toks = tokens(tokenizer, q.input_ids)
    query_word_pos = marked_word_pos(q)
    for w, pieces in enumerate(WORD_PIECES, start=1):
        assert toks[q.context_word_pos[w]] == pieces[0] and q.context_word_pos[w] > sep
        assert toks[query_word_pos[w]] == pieces[0] and query_word_pos[w] < sep
    assert q.context_word_pos[1:].tolist() == sorted(q.context_word_pos[1:].tolist())
    assert [toks[p] for p in q.marker_pos] == list(MARKERS)
    if root:  # <sor> w_root <eor>, <sos> right before the first piece of w_start
        assert q.marker_pos[1] + 1 == query_word_pos[root]
        assert q.marker_pos[0] + 1 == query_word_pos[start] or start == root
        assert toks[q.marker_pos[3] - 1] == ("<eor>" if end == root else WORD_PIECES[end - 1][-1])
    assert q.span == span and q.upos is None


def test_paired_decodes_back_to_the_sentence(tokenizer) -> None:
    builder = QueryBuilder(tokenizer, "paired", max_len=64)
    q = builder.build(builder.sentence_pieces(FORMS), 4, 3, 4)
    assert tokenizer.decode(q.input_ids.tolist()) == (
        "[CLS] the unbelievably <sos> big <sor> cat <eor> <eos> sat. [SEP] the unbelievably big cat sat. [SEP]"
    )
    assert tokenizer.decode(q.input_ids.tolist(), skip_special_tokens=True) == (
        "the unbelievably big cat sat. the unbelievably big cat sat."
    )


# ----------------------------------------------------------------------------------------- inline
@pytest.mark.parametrize("span", [(4, 3, 4), (1, 1, 6), (0, 1, 6)])
def test_inline_layout(tokenizer, span) -> None:
    root, start, end = span
    builder = QueryBuilder(tokenizer, "inline", max_len=64)
    cached = builder.sentence_pieces(FORMS)
    q = builder.build(cached, root, start, end)
    assert tokens(tokenizer, q.input_ids) == ["[CLS]", *marked(start, root, end), "[SEP]"]
    assert len(q) == builder.query_length(cached) == 10 + 4 + 2
    assert q.context_word_pos[0] == 0  # ROOT = [CLS]
    assert np.array_equal(q.context_word_pos, marked_word_pos(q))
    toks = tokens(tokenizer, q.input_ids)
    assert [toks[p] for p in q.context_word_pos[1:]] == [p[0] for p in WORD_PIECES]
    assert [toks[p] for p in q.marker_pos] == list(MARKERS)
    assert q.token_type_ids.tolist() == [0] * len(q)


# ----------------------------------------------------------------------------------------- UPOS
@pytest.mark.parametrize("fmt", ["paired", "inline"])
def test_upos_aligned_to_pieces(tokenizer, fmt) -> None:
    builder = QueryBuilder(tokenizer, fmt, max_len=64, upos_vocab=UPOS_VOCAB)
    assert builder.n_upos == UPOS_OFFSET + len(UPOS_VOCAB)
    cached = builder.sentence_pieces(FORMS, UPOS)
    q = builder.build(cached, 2, 1, 3)
    word_tag = {w: UPOS_OFFSET + UPOS_VOCAB.index(t) if t in UPOS_VOCAB else UPOS_NONE for w, t in enumerate(UPOS, 1)}
    assert word_tag[5] == UPOS_NONE  # VERB is unknown to the vocabulary
    # walk the sequence: each piece carries its word's tag, markers the marker tag, specials none
    toks = tokens(tokenizer, q.input_ids)
    piece_to_word = {}
    for part in ([marked_word_pos(q)] if fmt == "inline" else [marked_word_pos(q), q.context_word_pos]):
        for w in range(1, 7):
            for k in range(len(WORD_PIECES[w - 1])):
                # markers sit only at word boundaries, so a word's pieces are contiguous
                pos = part[w] + k
                piece_to_word[pos] = w
    for pos, tok in enumerate(toks):
        if tok in MARKERS:
            assert q.upos[pos] == UPOS_MARKER
        elif tok in ("[CLS]", "[SEP]"):
            assert q.upos[pos] == UPOS_NONE
        else:
            assert q.upos[pos] == word_tag[piece_to_word[pos]], (pos, tok)
    assert len(piece_to_word) == sum(1 for t in toks if t not in MARKERS and t not in ("[CLS]", "[SEP]"))
    batch = builder.collate([q, builder.build(builder.sentence_pieces(["Hi"], ["NOUN"]), 1, 1, 1)])
    assert batch["upos"].shape == batch["input_ids"].shape
    assert batch["upos"][1].tolist()[:5] == [UPOS_NONE, UPOS_MARKER, UPOS_MARKER, UPOS_OFFSET + 3, UPOS_MARKER]
    assert (batch["upos"][1, len(builder.build(builder.sentence_pieces(["Hi"], ["NOUN"]), 1, 1, 1)) :] == UPOS_NONE).all()


def test_upos_without_tags_or_vocabulary(tokenizer) -> None:
    with_vocab = QueryBuilder(tokenizer, "paired", max_len=64, upos_vocab=UPOS_VOCAB)
    q = with_vocab.build(with_vocab.sentence_pieces(FORMS), 1, 1, 1)  # no tags given: all words untagged
    assert set(q.upos.tolist()) == {UPOS_NONE, UPOS_MARKER}
    no_vocab = QueryBuilder(tokenizer, "paired", max_len=64)
    assert no_vocab.sentence_pieces(FORMS, UPOS).upos is None
    with pytest.raises(ValueError):
        with_vocab.sentence_pieces(FORMS, UPOS[:2])


# ----------------------------------------------------------------------------------------- limits, errors, batches
@pytest.mark.parametrize("fmt", ["paired", "inline"])
def test_too_long_queries_are_reported_not_truncated(tokenizer, fmt) -> None:
    probe = QueryBuilder(tokenizer, fmt, max_len=10_000)
    length = probe.query_length(probe.sentence_pieces(FORMS))
    exact = QueryBuilder(tokenizer, fmt, max_len=length)
    cached = exact.sentence_pieces(FORMS)
    assert exact.fits(cached) and len(exact.build(cached, 2, 1, 3)) == length
    short = QueryBuilder(tokenizer, fmt, max_len=length - 1)
    assert not short.fits(cached)
    with pytest.raises(QueryTooLongError) as err:
        short.build(cached, 2, 1, 3)
    assert (err.value.length, err.value.max_len) == (length, length - 1)


def test_invalid_spans_and_formats_raise(tokenizer) -> None:
    builder = QueryBuilder(tokenizer, "paired", max_len=64)
    cached = builder.sentence_pieces(FORMS)
    for span in [(3, 4, 5), (3, 1, 2), (7, 1, 7), (0, 1, 5), (2, 0, 3)]:
        with pytest.raises(ValueError):
            builder.build(cached, *span)
    with pytest.raises(ValueError):
        QueryBuilder(tokenizer, "triple", max_len=64)


def test_collate_pads_and_masks(tokenizer) -> None:
    builder = QueryBuilder(tokenizer, "paired", max_len=64)
    long = builder.build(builder.sentence_pieces(FORMS), 4, 3, 4)
    short = builder.build(builder.sentence_pieces(["Hi", "there"]), 2, 1, 2)
    batch = builder.collate([long, short])
    assert batch["input_ids"].shape == (2, len(long))
    assert batch["context_word_pos"].shape == batch["context_word_mask"].shape == (2, 7)
    assert batch["attention_mask"].sum(1).tolist() == [len(long), len(short)]
    assert batch["input_ids"][1, len(short) :].eq(tokenizer.pad_token_id).all()
    assert batch["token_type_ids"][1, len(short) :].eq(0).all()
    assert batch["context_word_mask"].sum(1).tolist() == [7, 3]
    for b, q in enumerate([long, short]):
        assert batch["input_ids"][b, : len(q)].tolist() == q.input_ids.tolist()
        assert batch["token_type_ids"][b, : len(q)].tolist() == q.token_type_ids.tolist()
        assert batch["context_word_pos"][b, : q.n_words + 1].tolist() == q.context_word_pos.tolist()
        assert batch["marker_pos"][b].tolist() == q.marker_pos.tolist()
    assert batch["span"].tolist() == [[4, 3, 4], [2, 1, 2]]
    assert batch["n_words"].tolist() == [6, 2]
    assert "upos" not in batch
    # gathering at the context positions reads ROOT's separator and each word's first piece
    gathered = batch["input_ids"].gather(1, batch["context_word_pos"])  # (batch, 1 + n)
    assert tokens(tokenizer, gathered[1, :3]) == ["[SEP]", "hi", "there"]
    with pytest.raises(ValueError):
        builder.collate([])


def test_sentence_pieces_dataclass_is_cacheable(tokenizer) -> None:
    builder = QueryBuilder(tokenizer, "inline", max_len=64)
    cached = builder.sentence_pieces(["Hi"])
    assert isinstance(cached, SentencePieces)
    with pytest.raises(Exception):
        cached.pieces = np.zeros(1)  # frozen
    with pytest.raises(ValueError):
        builder.sentence_pieces([])


def test_template_falls_back_to_bert_layout_when_unreadable() -> None:
    from spandep.models.span.queries import _probe_template

    def broken(*args, **kwargs):
        raise TypeError("slow tokenizer without sequence_ids")

    pair = _probe_template(broken, pair=True, cls_id=7, sep_id=8)
    assert (pair.prefix.tolist(), pair.middle.tolist(), pair.suffix.tolist()) == ([7], [8], [8])
    assert (pair.prefix_types.tolist(), pair.middle_types.tolist(), pair.suffix_types.tolist()) == ([0], [0], [1])
    assert (pair.type_a, pair.type_b) == (0, 1)
    single = _probe_template(broken, pair=False, cls_id=7, sep_id=8)
    assert (single.prefix.tolist(), single.middle.tolist(), single.suffix.tolist()) == ([7], [], [8])
