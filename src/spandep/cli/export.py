"""``spandep export MODEL OUT``: re-save a trained model, compact (float16, no frozen base weights) by default."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from spandep.cli.common import handle_errors
from spandep.errors import OptionError

if TYPE_CHECKING:
    from spandep.models.base import Parser


def export(
    model: Path = typer.Argument(..., help="Model folder written by `spandep train` (RUN/model)."),
    output: Path = typer.Argument(..., help="Folder to write."),
    compact: bool = typer.Option(True, "--compact/--full", help="float16 weights, frozen base weights left out."),
    int8: bool = typer.Option(False, "--int8", help="With --compact: the transformer's weight matrices stored as int8 (per-row scales); measure the copy's accuracy."),
    int8_all: bool = typer.Option(
        False, "--int8-all", help="With --compact: every weight matrix stored as int8, the parser's, the heads', an "
        "adapter's and the raw-text tokenizers' too (for a LoRA model, whose pretrained weights are not stored); measure the copy's accuracy.",
    ),
    base: Optional[str] = typer.Option(
        None, help="Name the encoder by this base alias in the copy (spandep models), for a model trained on a local "
        "folder of the same weights (checked by SHA-256): the compact copy then loads wherever `make models` ran.",
    ),
    drop_heads: list[str] = typer.Option(
        [], "--drop-head", help="An output head (upos, xpos, feats, lemma) to leave out of the copy, its column then "
        "written as `_`: for a treebank whose training data fills that column only in part (ru_taiga's XPOS); repeatable.",
    ),
    treebanks: list[str] = typer.Option(
        [], "--treebank", help="For a model of several treebanks: a copy that parses this one only (repeatable: these "
        "only), their labels, classes and weight rows alone (the same parses as the model's as each; the lemma lexicons "
        "their own and their languages'), with their tokenizers.",
    ),
    tokenizers: list[str] = typer.Option(
        [], "--tokenizer", help="A trained tokenizer folder (spandep train-tokenizer's RUN/tokenizer) to ship in place "
        "of the model's own, for a tokenizer trained after the model; for a model of several treebanks TREEBANK=FOLDER, "
        "once per treebank.",
    ),
) -> None:
    """Write a copy of MODEL for shipping, its trained tokenizer (or a multi-treebank model's tokenizers) included; a
    compact copy needs the encoder's base package installed to load."""
    with handle_errors():
        from spandep.storage.int8 import Int8Scope
        from spandep.storage.model_io import load_model, save_model
        from spandep.tokenization.text import TOKENIZER_FOLDER, treebank_tokenizers

        if (int8 or int8_all) and not compact:
            raise OptionError(f"{'--int8-all' if int8_all else '--int8'} needs --compact (int8 weights are a compact model's)")
        loaded = load_model(model, merge_adapter=False)  # an adapter is saved apart from its base weights
        if base is not None:
            _rename_base(loaded, base)
        for name in drop_heads:
            if name not in loaded.heads:
                raise OptionError(f"--drop-head {name}: the model's output heads are {', '.join(loaded.heads) or 'none'}")
            del loaded.heads[name]
        own = model / TOKENIZER_FOLDER
        single, several = _tokenizers(loaded, tokenizers, own if own.is_dir() else None, treebank_tokenizers(model))
        if treebanks:
            from spandep.storage.one_treebank import keep_treebanks

            loaded = keep_treebanks(loaded, treebanks)
            several = {t: folder for t, folder in several.items() if t in treebanks}
        scope: Int8Scope | None = "all" if int8_all else "encoder" if int8 else None
        save_model(loaded, output, loaded.config.get("training"), compact, scope, single, several)
        size = sum(f.stat().st_size for f in output.rglob("*") if f.is_file())
        typer.echo(f"wrote {output} ({size / 1e6:.1f} MB)")


def _rename_base(model: Parser, alias: str) -> None:
    """Make ``alias`` the encoder's base name (``export_config``'s ``model``) once its weights are checked equal."""
    from spandep.encoders.bases import rebase_problem

    folder = getattr(model.encoder, "model_name", None)
    if folder is None:
        raise OptionError(f"--base: the model's {model.encoder.name} encoder has no pretrained base")
    problem = rebase_problem(folder, alias)
    if problem:
        raise OptionError(f"--base: {problem}")
    model.encoder.model_name = alias


def _tokenizers(model: Parser, given: list[str], single: Path | None, several: dict[str, Path]) -> tuple[Path | None, dict[str, Path]]:
    """The tokenizer (``single``) and the treebanks' tokenizers (``several``) of the copy: the model folder's own,
    replaced by those ``--tokenizer`` names (``FOLDER``, or ``TREEBANK=FOLDER`` for a model of several treebanks)."""
    names = model.treebanks.names if model.treebanks is not None else None
    several = dict(several)
    for item in given:
        if names is None:
            single = _tokenizer_folder(item)
            continue
        name, _, folder = item.partition("=")
        if not folder or name not in names:
            raise OptionError(f"--tokenizer {item!r}: this model parses {', '.join(names)}; give TREEBANK=FOLDER for one of them")
        several[name] = _tokenizer_folder(folder)
    return single, several


def _tokenizer_folder(folder: str) -> Path:
    if not (Path(folder) / "config.json").is_file():
        raise OptionError(f"--tokenizer: {folder} is not a tokenizer folder (spandep train-tokenizer writes RUN/tokenizer)")
    return Path(folder)
