"""Span-span parsing inference (Gan et al., 2022, "Inference"; DESIGN.md §3): sentences → well-formed trees.

Pipeline per call of :func:`parse_spans`:

1. word vectors from the encoder (token-budget batches) → span proposal log-probs → exact top-k spans per word;
2. per sentence, the candidates are the ROOT span plus the union of every word's top-k spans (deduplicated,
   :func:`candidate_queries`); one MRC query per candidate (ROOT's too: it is needed for the child side), built from
   a per-sentence state prepared once (``LinkScorer.prepare``: cached word pieces for the faithful linker, the
   encoder's word vectors for the late-interaction one); queries of all sentences are batched together by token budget
   (length-bucketed) under ``torch.inference_mode()``;
3. retrieval: the argmax parent span of every proposed query (:func:`retrieve_parents`) becomes an extra candidate
   of that parent word when new; new candidates get a proposal span score and their own queries (one extra round);
4. ``link[p, c] = score_parent(P | C) (+ score_child(C | P))`` from the linker, then ``span_dp`` (projective, with its
   counted MST fallback) or ``span_mst``; labels are the argmax of the chosen child query's label distribution read
   at its chosen parent's root;
   with a word scorer (``SpanParser(word_scorer=...)``), ``arc_weight`` times its head log-probability of the
   (child root, parent root) pair is added to every link, and ``label_source="word"`` reads labels from it at the
   decoded heads instead;
5. a sentence whose queries exceed the linker's length limit (the faithful linker's 512 pieces, the late linker's
   ``max_words``) is never dropped: it gets the word scorer's tree (MST, its labels) when the model has one, else
   it is decoded from the proposal's span scores alone, with structural links (:func:`structural_link`: 0 where a
   span may be the child of another, ``-inf`` elsewhere); either way it is counted in ``InferenceStats.too_long``.

Every output is a valid tree (the decoders guarantee it; ``span_mst`` always returns an arborescence).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from itertools import groupby
from operator import itemgetter
from dataclasses import dataclass, fields
from typing import Any, Literal

import numpy as np
import torch

from spandep.data.batching import token_batches
from spandep.data.sentence import Sentence
from spandep.decoding.mst import mst_single
from spandep.decoding.spans import SpanCandidates, span_dp, span_mst
from spandep.encoders.base import WordEncoder, batch_cost, sentence_features
from spandep.models.biaffine import BiaffineScorer
from spandep.models.span_linking import LinkScorer, link_from_tables
from spandep.models.span_proposal import SpanProposal, topk_spans
from spandep.models.tagger import UposTagger
from spandep.pipeline.link_labels import LabelStates, LabelTable, LinkLabels, read_labels
from spandep.pipeline.parse_result import Parse

__all__ = [
    "InferenceStats",
    "SpanParserParts",
    "ScoredSentence",
    "WordScores",
    "candidate_queries",
    "decode_scored",
    "parse_spans",
    "retrieve_parents",
    "score_spans",
    "structural_link",
]

NEG_INF = float("-inf")
# parse_spans runs the linker and decodes GROUP_WORDS / k words at a time (after the encoder has run over all of
# them): each query's states are kept until its sentence is decoded (labels are read at the decoded arcs only), and a
# sentence asks about k·n queries, so their memory is bounded by a group, not by the input (about +40 MB at k=2).
GROUP_WORDS = 4000
WordSpans = Sequence[Sequence[tuple[int, int, float]]]  # per word 1..n: (start, end, score) tuples


@dataclass
class SpanParserParts:
    """The trained modules of the span-span parser and its label set (index = the linker's label id).

    ``spandep.models.span_parser.SpanParser`` has the same attributes and is passed to :func:`parse_spans` as is.
    """

    encoder: WordEncoder
    proposal: SpanProposal
    linker: LinkScorer
    labels: list[str]
    word_scorer: BiaffineScorer | None = None
    tagger: UposTagger | None = None


@dataclass
class InferenceStats:
    """Counters of one :func:`parse_spans` call.

    ``queries``: MRC queries run (deduplicated per sentence, retrieval round included); ``retrieved_spans``: new
    candidates added by retrieval; ``dp_fallbacks``: MRC-scored sentences where ``span_dp`` found no projective tree
    among the candidates and returned ``span_mst``'s; ``too_long``: sentences decoded without the linker because their
    queries exceed its length limit.
    """

    sentences: int = 0
    queries: int = 0
    retrieved_spans: int = 0
    dp_fallbacks: int = 0
    too_long: int = 0
    seconds: float = 0.0

    def add(self, other: InferenceStats) -> None:
        """Accumulate another run's counters into this one."""
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


# ----------------------------------------------------------------------------------------- helpers
def candidate_queries(
    word_spans: WordSpans, n: int, extra: Sequence[tuple[int, int, int, float]] = ()
) -> SpanCandidates:
    """The distinct candidate spans of one sentence, ROOT's ``(0, 1, n)`` at index 0, one query each.

    ``word_spans[i - 1]`` are word i's proposed ``(start, end, score)`` (``topk_spans``); ``extra`` more
    ``(root, start, end, score)`` rows (retrieved spans). Duplicates are merged (highest score kept); the order is
    that of first occurrence, so appending ``extra`` never moves an existing candidate.
    """
    if len(word_spans) != n:
        raise ValueError(f"{len(word_spans)} span lists for {n} words")
    rows = [(w, s, e, score) for w, spans in enumerate(word_spans, start=1) for s, e, score in spans]
    return SpanCandidates.from_lists(n, rows + list(extra))


def structural_link(cands: SpanCandidates, allow_root_in_span: bool = False) -> np.ndarray:
    """A link matrix ``(S, S)`` without a model: 0 where candidate c may be a child of candidate p, else ``-inf``.

    The same constraints as the linker's masks: ``p.start ≤ c.start``, ``c.end ≤ p.end``, ``p.root ≠ c.root`` and
    ``p.root`` outside ``[c.start, c.end]`` (unless ``allow_root_in_span``); ROOT (index 0) is never a child.
    """
    r, s, e = cands.root, cands.start, cands.end  # (S,) each
    ok = (s[:, None] <= s[None, :]) & (e[None, :] <= e[:, None]) & (r[:, None] != r[None, :])  # (S, S) [p, c]
    if not allow_root_in_span:
        ok &= (r[:, None] < s[None, :]) | (r[:, None] > e[None, :])  # (S, S)
    ok[0, :] |= True  # ROOT may parent any span (its root 0 lies outside every word span)
    ok[:, 0] = False  # ROOT has no parent
    return np.where(ok, 0.0, NEG_INF)  # (S, S)


def retrieve_parents(table: torch.Tensor, n_words: torch.Tensor) -> list[tuple[int, int, int] | None]:
    """The argmax parent span ``(root, start, end)`` of every query of a batch (DESIGN.md §3, "Retrieval"), from the
    parent side ``(batch, 3, W)`` of its ``LinkScorer.link_tables``.

    Maximises ``score_parent = log p_root(r) + log p_start(s') + log p_end(e')`` jointly over valid spans
    ``s' ≤ r ≤ e'`` (the linker's masks already enforce ``s' ≤ s``, ``e' ≥ e`` and the root constraint), ROOT's span
    ``(0, 1, n)`` included. ``None`` where the argmax is ROOT or no parent is allowed (the ROOT query). Exact: the
    score is separable, so for each root the best start is a prefix maximum and the best end a suffix maximum.
    """
    root_lp, start_lp, end_lp = table[:, 0], table[:, 1], table[:, 2]  # (batch, W) each
    best_start, arg_start = torch.cummax(start_lp, dim=1)  # (batch, W): best start ≤ r
    rev_end, rev_arg = torch.cummax(end_lp.flip(1), dim=1)  # (batch, W) over the reversed positions
    best_end = rev_end.flip(1)  # (batch, W): best end ≥ r
    arg_end = end_lp.size(1) - 1 - rev_arg.flip(1)  # (batch, W)
    total = root_lp + best_start + best_end  # (batch, W); column 0 is meaningless for ROOT, replaced below
    n = n_words.to(table.device).view(-1, 1)  # (batch, 1)
    root_total = root_lp[:, 0] + start_lp[:, 1] + end_lp.gather(1, n).squeeze(1)  # (batch,) ROOT's span (0, 1, n)
    total[:, 0] = root_total
    score, best = total.max(dim=1)  # (batch,)
    starts = arg_start.gather(1, best.unsqueeze(1)).squeeze(1)  # (batch,)
    ends = arg_end.gather(1, best.unsqueeze(1)).squeeze(1)  # (batch,)
    found: list[tuple[int, int, int] | None] = []
    for r, s, e, v in zip(best.tolist(), starts.tolist(), ends.tolist(), score.tolist()):
        found.append((r, s, e) if r > 0 and v != NEG_INF and s <= r <= e else None)
    return found


@dataclass
class _Sent:
    """Per-sentence working state."""

    n: int
    state: Any = None  # the linker's per-sentence query state (LinkScorer.prepare)
    fits: bool = False
    start_lp: np.ndarray | None = None  # (1 + n, 1 + n) proposal log P_start [word, boundary]
    end_lp: np.ndarray | None = None  # (1 + n, 1 + n)
    word_spans: list[list[tuple[int, int, float]]] | None = None
    cands: SpanCandidates | None = None
    chunks: list[tuple[list[int], dict[str, torch.Tensor]]] | None = None  # (candidate indices, their output rows)
    words: WordScores | None = None
    upos: list[str] | None = None  # the tagging head's UPOS, when the model has one


def _device(module: torch.nn.Module) -> torch.device:
    return next(module.parameters()).device


def _propose(parts: SpanParserParts, sents: list[_Sent], sentences: Sequence[Sentence], k: int, batch_tokens: int) -> None:
    """Encoder + span proposal: top-k spans and the log-prob tables of every non-empty sentence; the linker's
    per-sentence state too when it reads the encoder's word vectors."""
    enc = parts.encoder
    todo = [i for i, st in enumerate(sents) if st.n > 0]
    feats = {i: sentence_features(enc, sentences[i].forms, sentences[i].upos) for i in todo}
    device = _device(enc)
    for batch_ids in token_batches([batch_cost(feats[i]) for i in todo], batch_tokens):
        idx = [todo[j] for j in batch_ids]
        batch = {key: v.to(device) for key, v in enc.collate([feats[i] for i in idx]).items()}
        x = enc(batch)  # (batch, 1 + n, d)
        s_start, s_end = parts.proposal(x, batch["word_mask"])  # (batch, 1 + n, 1 + n) each
        start_lp, end_lp = SpanProposal.log_probs(s_start, s_end)  # (batch, 1 + n, 1 + n) each
        lengths = [sents[i].n for i in idx]
        spans = topk_spans(start_lp, end_lp, lengths, k)
        start_np, end_np = start_lp.cpu().numpy(), end_lp.cpu().numpy()  # (batch, 1 + n, 1 + n) each
        word_arc = None
        if parts.word_scorer is not None:
            s_arc, (rel_dep, rel_head) = parts.word_scorer.score(x, batch["word_mask"])  # (batch, 1 + n, 1 + n)
            word_arc = s_arc.float().log_softmax(-1).cpu().numpy().astype(np.float64)  # (batch, 1 + n, 1 + n)
            rel_dep, rel_head = rel_dep.cpu(), rel_head.cpu()  # (batch, 1 + n, rel_mlp) each
        tags = parts.tagger.predict(x, batch["word_mask"]) if parts.tagger is not None else None
        for row, i in enumerate(idx):
            m = sents[i].n + 1
            sents[i].start_lp = start_np[row, :m, :m]
            sents[i].end_lp = end_np[row, :m, :m]
            sents[i].word_spans = spans[row]
            sents[i].upos = tags[row] if tags is not None else None
            if word_arc is not None:
                sents[i].words = WordScores(word_arc[row, :m, :m], rel_dep[row, :m], rel_head[row, :m], parts.word_scorer)  # type: ignore[arg-type]
            if parts.linker.needs_word_vectors:
                sents[i].state = parts.linker.prepare(sentences[i].forms, sentences[i].upos, x[row, :m])


def _run_queries(
    linker: LinkScorer,
    sents: list[_Sent],
    jobs: list[tuple[int, int]],
    batch_tokens: int,
    retrieve: bool,
    keep_states: bool,
    mutual: bool,
) -> dict[tuple[int, int], tuple[int, int, int]]:
    """Run the queries ``jobs`` = (sentence, candidate index), storing each query's link tables
    (``LinkScorer.link_tables``, the child side only when ``mutual``) in its sentence, and with ``keep_states`` its
    states for :class:`LabelStates`, else its best label at every parent root; returns
    the retrieved parent span of each job when ``retrieve`` (jobs whose argmax parent is ROOT are absent)."""
    device = _device(linker)
    found: dict[tuple[int, int], tuple[int, int, int]] = {}
    lengths = [linker.query_length(sents[i].state) for i, _ in jobs]
    for batch_ids in token_batches(lengths, batch_tokens):
        todo = [jobs[j] for j in batch_ids]
        items = []
        for i, c in todo:
            cands = sents[i].cands
            assert cands is not None
            items.append((sents[i].state, int(cands.root[c]), int(cands.start[c]), int(cands.end[c])))
        batch = {key: v.to(device) for key, v in linker.make_batch(items).items()}
        out = linker(batch)
        parent, child = linker.link_tables(out, mutual)  # (batch, 3, 1 + n) each
        if retrieve:
            for (i, c), span in zip(todo, retrieve_parents(parent, batch["n_words"])):
                if span is not None:
                    found[(i, c)] = span
        by_position = {"parent": parent.cpu()}  # (batch, ..., 1 + n): cut to each sentence's length on the last axis
        if child is not None:
            by_position["child"] = child.cpu()
        by_row: dict[str, torch.Tensor] = {}  # (batch, ...): rows only
        if keep_states:
            by_row["hidden"] = out.hidden.cpu()  # (batch, 1 + n, d): cut below on axis 1
            if out.query is not None:
                by_row["query"] = out.query.cpu()  # (batch, d)
        else:
            roots = torch.arange(out.parent.size(-1), device=device)  # (1 + n,) every context position as a parent root
            by_position["labels"] = linker.label_logp(out, roots).argmax(-1).cpu()  # (batch, 1 + n)
        start = 0
        for i, run in groupby(todo, key=itemgetter(0)):  # one slice per run of a sentence's rows, not one per query
            cands = [c for _, c in run]
            end, m = start + len(cands), sents[i].n + 1
            rows = {key: v[start:end, ..., :m] for key, v in by_position.items()}
            rows.update({key: v[start:end, :m] if key == "hidden" else v[start:end] for key, v in by_row.items()})
            sents[i].chunks.append((cands, rows))  # type: ignore[union-attr]
            start = end
    return found


def _sentence_output(st: _Sent, linker: LinkScorer) -> tuple[np.ndarray, LinkLabels]:
    """The link matrix ``(S, S)`` ``[parent, child]`` of one sentence from its queries' link tables, and what their
    labels are read from (a :class:`LabelStates` when the queries kept their states, else a :class:`LabelTable`)."""
    assert st.cands is not None and st.chunks is not None
    ran = [c for cands, _ in st.chunks for c in cands]  # candidate of each output row
    if len(ran) != st.cands.size:
        raise AssertionError(f"{len(ran)} query outputs for {st.cands.size} candidates")
    order = None if ran == list(range(len(ran))) else torch.as_tensor(ran).argsort()  # (S,) rows in candidate order

    def stack(key: str) -> torch.Tensor:
        parts = [rows[key] for _, rows in st.chunks]  # type: ignore[union-attr]
        rows = parts[0] if len(parts) == 1 else torch.cat(parts)
        return rows if order is None else rows.index_select(0, order)

    first = st.chunks[0][1]
    child = stack("child").numpy() if "child" in first else None  # (S, 3, 1 + n)
    link = link_from_tables(stack("parent").numpy(), child, st.cands.root, st.cands.start, st.cands.end)  # (S, S)
    if "hidden" in first:
        return link, LabelStates(linker, stack("hidden"), stack("query") if "query" in first else None)
    return link, LabelTable(stack("labels").numpy())


def _fallback_labels(labels: Sequence[str]) -> tuple[str, str]:
    """Labels for sentences decoded without the linker: ``root`` for the ROOT child, ``dep`` (or the first other
    label) elsewhere; both fall back to ``labels[0]``."""
    root = "root" if "root" in labels else labels[0]
    other = "dep" if "dep" in labels else next((x for x in labels if x != "root"), labels[0])
    return root, other


# ----------------------------------------------------------------------------------------- entry points
@dataclass
class WordScores:
    """The word scorer's view of one sentence: head log-probs ``arc (1 + n, 1 + n)`` ``[dependent, head]`` and the
    label representations, read at the decoded heads by :meth:`labels_at`."""

    arc: np.ndarray
    rel_dep: torch.Tensor  # (1 + n, rel_mlp)
    rel_head: torch.Tensor  # (1 + n, rel_mlp)
    scorer: BiaffineScorer

    def link_term(self, cands: SpanCandidates) -> np.ndarray:
        """``(S, S)`` ``[parent, child]``: the head log-prob of the child's root attached to the parent's root; 0 in
        ROOT's column (ROOT is never a child)."""
        term = self.arc[cands.root[None, :], cands.root[:, None]]  # (S, S)
        term[:, 0] = 0.0
        return term

    def labels_at(self, heads: np.ndarray) -> np.ndarray:
        """Best label id of each word ``1..n`` at ``heads (1 + n,)`` → ``(n,)``."""
        with torch.inference_mode():
            device = next(self.scorer.parameters()).device
            at = torch.as_tensor(heads, dtype=torch.long, device=device).unsqueeze(0)  # (1, 1 + n)
            reps = (self.rel_dep.to(device).unsqueeze(0), self.rel_head.to(device).unsqueeze(0))  # 2 × (1, 1 + n, rel_mlp)
            scores = self.scorer.label_scores(reps, at)  # (1, 1 + n, labels)
        return scores[0, 1:].argmax(-1).cpu().numpy()  # (n,)


@dataclass
class ScoredSentence:
    """One sentence after the models ran, before decoding: decoding settings (λ, decoder) can be swept on it.

    ``cands`` the final candidate spans (``None`` for an empty sentence); ``proposed`` how many of them (ROOT's
    included) came from the proposal, the rest were added by retrieval; ``link (S, S)`` the link scores ``[parent,
    child]`` and ``labels`` where each candidate's label at each parent root is read (``link_labels``), both ``None``
    when the sentence took the too-long fallback; ``words`` the word scorer's scores when the model has one;
    ``upos`` the tagging head's tags when the model has one.
    """

    n: int
    cands: SpanCandidates | None = None
    proposed: int = 0
    link: np.ndarray | None = None
    labels: LinkLabels | None = None
    words: WordScores | None = None
    upos: list[str] | None = None


@contextmanager
def _inference(parts: SpanParserParts) -> Iterator[None]:
    """Every module in eval mode under ``torch.inference_mode()``; training flags restored afterwards."""
    modules: tuple[torch.nn.Module, ...] = (parts.encoder, parts.proposal, parts.linker)
    modules += tuple(m for m in (parts.word_scorer, parts.tagger) if m is not None)
    was_training = [m.training for m in modules]
    for m in modules:
        m.eval()
    try:
        with torch.inference_mode():
            yield
    finally:
        for m, flag in zip(modules, was_training):
            m.train(flag)


def _link(
    parts: SpanParserParts,
    sentences: list[Sentence],
    sents: list[_Sent],
    ids: Sequence[int],
    retrieval: bool,
    batch_tokens: int,
    mutual: bool,
    label_states: bool,
    stats: InferenceStats,
) -> list[ScoredSentence]:
    """Steps 2–4 for the proposed sentences ``ids``: candidates, queries, retrieval, link matrices; one
    :class:`ScoredSentence` per id, in order. Each sentence's query outputs are released once it is scored."""
    linker = parts.linker
    jobs: list[tuple[int, int]] = []
    scored = {i: ScoredSentence(n=sents[i].n) for i in ids}
    for i in ids:
        st = sents[i]
        if st.n == 0:
            continue
        assert st.word_spans is not None
        st.cands = candidate_queries(st.word_spans, st.n)
        scored[i].proposed = st.cands.size
        if not linker.needs_word_vectors:
            st.state = linker.prepare(sentences[i].forms, sentences[i].upos, None)
        st.fits = linker.fits(st.state)
        if not st.fits:
            stats.too_long += 1
            continue
        st.chunks = []
        jobs.extend((i, c) for c in range(st.cands.size))
    do_retrieve = retrieval and not linker.answer_token  # a token answer has no span to retrieve
    found = _run_queries(linker, sents, jobs, batch_tokens, do_retrieve, label_states, mutual)
    stats.queries += len(jobs)

    if do_retrieve:  # one extra round for the new candidates
        extra_jobs: list[tuple[int, int]] = []
        per_sentence: dict[int, list[tuple[int, int, int]]] = {}
        for (i, c), span in found.items():
            if c > 0:  # retrieval from proposed spans (ROOT's query has no parent anyway)
                per_sentence.setdefault(i, []).append(span)
        for i, spans in per_sentence.items():
            st = sents[i]
            assert st.cands is not None and st.start_lp is not None and st.end_lp is not None
            old = st.cands.size
            new = [
                (r, s, e, float(st.start_lp[r, s] + st.end_lp[r, e]))  # proposal score of the new span
                for r, s, e in spans
            ]
            st.cands = SpanCandidates.from_lists(st.n, _existing(st) + new)  # order kept, duplicates merged
            stats.retrieved_spans += st.cands.size - old
            extra_jobs.extend((i, c) for c in range(old, st.cands.size))
        if extra_jobs:
            _run_queries(linker, sents, extra_jobs, batch_tokens, False, label_states, mutual)
            stats.queries += len(extra_jobs)

    for i in ids:
        st, out_row = sents[i], scored[i]
        out_row.cands = st.cands
        out_row.words = st.words
        out_row.upos = st.upos
        if st.n == 0 or not st.fits:
            continue
        assert st.cands is not None
        link, out_row.labels = _sentence_output(st, linker)  # (S, S) [parent, child]
        st.chunks = st.state = None
        out_row.link = link.astype(np.float64)  # (S, S)
    return [scored[i] for i in ids]


def _check_labels(parts: SpanParserParts) -> None:
    if len(parts.labels) != len(parts.linker.labels):
        raise ValueError(f"{len(parts.labels)} labels given, the linker has {len(parts.linker.labels)}")


def score_spans(
    parts: SpanParserParts,
    sentences: list[Sentence],
    k: int = 2,
    retrieval: bool = True,
    batch_tokens: int = 4000,
    mutual: bool = True,
    label_states: bool = False,
) -> tuple[list[ScoredSentence], InferenceStats]:
    """Steps 1–4 of the module docstring up to the link matrices (see :func:`parse_spans` for the options).

    ``label_states`` keeps each query's states and scores labels only at the decoded arcs (:class:`LabelStates`:
    less compute, more memory); otherwise the best label at every parent root is computed now (:class:`LabelTable`).
    """
    _check_labels(parts)
    t0 = time.perf_counter()
    stats = InferenceStats(sentences=len(sentences))
    sents = [_Sent(n=len(s)) for s in sentences]
    with _inference(parts):
        _propose(parts, sents, sentences, k, batch_tokens)
        scored = _link(parts, sentences, sents, range(len(sents)), retrieval, batch_tokens, mutual, label_states, stats)
    stats.seconds = time.perf_counter() - t0
    return scored, stats


def decode_scored(
    scored: Sequence[ScoredSentence],
    labels: Sequence[str],
    lam: float = 1.0,
    decoder: Literal["dp", "mst"] = "dp",
    allow_root_in_span: bool = False,
    arc_weight: float = 0.0,
    label_source: Literal["linker", "word"] = "linker",
) -> tuple[list[Parse], int]:
    """Step 5: a tree (and the tagger's UPOS, if any) per scored sentence, and how many ``span_dp`` calls fell back to ``span_mst``.

    ``arc_weight`` and ``label_source="word"`` use the word scorer's scores (step 4; ``ValueError`` without them).
    Sentences without link scores (too long for the linker) get the word head's tree (MST over its arcs, its
    labels) when the model has one, else a tree over their span candidates by :func:`structural_link` with the
    fallback labels (``root`` / ``dep``)."""
    if decoder not in ("dp", "mst"):
        raise ValueError(f"decoder must be 'dp' or 'mst', not {decoder!r}")
    if label_source not in ("linker", "word"):
        raise ValueError(f"label_source must be 'linker' or 'word', not {label_source!r}")
    decode = span_dp if decoder == "dp" else span_mst
    root_label, other_label = _fallback_labels(labels)
    results: list[Parse] = []
    arcs: list[tuple[int, tuple[LinkLabels, np.ndarray, np.ndarray]]] = []  # (row of results, label request)
    fallbacks = 0
    for sc in scored:
        if sc.n == 0:
            results.append(Parse([], [], [] if sc.upos is not None else None))
            continue
        assert sc.cands is not None
        if sc.link is None or sc.labels is None:  # too long for the linker
            if sc.words is not None:  # the word head's tree: MST over its arcs, its labels
                tree = mst_single(sc.words.arc)  # (1 + n,)
                labels_w = sc.words.labels_at(tree)  # (n,)
                results.append(Parse(tree[1:].tolist(), [labels[int(j)] for j in labels_w], sc.upos))
                continue
            res = decode(sc.cands, structural_link(sc.cands, allow_root_in_span), 1.0)
            heads = res.heads[1:].tolist()
            results.append(Parse(heads, [root_label if h == 0 else other_label for h in heads], sc.upos))
            continue
        if (arc_weight or label_source == "word") and sc.words is None:
            raise ValueError("arc_weight and label_source='word' need a model trained with a word scorer")
        if arc_weight:
            assert sc.words is not None
            combined = lam * np.where(np.isneginf(sc.link), 0.0, sc.link) + arc_weight * sc.words.link_term(sc.cands)  # (S, S)
            res = decode(sc.cands, np.where(np.isneginf(sc.link), NEG_INF, combined), 1.0)
        else:
            res = decode(sc.cands, sc.link, lam)
        fallbacks += int(decoder == "dp" and res.fallback)
        if label_source == "word":
            assert sc.words is not None
            chosen = sc.words.labels_at(res.heads)  # (n,)
            results.append(Parse(res.heads[1:].tolist(), [labels[int(j)] for j in chosen], sc.upos))
        else:  # the label of each word's chosen query at its head, read below for all sentences at once
            arcs.append((len(results), (sc.labels, res.chosen[1:], res.heads[1:])))
            results.append(Parse(res.heads[1:].tolist(), [], sc.upos))
    for (row, _), ids in zip(arcs, read_labels([request for _, request in arcs])):
        results[row] = results[row]._replace(labels=[labels[int(j)] for j in ids])
    return results, fallbacks


def parse_spans(
    parts: SpanParserParts,
    sentences: list[Sentence],
    k: int = 2,
    lam: float = 1.0,
    decoder: Literal["dp", "mst"] = "dp",
    retrieval: bool = True,
    batch_tokens: int = 4000,
    mutual: bool = True,
    arc_weight: float = 0.0,
    label_source: Literal["linker", "word"] = "linker",
) -> tuple[list[Parse], InferenceStats]:
    """Heads, labels (and UPOS, with a tagging head) of every sentence (input order), and the run's counters.

    ``k`` spans proposed per word; ``lam`` weighs the link scores against the span scores; ``decoder`` ``"dp"``
    (projective, Algorithm 1) or ``"mst"`` (non-projective); ``retrieval`` adds each query's argmax parent span;
    ``batch_tokens`` is the padded-token budget of encoder and query batches; ``mutual`` adds the child-side score;
    ``arc_weight`` and ``label_source`` use the model's word scorer (module docstring, step 4).
    Empty sentences get empty lists; every other sentence gets a valid tree. After the encoder, sentences are
    linked and decoded ``GROUP_WORDS // k`` words at a time, shortest first, labels read at the decoded arcs only
    (:class:`LabelStates`).
    """
    if decoder not in ("dp", "mst"):
        raise ValueError(f"decoder must be 'dp' or 'mst', not {decoder!r}")
    _check_labels(parts)
    t0 = time.perf_counter()
    stats = InferenceStats(sentences=len(sentences))
    sents = [_Sent(n=len(s)) for s in sentences]
    results: list[Parse] = [Parse([], []) for _ in sentences]
    by_length = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))  # near-uniform query batches
    with _inference(parts):
        _propose(parts, sents, sentences, k, batch_tokens)
        for group in _groups([len(sentences[i]) for i in by_length], max(1, GROUP_WORDS // k)):
            ids = [by_length[j] for j in group]
            scored = _link(parts, sentences, sents, ids, retrieval, batch_tokens, mutual, True, stats)
            parses, fallbacks = decode_scored(
                scored, parts.labels, lam, decoder, parts.linker.allow_root_in_span, arc_weight, label_source
            )
            stats.dp_fallbacks += fallbacks
            for i, parse in zip(ids, parses):
                results[i] = parse
    stats.seconds = time.perf_counter() - t0
    return results, stats


def _groups(lengths: list[int], words: int) -> list[list[int]]:
    """Consecutive runs of indices into ``lengths`` with at most ``words`` words each (a longer sentence is a group
    alone)."""
    groups: list[list[int]] = []
    size = words + 1
    for i, n in enumerate(lengths):
        if size + n > words:
            groups.append([])
            size = 0
        groups[-1].append(i)
        size += n
    return groups


def _existing(st: _Sent) -> list[tuple[int, int, int, float]]:
    """The current non-ROOT candidates of a sentence as ``(root, start, end, score)`` rows, in candidate order."""
    c = st.cands
    assert c is not None
    return [(int(c.root[j]), int(c.start[j]), int(c.end[j]), float(c.score[j])) for j in range(1, c.size)]
