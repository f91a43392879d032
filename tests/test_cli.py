"""The command line end to end on tiny data: train, parse (every column kept), evaluate, export, errors."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from conftest import DEV, TINY_BIAFFINE, TINY_SPAN, write_config
from spandep.cli.main import app
from spandep.data.conllu import read_conllu
from spandep.data.sentence import Sentence
from spandep.options import InferenceOptions
from spandep.models.layers import evaluating
from spandep.storage.model_io import load_model
from spandep.data.trees import is_valid_tree

runner = CliRunner()


MODELS = pytest.mark.parametrize("model_table", [TINY_BIAFFINE, TINY_SPAN], ids=["biaffine", "span"])


@pytest.mark.slow
@MODELS
def test_train_parse_evaluate_export(tmp_path, tiny_transformer_dir, model_table):
    cfg = write_config(tmp_path / "tiny.toml", tmp_path / "run", "transformer", tiny_transformer_dir, model=model_table, epochs=1)
    result = runner.invoke(app, ["train", str(cfg)])
    assert result.exit_code == 0, result.output
    model = tmp_path / "run" / "model"
    assert json.loads((model / "config.json").read_text())["format_version"] == 2

    out = tmp_path / "pred.conllu"
    result = runner.invoke(app, ["parse", str(DEV), "-o", str(out), "--model", str(model)])
    assert result.exit_code == 0, result.output
    gold, pred = list(read_conllu(DEV)), list(read_conllu(out))
    assert len(gold) == len(pred)
    for g, p in zip(gold, pred):
        assert g.comments == p.comments and g.extra_lines == p.extra_lines
        for gw, pw in zip(g.words, p.words):
            assert (gw.id, gw.form, gw.lemma, gw.upos, gw.xpos, gw.feats, gw.misc) == (
                pw.id, pw.form, pw.lemma, pw.upos, pw.xpos, pw.feats, pw.misc)
        tree_changed = g.heads != p.heads or g.deprels != p.deprels
        assert [w.deps for w in p.words] == (["_"] * len(p) if tree_changed else [w.deps for w in g.words])  # DEPS: the old tree's
        assert is_valid_tree(p.heads)

    result = runner.invoke(app, ["evaluate", str(DEV), str(out), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["sentences"] == len(gold)

    span_settings = ["--k", "3", "--lam", "0.5"]
    for options in (["--decoder", "projective"], ["--decoder", "mst", *(span_settings if model_table == TINY_SPAN else [])]):
        result = runner.invoke(app, ["parse", str(DEV), "-o", str(tmp_path / "p2.conllu"), "--model", str(model), *options])
        assert result.exit_code == 0, result.output
        assert all(is_valid_tree(p.heads) for p in read_conllu(tmp_path / "p2.conllu"))
    if model_table != TINY_SPAN:  # span settings on a Biaffine model are a usage error, not silently ignored
        result = runner.invoke(app, ["parse", str(DEV), "--model", str(model), *span_settings])
        assert result.exit_code == 2 and "do not apply to a biaffine parser" in re.sub(r"[│╭╮╰╯─\s]+", " ", result.output)
    result = runner.invoke(app, ["parse", str(DEV), "--model", str(model), "--decoder", "greedy"])
    assert result.exit_code == 2 and "unknown decoder" in result.output

    tokens = tmp_path / "tokens.txt"
    tokens.write_text("I saw her .\nShe ran\n")
    result = runner.invoke(app, ["parse", str(tokens), "-f", "tokens", "--model", str(model)])
    assert result.exit_code == 0, result.output
    assert result.output.count("\n\n") == 2


@pytest.mark.slow
@MODELS
def test_compact_export_takes_frozen_weights_from_the_base(tmp_path, tiny_transformer_dir, model_table):
    cfg = write_config(
        tmp_path / "tiny.toml", tmp_path / "run", "transformer", tiny_transformer_dir, pretrained=True, model=model_table, epochs=1
    )
    assert runner.invoke(app, ["train", str(cfg)]).exit_code == 0
    result = runner.invoke(app, ["export", str(tmp_path / "run" / "model"), str(tmp_path / "compact")])
    assert result.exit_code == 0, result.output
    full_size = (tmp_path / "run" / "model" / "model.safetensors").stat().st_size
    assert (tmp_path / "compact" / "model.safetensors").stat().st_size < 0.5 * full_size
    preds = []
    for model in (tmp_path / "run" / "model", tmp_path / "compact"):
        out = tmp_path / f"{model.name}.conllu"
        assert runner.invoke(app, ["parse", str(DEV), "-o", str(out), "--model", str(model)]).exit_code == 0
        preds.append([s.heads for s in read_conllu(out)])
    assert preds[0] == preds[1]


def test_errors_are_one_line_with_exit_codes(tmp_path):
    result = runner.invoke(app, ["parse", str(DEV), "--model", str(tmp_path / "nowhere")])
    assert result.exit_code == 3
    assert "not a spandep model folder" in result.output
    bad = tmp_path / "bad.conllu"
    bad.write_text("1\tword\t_\n\n")
    result = runner.invoke(app, ["evaluate", str(bad), str(bad)])
    assert result.exit_code == 2
    assert f"{bad}:1:" in result.output
    result = runner.invoke(app, ["train", str(tmp_path / "missing.toml")])
    assert result.exit_code == 2


@pytest.mark.parametrize("command", ["parse", "benchmark-speed"])
@pytest.mark.parametrize(("option", "message"), [(["--decoder", "greedy"], "unknown decoder"), (["--k", "0"], "k must be an int in [1, 64]")])
def test_inference_options_are_checked_before_a_model_loads(tmp_path, command, option, message):
    result = runner.invoke(app, [command, str(DEV), "--model", str(tmp_path / "nowhere"), *option])
    assert result.exit_code == 2 and message in result.output  # not 3: the missing model is never reached


@pytest.mark.slow
def test_benchmark_speed_reports_every_run(tmp_path):
    cfg = write_config(tmp_path / "tiny.toml", tmp_path / "run", "bilstm", model=TINY_SPAN, epochs=1)
    assert runner.invoke(app, ["train", str(cfg)]).exit_code == 0
    result = runner.invoke(app, ["benchmark-speed", str(DEV), "--model", str(tmp_path / "run" / "model"), "--runs", "2", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert len(report["runs_seconds"]) == 2 and report["sentences"] == len(list(read_conllu(DEV)))
    assert report["words_per_s"]["min"] <= report["words_per_s"]["mean"] <= report["words_per_s"]["max"]
    assert report["decoder"] == "projective" and report["inference"]["k"] == 2 and not report["encoder_only"]
    result = runner.invoke(app, ["benchmark-speed", str(DEV), "--model", str(tmp_path / "run" / "model"), "--runs", "1", "--encoder-only"])
    assert result.exit_code == 0 and "(the encoder alone)" in result.output, result.output


def test_encoded_batches_cover_every_nonempty_sentence_once(tmp_path):
    cfg = write_config(tmp_path / "tiny.toml", tmp_path / "run", "bilstm", model=TINY_BIAFFINE, epochs=1)
    assert runner.invoke(app, ["train", str(cfg)]).exit_code == 0
    model = load_model(tmp_path / "run" / "model")
    sentences = list(read_conllu(DEV))
    sentences.insert(1, Sentence([]))
    seen = []
    with evaluating(model):
        for idx, batch, x in model.encoded_batches(sentences, InferenceOptions(batch_tokens=20)):
            longest = max(len(sentences[i]) for i in idx)
            assert x.shape[:2] == (len(idx), 1 + longest) and batch["word_mask"].shape == x.shape[:2]
            seen += idx
    assert sorted(seen) == [i for i, s in enumerate(sentences) if len(s)] and len(set(seen)) == len(seen)


@pytest.mark.slow
def test_parse_with_workers_gives_the_single_process_output(tmp_path):
    cfg = write_config(tmp_path / "tiny.toml", tmp_path / "run", "bilstm", model=TINY_SPAN, epochs=1)
    assert runner.invoke(app, ["train", str(cfg)]).exit_code == 0
    model = str(tmp_path / "run" / "model")
    big = tmp_path / "big.conllu"
    big.write_text(DEV.read_text() * 200)  # 1,000 sentences: two chunks
    outs = []
    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}.conllu"
        result = runner.invoke(app, ["parse", str(big), "-o", str(out), "--model", model, "--workers", workers, "--threads", "1"])
        assert result.exit_code == 0, result.output
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    assert len(list(read_conllu(tmp_path / "w2.conllu"))) == len(list(read_conllu(DEV))) * 200
