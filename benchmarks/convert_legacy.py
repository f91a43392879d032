"""Convert the older EWT result files into result files of the current schema (``en_ewt__<system>.json``).

The older files are ``en_ewt_test__<run>.json`` (``spandep evaluate --json``), ``speed_ewt_test__*.json``
(benchmarks/speed_spandep.py) and ``train_log__<run>.txt`` (copies of ``train.log``); they stay as they are. Only
numbers found in them are taken: a field they lack is null, with a note saying so. Decoding settings missing from
a speed file are read from the model folder under runs/ (what ``spandep parse`` used), when it is there.
``python -m benchmarks.run`` overwrites a converted file with a complete one.

    python -m benchmarks.convert_legacy
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from benchmarks.record import encoder_name, git, scores, training, write_result
from benchmarks.suite import REPO
from spandep.training.config import load_config

RESULTS = REPO / "benchmarks" / "results"
TEST = "../shared/data/en_ewt/en_ewt-ud-test.conllu"

SPEED_LW3 = ".venv/bin/python benchmarks/speed_spandep.py --model runs/ewt-span-minilm-lw3/model --threads 2"
SPEED_B3K = ".venv/bin/python benchmarks/speed_spandep.py --model runs/ewt-biaffine-bilstm-b3k/model --threads 2"
PARSE_COMPACT = f".venv/bin/spandep parse {TEST} -o /tmp/pred.conllu && .venv/bin/spandep evaluate {TEST} /tmp/pred.conllu --json"


class Source(NamedTuple):
    """Where one system's older numbers are: file stems in benchmarks/results/, its model, config and command."""

    evaluation: str
    speed: str | None
    model: str
    config: str
    command: str


LEGACY: dict[str, Source] = {
    "biaffine-minilm": Source("ewt-biaffine-minilm", "spandep_biaffine_minilm", "runs/ewt-biaffine-minilm/model",
                              "configs/ewt-biaffine-minilm.toml",
                              "benchmarks/eval_ewt.sh ewt-biaffine-minilm && THREADS=2 benchmarks/speed_ewt.sh"),
    "biaffine-bilstm": Source("ewt-biaffine-bilstm-b3k", "spandep_biaffine_bilstm_b3k", "runs/ewt-biaffine-bilstm-b3k/model",
                              "configs/ewt-biaffine-bilstm-b3k.toml", f"benchmarks/eval_ewt.sh ewt-biaffine-bilstm-b3k && {SPEED_B3K}"),
    "biaffine-bilstm-run1": Source("ewt-biaffine-bilstm", "spandep_biaffine_bilstm", "runs/ewt-biaffine-bilstm/model",
                                   "configs/ewt-biaffine-bilstm.toml",
                                   "benchmarks/eval_ewt.sh ewt-biaffine-bilstm && THREADS=2 benchmarks/speed_ewt.sh"),
    "span-minilm-dp": Source("ewt-span-minilm-lw3", "spandep_span_minilm_lw3", "runs/ewt-span-minilm-lw3/model",
                             "configs/ewt-span-minilm-lw3.toml", f"THREADS=2 benchmarks/eval_ewt.sh ewt-span-minilm-lw3 && {SPEED_LW3}"),
    "span-minilm-run1-dp": Source("ewt-span-minilm", None, "runs/ewt-span-minilm/model", "configs/ewt-span-minilm.toml",
                                  "THREADS=1 benchmarks/eval_ewt.sh ewt-span-minilm"),
    "biaffine-minilm-compact": Source("default_model", None, "src/spandep/resources/default_model",
                                      "configs/ewt-biaffine-minilm.toml", PARSE_COMPACT),
}


def saved_decoding(model_dir: Path) -> tuple[str | None, dict[str, Any] | None]:
    """The decoder and span inference settings a model folder parses with by default (``None`` when absent)."""
    path = model_dir / "config.json"
    if not path.is_file():
        return None, None
    cfg = json.loads(path.read_text(encoding="utf-8"))
    inference = cfg["model"].get("inference")
    return (inference["decoder"] if inference else cfg["training"]["config"]["training"]["decoder"]), inference


def convert(system: str, src: Source) -> dict[str, Any]:
    """The result of ``system`` assembled from its older files; see the module docstring."""
    stem, speed_stem, model_dir, config_path, command = src
    source = RESULTS / f"en_ewt_test__{stem}.json"
    evaluation = json.loads(source.read_text(encoding="utf-8"))
    speed_file = RESULTS / f"speed_ewt_test__{speed_stem}.json" if speed_stem else None
    speed: dict[str, Any] = json.loads(speed_file.read_text(encoding="utf-8")) if speed_file else {}
    config = load_config(REPO / config_path)
    train_log = RESULTS / f"train_log__{Path(config_path).stem}.txt"
    decoder, inference = (speed["decoder"], speed.get("inference")) if speed else saved_decoding(REPO / model_dir)
    added = git("log", "--diff-filter=A", "--format=%H %cI", "-1", "--", str(source.relative_to(REPO))).split()
    notes = {
        "peak_rss_mb": "not measured for the parse in the older runs",
        "machine": "the older files record at most the architecture; BENCHMARKS.md: 2 cores of an AMD EPYC",
        "git_commit": "with date, the commit that added the evaluation file (the numbers were measured on the tree just before it)",
    }
    if not speed:
        notes["parse_sent_per_s"] = "parse speed was not measured for this model"
    if decoder is None:
        notes["decoder"] = f"not recorded, and {model_dir} is not here"
    if stem == "default_model":
        notes["train_minutes"] = "the shipped model is biaffine-minilm exported in float16 (spandep export --compact)"
    return {
        "dataset": "en_ewt", "split": "test", "system": system, "encoder": encoder_name(config),
        "model_type": config["model"]["type"], "decoder": decoder, "inference": inference,
        **scores(evaluation), "limit": None,
        "parse_sent_per_s": speed.get("sent_per_s"), "parse_words_per_s": speed.get("words_per_s"),
        "parse_seconds": speed.get("seconds"), "threads": speed.get("threads"), "batch_tokens": speed.get("batch_tokens"),
        **training(train_log, config), "peak_rss_mb": None,
        "config": config_path, "model": model_dir, "test": TEST,
        "git_commit": added[0] if added else None, "git_dirty": None, "command": command,
        "machine": {"cpu": None, "cores": None, "as_recorded": speed.get("machine"), "torch": speed.get("torch")},
        "date": added[1] if added else None, "notes": notes, "span_stats": None,
        "converted_from": [p.name for p in (source, speed_file, train_log) if p is not None and p.is_file()],
        "evaluation": evaluation,
    }


def main() -> None:
    for system, entry in LEGACY.items():
        path = RESULTS / f"en_ewt__{system}.json"
        write_result(path, convert(system, entry))
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
