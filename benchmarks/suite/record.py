"""The result file of one system on one dataset (``<dataset>__<system>.json``): its schema and the helpers that
fill it, shared by the runner (benchmarks.suite.run) and the report."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from benchmarks.suite.systems import REPO
from spandep.data.output import write_blocks
from spandep.evaluation import provenance
from spandep.evaluation.provenance import TUNE_SCHEMA, machine, stamp  # noqa: F401 (the benchmarks' names for them)

SCHEMA = "spandep-benchmark/1"
REQUIRED = (
    "dataset", "split", "system", "encoder", "UAS", "LAS", "UAS_nopunct", "LAS_nopunct", "CLAS", "sentences", "words",
    "parse_sent_per_s", "train_minutes", "peak_rss_mb", "git_commit", "command", "machine", "date",
)


def scores(report: dict[str, Any]) -> dict[str, Any]:
    """The headline numbers of an evaluation report (``spandep evaluate --json``), under the result's names."""
    return {
        "UAS": report["uas"], "LAS": report["las"], "UAS_nopunct": report["uas_no_punct"],
        "LAS_nopunct": report["las_no_punct"], "CLAS": report["clas_f1"],
        "sentences": report["sentences"], "words": report["words"],
    }


def encoder_name(config: dict[str, Any]) -> str:
    """A short name for a training config's encoder: the transformer's, or the BiLSTM's with its inputs."""
    enc = config["encoder"]
    if enc["type"] == "transformer":
        return Path(enc["model"]).name
    return "BiLSTM word+char" + (" + UPOS" if enc["use_upos"] else "")


NOT_TRAINED: dict[str, Any] = {"train_minutes": None, "train_epochs": None, "train_finished": None}


def training(train_log: Path, config: dict[str, Any]) -> dict[str, Any]:
    """Training time and progress from a run's ``train.log`` (one line per epoch; ``minutes`` is cumulative
    wall-clock time of ``spandep train``, dev evaluation included, pauses between resumes not)."""
    if not train_log.is_file():
        return dict(NOT_TRAINED)
    lines = [line.split() for line in train_log.read_text(encoding="utf-8").splitlines() if line.strip()]
    last = dict(item.split("=", 1) for item in lines[-1] if "=" in item)
    since_best = next((i for i, line in enumerate(reversed(lines)) if line[-1] == "*best*"), len(lines))
    tr = config["training"]
    return {
        "train_minutes": float(last["minutes"]),
        "train_epochs": int(last["epoch"]),
        "train_finished": int(last["epoch"]) >= tr["epochs"] or since_best >= tr["patience"],
    }


def trained_on(model: Path) -> str | None:
    """The device a saved model was trained on, from its ``config.json`` (None when it does not say)."""
    config = model / "config.json"
    if not config.is_file():
        return None
    saved = json.loads(config.read_text(encoding="utf-8")).get("training", {}).get("config", {})
    return saved.get("training", {}).get("device")


def git(*args: str) -> str:
    """Output of a git command in the repository ('' when git is unavailable)."""
    return provenance.git(*args, root=REPO)


def portable_path(path: str | Path) -> str:
    """``path`` as a result file records it: a file beside the repository (``../shared/data/...``) relative to the
    repository's root, so that no clone's own absolute path is written; any other path as given."""
    absolute = Path(path).resolve()
    return os.path.relpath(absolute, REPO) if absolute.is_relative_to(REPO.parent) else str(path)


def command_line(script: str) -> str:
    """How this run of ``benchmarks/scripts/<script>.py`` was called, as its result file records it: each argument that
    names an existing path by :func:`portable_path`."""
    return f"python -m benchmarks.scripts.{script} " + " ".join(portable_path(a) if Path(a).exists() else a for a in sys.argv[1:])


WEIGHT_FILES = ("model.safetensors", "heads.json.xz")  # what a model folder parses with beside its config.json
TOKENIZER_FILES = ("config.json", "model.safetensors", "words.json", "mwt.json", "words.json.xz", "mwt.json.xz")  # all of a trained tokenizer's folder, packed or not


def weights_digest(folder: str | Path, files: tuple[str, ...] = WEIGHT_FILES) -> str | None:
    """A short digest of a model folder's weights and lemma lexicons (``files``; a tokenizer's: ``TOKENIZER_FILES``;
    None for a name or a folder without them): a result made with other weights in the same folder is stale
    (``ship_pool.sh``), which its path cannot tell."""
    files = [Path(folder) / name for name in files if (Path(folder) / name).is_file()]
    if not files:
        return None
    digest = hashlib.sha256()
    for path in files:
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


def checkout() -> dict[str, Any]:
    """The result's ``git_commit`` and ``git_dirty`` (:func:`spandep.evaluation.provenance.checkout` of the
    repository)."""
    return provenance.checkout(REPO)


def write_result(
    path: Path, result: dict[str, Any], schema: str = SCHEMA, required: tuple[str, ...] = REQUIRED
) -> None:
    """Write a result file of ``schema`` atomically, after checking that it has every ``required`` field (``None``
    allowed)."""
    missing = [key for key in required if key not in result]
    if missing:
        raise ValueError(f"result for {path.name} lacks {', '.join(missing)}")
    write_json(path, {"schema": schema, **result})


def write_json(path: Path, data: Any, indent: int = 2) -> None:
    """Write ``data`` as JSON (UTF-8) to ``path``, its folder made, atomically as every spandep output is."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_blocks([json.dumps(data, indent=indent, ensure_ascii=False) + "\n"], path)


def stamp_file(path: Path, schema: str, command: str) -> None:
    """:func:`stamp` on a report a spandep command wrote (``spandep tune --out``), in place. The report's own fields
    (its ``command``, and its stamp where the command wrote one) stay."""
    write_json(path, stamp(json.loads(path.read_text(encoding="utf-8")), schema, command))


def main() -> None:
    """``python -m benchmarks.suite.record SCHEMA COMMAND [FILE]``: :func:`stamp` on the command line, for the shell
    scripts that keep a spandep command's JSON report: FILE in place, else standard input to standard output."""
    import argparse
    import sys

    ap = argparse.ArgumentParser(description=main.__doc__.splitlines()[0])
    ap.add_argument("schema")
    ap.add_argument("command")
    ap.add_argument("file", nargs="?", type=Path)
    args = ap.parse_args()
    if args.file:
        stamp_file(args.file, args.schema, args.command)
    else:
        print(json.dumps(stamp(json.load(sys.stdin), args.schema, args.command), indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
