"""Issue 45's morphology heads: per-feature FEATS decoded under the feature–UPOS pairs of train, the rule combining
it with the bundle classifier, heads conditioned on other heads' columns, the LAS + MLAS checkpoint choice, and a
tiny model with all of them that trains, saves, loads and parses."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import DEV, TINY_SPAN, write_config
from spandep.data.conllu import read_conllu
from spandep.data.sentence import Token
from spandep.errors import InputFormatError, ModelError
from spandep.models.heads.features import ABSENT, FeatureInventory, PerFeature, combine, join_bundle, split_bundle
from spandep.storage.model_io import HEAD_TABLES, load_model, read_model_config, save_calibration
from spandep.training.config import load_config
from spandep.training.trainer import Trainer

UPOS = ["NOUN", "VERB", "ADJ", "ADP"]
NAMES = ["Case", "Gender", "Number", "NumType", "Tense"]
VALUES = ["A", "B", "C"]

bundles = st.dictionaries(st.sampled_from(NAMES), st.sampled_from(VALUES), max_size=len(NAMES)).map(join_bundle)
pairs = st.lists(st.tuples(st.sampled_from(UPOS), bundles), min_size=1, max_size=30)


@given(pairs, st.lists(st.sampled_from([*UPOS, "PROPN", "_"]), min_size=1, max_size=8), st.integers(0, 1000))
@settings(max_examples=60, deadline=None)
def test_per_feature_bundles_keep_to_feature_upos_pairs_of_train(train, tags, seed):
    """Whatever the scores, a decoded word has only features seen with its UPOS in train, each with a value of train."""
    inventory = FeatureInventory.from_pairs(train)
    seen = {(upos, name) for upos, bundle in train for name in split_bundle(bundle)}
    torch.manual_seed(seed)
    head = PerFeature(6, inventory)
    torch.nn.init.normal_(head.out.weight, std=5.0)
    [decoded] = head.decode(torch.randn(1, 1 + len(tags), 6), [tags])  # (1, 1 + n, 6) vectors
    assert len(decoded) == len(tags)
    for upos, bundle in zip(tags, decoded):
        for name, value in split_bundle(bundle).items():
            assert (upos, name) in seen
            assert value in inventory.values[name] and value != ABSENT
        assert bundle == join_bundle(split_bundle(bundle))


@given(st.lists(st.tuples(bundles, bundles), min_size=1, max_size=10), st.dictionaries(bundles, st.integers(0, 9)), st.integers(0, 10))
def test_combine_keeps_the_bundle_seen_at_least_min_count_times(words, counts, min_count):
    [combined] = combine([[b for b, _ in words]], [[p for _, p in words]], counts, min_count)
    for (bundle, per_feature), chosen in zip(words, combined):
        assert chosen == (bundle if counts.get(bundle, 0) >= min_count else per_feature)


def test_bundles_split_and_join_in_ud_order():
    assert join_bundle({"Number": "Sing", "NumType": "Card", "Case": "Nom"}) == "Case=Nom|Number=Sing|NumType=Card"
    assert split_bundle("_") == {} and join_bundle({}) == "_"
    inventory = FeatureInventory.from_pairs([("NOUN", "Case=Nom|Number=Sing"), ("VERB", "Tense=Past")])
    assert inventory.values == {"Case": [ABSENT, "Nom"], "Number": [ABSENT, "Sing"], "Tense": [ABSENT, "Past"]}
    assert inventory.targets("Case=Nom") == [1, 0, 0] and inventory.targets("Case=Acc")[0] == -100
    assert inventory.allowed("VERB") == [False, False, True] and inventory.allowed("X") == [False, False, False]


def test_joint_scores_are_each_bundles_per_feature_log_likelihood():
    inventory = FeatureInventory.from_pairs([("NOUN", "Case=Nom|Number=Sing"), ("NOUN", "Case=Acc"), ("VERB", "_")])
    head = PerFeature(4, inventory)
    bundles = ["Case=Nom|Number=Sing", "Case=Acc", "_"]
    x = torch.randn(2, 3, 4)  # (batch, 1 + n, 4)
    got = head.bundle_scores(x, torch.tensor([inventory.targets(b) for b in bundles]))  # (2, 3, bundles)
    logp = [s.log_softmax(-1) for s in head.scores(x)]
    for t, bundle in enumerate(bundles):
        expected = sum(logp[f][..., c] for f, c in enumerate(inventory.targets(bundle)))  # (2, 3)
        assert torch.allclose(got[..., t], expected)


MORPH_HEADS = (
    "\n[heads.upos]\n\n[heads.feats]\nupos_embed = 8\nper_feature = 1.0\nmin_count = {min_count}\njoint = 0.5\nchars = 8\ncontext = 6\n"
    "\n[heads.lemma]\nupos_embed = 8\nfeats_embed = 8\nchars = 8\n"
)


def morph_config(tmp: Path, name: str, heads: str, **training: object) -> Path:
    path = write_config(tmp / f"{name}.toml", tmp / name, "bilstm", model=TINY_SPAN, epochs=1, **training)
    path.write_text(path.read_text() + heads)
    return path


@pytest.fixture(scope="module")
def morph_model(tmp_path_factory: pytest.TempPathFactory) -> tuple[Trainer, Path]:
    """A tiny span model with every issue-45 setting, trained one epoch; the per-feature bundle always chosen."""
    tmp = tmp_path_factory.mktemp("morph")
    trainer = Trainer(load_config(morph_config(tmp, "run", MORPH_HEADS.format(min_count=10**9), select="las+mlas")))
    trainer.run()
    return trainer, tmp / "run" / "model"


def blank_dev() -> list:
    return [replace(s, words=[Token(w.id, w.form) for w in s.words]) for s in read_conllu(str(DEV))]


def test_morph_model_saves_loads_and_parses_as_trained(morph_model):
    trainer, folder = morph_model
    trainer.model.eval()
    loaded = load_model(folder)
    sentences = blank_dev()
    assert loaded.parse(sentences) == trainer.model.parse(sentences)
    heads = json.loads((folder / "config.json").read_text())["model"]["heads"]
    by_upos = heads["feats"]["by_upos"]
    for parse in loaded.parse(sentences):  # min_count above every count: every bundle is the per-feature one
        for upos, bundle in zip(parse.columns["upos"], parse.columns["feats"]):
            assert set(split_bundle(bundle)) <= set(by_upos.get(upos, ()))
    assert set(heads["lemma"]) >= {"upos_embed", "upos_tags", "feats_embed", "feats_tags", "chars", "char_vocab"}
    assert (heads["feats"]["chars"], heads["feats"]["context"], heads["lemma"]["context"]) == (8, 6, 0)
    assert loaded.heads["feats"].context is not None and loaded.heads["lemma"].context is None


def test_las_mlas_selection_logs_the_morphology_figures(morph_model):
    trainer, _ = morph_model
    [epoch] = trainer.run()["history"]  # the finished run: its one epoch
    assert {"UPOS", "UFeats", "Lemmas", "MLAS"} <= set(epoch)
    assert trainer._key(epoch) == (epoch["LAS_nopunct"] + epoch["MLAS"], epoch["UAS_nopunct"])


def test_heads_without_the_new_settings_build_as_before(tmp_path):
    """No new key in a head's saved config, no new weight: old configs mean what they meant."""
    trainer = Trainer(load_config(morph_config(tmp_path, "old", "\n[heads.upos]\n\n[heads.feats]\n\n[heads.lemma]\n")))
    heads = trainer.model.export_config()["heads"]
    assert set(heads["feats"]) == {"tags", "dropout", "weight", "casing", "suffix", "hidden"}
    data = {"writing_systems", "lexicon", "feats_lexicon"}  # read off the training file, as the classes are (no setting)
    assert set(heads["lemma"]) == {"tags", "dropout", "weight", "casing", "suffix", "hidden"} | data
    assert not any(".conditions." in k or "per_feature" in k or ".chars." in k or ".context." in k for k in trainer.model.state_dict())
    assert trainer._key({"LAS_nopunct": 80.0, "UAS_nopunct": 85.0}) == (80.0, 85.0)


@pytest.mark.parametrize("heads, message", [
    ("\n[heads.feats]\nper_feature = 1.0\n", "[heads.feats] is conditioned on the UPOS column"),
    ("\n[heads.upos]\n\n[heads.lemma]\nfeats_embed = 8\n", "[heads.lemma] is conditioned on the FEATS column"),
])
def test_a_head_conditioned_on_a_missing_column_is_a_config_error(tmp_path, heads, message):
    with pytest.raises(InputFormatError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_config(morph_config(tmp_path, "bad", heads))


def test_select_takes_las_or_las_mlas(tmp_path):
    with pytest.raises(InputFormatError, match="select must be 'las' or 'las\\+mlas'"):
        load_config(morph_config(tmp_path, "bad", "", select="mlas"))


def test_the_lemma_lexicons_are_stored_apart_compressed_and_read_back(morph_model, tmp_path):
    trainer, folder = morph_model
    raw = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    assert raw["format_version"] == 3 and (folder / HEAD_TABLES).is_file()
    assert not {"lexicon", "feats_lexicon"} & set(raw["model"]["heads"]["lemma"])  # not in config.json itself
    assert not any("tags" in head for head in raw["model"]["heads"].values())  # nor any head's classes: with them
    lexicon = trainer.model.heads["lemma"].export_config()["lexicon"]
    assert lexicon and read_model_config(folder)["model"]["heads"]["lemma"]["lexicon"] == lexicon
    read_back, loaded = read_model_config(folder)["model"]["heads"], load_model(folder)
    for name, head in trainer.model.heads.items():
        assert read_back[name]["tags"] == loaded.heads[name].export_config()["tags"] == head.export_config()["tags"]
    assert loaded.heads["lemma"].export_config()["lexicon"] == lexicon
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    save_calibration(copy, load_model(copy).calibration)  # a config rewritten keeps the tables apart
    assert not {"lexicon", "feats_lexicon"} & set(json.loads((copy / "config.json").read_text())["model"]["heads"]["lemma"])
    assert read_model_config(copy)["model"]["heads"]["lemma"]["lexicon"] == lexicon
    (copy / HEAD_TABLES).write_bytes(b"not xz")
    with pytest.raises(ModelError, match=HEAD_TABLES):
        load_model(copy)
    inline = tmp_path / "inline"  # a format-2 folder, its tables in config.json, loads as before
    shutil.copytree(folder, inline)
    (inline / HEAD_TABLES).unlink()
    full = {**raw, "format_version": 2}
    full["model"]["heads"] = read_model_config(folder)["model"]["heads"]
    (inline / "config.json").write_text(json.dumps(full), encoding="utf-8")
    assert load_model(inline).heads["lemma"].export_config()["lexicon"] == lexicon


def test_a_model_without_tables_stays_format_2(tiny_models):
    assert json.loads((tiny_models["span"] / "config.json").read_text())["format_version"] == 2
    assert not (tiny_models["span"] / HEAD_TABLES).exists()


def test_calibrating_a_format_2_folder_keeps_its_layout(morph_model, tmp_path):
    _, folder = morph_model
    inline = tmp_path / "inline"
    shutil.copytree(folder, inline)
    config = read_model_config(folder)
    (inline / HEAD_TABLES).unlink()
    (inline / "config.json").write_text(json.dumps({**config, "format_version": 2}), encoding="utf-8")
    save_calibration(inline, load_model(inline).calibration)
    assert json.loads((inline / "config.json").read_text())["format_version"] == 2 and not (inline / HEAD_TABLES).exists()
    assert read_model_config(inline)["model"]["heads"]["lemma"]["lexicon"] == config["model"]["heads"]["lemma"]["lexicon"]


def test_a_long_config_is_written_without_indentation(morph_model, tmp_path, monkeypatch):
    """config.json is indented to be read, unless that makes it longer than READABLE_JSON characters (a pool model's
    per-treebank class ids, one number a line): then compact, and read back the same."""
    from spandep.storage import model_io

    _, folder = morph_model
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    before = read_model_config(copy)
    save_calibration(copy, load_model(copy).calibration)
    assert (copy / "config.json").read_text().startswith('{\n  "format_version"')  # short: indented
    monkeypatch.setattr(model_io, "READABLE_JSON", 100)
    save_calibration(copy, load_model(copy).calibration)
    text = (copy / "config.json").read_text()
    assert text.count("\n") == 1 and read_model_config(copy) == before


def test_a_pair_its_own_lexicon_lacks_takes_its_languages_lemma_not_another_languages():
    """``fallback = "language"`` (a model of several treebanks trained now): a treebank's own lexicon first, then
    those of the other treebanks of its language, the one with the most pairs first; never another language's (an
    Icelandic ``Er`` → ``vera`` for a German word). A folder written before (``"all"``) reads the lexicon of all."""
    from spandep.models.heads.lemma import Lemmatizer, kin

    tags = ['["keep", 0, "", 0, ""]']
    tables = {
        "cs_cltt": {"lexicon": {"NOUN": {"a": "own"}}, "feats_lexicon": {}},
        "cs_cac": {"lexicon": {"NOUN": {"a": "cac", "b": "cac", "c": "cac"}}, "feats_lexicon": {}},
        "cs_fictree": {"lexicon": {"NOUN": {"b": "fictree", "d": "fictree"}}, "feats_lexicon": {}},
        "is_gc": {"lexicon": {"AUX": {"Er": "vera"}, "NOUN": {"e": "icelandic"}}, "feats_lexicon": {}},
    }
    assert kin(tables, "cs_cltt") == ["cs_cac", "cs_fictree"] and kin(tables, "is_gc") == [] and kin(tables, "xx_unknown") == []
    forms = [["a", "b", "d", "e", "Er"]]
    columns = {"upos": [["NOUN", "NOUN", "NOUN", "NOUN", "AUX"]]}
    values = [["a", "b", "d", "e", "Er"]]  # the scripts' lemmas: the forms themselves
    head = Lemmatizer(8, tags, treebank_lexicons=tables, fallback="language")
    assert head.refine(values, forms, columns, "cs_cltt") == [["own", "cac", "fictree", "e", "Er"]]
    everyone = {"NOUN": {"a": "x", "b": "x", "d": "x", "e": "icelandic"}, "AUX": {"Er": "vera"}}
    before = Lemmatizer(8, tags, lexicon=everyone, treebank_lexicons=tables)  # "all", as a folder written before
    assert before.fallback == "all" and before.refine(values, forms, columns, "cs_cltt") == [["own", "x", "x", "icelandic", "vera"]]
    assert "fallback" not in before.export_config() and head.export_config()["fallback"] == "language"
    with pytest.raises(ValueError, match="fallback must be 'language' or 'all'"):
        Lemmatizer(8, tags, fallback="any")
