"""Fingerprints of two tiny one-treebank trainings, to compare code revisions: a change that must leave the
one-treebank path as it was (docs/design.md, "Several treebanks") gives the same line under both.

Trains a BiLSTM span model (late linker, word scorer) and a Biaffine one, each with UPOS and lemma heads, on the
test fixtures for 2 epochs (seconds, one thread), and prints per model the SHA-256 (first 16 hex digits) of its
weights, of config.json's ``model`` and ``encoder`` tables, of its training config with the paths taken out, and
of the dev fixture parsed by it. Run it once per checkout, with that checkout's ``src`` first on the path:

    PYTHONPATH=src:. OMP_NUM_THREADS=1 python -m benchmarks.scripts.single_path_identity runs/identity-new
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

from conftest import DEV, TINY_BIAFFINE, TINY_SPAN, write_config  # noqa: E402

from spandep.data.conllu import read_conllu, write_conllu  # noqa: E402
from spandep.storage.model_io import load_model  # noqa: E402
from spandep.pipeline.predict import parse_stream  # noqa: E402
from spandep.training.config import load_config  # noqa: E402
from spandep.training.trainer import Trainer  # noqa: E402

HEADS = "\n[heads.upos]\ncasing = 4\n\n[heads.lemma]\nsuffix = 4\nhidden = 8\n"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def fingerprint(folder: Path, out: Path) -> dict[str, str]:
    """The four digests of a trained model folder (paths under the repository and ``out`` taken out)."""
    from safetensors.torch import load_file

    state = load_file(str(folder / "model.safetensors"))
    weights = b"".join(k.encode() + state[k].numpy().tobytes() for k in sorted(state))
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    training = json.dumps(config["training"]["config"], sort_keys=True).replace(str(REPO), "REPO").replace(str(out), "OUT")
    parsed = io.StringIO()
    write_conllu(parse_stream(load_model(folder), read_conllu(DEV)), parsed)
    return {
        "weights": digest(weights), "model_config": digest(json.dumps([config["model"], config["encoder"]], sort_keys=True).encode()),
        "training_config": digest(training.encode()), "dev_parse": digest(parsed.getvalue().encode()),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="an empty folder for the two runs")
    out = ap.parse_args().out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    for name, table in (("span", TINY_SPAN + "word_scorer = true\n"), ("biaffine", TINY_BIAFFINE)):
        config = write_config(out / f"{name}.toml", out / name, "bilstm", model=table, epochs=2)
        config.write_text(config.read_text() + HEADS)
        Trainer(load_config(config)).run()
        print(name, json.dumps(fingerprint(out / name / "model", out)))


if __name__ == "__main__":
    main()
