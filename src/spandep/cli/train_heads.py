"""``spandep train-heads MODEL TRAIN DEV -o OUT``: fine-tune a trained model's output heads (UPOS, XPOS, FEATS,
lemma) over its frozen encoder, each head's best epoch chosen on dev; the trees stay the input's. Rerunning the
same command resumes."""

from __future__ import annotations

import logging
from pathlib import Path

import typer

from spandep.cli.common import bound, check_input, check_options, handle_errors
from spandep.errors import OptionError


def train_heads(
    model: str = typer.Argument(..., help="A shipped model's name (spandep models) or a model folder."),
    train: Path = typer.Argument(..., help="Training CoNLL-U (the model's own training file)."),
    dev: Path = typer.Argument(..., help="Dev CoNLL-U: each head's epoch is chosen on it."),
    output: Path = typer.Option(..., "--output", "-o", help="Run folder; the model is written to OUTPUT/model."),
    epochs: int = typer.Option(20, help="Epochs over the training file."),
    lr: float = typer.Option(1e-3, help="Adam learning rate of the heads."),
    batch_words: int = typer.Option(2000, help="Padded words per batch."),
    seed: int = typer.Option(1, help="Random seed."),
    threads: int = typer.Option(1, help="Torch CPU threads (0: torch's default)."),
    int8: bool = typer.Option(
        False, "--int8", help="Store every head matrix of 65,536 values or more in int8 (per-row scales), the input's heads "
        "included (epoch 0 is scored so): a smaller folder; each epoch is scored as stored.",
    ),
    set_: list[str] = typer.Option(
        [], "--set", metavar="HEAD.KEY=VALUE",
        help="Build head HEAD anew with this setting over the input's (e.g. feats.chars=128, feats.context=192); repeatable. "
        "A rebuilt head trains from scratch and is kept only where it beats the input's on dev.",
    ),
) -> None:
    """Train the heads of MODEL further with everything else frozen; the folder with the chosen heads goes to
    OUTPUT/model (only the heads' weights differ from MODEL's). Interrupted runs resume."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    with handle_errors():
        from spandep.storage.model_io import resolve_model_dir
        from spandep.training.heads import HeadsSettings, HeadsTrainer

        check_options(
            ("--epochs", epochs, bound("epochs")), ("--lr", lr, bound("heads_lr")), ("--batch-words", batch_words, bound("batch_tokens")),
            ("--seed", seed, bound("seed")), ("--threads", threads, bound("threads")),
        )
        check_input(train, stdin=False)
        check_input(dev, stdin=False)
        settings = HeadsSettings(str(model), str(train), str(dev), str(output), epochs, lr, batch_words, seed, threads, head_changes(set_), int8)
        record = HeadsTrainer(settings, resolve_model_dir(model)).run()
        chosen = ", ".join(f"{name} {epoch}" for name, epoch in record["chosen_epochs"].items())
        before, after = record["dev_before"], record["dev_after"]
        typer.echo(
            f"done: epochs chosen {chosen}; dev " + ", ".join(f"{n} {before[n]:.2f} → {after[n]:.2f}" for n in after)
            + f"; model in {output / 'model'}"
        )


def head_changes(given: list[str]) -> dict[str, dict[str, int | float | bool]]:
    """``--set HEAD.KEY=VALUE`` options as ``{HEAD: {KEY: VALUE}}``: a number (bounded by ``head_setting``) or true/false."""
    out: dict[str, dict[str, int | float | bool]] = {}
    for item in given:
        name, _, value = item.partition("=")
        head, _, key = name.partition(".")
        if not head or not key or not value:
            raise OptionError(f"--set {item!r}: write HEAD.KEY=VALUE (e.g. feats.chars=128)")
        parsed: int | float | bool
        if value.lower() in ("true", "false"):
            parsed = value.lower() == "true"
        else:
            try:
                parsed = int(value) if value.lstrip("-").isdigit() else float(value)
            except ValueError:
                raise OptionError(f"--set {item!r}: the value must be a number, true or false") from None
            check_options((f"--set {name}", parsed, bound("head_setting")))
        out.setdefault(head, {})[key] = parsed
    return out
