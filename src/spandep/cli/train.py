"""``spandep train CONFIG``: train a parser from a TOML config; rerunning the same command resumes."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Optional

import typer

from spandep.cli.common import bound, check_options, handle_errors


def train(
    config: Path = typer.Argument(..., help="TOML training config (see configs/)."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Output folder; overrides [training] output."),
    epochs: Optional[int] = typer.Option(None, help="Overrides [training] epochs."),
    max_train_sentences: Optional[int] = typer.Option(None, help="Use only the first N training sentences (smoke runs)."),
    threads: Optional[int] = typer.Option(None, help="Torch CPU threads; overrides [training] threads."),
    device: Optional[str] = typer.Option(None, help="cpu, cuda, cuda:N or auto; overrides [training] device."),
    init: Optional[Path] = typer.Option(None, help="A trained model folder to start from (its weights where they fit this config); overrides [training] init."),
) -> None:
    """Train a model; the best checkpoint on dev is written to OUTPUT/model. Interrupted runs resume."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    with handle_errors():
        from spandep.training.config import load_config
        from spandep.training.trainer import Trainer

        check_options(
            ("--epochs", epochs, bound("epochs")), ("--max-train-sentences", max_train_sentences, bound("max_train_sentences")),
            ("--threads", threads, bound("threads")), ("--device", device, None),
        )

        overrides: dict[str, dict[str, Any]] = {
            "training": {"output": str(output) if output else None, "epochs": epochs, "threads": threads, "device": device,
                         "init": str(init) if init else None},
            "data": {"max_train_sentences": max_train_sentences},
        }
        cfg = load_config(config, overrides)
        state = Trainer(cfg).run()
        best = state["best"] or {}
        typer.echo(
            f"done: best dev epoch {best.get('epoch')} UAS {best.get('UAS_nopunct', 0):.2f} LAS {best.get('LAS_nopunct', 0):.2f} "
            f"(punctuation excluded); model in {Path(cfg['training']['output']) / 'model'}"
        )
