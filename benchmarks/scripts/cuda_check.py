"""The GPU path checked end to end, for a machine with one (docs/training.md, "Training and parsing on a GPU").

Trains a tiny random transformer model of each parser type (Biaffine and span, with the UPOS, FEATS and lemma heads)
for thirty epochs on ``--device`` (its epoch chosen on its training file) with ``spandep train``, then parses its own
40 training sentences with it (every column but FORM blanked: a model that learnt them parses them well enough that
agreement is not that of a degenerate parse) through ``spandep parse`` on the CPU in float32 and on the device in float32 and bfloat16, and reports for each parse whether
every sentence has a well-formed tree and how many HEAD, DEPREL, UPOS, FEATS and LEMMA values agree with the CPU's
float32 parse of the same model. The same model trained on the CPU is parsed too, so a training difference on the
device shows as its LAS beside the CPU-trained model's. Prints one JSON object (also written to ``--out``, model by
model as each is done).

    python -m benchmarks.scripts.cuda_check --device cuda --work runs/cuda_check --out benchmarks/results/cuda/cuda_check.json

The tokenizer files of the tiny model come from the all-MiniLM-L6-v2 base (``--vocab DIR`` gives a folder holding
them instead, for a machine where that base is not installed).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TRAIN = ROOT / "tests" / "fixtures" / "en_ewt_train_40.conllu"
TOKENIZER_FILES = ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")
TINY_BERT = {
    "architectures": ["BertModel"], "model_type": "bert", "hidden_size": 32, "num_hidden_layers": 2,
    "num_attention_heads": 2, "intermediate_size": 64, "max_position_embeddings": 128, "vocab_size": 30522,
    "type_vocab_size": 2, "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
    "layer_norm_eps": 1e-12, "pad_token_id": 0, "initializer_range": 0.02,
}
MODELS = {
    "biaffine": "arc_mlp = 32\nrel_mlp = 16\n",
    "span": 'type = "span"\nspan_mlp = 32\nquery_rate = 0.7\nnoisy_rate = 0.3\n'
    'linker = { format = "late", dim = 32, layers = 1, heads = 2, ff = 64, mlp = 32, label_mlp = 16 }\n',
}
HEADS = "\n[heads.upos]\n\n[heads.feats]\nhidden = 16\n\n[heads.lemma]\nhidden = 16\n"
COLUMNS = {"HEAD": 6, "DEPREL": 7, "UPOS": 3, "FEATS": 5, "LEMMA": 2}


def tiny_transformer(out: Path, vocab: Path | None) -> Path:
    """A randomly initialised 2-layer BERT with all-MiniLM-L6-v2's word pieces, saved as a pretrained folder."""
    import torch
    from transformers import AutoConfig, AutoModel

    if vocab is None:
        from spandep.encoders.bases import MINILM_ALIAS, resolve_model_path

        vocab = Path(resolve_model_path(MINILM_ALIAS))
    out.mkdir(parents=True, exist_ok=True)
    for name in TOKENIZER_FILES:
        if (vocab / name).exists():
            shutil.copy(vocab / name, out / name)
    (out / "config.json").write_text(json.dumps(TINY_BERT))
    torch.manual_seed(0)
    AutoModel.from_config(AutoConfig.from_pretrained(out)).save_pretrained(out)
    return out


def spandep(*args: str) -> None:
    """``spandep ARGS`` in a subprocess of this interpreter; its stderr's last lines in the error if it fails."""
    done = subprocess.run([sys.executable, "-m", "spandep", *args], capture_output=True, text=True, env=os.environ)
    if done.returncode:
        raise RuntimeError(f"spandep {' '.join(args[:2])} exited {done.returncode}: {done.stderr.strip()[-600:]}")


def train(work: Path, kind: str, device: str, encoder: Path) -> Path:
    """Train the tiny ``kind`` model on ``device``; its model folder."""
    output = work / f"{kind}-{device.replace(':', '')}"
    config = work / f"{kind}-{device.replace(':', '')}.toml"
    config.write_text(
        f'[data]\ntrain = "{TRAIN}"\ndev = "{TRAIN}"\n\n[encoder]\ntype = "transformer"\nmodel = "{encoder}"\n'
        f"pretrained = true\nmix_layers = 2\n\n[model]\n{MODELS[kind]}{HEADS}\n[training]\n"
        f'output = "{output}"\nepochs = 30\nbatch_tokens = 100\nlr = 0.005\nseed = 7\ndevice = "{device}"\n'
    )
    spandep("train", str(config), "--threads", "1")
    return output / "model"


def rows(path: Path) -> list[list[list[str]]]:
    """The word lines of each sentence of a CoNLL-U file, split into columns."""
    sentences, words = [], []
    for line in path.read_text(encoding="utf-8").splitlines() + [""]:
        if not line:
            if words:
                sentences.append(words)
            words = []
        elif not line.startswith("#"):
            cols = line.split("\t")
            if cols[0].isdigit():
                words.append(cols)
    return sentences


def well_formed(sentence: list[list[str]]) -> bool:
    """One root, every head a word of the sentence or 0, and no cycle."""
    heads = [int(w[6]) for w in sentence]
    if heads.count(0) != 1 or any(h < 0 or h > len(heads) for h in heads):
        return False
    for start in range(1, len(heads) + 1):
        seen, node = set(), start
        while node and node not in seen:
            seen.add(node)
            node = heads[node - 1]
        if node:
            return False
    return True


def compare(parse: Path, reference: Path, gold: Path) -> dict[str, object]:
    """Well-formed trees, agreement with ``reference`` per column, and LAS against ``gold`` (all words)."""
    got, ref, want = rows(parse), rows(reference), rows(gold)
    words = [(g, r, w) for s, t, u in zip(got, ref, want) for g, r, w in zip(s, t, u)]
    agree = {name: round(100 * sum(g[c] == r[c] for g, r, _ in words) / len(words), 2) for name, c in COLUMNS.items()}
    las = sum(g[6] == w[6] and g[7].split(":")[0] == w[7].split(":")[0] for g, _, w in words) / len(words)
    return {"sentences": len(got), "well_formed": all(map(well_formed, got)), "agree_with_cpu_float32": agree, "las": round(100 * las, 2)}


def check(work: Path, device: str, vocab: Path | None, report: dict[str, object], out: Path | None) -> None:
    """Train and parse each tiny model (module docstring) into ``report["models"]``, writing ``report`` to ``out``
    after each."""
    models: dict[str, object] = report["models"]  # type: ignore[assignment]
    encoder = tiny_transformer(work / "tiny_bert", vocab)
    blank = work / "train.conllu"  # every column but FORM blanked: each head fills its own
    blank.write_text(
        "\n".join("\t".join([c[0], c[1]] + ["_"] * 8) if line and not line.startswith("#") and (c := line.split("\t")) else line
                  for line in TRAIN.read_text(encoding="utf-8").splitlines()) + "\n", encoding="utf-8",
    )
    for kind in MODELS:
        for trained_on in dict.fromkeys((device, "cpu")):
            name = f"{kind}, trained on {trained_on}"
            try:
                model = train(work, kind, trained_on, encoder)
                parses = {}
                for on, precision in (("cpu", "float32"), (device, "float32"), (device, "bfloat16")):
                    parsed = work / f"{kind}-{trained_on}-{on}-{precision}.conllu".replace(":", "")
                    spandep("parse", str(blank), "-m", str(model), "--device", on, "--precision", precision, "-o", str(parsed), "--input-format", "conllu")
                    parses[f"{on} {precision}"] = parsed
                reference = parses["cpu float32"]
                models[name] = {label: compare(path, reference, TRAIN) for label, path in parses.items()}
            except Exception as error:  # one failing step is reported; the others still run
                models[name] = {"error": str(error)}
            if out:
                out.write_text(json.dumps(report, indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--work", type=Path, required=True, help="A folder for the tiny models and parses.")
    parser.add_argument("--vocab", type=Path, default=None, help="A folder with all-MiniLM-L6-v2's tokenizer files.")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    import torch

    from spandep.evaluation.provenance import machine

    report = {"schema": "spandep-cuda-check/1", "command": "python -m benchmarks.scripts.cuda_check " + " ".join(sys.argv[1:]),
              "machine": machine(args.device), "device": args.device, "torch": torch.__version__, "cuda": torch.cuda.is_available(),
              "gpu": torch.cuda.get_device_name() if torch.cuda.is_available() else None, "models": {}}
    check(args.work, args.device, args.vocab, report, args.out)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
