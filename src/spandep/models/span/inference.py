"""Span-span parsing inference (Gan et al., 2022, "Inference"): sentences → well-formed trees, stage by stage.

:class:`SpanInference` is one run's inference: the modules it runs (:class:`SpanParts`, handed over by
``SpanParser.stages``; nothing else of the parser is read) and one options object, the complete settings.

1. **propose** (:meth:`SpanInference.propose`, one :class:`Proposed` per non-empty sentence): word vectors from the
   encoder (token-budget batches) → span proposal log-probs → exact top-k spans per word; the output heads' columns,
   the word scorer's scores when the model has one, and the linker's per-sentence state (``LinkScorer.prepare``);
2. **link** (:meth:`SpanInference.link`, one :class:`ScoredSentence` per sentence): the candidates are the ROOT span plus the union
   of every word's top-k spans (``candidates.candidate_queries``); one MRC query per candidate (ROOT's too: it is
   needed for the child side), built from the linker's per-sentence state; queries of all sentences are batched
   together by token budget. Retrieval (when the linker does it: ``LinkScorer.retrieves``): the argmax parent span of every proposed query
   (``candidates.retrieve_parents``) becomes an extra candidate of that parent word when new; new candidates get a
   proposal span score and their own queries (one extra round). ``link[p, c] = score_parent(P | C) (+ score_child(C |
   P))`` from the queries' link tables; what labels are read from is kept beside it (``labels.py``);
3. **decode** (:meth:`SpanInference.decode`): over the proposal's candidates alone without ``retrieval``, ``span_dp`` (projective, with its counted MST fallback) or ``span_mst`` over
   the candidates; labels are the argmax of the chosen child query's label distribution read at its chosen parent's
   root. With a word scorer, ``arc_weight`` times its head log-probability of the (child root, parent root) pair is
   added to every link, and ``label_source="word"`` reads labels from it at the decoded heads instead.

A sentence whose queries exceed the linker's length limit (the faithful linker's 512 pieces, the late linker's
``max_words``) is never dropped: it gets the word scorer's tree (MST, its labels) when the model has one, else it is
decoded from the proposal's span scores alone, with the linker's structural links (``LinkScorer.structural_link``); either way it
is counted in ``InferenceStats.too_long``. Every output is a valid tree (``span_mst`` always returns an
arborescence).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager as ContextManager
from dataclasses import dataclass, field, replace
from itertools import groupby
from operator import itemgetter
from typing import Any

import numpy as np
import torch

from spandep.data.batching import token_batches
from spandep.data.sentence import Sentence
from spandep.decoding.mst import mst_single
from spandep.decoding.constraints import Fixed
from spandep.decoding.spans import SpanCandidates, SpanDecodeResult
from spandep.options import InferenceOptions, InferenceStats
from spandep.masking import NEG_INF
from spandep.models.base import Parse, fallback_labels, given_constraints
from spandep.models.biaffine import BiaffineScorer
from spandep.models.confidence import ArcScores
from spandep.models.span.candidates import candidate_queries, groups, link_head_scores, prune_spans, retrieve_parents, spans_for_given
from spandep.models.span.labels import LabelStates, LabelTable, LinkLabels, read_labels
from spandep.models.span.linking import LinkScorer, link_from_tables
from spandep.models.span.proposal import SpanProposal, topk_spans
from spandep.models.treebanks import restrict

__all__ = ["Encoded", "Proposed", "ScoredSentence", "SpanInference", "SpanParts", "WordScores"]

# SpanInference.parse runs the linker and decodes a group of sentences at a time (after the encoder has run over all of
# them): each query keeps its states (1 + n, dim) until its sentence is decoded (labels are read at the decoded arcs
# only), and a sentence of n words asks about up to k·n queries, so a group is bounded by its queries' positions
# Σ k·n·(1 + n), about GROUP_POSITIONS · dim · 4 bytes of states (60 MB at the late linker's dim 256) whatever the
# sentences' lengths, where 2,000 words at k = 2 were four times that in 60-word sentences. Each query counts as at
# least QUERY_POSITIONS, so a group of short sentences stays near 1,000 words at k = 2 (the labels of a group's arcs
# are scored in one pass of (arcs, labels, label_mlp + 1) floats).
GROUP_POSITIONS = 60_000
QUERY_POSITIONS = 32
SpanDecoder = Callable[[SpanCandidates, np.ndarray, float, Fixed | None], SpanDecodeResult]
# one encoded batch: its sentences' indices, word mask (batch, 1 + n), word vectors (batch, 1 + n, width), heads' columns
Encoded = tuple[list[int], torch.Tensor, torch.Tensor, list[dict[str, list[str]]]]


@dataclass
class WordScores:
    """The word scorer's view of one sentence: head log-probs ``arc (1 + n, 1 + n)`` ``[dependent, head]`` and the
    label representations, read at the decoded heads by :meth:`labels_at`."""

    arc: np.ndarray
    rel_dep: torch.Tensor  # (1 + n, rel_mlp)
    rel_head: torch.Tensor  # (1 + n, rel_mlp)
    scorer: BiaffineScorer
    allowed: torch.Tensor | None = None  # (labels,): the labels a parse may give; None: all

    def link_term(self, cands: SpanCandidates) -> np.ndarray:
        """``(S, S)`` ``[parent, child]``: the head log-prob of the child's root attached to the parent's root; 0 in
        ROOT's column (ROOT is never a child)."""
        term = self.arc[cands.root[None, :], cands.root[:, None]]  # (S, S)
        term[:, 0] = 0.0
        return term

    def labels_at(self, heads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Best label id of each word ``1..n`` at ``heads (1 + n,)`` and its probability → ``(n,)`` each."""
        with torch.inference_mode():
            device = next(self.scorer.parameters()).device
            at = torch.as_tensor(heads, dtype=torch.long, device=device).unsqueeze(0)  # (1, 1 + n)
            reps = (self.rel_dep.to(device).unsqueeze(0), self.rel_head.to(device).unsqueeze(0))  # 2 × (1, 1 + n, rel_mlp)
            scores = restrict(self.scorer.label_scores(reps, at), self.allowed)  # (1, 1 + n, labels)
        ids = scores[0, 1:].argmax(-1)  # (n,)
        probs = scores[0, 1:].softmax(-1).gather(-1, ids.unsqueeze(-1)).squeeze(-1)  # (n,)
        # copies numpy owns: a view would keep torch's small block alive amid the next sentences' freed temporaries,
        # and the process grew with every sentence decoded (docs/speed.md, "Memory")
        return ids.cpu().numpy().copy(), probs.double().cpu().numpy().copy()


@dataclass
class Proposed:
    """Stage 1's result for one non-empty sentence of ``n`` words: the proposal's log-prob tables ``(1 + n, 1 + n)``
    ``[word, boundary]``, each word's top-k ``(start, end, score)`` spans, the output heads' columns, the word scorer's
    scores (``None`` without one) and the linker's per-sentence state (``LinkScorer.prepare``)."""

    n: int
    start_lp: np.ndarray
    end_lp: np.ndarray
    word_spans: list[list[tuple[int, int, float]]]
    columns: dict[str, list[str]]
    words: WordScores | None
    state: Any


@dataclass
class ScoredSentence:
    """Stage 2's result for one sentence, before decoding: decoding settings (λ, decoder) can be swept on it.

    ``cands`` the final candidate spans (``None`` for an empty sentence); ``proposed`` how many of them (ROOT's
    included) came from the proposal, the rest were added by retrieval; ``link (S, S)`` the link scores ``[parent,
    child]`` and ``labels`` where each candidate's label at each parent root is read, both ``None`` when the sentence
    took the too-long fallback; ``words`` the word scorer's scores when the model has one; ``columns`` the output
    heads' columns; ``fixed`` the heads the decoding keeps (``None``: none).
    """

    n: int
    cands: SpanCandidates | None = None
    proposed: int = 0
    link: np.ndarray | None = None
    labels: LinkLabels | None = None
    words: WordScores | None = None
    columns: dict[str, list[str]] = field(default_factory=dict)
    fixed: Fixed | None = None

    def proposals_only(self) -> ScoredSentence:
        """The sentence restricted to the proposal's candidates (what decoding sees without retrieval)."""
        if self.cands is None or self.link is None or self.labels is None or self.proposed == self.cands.size:
            return self
        m, c = self.proposed, self.cands
        cands = SpanCandidates(c.n, c.root[:m], c.start[:m], c.end[:m], c.score[:m])
        return replace(self, cands=cands, link=self.link[:m, :m], labels=self.labels.rows(m))


@dataclass
class _Queries:
    """Stage 2's working state of one sentence that fits the linker: its query state, candidates, and the link tables
    of the queries run so far, as ``(candidate indices, their output rows)``."""

    state: Any
    cands: SpanCandidates
    chunks: list[tuple[list[int], dict[str, torch.Tensor]]] = field(default_factory=list)


@dataclass(frozen=True)
class SpanParts:
    """The modules span inference runs, and nothing else of the parser: ``encode`` (each batch of the non-empty
    sentences encoded under the options given, with its output heads' columns: :data:`Encoded`), the span
    ``proposal``, the ``linker``, the ``word_scorer`` (``None``: none), the dependency ``labels`` and the span
    ``decoders`` by user-facing name (``mst``, ``projective``); ``products`` gives the context the proposal's and the
    word scorer's matrix products run in (``Parser.products``: bfloat16 or not), their scores read in float32. The
    linker runs in float32: its small products gain little in bfloat16 at one thread and lose at two, where its
    elementwise work in bfloat16 costs more than its matrix products save (docs/speed.md)."""

    encode: Callable[[Sequence[Sentence], InferenceOptions], Iterator[Encoded]]
    proposal: SpanProposal
    linker: LinkScorer
    word_scorer: BiaffineScorer | None
    labels: Sequence[str]
    decoders: Mapping[str, SpanDecoder]
    products: Callable[[], ContextManager[Any]]


@dataclass(frozen=True)
class SpanInference:
    """One span model's inference (the module docstring's stages) with the complete settings ``options``
    (``SpanParser.settings``): ``k``, ``retrieval``, ``mutual`` and ``batch_tokens`` for :meth:`propose` and
    :meth:`link`; ``decoder``, ``lam``, ``arc_weight``, ``label_source`` and ``retrieval`` for :meth:`decode`.
    ``allowed``: the labels the treebank of ``options`` may give ``(labels,)`` (``None``: all). The caller puts the
    modules in eval mode (``SpanParser.parse``)."""

    parts: SpanParts
    options: InferenceOptions
    allowed: torch.Tensor | None = None

    def label_names(self) -> list[str]:
        """The labels a parse may give."""
        labels = list(self.parts.labels)
        return labels if self.allowed is None else [r for r, ok in zip(labels, self.allowed.tolist()) if ok]

    # ----------------------------------------------------------------------------------------- stage 1: propose
    def propose(self, sentences: Sequence[Sentence]) -> dict[int, Proposed]:
        """Encoder, span proposal, output heads, word scorer and the linker's state of every non-empty sentence (by
        index), with ``k`` spans per word (those ``prune`` keeps)."""
        parts, k, share = self.parts, int(self.options.k or 1), float(self.options.prune or 0.0)
        proposed: dict[int, Proposed] = {}
        for idx, word_mask, x, columns in parts.encode(sentences, self.options):
            with parts.products():
                s_start, s_end = parts.proposal(x, word_mask)  # (batch, 1 + n, 1 + n) each
            start_lp, end_lp = SpanProposal.log_probs(s_start.float(), s_end.float())  # (batch, 1 + n, 1 + n) each
            lengths = [len(sentences[i]) for i in idx]
            spans = topk_spans(start_lp, end_lp, lengths, k)
            start_np, end_np = start_lp.cpu().numpy(), end_lp.cpu().numpy()  # (batch, 1 + n, 1 + n) each
            word_arc = None
            if parts.word_scorer is not None:
                s_arc, (rel_dep, rel_head) = parts.word_scorer.scores(x, word_mask, parts.products())  # (batch, 1 + n, 1 + n)
                word_arc = s_arc.log_softmax(-1).cpu().numpy().astype(np.float64)  # (batch, 1 + n, 1 + n)
                rel_dep, rel_head = rel_dep.cpu(), rel_head.cpu()  # (batch, 1 + n, rel_mlp) each
            for row, i in enumerate(idx):
                m = lengths[row] + 1
                words = None
                if word_arc is not None:
                    words = WordScores(word_arc[row, :m, :m], rel_dep[row, :m], rel_head[row, :m], parts.word_scorer, self.allowed)  # type: ignore[arg-type]
                state = parts.linker.prepare(sentences[i].forms, sentences[i].upos, x[row, :m])
                proposed[i] = Proposed(m - 1, start_np[row, :m, :m], end_np[row, :m, :m], prune_spans(spans[row], share), columns[row], words, state)
        return proposed

    # ----------------------------------------------------------------------------------------- stage 2: link
    def _run_queries(
        self, queries: dict[int, _Queries], jobs: list[tuple[int, int]], retrieve: bool, keep_states: bool
    ) -> dict[tuple[int, int], tuple[int, int, int]]:
        """Run the queries ``jobs`` = (sentence, candidate index), storing each query's link tables
        (``LinkScorer.link_tables``, the child side only with ``mutual``) in its sentence's chunks, and with
        ``keep_states`` its states for :class:`LabelStates`, else its best label (of those ``allowed``) at every
        parent root; returns the retrieved parent span of each job when ``retrieve`` (jobs whose argmax parent is
        ROOT are absent)."""
        linker, mutual = self.parts.linker, bool(self.options.mutual)
        device = next(linker.parameters()).device
        found: dict[tuple[int, int], tuple[int, int, int]] = {}
        lengths = [linker.query_length(queries[i].state) for i, _ in jobs]
        for batch_ids in token_batches(lengths, self.options.batch_tokens):
            todo = [jobs[j] for j in batch_ids]
            items = []
            for i, c in todo:
                cands = queries[i].cands
                items.append((queries[i].state, int(cands.root[c]), int(cands.start[c]), int(cands.end[c])))
            batch = {key: v.to(device) for key, v in linker.make_batch(items).items()}
            out = linker(batch)  # float32: see SpanParts
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
                best_lp, best = linker.label_logp(out, roots, self.allowed).max(-1)  # (batch, 1 + n) each
                by_position["labels"], by_position["label_probs"] = best.cpu(), best_lp.exp().cpu()  # (batch, 1 + n) each
            start = 0
            for i, run in groupby(todo, key=itemgetter(0)):  # one slice per run of a sentence's rows, not one per query
                cands = [c for _, c in run]
                end, m = start + len(cands), queries[i].cands.n + 1
                rows = {key: v[start:end, ..., :m] for key, v in by_position.items()}
                rows.update({key: v[start:end, :m] if key == "hidden" else v[start:end] for key, v in by_row.items()})
                queries[i].chunks.append((cands, rows))
                start = end
        return found

    def _sentence_output(self, q: _Queries) -> tuple[np.ndarray, LinkLabels]:
        """The link matrix ``(S, S)`` ``[parent, child]`` of one sentence from its queries' link tables, and what
        their labels are read from (a :class:`LabelStates` of the labels ``allowed`` when the queries kept their
        states, else a :class:`LabelTable`)."""
        ran = [c for cands, _ in q.chunks for c in cands]  # candidate of each output row
        if len(ran) != q.cands.size:
            raise AssertionError(f"{len(ran)} query outputs for {q.cands.size} candidates")
        order = None if ran == list(range(len(ran))) else torch.as_tensor(ran).argsort()  # (S,) rows in candidate order

        def stack(key: str) -> torch.Tensor:
            parts = [rows[key] for _, rows in q.chunks]
            rows = parts[0] if len(parts) == 1 else torch.cat(parts)
            return rows if order is None else rows.index_select(0, order)

        first = q.chunks[0][1]
        child = stack("child").numpy() if "child" in first else None  # (S, 3, 1 + n)
        link_matrix = link_from_tables(stack("parent").numpy(), child, q.cands.root, q.cands.start, q.cands.end)  # (S, S)
        if "hidden" in first:
            return link_matrix, LabelStates(self.parts.linker, stack("hidden"), stack("query") if "query" in first else None, self.allowed)
        return link_matrix, LabelTable(stack("labels").numpy(), stack("label_probs").double().numpy())

    def link(
        self,
        sentences: Sequence[Sentence],
        proposed: dict[int, Proposed],
        ids: Sequence[int],
        label_states: bool,
        stats: InferenceStats,
    ) -> list[ScoredSentence]:
        """Stage 2 for the sentences ``ids``: candidates, queries, retrieval, link matrices; one
        :class:`ScoredSentence` per id, in order. Each sentence's query outputs are released once it is scored.
        ``label_states`` keeps each query's states and scores labels only at the decoded arcs (:class:`LabelStates`:
        less compute, more memory); otherwise the best label at every parent root is computed now
        (:class:`LabelTable`)."""
        linker = self.parts.linker
        queries: dict[int, _Queries] = {}
        # projective=False: the span DP gives span MST's tree when no projective one keeps the given heads
        scored = {i: ScoredSentence(n=len(sentences[i]), fixed=given_constraints(sentences[i], self.options, projective=False)) for i in ids}
        for i in ids:
            if i not in proposed:
                continue
            p = proposed[i]
            fixed = scored[i].fixed
            cands = candidate_queries(p.word_spans if fixed is None else spans_for_given(p.word_spans, p.start_lp, p.end_lp, fixed), p.n)
            scored[i].proposed = cands.size
            scored[i].cands, scored[i].words, scored[i].columns = cands, p.words, p.columns
            if not linker.fits(p.state):
                stats.too_long += 1
                continue
            queries[i] = _Queries(p.state, cands)
        jobs = [(i, c) for i, q in queries.items() for c in range(q.cands.size)]
        retrieve = linker.retrieves(bool(self.options.retrieval))
        found = self._run_queries(queries, jobs, retrieve, label_states)
        stats.queries += len(jobs)

        if retrieve:  # one extra round for the new candidates
            per_sentence: dict[int, list[tuple[int, int, int]]] = {}
            for (i, c), span in found.items():
                if c > 0:  # retrieval from proposed spans (ROOT's query has no parent anyway)
                    per_sentence.setdefault(i, []).append(span)
            extra_jobs: list[tuple[int, int]] = []
            for i, spans in per_sentence.items():
                q = queries[i]
                old = q.cands.size
                q.cands = scored[i].cands = _with_retrieved(q, proposed[i], spans)
                stats.retrieved_spans += q.cands.size - old
                extra_jobs.extend((i, c) for c in range(old, q.cands.size))
            if extra_jobs:
                self._run_queries(queries, extra_jobs, False, label_states)
                stats.queries += len(extra_jobs)

        for i, q in queries.items():
            link_matrix, scored[i].labels = self._sentence_output(q)  # (S, S) [parent, child]
            scored[i].link = link_matrix.astype(np.float64)  # (S, S)
            q.chunks.clear()  # its rows are copied out: a batch's outputs go once its last sentence is scored
        return [scored[i] for i in ids]

    def score(self, sentences: Sequence[Sentence], label_states: bool = False) -> tuple[list[ScoredSentence], InferenceStats]:
        """Stages 1 and 2 for every sentence, for sweeps of the decoding settings over one scoring (``spandep
        tune``: :meth:`decode` each setting of :meth:`using`)."""
        t0 = time.perf_counter()
        stats = InferenceStats(sentences=len(sentences))
        scored = self.link(sentences, self.propose(sentences), range(len(sentences)), label_states, stats)
        stats.seconds = time.perf_counter() - t0
        return scored, stats

    # ----------------------------------------------------------------------------------------- stage 3: decode
    def using(self, options: InferenceOptions) -> SpanInference:
        """The same inference with other settings of the same treebank (to decode one scoring several ways)."""
        return replace(self, options=options)

    def decode(self, scored: Sequence[ScoredSentence]) -> tuple[list[Parse], int]:
        """A tree (and the heads' columns) per scored sentence with the span decoder of ``decoder``, and how many
        projective decodings fell back to the non-projective tree; without ``retrieval`` over the proposal's
        candidates alone (:meth:`ScoredSentence.proposals_only`).

        ``arc_weight`` and ``label_source="word"`` use the word scorer's scores (``ValueError`` without them).
        Sentences without link scores (too long for the linker) get the word head's tree (MST over its arcs, its
        labels) when the model has one, else a tree over their span candidates by the linker's ``structural_link``
        with the fallback labels (``root`` / ``dep`` of :meth:`label_names`) and no scores. A parse's head scores are
        its weighted link scores (``candidates.link_head_scores``), or the word head's arc log-probabilities in its
        fallback."""
        o, labels = self.options, self.parts.labels
        decode = self.parts.decoders[str(o.decoder)]
        lam, arc_weight, label_source = float(o.lam or 0.0), float(o.arc_weight or 0.0), o.label_source or "linker"
        root_label, other_label = fallback_labels(self.label_names())
        results: list[Parse] = []
        arcs: list[tuple[int, tuple[LinkLabels, np.ndarray, np.ndarray]]] = []  # (row of results, label request)
        fallbacks = 0
        for sc in scored if o.retrieval else [sc.proposals_only() for sc in scored]:
            if sc.cands is None:  # an empty sentence
                results.append(Parse([], [], sc.columns))
                continue
            if sc.link is None or sc.labels is None:  # too long for the linker
                if sc.words is not None:  # the word head's tree: MST over its arcs, its labels
                    tree = mst_single(sc.words.arc, sc.fixed)  # (1 + n,)
                    labels_w, probs = sc.words.labels_at(tree)  # (n,) each
                    scores = ArcScores(sc.words.arc[1:], probs)
                    results.append(Parse(tree[1:].tolist(), [labels[int(j)] for j in labels_w], sc.columns, scores))
                    continue
                res = decode(sc.cands, self.parts.linker.structural_link(sc.cands), 1.0, sc.fixed)
                heads = res.heads[1:].tolist()
                results.append(Parse(heads, [root_label if h == 0 else other_label for h in heads], sc.columns))
                continue
            if (arc_weight or label_source == "word") and sc.words is None:
                raise ValueError("arc_weight and label_source='word' need a model trained with a word scorer")
            if arc_weight and sc.words is not None:
                combined = lam * np.where(np.isneginf(sc.link), 0.0, sc.link) + arc_weight * sc.words.link_term(sc.cands)  # (S, S)
                weighted = np.where(np.isneginf(sc.link), NEG_INF, combined)  # (S, S)
                res = decode(sc.cands, weighted, 1.0, sc.fixed)
            else:
                weighted = np.where(np.isneginf(sc.link), NEG_INF, lam * sc.link)  # (S, S)
                res = decode(sc.cands, sc.link, lam, sc.fixed)
            fallbacks += int(res.fallback)
            head_scores = link_head_scores(weighted, sc.cands.root, res.chosen[1:])  # (n, 1 + n)
            if label_source == "word" and sc.words is not None:
                chosen, probs = sc.words.labels_at(res.heads)  # (n,) each
                parse = Parse(res.heads[1:].tolist(), [labels[int(j)] for j in chosen], sc.columns, ArcScores(head_scores, probs))
                results.append(parse)
            else:  # the label of each word's chosen query at its head, read below for all sentences at once
                arcs.append((len(results), (sc.labels, res.chosen[1:], res.heads[1:])))
                results.append(Parse(res.heads[1:].tolist(), [], sc.columns, ArcScores(head_scores, np.zeros(0))))
        for (row, _), (ids, probs) in zip(arcs, read_labels([request for _, request in arcs])):
            head_scores = results[row].scores.head_scores  # type: ignore[union-attr]
            results[row] = replace(results[row], labels=[labels[int(j)] for j in ids], scores=ArcScores(head_scores, probs))
        return results, fallbacks

    # ----------------------------------------------------------------------------------------- all three
    def parse(self, sentences: Sequence[Sentence]) -> tuple[list[Parse], InferenceStats]:
        """Heads, labels and the heads' columns of every sentence (input order), and the run's counters.

        Empty sentences get empty lists; every other sentence gets a valid tree. After the encoder, sentences are
        linked and decoded a group of at most :data:`GROUP_POSITIONS` query positions at a time (module comment),
        shortest first, labels read at the decoded arcs only (:class:`LabelStates`).
        """
        k = int(self.options.k or 1)
        t0 = time.perf_counter()
        stats = InferenceStats(sentences=len(sentences))
        results: list[Parse] = [Parse([], []) for _ in sentences]
        by_length = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))  # near-uniform query batches
        proposed = self.propose(sentences)
        costs = [k * len(sentences[i]) * max(len(sentences[i]) + 1, QUERY_POSITIONS) for i in by_length]
        for group in groups(costs, GROUP_POSITIONS):
            ids = [by_length[j] for j in group]
            parses, fallbacks = self.decode(self.link(sentences, proposed, ids, True, stats))
            stats.dp_fallbacks += fallbacks
            for i, parse in zip(ids, parses):
                results[i] = parse
                proposed.pop(i, None)  # the group's word vectors and tables are no longer needed
        stats.seconds = time.perf_counter() - t0
        return results, stats


def _with_retrieved(q: _Queries, proposed: Proposed, spans: list[tuple[int, int, int]]) -> SpanCandidates:
    """The sentence's candidates with the retrieved parent spans appended (order kept, duplicates merged); a new
    span's score is its proposal score."""
    c = q.cands
    existing = [(int(c.root[j]), int(c.start[j]), int(c.end[j]), float(c.score[j])) for j in range(1, c.size)]
    new = [(r, s, e, float(proposed.start_lp[r, s] + proposed.end_lp[r, e])) for r, s, e in spans]
    return SpanCandidates.from_lists(c.n, existing + new)
