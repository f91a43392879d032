"""Every command-line number and training-config value is checked before any work: one line on stderr naming the
option (or the config's file, line and key) and what it allows, exit code 2, no traceback; no model hub is asked."""

from __future__ import annotations

import os
import time

import pytest
from typer.testing import CliRunner

from conftest import DEV, write_config
from spandep.checks import Range
from spandep.cli.main import app

runner = CliRunner()


def assert_usage_error(result, message: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)  # no traceback
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("spandep: error: ") and message in lines[0], result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["parse", str(DEV), "--lam", "nan"], "--lam must be a finite number in [0, 1000], not nan"),
        (["parse", str(DEV), "--threads", "-1"], "--threads must be an int in [0, 1024], not -1"),
        (["parse", str(DEV), "--batch-tokens", "0"], "--batch-tokens must be an int in [1, 50000], not 0"),
        (["parse", str(DEV), "--k", "0"], "--k must be an int in [1, 64], not 0"),
        (["parse", str(DEV), "--workers", "0"], "--workers must be an int in [1, 64], not 0"),
        (["parse", str(DEV), "--device", "gpu"], "--device must be cpu, cuda, cuda:N or auto, not 'gpu'"),
        (["parse", str(DEV), "--output-format", "pdf"], "--output-format: unknown format 'pdf'"),
        (["benchmark-speed", str(DEV), "--runs", "0"], "--runs must be an int in [1, 1000], not 0"),
        (["tune", "m", str(DEV), "--lams", "1,inf"], "--lams value must be a finite number in [0, 1000], not inf"),
        (["tune", "m", str(DEV), "--ks", "2,x"], "--ks must be a comma-separated list of numbers, not '2,x'"),
        (["train", "c.toml", "--epochs", "0"], "--epochs must be an int in [1, 100000], not 0"),
        (["train-tokenizer", "t", "--dev", "d", "-o", "o", "--dropout", "1"], "--dropout must be a finite number in [0, 1), not 1.0"),
        (["parse", str(DEV), "--threads", "100000"], "--threads must be an int in [0, 1024], not 100000"),
        (["parse", str(DEV), "--workers", "1000"], "--workers must be an int in [1, 64], not 1000"),
        (["benchmark-speed", str(DEV), "--warmup", "1000000"], "--warmup must be an int in [0, 1000], not 1000000"),
        (["tune", "m", str(DEV), "--ks", ",".join(["1"] * 65)], "--ks: the number of values must be an int in [1, 64], not 65"),
        (["tune", "m", str(DEV), "--within", "1e9"], "--within must be a finite number in [0, 100], not 1000000000.0"),
        (["train-tokenizer", "t", "--dev", "d", "-o", "o", "--hidden", "1000000"], "--hidden must be an int in [1, 4096], not 1000000"),
        (["train-tokenizer", "t", "--dev", "d", "-o", "o", "--seed", "-1"], "--seed must be an int in [0, 4294967295], not -1"),
        (["serve", "--port", "70000"], "--port must be an int in [0, 65535], not 70000"),
        (["serve", "--batch-wait-ms", "-1"], "--batch-wait-ms must be a finite number in [0, 10000], not -1.0"),
        (["serve", "--max-queue", "0"], "--max-queue must be an int in [1, 10000], not 0"),
        (["serve", "--timeout", "0"], "--timeout must be a finite number in (0, 3600], not 0.0"),
    ],
)
def test_bad_numbers_are_one_line_usage_errors(tmp_path, args, message):
    """The model (``--model`` nowhere) and the files are never reached: the option is checked first."""
    model = ["--model", str(tmp_path / "nowhere")] if args[0] in ("parse", "benchmark-speed") else []
    assert_usage_error(runner.invoke(app, [*args, *model]), message)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('epochs = "ten"', "[training] epochs must be an int ≥ 1, not 'ten'"),
        ("epochs = 1.5", "[training] epochs must be an int ≥ 1, not 1.5"),
        ("epochs = -3", "[training] epochs must be an int ≥ 1, not -3"),
        ('lr = "fast"', "[training] lr must be a finite number > 0, not 'fast'"),
        ('threads = "x"', "[training] threads must be an int ≥ 0, not 'x'"),
        ("batch_tokens = -5", "[training] batch_tokens must be an int ≥ 1, not -5"),
        ('device = "gpu"', "[training] device must be cpu, cuda, cuda:N or auto, not 'gpu'"),
        ("betas = [0.9]", "[training] betas must be a list of two numbers in [0, 1), not [0.9]"),
    ],
)
def test_bad_config_values_name_file_line_and_range(tmp_path, line, message):
    config = write_config(tmp_path / "c.toml", tmp_path / "run", "bilstm")
    key = line.split(" =")[0]
    kept = [t for t in config.read_text().splitlines() if not t.startswith(f"{key} =")]  # the template's own value
    text = "\n".join(kept).replace("[training]", f"[training]\n{line}") + "\n"
    config.write_text(text)
    line_number = text.splitlines().index(line) + 1
    result = runner.invoke(app, ["train", str(config)])
    assert_usage_error(result, f"{config}:{line_number}: {message}; fix it in the config")
    assert not (tmp_path / "run").exists()  # nothing trained, nothing written


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('train = "', 'train = ["a"]\n# "', "[data] train must be a path in quotes, not ['a']"),
        ("word_dim = 16", "word_dim = 1.5", "[encoder] word_dim must be an int, not 1.5"),
        ("arc_mlp = 32", 'arc_mlp = "big"', "[model] arc_mlp must be an int, not 'big'"),
    ],
)
def test_config_types_follow_the_defaults(tmp_path, old, new, message):
    config = write_config(tmp_path / "c.toml", tmp_path / "run", "bilstm")
    config.write_text(config.read_text().replace(old, new, 1))
    assert_usage_error(runner.invoke(app, ["train", str(config)]), message)


def test_an_unknown_encoder_name_fails_at_once_without_a_model_hub(tmp_path):
    config = write_config(tmp_path / "c.toml", tmp_path / "run", "transformer", "bert-base-uncased")  # no such folder
    start = time.monotonic()
    result = runner.invoke(app, ["train", str(config)])
    assert_usage_error(result, "encoder 'bert-base-uncased' is neither a known base (all-MiniLM-L6-v2, all-mpnet-base-v2, multilingual-e5-small) nor a local model folder")
    # a hang bound (a model hub's timeouts and retries), never reached by a local failure however loaded the machine
    assert time.monotonic() - start < 300
    assert "HF_HUB_OFFLINE" in os.environ and "TRANSFORMERS_OFFLINE" in os.environ  # set by spandep.encoders


def test_ranges_say_what_they_allow():
    assert str(Range(1)) == "an int ≥ 1" and str(Range(0, 1, integer=False, open_high=True)) == "a finite number in [0, 1)"
    assert Range(1).problem("k", True) == "k must be an int ≥ 1, not True"  # TOML's true is no number
    assert Range(0, integer=False).problem("lam", 2) is None


def test_every_front_end_parses_with_the_same_batch_size_by_default():
    """``batch_tokens``'s default is ``options.DEFAULT_BATCH_TOKENS`` in the API, the CLI and spaCy alike."""
    import inspect

    from spandep.api import load
    from spandep.cli.benchmark_speed import benchmark_speed
    from spandep.cli.parse import parse
    from spacy.language import Language

    import spandep.integrations.spacy_component  # noqa: F401 (registers the factory)
    from spandep.options import DEFAULT_BATCH_TOKENS, InferenceOptions

    assert InferenceOptions().batch_tokens == DEFAULT_BATCH_TOKENS
    assert inspect.signature(load).parameters["batch_tokens"].default == DEFAULT_BATCH_TOKENS
    for command in (parse, benchmark_speed):
        assert inspect.signature(command).parameters["batch_tokens"].default.default == DEFAULT_BATCH_TOKENS
    assert Language.get_factory_meta("spandep").default_config["batch_tokens"] == DEFAULT_BATCH_TOKENS
