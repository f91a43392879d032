"""Choose a span model's inference settings on dev: k, retrieval, λ, decoder, and the word-scorer terms (Tables 2, 3).

For each k the models run once (with retrieval); decoding without retrieval uses the proposal's candidates only
(the first ``proposed`` of each sentence), so one pass gives both. Reports span recall of the gold (hull) spans with
and without retrieval, and UAS/LAS (punctuation excluded and all words) for every (k, retrieval, decoder, λ).
The best setting by the mean of UAS and LAS without punctuation is printed and, with ``--write-model``, stored as
the model's default (``config.json`` → ``model.inference``; ``inference_choice.json`` beside it keeps the dev scores
of the choice and this command); ``--ablate-mutual`` also scores that setting without
the child-side (mutual) term, the inference half of the paper's "−mutual" ablation, and keeps it as the choice
when it scores higher on dev. For a model with a word scorer, every setting is also decoded with each
``--arc-weights`` value, and the best setting is scored with labels from the word scorer (``label_source="word"``),
kept when better; ``best_paper`` is the best setting without either (the paper's parser). Test data is never read.

    python -m benchmarks.tune_span --model runs/ewt-span-minilm/model \\
        --dev ../shared/data/en_ewt/en_ewt-ud-dev.conllu --out benchmarks/results/en_ewt_dev__span_sweep.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

from spandep.data.conllu import read_conllu
from spandep.data.trees import hull_spans
from spandep.decoding.spans import SpanCandidates
from spandep.evaluation.metrics import evaluate
from spandep.pipeline.model_io import load_model
from spandep.pipeline.predict import with_tree
from spandep.pipeline.span_inference import ScoredSentence, decode_scored, score_spans


CHOICE_FILE = "inference_choice.json"  # written into the model folder with --write-model: what was chosen, how
SELECTION = "mean of UAS and LAS, punctuation (UPOS PUNCT/SYM) excluded, on dev"


def proposals_only(sc: ScoredSentence) -> ScoredSentence:
    """The sentence restricted to the proposal's candidates (what decoding sees without retrieval)."""
    if sc.cands is None or sc.link is None or sc.proposed == sc.cands.size:
        return sc
    m, c = sc.proposed, sc.cands
    cands = SpanCandidates(c.n, c.root[:m], c.start[:m], c.end[:m], c.score[:m])
    return ScoredSentence(sc.n, cands, m, sc.link[:m, :m], None if sc.labels is None else sc.labels.rows(m), sc.words)


def recall(scored: list[ScoredSentence], gold: list[list[tuple[int, int, int]]], retrieval: bool) -> float:
    """Share of words whose gold (root, start, end) span is among the candidates."""
    hits = total = 0
    for sc, spans in zip(scored, gold):
        if sc.cands is None:
            continue
        m = sc.cands.size if retrieval else sc.proposed
        have = set(zip(sc.cands.root[:m].tolist(), sc.cands.start[:m].tolist(), sc.cands.end[:m].tolist()))
        hits += sum(span in have for span in spans)
        total += len(spans)
    return 100.0 * hits / max(total, 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--dev", required=True)
    ap.add_argument("--ks", type=int, nargs="+", default=[1, 2, 5, 10])
    ap.add_argument("--lams", type=float, nargs="+", default=[0.25, 0.5, 1.0, 2.0, 4.0])
    ap.add_argument("--arc-weights", type=float, nargs="+", default=[0.0, 0.5, 1.0, 2.0],
                    help="weights of the word scorer's head log-probs (models with a word scorer only)")
    ap.add_argument("--batch-tokens", type=int, default=4000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--device", default="cpu", help="cpu, cuda or auto")
    ap.add_argument("--out", help="JSON file for all results")
    ap.add_argument("--write-model", action="store_true", help="store the best setting as the model's default")
    ap.add_argument("--ablate-mutual", action="store_true", help="also score the best setting without the mutual term")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    model = load_model(args.model, args.device)
    if model.model_type != "span":
        raise SystemExit(f"{args.model} is a {model.model_type} model; this sweep is for span models")
    arc_weights = args.arc_weights if model.word_scorer is not None else [0.0]
    dev = list(read_conllu(args.dev))

    def score(results: list[tuple[list[int], list[str]]], **setting: object) -> dict[str, object]:
        report = evaluate(dev, [with_tree(s, p.heads, p.labels) for s, p in zip(dev, results)])
        return {**setting, "UAS": report.uas, "LAS": report.las, "UAS_nopunct": report.uas_no_punct,
                "LAS_nopunct": report.las_no_punct}

    def total(row: dict[str, object]) -> float:
        return float(row["UAS_nopunct"] or 0) + float(row["LAS_nopunct"] or 0)  # type: ignore[arg-type]

    gold = [[(w, *span) for w, span in enumerate(hull_spans([int(h or 0) for h in s.heads]), start=1)] for s in dev]
    rows, recalls = [], []
    swept: dict[int, list[ScoredSentence]] = {}  # k -> the sweep's scores (with retrieval, mutual term on)
    for k in args.ks:
        t0 = time.perf_counter()
        scored, stats = score_spans(model, dev, k=k, retrieval=True, batch_tokens=args.batch_tokens)
        swept[k] = scored
        seconds = time.perf_counter() - t0
        recalls.append({"k": k, "recall": recall(scored, gold, False), "recall_retrieval": recall(scored, gold, True),
                        "queries": stats.queries, "retrieved_spans": stats.retrieved_spans, "score_seconds": round(seconds, 1)})
        print(json.dumps(recalls[-1]), flush=True)
        for retrieval in (False, True):
            view = scored if retrieval else [proposals_only(sc) for sc in scored]
            for decoder in ("dp", "mst"):
                for lam in args.lams:
                    for arc_weight in arc_weights:
                        results, fallbacks = decode_scored(
                            view, model.labels, lam, decoder, model.linker.allow_root_in_span, arc_weight  # type: ignore[arg-type]
                        )
                        rows.append(score(results, k=k, retrieval=retrieval, decoder=decoder, lam=lam, arc_weight=arc_weight,
                                          label_source="linker", mutual=True, dp_fallbacks=fallbacks))
                        print(json.dumps(rows[-1]), flush=True)
    best = max(rows, key=total)
    best_paper = max((r for r in rows if r["arc_weight"] == 0.0), key=total)
    print("best on dev:", json.dumps(best))

    def rescore(setting: dict[str, object], **change: object) -> dict[str, object]:
        """``setting`` decoded again with ``change`` applied (a model pass only when ``mutual`` is off: the sweep's
        scores, kept per k, have the mutual term)."""
        s = {key: setting[key] for key in ("k", "retrieval", "decoder", "lam", "arc_weight", "label_source", "mutual")}
        s.update(change)
        if s["mutual"]:
            scored = swept[s["k"]] if s["retrieval"] else [proposals_only(sc) for sc in swept[s["k"]]]  # type: ignore[index]
        else:
            scored, _ = score_spans(model, dev, k=s["k"], retrieval=s["retrieval"], batch_tokens=args.batch_tokens, mutual=False)  # type: ignore[arg-type]
        results, _ = decode_scored(scored, model.labels, s["lam"], s["decoder"], model.linker.allow_root_in_span,  # type: ignore[arg-type]
                                   s["arc_weight"], s["label_source"])  # type: ignore[arg-type]
        return score(results, **s)

    word_labels = None
    if model.word_scorer is not None:
        word_labels = rescore(best, label_source="word")
        print("labels from the word scorer:", json.dumps(word_labels))
        if total(word_labels) > total(best):
            best = word_labels
    ablation = None
    if args.ablate_mutual:
        ablation = rescore(best, mutual=False)
        print("without the mutual term:", json.dumps(ablation))
        if total(ablation) > total(best):
            best = ablation
        paper_ablation = rescore(best_paper, mutual=False)
        if total(paper_ablation) > total(best_paper):
            best_paper = paper_ablation
    print("best on dev:", json.dumps(best))
    print("best on dev without word-scorer terms (the paper's parser):", json.dumps(best_paper))
    command = "python -m benchmarks.tune_span " + " ".join(sys.argv[1:])
    if args.out:
        Path(args.out).write_text(json.dumps({
            "model": args.model, "dev": args.dev, "recall": recalls, "sweep": rows, "best": best, "best_paper": best_paper,
            "ablation_no_mutual": ablation, "word_labels": word_labels,
            "selection": SELECTION, "command": command,
        }, indent=2) + "\n")
    if args.write_model:
        cfg_path = Path(args.model) / "config.json"
        cfg = json.loads(cfg_path.read_text())
        cfg["model"]["inference"] = {
            key: best[key] for key in ("k", "lam", "decoder", "retrieval", "mutual", "arc_weight", "label_source")
        }
        choice = {"best": best, "dev": args.dev, "selection": SELECTION, "command": command}
        for path, content in ((cfg_path, cfg), (Path(args.model) / CHOICE_FILE, choice)):
            tmp = path.with_suffix(".json.tmp")
            tmp.write_text(json.dumps(content, indent=2, ensure_ascii=False) + "\n")
            tmp.replace(path)
        print(f"wrote inference defaults to {cfg_path}")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
