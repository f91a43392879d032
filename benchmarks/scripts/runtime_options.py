"""Run-time options of one model side by side: speed timed in alternation, dev accuracy, and whether the parse is
the same as the first variant's.

A variant is a way to load or run the model: ``float`` (as shipped: adapters merged, float32), ``int8`` (the
encoder's linear layers dynamically quantised, one scale per tensor: ``load_model(int8=True)``), ``int8-channel``
(the same with one scale per output row), ``int8-square`` (only the layers as wide out as in: the attention's
projections, not the feed-forward layers), ``unmerged`` (an adapter kept beside its base weights), ``btN`` (float,
``batch_tokens`` N), ``pruneX`` (float, the span setting ``prune`` X: a word's spans after its best kept only at X of
its probability or more; ``prune0``: all k, whatever the model saved), ``kN`` (float, the span setting ``k`` N: spans
proposed per word, the model's other settings as saved), ``float32`` and ``bfloat16`` (the setting
``precision``: the encoder's matrix products, whatever the model saved), ``compile`` (float, the encoder's transformer
under ``torch.compile(dynamic=True)``), ``onnx`` (float, the encoder's transformer exported by ``torch.onnx`` and run by
ONNX Runtime with as many threads as torch has when it loads, the mix and all else in torch; needs ``pip install onnx
onnxruntime``). Each round parses ``--speed`` once per variant and thread count, in turn, after a warm-up of
each, timed in process CPU seconds (as ``checkout_speed.sh``: other jobs on this shared machine barely change it);
words/s is the median over rounds. Then each variant parses ``--dev`` with the columns its heads fill blanked
(gold tokens) and is scored: UAS/LAS (no punctuation) and the heads' columns, and the share of words whose head,
label and columns equal the first variant's.

    .venv/bin/python -m benchmarks.scripts.runtime_options --model src/spandep/resources/default_model \\
        --speed ../shared/data/en_ewt/en_ewt-ud-test.conllu --dev ../shared/data/en_ewt/en_ewt-ud-dev.conllu \\
        --variants float int8 int8-channel bt1000 bt2000 --out benchmarks/results/speed/runtime_options__en.json
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import torch

from benchmarks.suite.record import checkout, command_line, machine, portable_path, write_json
from spandep.data.conllu import read_conllu
from spandep.data.sentence import Sentence
from spandep.evaluation.metrics import evaluate
from spandep.models.base import Parser
from spandep.options import PRECISIONS, InferenceOptions
from spandep.pipeline.predict import parse_stream
from spandep.storage.model_io import load_model

SCORES = ("uas_no_punct", "las_no_punct", "upos", "xpos", "feats", "lemma")


def partial_int8(model: Parser, per_channel: bool = False, square_only: bool = False) -> Parser:
    """The encoder's pretrained linear layers dynamically quantised, with one scale per output row when
    ``per_channel``; ``square_only``: only those as wide out as in (the attention's projections, not the feed-forward
    layers)."""
    from torch.ao.quantization import default_dynamic_qconfig, per_channel_dynamic_qconfig, quantize_dynamic

    module = model.encoder.pretrained_module()
    qconfig = per_channel_dynamic_qconfig if per_channel else default_dynamic_qconfig
    chosen = {
        name: qconfig for name, layer in module.named_modules()
        if isinstance(layer, torch.nn.Linear) and (not square_only or layer.in_features == layer.out_features)
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        quantize_dynamic(module, chosen, inplace=True)
    return model


def compiled(model: Parser) -> Parser:
    """The encoder's transformer under ``torch.compile`` (shapes dynamic: batches differ in size and length)."""
    model.encoder.pretrained_module().compile(dynamic=True)
    return model


def onnx_encoder(model: Parser) -> Parser:
    """The encoder's transformer run by ONNX Runtime: exported once with the layers its mix reads as outputs
    (``WordEncoder.kept_layers``), each batch's outputs then mixed in torch (``mixed``) as the torch pass mixes them."""
    import io
    import types

    import onnxruntime

    encoder = model.encoder
    kept = encoder.kept_layers()

    class Outputs(torch.nn.Module):
        def __init__(self, transformer: torch.nn.Module) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, ...]:
            states = self.transformer(input_ids=ids, attention_mask=mask, output_hidden_states=True).hidden_states
            return tuple(states[i + 1] for i in kept)  # hidden_states[0] is the embeddings' output

    names = [f"layer{i}" for i in kept]
    axes = {name: {0: "batch", 1: "pieces"} for name in ("ids", "mask", *names)}
    example = (torch.ones(2, 8, dtype=torch.long), torch.ones(2, 8, dtype=torch.long))
    graph = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(Outputs(encoder.transformer).eval(), example, graph, input_names=["ids", "mask"], output_names=names,
                          dynamic_axes=axes, opset_version=17, dynamo=False)
    settings = onnxruntime.SessionOptions()
    settings.intra_op_num_threads, settings.inter_op_num_threads = torch.get_num_threads(), 1
    session = onnxruntime.InferenceSession(graph.getvalue(), settings, providers=["CPUExecutionProvider"])

    def run(self: Any, input_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        outputs = session.run(None, {"ids": input_ids.numpy(), "mask": mask.long().numpy()})  # each (batch, pieces, hidden)
        return self.mixed({i: torch.from_numpy(out) for i, out in zip(kept, outputs)})

    encoder._run = types.MethodType(run, encoder)
    return model


def variant(folder: str, name: str) -> tuple[Parser, InferenceOptions]:
    """The model loaded as variant ``name`` (see the module docstring) and its options."""
    if name.startswith("bt"):
        return load_model(folder), InferenceOptions(batch_tokens=int(name[2:]))
    if name.startswith("prune"):
        return load_model(folder), InferenceOptions(prune=float(name[len("prune"):]))
    if name[:1] == "k" and name[1:].isdigit():
        return load_model(folder), InferenceOptions(k=int(name[1:]))
    if name in PRECISIONS:
        return load_model(folder), InferenceOptions(precision=name)
    loaders = {
        "float": lambda: load_model(folder),
        "int8": lambda: load_model(folder, int8=True),
        "int8-channel": lambda: partial_int8(load_model(folder), per_channel=True),
        "int8-square": lambda: partial_int8(load_model(folder), square_only=True),
        "unmerged": lambda: load_model(folder, merge_adapter=False),
        "compile": lambda: compiled(load_model(folder)),
        "onnx": lambda: onnx_encoder(load_model(folder)),
    }
    return loaders[name](), InferenceOptions()


def cpu_seconds(model: Parser, sentences: list[Sentence], options: InferenceOptions) -> float:
    """Process CPU seconds of one parse of ``sentences``."""
    start = time.process_time()
    for _ in parse_stream(model, sentences, options):
        pass
    return time.process_time() - start


def same_share(a: list[Sentence], b: list[Sentence]) -> float:
    """Percentage of words whose head, label, UPOS, XPOS, FEATS and lemma agree between two parses."""
    pairs = [(x, y) for s, t in zip(a, b) for x, y in zip(s.words, t.words)]
    same = sum((x.head, x.deprel, x.upos, x.xpos, x.feats, x.lemma) == (y.head, y.deprel, y.upos, y.xpos, y.feats, y.lemma) for x, y in pairs)
    return round(100 * same / len(pairs), 3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--speed", required=True, help="CoNLL-U file timed (gold tokens)")
    ap.add_argument("--dev", help="CoNLL-U dev file scored (omit: speed only)")
    ap.add_argument("--variants", nargs="+", default=["float", "int8"])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--limit", type=int, help="time only the first LIMIT sentences of --speed")
    ap.add_argument("--dev-limit", type=int, help="score only the first DEV_LIMIT sentences of --dev")
    ap.add_argument("--out")
    args = ap.parse_args()
    runs = {name: variant(args.model, name) for name in args.variants}
    timed = list(read_conllu(args.speed))[: args.limit]
    words = sum(len(s) for s in timed)
    seconds: dict[str, dict[int, list[float]]] = {name: {t: [] for t in args.threads} for name in runs}
    for round_ in range(1 + args.rounds):  # round 0: warm-up
        for threads in args.threads:
            torch.set_num_threads(threads)
            for name, (model, options) in runs.items():
                s = cpu_seconds(model, timed if round_ else timed[:100], options)
                if round_:
                    seconds[name][threads].append(s)
                    print(f"round {round_} threads {threads} {name}: {words / s:.0f} words/CPU s", file=sys.stderr)
    rows: dict[str, Any] = {}
    first = args.variants[0]
    for name, (model, options) in runs.items():
        rows[name] = {
            str(t): {"cpu_seconds": [round(s, 2) for s in seconds[name][t]], "words_per_cpu_s": round(words / statistics.median(seconds[name][t]), 1),
                     "vs_first_by_round": [round(f / s, 3) for f, s in zip(seconds[first][t], seconds[name][t])]}
            for t in args.threads
        }
    if args.dev:
        torch.set_num_threads(max(args.threads))
        parses = {}
        for name, (model, options) in runs.items():
            gold = list(read_conllu(args.dev))[: args.dev_limit]
            blank = tuple(sorted({head.column for head in model.heads.values()}))
            parses[name] = list(parse_stream(model, [s.blanked(blank) for s in gold], options))
            report = evaluate(gold, parses[name])
            rows[name]["dev"] = {key: round(getattr(report, key), 2) for key in SCORES if getattr(report, key) is not None and key.split("_")[0] in (*blank, "uas", "las")}
            rows[name]["dev"]["same_as_first_percent"] = same_share(parses[first], parses[name])
            print(f"{name}: {rows[name]['dev']}", file=sys.stderr)
    for name in runs:
        print(f"{name:>14}: " + "  ".join(f"{t} thr {rows[name][str(t)]['words_per_cpu_s']:.0f} w/CPU s ({statistics.median(rows[name][str(t)]['vs_first_by_round']):.3f}x)" for t in args.threads)
              + (f"  dev {rows[name]['dev']}" if args.dev else ""))
    if args.out:
        command = command_line("runtime_options")
        write_json(Path(args.out), {
            "schema": "spandep-runtime-options/1", "command": command, "machine": machine(), **checkout(), "torch": torch.__version__,
            "model": portable_path(args.model), "speed_input": portable_path(args.speed), "limit": args.limit, "words": words,
            "dev": portable_path(args.dev) if args.dev else None, "dev_limit": args.dev_limit, "rounds": args.rounds, "clock": "process CPU time", "variants": rows,
        })


if __name__ == "__main__":
    main()
