"""Output heads (UPOS, XPOS, FEATS, lemmas), the casing feature, the fill-only-where-blank rule, confidences and
their calibration: unit tests, property tests, and tiny end-to-end training of every head on both parser types."""

from __future__ import annotations

import importlib.util
import os
import json
from dataclasses import replace

import numpy as np
import pytest
import torch
from conftest import DEV, TINY_BIAFFINE, TINY_SPAN, write_config
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from spandep.cli.main import app
from spandep.data.conllu import read_conllu
from spandep.data.sentence import Sentence, Token
from spandep.evaluation.calibration import expected_calibration_error, fit_logit_platt, reliability
from spandep.models.base import Parse
from spandep.models.confidence import ArcScores, Calibration
from spandep.models.heads import IGNORE, HeadInput
from spandep.models.heads.base import SUFFIX_BUCKETS, word_shape, word_suffixes
from spandep.models.heads.feats import FeatsTagger
from spandep.models.heads.lemma import EditScript, Lemmatizer, induce_script, lemma_feats_lexicon, lemma_lexicon
from spandep.models.heads.upos import UposTagger
from spandep.models.span.candidates import link_head_scores
from spandep.models.heads.xpos import XposTagger
from spandep.storage.model_io import load_model, save_model
from spandep.pipeline.predict import parse_stream, with_tree
from spandep.training.config import load_config
from spandep.training.trainer import Trainer

ALL_HEADS = (
    "\n[heads.upos]\ncasing = 8\n\n[heads.xpos]\nweight = 0.5\n\n[heads.feats]\nhidden = 16\n"
    "\n[heads.lemma]\ncasing = 8\nsuffix = 8\nhidden = 16\n"
)


# ------------------------------------------------------------------------------------------ lemmas
@settings(max_examples=300, deadline=None)
@given(st.text(max_size=12), st.text(max_size=12))
def test_the_induced_script_turns_the_form_into_the_lemma(form: str, lemma: str) -> None:
    script = induce_script(form, lemma)
    assert script.apply(form) == lemma
    assert EditScript.from_tag(script.to_tag()) == script  # the class string keeps it whole


def test_scripts_generalise_across_forms_and_casing() -> None:
    assert induce_script("running", "run") == induce_script("swimming", "swim")
    assert induce_script("The", "the") == induce_script("the", "the") == EditScript("lower", 0, "", 0, "")
    assert induce_script("Apple", "Apple").casing == "title" and induce_script("IBM", "IBM").casing == "upper"
    assert induce_script("iPhone", "iPhone") == EditScript("keep", 0, "", 0, "")
    assert induce_script("went", "go").apply("went") == "go"


def test_lemmatizer_falls_back_to_the_form() -> None:
    train = [Sentence([Token(1, "dogs", lemma="dog"), Token(2, "barked", lemma="bark")])]
    head = Lemmatizer.from_config(4, Lemmatizer.config_from_data(dict(Lemmatizer.config_defaults), train))
    assert head.writing_systems == {"LATIN"}
    cut_two = induce_script("barked", "bark").to_tag()
    assert head.value(cut_two, "walked") == "walk"
    assert head.value(cut_two, "a") == "a"  # the script cuts more than the form has
    assert head.value(cut_two, "ab") == "ab"  # or leaves nothing
    assert head.value(cut_two, "собаки") == "собаки"  # a writing system never seen in training


# ------------------------------------------------------------------------------------------ classes
def test_feats_without_features_is_a_class_and_unknown_columns_are_ignored() -> None:
    train = [Sentence([Token(1, "dogs", feats="Number=Plur", xpos="NNS"), Token(2, "the", feats="_", xpos="_")])]
    feats = FeatsTagger.from_config(4, FeatsTagger.config_from_data(dict(FeatsTagger.config_defaults), train))
    assert set(feats.tags) == {"Number=Plur", "<none>"} and IGNORE not in feats.gold_ids(train[0])
    assert feats.value("<none>", "the") == "_"
    xpos = XposTagger.from_config(4, XposTagger.config_from_data(dict(XposTagger.config_defaults), train))
    assert xpos.gold_ids(train[0]) == [0, IGNORE]
    with pytest.raises(ValueError, match="no XPOS column"):
        XposTagger.config_from_data({}, [Sentence([Token(1, "x")])])


def test_word_shapes_and_the_casing_feature() -> None:
    assert [word_shape(f) for f in ("dog", "Dog", "DOG", "iPhone", "42", "狗")] == [1, 2, 3, 4, 5, 5]
    torch.manual_seed(0)
    tagger = UposTagger(4, ["NOUN", "PROPN"], dropout=0.0, casing=3).eval()
    x = torch.randn(1, 2, 4).expand(2, 2, 4)  # (batch, 1 + n, d): the same vector for "apple" and "Apple"
    inputs = HeadInput.of(x, torch.ones(2, 2, dtype=torch.bool), [["apple"], ["Apple"]])
    scores = tagger(inputs)  # (batch, 1 + n, tags)
    assert not torch.allclose(scores[0, 1], scores[1, 1])
    assert set(tagger.export_config()) == {"tags", "dropout", "weight", "casing", "suffix", "hidden"}


def test_the_suffix_feature_sees_the_characters() -> None:
    assert word_suffixes("Dogs") == word_suffixes("dogs") and word_suffixes("dog")[3] == 0
    assert word_suffixes("walked")[:2] == word_suffixes("talked")[:2] != word_suffixes("walker")[:2]
    assert all(0 < b < SUFFIX_BUCKETS for b in word_suffixes("walked"))
    torch.manual_seed(0)
    tagger = UposTagger(4, ["VERB", "NOUN"], dropout=0.0, suffix=3).eval()
    x = torch.randn(1, 2, 4).expand(2, 2, 4)  # (batch, 1 + n, d): the same vector for both words
    scores = tagger(HeadInput.of(x, torch.ones(2, 2, dtype=torch.bool), [["running"], ["runner"]]))  # (batch, 1 + n, tags)
    assert not torch.allclose(scores[0, 1], scores[1, 1])


def test_old_upos_configs_still_build_the_same_layers() -> None:
    tagger = UposTagger.from_config(8, {"tags": ["NOUN", "VERB"], "dropout": 0.33})  # a format-2 model's table
    assert sorted(tagger.state_dict()) == ["out.bias", "out.weight"] and tagger.weight == 1.0


def test_a_column_given_for_a_sentence_is_kept_whole() -> None:
    """The fill rule: a column is the model's only where it is ``_`` for every word of the sentence; a column given
    for some words is the user's, ``_`` included (FEATS ``_`` means "no features" in an annotated file)."""
    sentence = Sentence([Token(1, "Dogs", lemma="dog", xpos="_", feats="_"), Token(2, "bark", lemma="_", xpos="VBP", feats="X=Y")])
    columns = {"lemma": ["DOG", "bark"], "xpos": ["NNS", "NN"], "feats": ["Number=Plur", "_"], "upos": ["NOUN", "VERB"]}
    out = with_tree(sentence, Parse([2, 0], ["nsubj", "root"], columns))
    assert [w.lemma for w in out.words] == ["dog", "_"]
    assert [w.xpos for w in out.words] == ["_", "VBP"]
    assert [w.feats for w in out.words] == ["_", "X=Y"]
    assert [w.upos for w in out.words] == ["NOUN", "VERB"]  # blank for every word: filled
    tagged = Sentence([Token(1, "Yeah", upos="INTJ"), Token(2, "!", upos="PUNCT")])  # no features, UPOS given
    assert [w.feats for w in with_tree(tagged, Parse([0, 1], ["root", "punct"], {"feats": ["A=B", "_"]})).words] == ["_", "_"]
    assert out.confidence is None and out.words[0].head_prob is None  # no scores, no confidence


COLUMN_VALUES = st.sampled_from(["_", "a", "b"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(COLUMN_VALUES, COLUMN_VALUES, COLUMN_VALUES), min_size=1, max_size=6))
def test_fill_rule_per_sentence_and_column(values) -> None:
    sentence = Sentence([Token(i + 1, f"w{i}", upos=u, feats=f, deps=d) for i, (u, f, d) in enumerate(values)])
    columns = {"upos": ["NOUN"] * len(values), "feats": ["Z=1"] * len(values)}
    parse = Parse([0] + [1] * (len(values) - 1), ["root"] + ["dep"] * (len(values) - 1), columns)
    out = with_tree(sentence, parse)
    for name in ("upos", "feats"):
        given = [getattr(w, name) for w in sentence.words]
        user_upos = any(w.upos != "_" for w in sentence.words) and name == "feats"  # FEATS is read with UPOS
        expected = given if user_upos or any(v != "_" for v in given) else columns[name]
        assert [getattr(w, name) for w in out.words] == expected
    # the tree changed (the input had no heads): an enhanced graph given over the old tree is cleared
    assert [w.deps for w in out.words] == ["_"] * len(values)
    assert [w.form for w in out.words] == [w.form for w in sentence.words]


def test_deps_kept_when_the_tree_is_unchanged() -> None:
    words = [Token(1, "Dogs", head=2, deprel="nsubj", deps="2:nsubj"), Token(2, "bark", head=0, deprel="root", deps="0:root")]
    assert [w.deps for w in with_tree(Sentence(words), Parse([2, 0], ["nsubj", "root"], {})).words] == ["2:nsubj", "0:root"]
    assert [w.deps for w in with_tree(Sentence(words), Parse([2, 0], ["obj", "root"], {})).words] == ["_", "_"]


# ------------------------------------------------------------------------------------------ confidence
def test_confidence_is_the_softmax_at_the_chosen_head() -> None:
    head_scores = np.array([[0.0, -np.inf, 1.0], [2.0, 0.5, -np.inf]])  # (n, 1 + n)
    scores = ArcScores(head_scores, np.array([0.9, 0.5]))
    probs = scores.head_probs(np.array([2, 0]))
    assert np.allclose(probs, [np.e / (1 + np.e), np.exp(2) / (np.exp(2) + np.exp(0.5))])
    assert scores.head_probs(np.array([1, 0]))[0] == 0.0  # an impossible head
    confidence = Calibration.from_dict(None).confidence(scores, [2, 0])  # a model saved without one: the identity
    assert confidence.head == probs.tolist() and confidence.label == [0.9, 0.5]
    assert confidence.sentence == pytest.approx((probs[0] * 0.9 + probs[1] * 0.5) / 2)
    platt = Calibration(head_scale=0.5, head_shift=1.0)
    z = 0.5 * np.log(probs[0] / (1 - probs[0])) + 1.0
    assert platt.confidence(scores, [2, 0]).head[0] == pytest.approx(1 / (1 + np.exp(-z)))
    assert 0.0 < platt.head_probs(np.array([0.0]))[0] < platt.head_probs(np.array([1.0]))[0] < 1.0


def test_span_head_scores_take_each_heads_best_parent_span() -> None:
    roots = np.array([0, 1, 1, 2])  # candidates: ROOT, two spans of word 1, one of word 2
    link = np.full((4, 4), -np.inf)  # (S, S) [parent, child]
    link[0, 1], link[2, 3], link[1, 3], link[0, 3] = -0.5, -1.0, -3.0, -2.0
    scores = link_head_scores(link, roots, np.array([1, 3]))  # word 1 chose candidate 1, word 2 candidate 3
    assert scores.shape == (2, 3)
    assert scores[0].tolist() == [-0.5, -np.inf, -np.inf]
    assert scores[1].tolist() == [-2.0, -1.0, -np.inf]  # head 1: the better of its two spans
    probs = ArcScores(scores, np.ones(2)).head_probs(np.array([0, 1]))
    assert probs[0] == 1.0 and probs[1] == pytest.approx(np.e / (1 + np.e))


def brute_ece(p: list[float], y: list[bool], bins: int) -> float:
    total = 0.0
    for b in range(bins):
        inside = [(pi, yi) for pi, yi in zip(p, y) if b / bins <= pi < (b + 1) / bins or (b == bins - 1 and pi == 1.0)]
        if inside:
            total += len(inside) / len(p) * abs(sum(yi for _, yi in inside) / len(inside) - sum(pi for pi, _ in inside) / len(inside))
    return total


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(0.0, 1.0), st.booleans()), min_size=1, max_size=60), st.integers(1, 15))
def test_ece_matches_brute_force(pairs: list[tuple[float, bool]], bins: int) -> None:
    p, y = [a for a, _ in pairs], [b for _, b in pairs]
    assert expected_calibration_error(p, y, bins) == pytest.approx(brute_ece(p, y, bins), abs=1e-9)
    assert int(reliability(p, y, bins).counts.sum()) == len(p)


def test_platt_scaling_fixes_an_over_and_underconfident_model() -> None:
    rng = np.random.default_rng(0)
    raw = rng.uniform(0.0, 1.0, 5000)  # (N,)
    truth = 1 / (1 + np.exp(-(0.5 * np.log(raw / (1 - raw)) + 1.0)))  # (N,): the real chance, flatter and higher
    right = rng.random(5000) < truth  # (N,)
    fitted = fit_logit_platt(np.log(raw / (1 - raw)), right)
    assert fitted.head_scale == pytest.approx(0.5, abs=0.1) and fitted.head_shift == pytest.approx(1.0, abs=0.15)
    assert expected_calibration_error(fitted.head_probs(raw), right) < 0.02 < expected_calibration_error(raw, right)
    assert fit_logit_platt(np.array([2.2, 2.2, -1.4]), np.ones(3, bool)).head_shift < 50  # separable: finite


# ------------------------------------------------------------------------------------------ end to end
@pytest.fixture(scope="module", params=[TINY_SPAN, TINY_BIAFFINE], ids=["span", "biaffine"])
def annotated(request, tmp_path_factory):
    """A tiny BiLSTM parser of each type trained with every head (2 epochs, seconds)."""
    root = tmp_path_factory.mktemp("annotated")
    cfg = load_config(write_config(root / "c.toml", root / "run", "bilstm", model=request.param + ALL_HEADS, epochs=2, lr=1e-2))
    trainer = Trainer(cfg)
    trainer.run()
    return trainer.model, root / "run" / "model"


def test_every_head_trains_fills_its_column_and_saves(annotated, tmp_path) -> None:
    model, folder = annotated
    assert set(model.heads) == {"upos", "xpos", "feats", "lemma"} and model.heads["xpos"].weight == 0.5
    gold = list(read_conllu(DEV))
    blank = [replace(s, words=[replace(w, lemma="_", upos="_", xpos="_", feats="_") for w in s.words]) for s in gold]
    parsed = list(parse_stream(model, blank))
    for column in ("upos", "xpos", "lemma"):
        assert all(getattr(w, column) != "_" for s in parsed for w in s.words), column
    tags = set(model.heads["feats"].tags) | {"_"}
    assert all(w.feats in tags or w.feats == "_" for s in parsed for w in s.words)
    for s in parsed:
        assert 0.0 <= s.confidence <= 1.0  # type: ignore[operator]
        assert all(0.0 <= w.head_prob <= 1.0 and 0.0 <= w.label_prob <= 1.0 for w in s.words)  # type: ignore[operator]
    lemmas_right = sum(w.lemma == g.lemma for s, t in zip(parsed, gold) for w, g in zip(s.words, t.words))
    assert lemmas_right > 0.25 * sum(map(len, gold))  # far above a guess among the scripts: it learns the common ones
    save_model(model, tmp_path / "copy")
    reloaded = list(parse_stream(load_model(tmp_path / "copy"), blank))
    assert [[(w.head, w.deprel, w.lemma, w.feats, w.xpos, w.head_prob) for w in s.words] for s in reloaded] == [
        [(w.head, w.deprel, w.lemma, w.feats, w.xpos, w.head_prob) for w in s.words] for s in parsed
    ]


def test_export_drop_head_leaves_its_column_blank_and_the_rest_unchanged(annotated, tmp_path) -> None:
    model, folder = annotated
    runner = CliRunner()
    result = runner.invoke(app, ["export", str(folder), str(tmp_path / "copy"), "--full", "--drop-head", "xpos"])
    assert result.exit_code == 0, result.output
    blank = [replace(s, words=[replace(w, lemma="_", upos="_", xpos="_", feats="_") for w in s.words]) for s in read_conllu(DEV)]
    whole, dropped = (list(parse_stream(load_model(f), blank)) for f in (folder, tmp_path / "copy"))
    assert all(w.xpos == "_" for s in dropped for w in s.words)
    keep = lambda parsed: [[(w.head, w.deprel, w.upos, w.feats, w.lemma) for w in s.words] for s in parsed]  # noqa: E731
    assert keep(dropped) == keep(whole)
    again = runner.invoke(app, ["export", str(tmp_path / "copy"), str(tmp_path / "again"), "--full", "--drop-head", "xpos"])
    assert again.exit_code == 2 and "the model's output heads are upos, feats, lemma" in again.output


def test_calibrate_fits_and_saves_the_calibration(annotated) -> None:
    _, folder = annotated
    result = CliRunner().invoke(app, ["calibrate", str(folder), str(DEV), "--write"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output.splitlines()[0])
    assert 0 <= report["head_ece_fitted"] <= 100 and report["words"] == sum(map(len, read_conllu(DEV)))
    assert load_model(folder).calibration.to_dict() == report["calibration"]


def test_calibrate_plot_without_matplotlib_is_an_option_error_before_parsing(annotated, monkeypatch) -> None:
    _, folder = annotated
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    monkeypatch.setattr("spandep.storage.model_io.load_model", lambda *a, **k: pytest.fail("parsed before the check"))
    result = CliRunner().invoke(app, ["calibrate", str(folder), str(DEV), "--plot", str(folder / "r.png")])
    assert result.exit_code == 2 and "--plot needs matplotlib" in result.output and "Traceback" not in result.output


def test_calibrate_plot_draws_a_png(annotated, tmp_path) -> None:
    pytest.importorskip("matplotlib")
    _, folder = annotated
    result = CliRunner().invoke(app, ["calibrate", str(folder), str(DEV), "--plot", str(tmp_path / "r.png")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "r.png").read_bytes().startswith(b"\x89PNG\r\n") and os.listdir(tmp_path) == ["r.png"]


def test_calibrate_plot_into_a_missing_folder_is_an_output_error_before_parsing(annotated, monkeypatch) -> None:
    _, folder = annotated
    real = importlib.util.find_spec  # the folder is checked first, with or without matplotlib (CI has none)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    monkeypatch.setattr("spandep.storage.model_io.load_model", lambda *a, **k: pytest.fail("parsed before the check"))
    result = CliRunner().invoke(app, ["calibrate", str(folder), str(DEV), "--plot", str(folder / "no" / "r.png")])
    assert result.exit_code == 4 and "does not exist" in result.output and "Traceback" not in result.output


def test_spacy_gets_tags_lemmas_morphology_and_confidence(annotated) -> None:
    spacy = pytest.importorskip("spacy")
    _, folder = annotated
    nlp = spacy.blank("en")
    nlp.add_pipe("spandep", config={"model": str(folder)})
    doc = nlp("The dogs barked. It ran  away.")
    words = [t for t in doc if not t.is_space]
    assert all(t.tag_ and t.lemma_ for t in words) and doc.has_annotation("MORPH") in (True, False)
    assert all(0 <= t._.head_prob <= 1 and 0 <= t._.label_prob <= 1 for t in words)
    assert all(t._.head_prob is None for t in doc if t.is_space)
    assert all(0 <= s._.confidence <= 1 for s in doc.sents)
    tagged = spacy.blank("en")("Dogs bark")
    tagged[0].lemma_ = "DOG"
    nlp.get_pipe("spandep")(tagged)
    assert tagged[0].lemma_ == "DOG"  # a lemma already on the Doc is kept


def test_the_lemma_lexicon_takes_the_most_frequent_lemma_of_each_form_and_upos() -> None:
    def word(form: str, upos: str, lemma: str) -> Token:
        return Token(1, form, lemma=lemma, upos=upos)

    train = [Sentence([word("saw", "VERB", "see"), word("saw", "NOUN", "saw"), word("saw", "VERB", "see"), word("saw", "VERB", "saw")]),
             Sentence([word("left", "VERB", "leave"), word("x", "_", "x"), word("y", "X", "_")])]
    assert lemma_lexicon(train) == {"VERB": {"saw": "see", "left": "leave"}, "NOUN": {"saw": "saw"}}


def test_the_lexicon_overrides_scripts_where_it_knows_the_form_with_its_predicted_upos() -> None:
    head = Lemmatizer(8, ['["keep", 0, "", 0, ""]'], lexicon={"VERB": {"saw": "see"}})
    values = [["saw", "saw", "ran"]]
    assert head.refine(values, [["saw", "saw", "ran"]], {"upos": [["VERB", "NOUN", "VERB"]]}) == [["see", "saw", "ran"]]
    assert head.refine(values, [["saw", "saw", "ran"]], {}) == values  # no UPOS head: the scripts stand
    assert Lemmatizer(8, ['["keep", 0, "", 0, ""]']).export_config().get("lexicon") is None  # models saved before it


def test_the_feats_lexicon_keeps_only_the_triples_whose_bundle_changes_the_lemma() -> None:
    def word(form: str, upos: str, feats: str, lemma: str) -> Token:
        return Token(1, form, lemma=lemma, upos=upos, feats=feats)

    obj, poss = "Case=Acc|Number=Sing|Person=3", "Number=Sing|Person=3|Poss=Yes"
    train = [Sentence([word("her", "PRON", obj, "she"), word("her", "PRON", obj, "she"), word("her", "PRON", poss, "her"),
                       word("saw", "VERB", "Tense=Past", "see"), word("x", "_", "_", "x")])]
    lexicon = lemma_lexicon(train)
    assert lexicon == {"PRON": {"her": "she"}, "VERB": {"saw": "see"}}
    assert lemma_feats_lexicon(train, lexicon) == {"PRON": {poss: {"her": "her"}}}  # the object's triple agrees with the pair


def test_the_feats_lexicon_comes_before_the_pair_lexicon_where_the_bundle_is_predicted() -> None:
    poss = "Number=Sing|Person=3|Poss=Yes"
    head = Lemmatizer(8, ['["keep", 0, "", 0, ""]'], lexicon={"PRON": {"her": "she"}}, feats_lexicon={"PRON": {poss: {"her": "her"}}})
    values, forms = [["her", "her", "Her"]], [["her", "her", "Her"]]
    upos = [["PRON", "PRON", "PRON"]]
    assert head.refine(values, forms, {"upos": upos, "feats": [[poss, "Case=Acc", poss]]}) == [["her", "she", "Her"]]
    assert head.refine(values, forms, {"upos": upos}) == [["she", "she", "Her"]]  # no FEATS head: the pair lexicon
    bare = Lemmatizer(8, ['["keep", 0, "", 0, ""]'], lexicon={"PRON": {"her": "she"}}, feats_lexicon={"PRON": {"_": {"her": "her"}}})
    assert bare.refine(values, forms, {"upos": upos}) == [["she", "she", "Her"]]  # no FEATS head is not "no features"
    assert head.export_config()["feats_lexicon"] == {"PRON": {poss: {"her": "her"}}}
    assert "feats_lexicon" not in Lemmatizer(8, ['["keep", 0, "", 0, ""]'], lexicon={}).export_config()  # models saved before it


def test_a_parse_as_one_treebank_reads_its_own_lexicons_then_its_languages() -> None:
    def word(form: str, upos: str, lemma: str) -> Token:
        return Token(1, form, lemma=lemma, upos=upos)

    nynorsk = [Sentence([word("er", "AUX", "vere"), word("ikkje", "ADV", "ikkje")])] * 3
    trains = {"no_nynorsklia": nynorsk, "no_bokmaal": [Sentence([word("er", "AUX", "være"), word("Huset", "NOUN", "hus")])]}
    shared = lemma_lexicon([s for t in trains.values() for s in t])
    config = Lemmatizer.treebank_config({"lexicon": shared, "feats_lexicon": {}}, trains)
    assert "lexicon" not in config and config["fallback"] == "language"  # the lexicon of all is not kept
    assert config["treebank_lexicons"]["no_bokmaal"]["lexicon"] == {"AUX": {"er": "være"}, "NOUN": {"Huset": "hus"}}
    head = Lemmatizer(8, ['["keep", 0, "", 0, ""]'], **config)
    values, forms, upos = [["er", "ikke", "Huset"]], [["er", "ikke", "Huset"]], {"upos": [["AUX", "ADV", "NOUN"]]}
    assert head.refine(values, forms, upos, "no_bokmaal") == [["være", "ikke", "hus"]]  # its own, then the script's
    assert head.refine(values, forms, upos, "no_nynorsklia") == [["vere", "ikke", "Huset"]]  # Bokmål is another language
    assert head.export_config()["treebank_lexicons"]["no_nynorsklia"]["lexicon"] == {"ADV": {"ikkje": "ikkje"}, "AUX": {"er": "vere"}}
    before = Lemmatizer(8, ['["keep", 0, "", 0, ""]'], lexicon=shared, feats_lexicon={}, treebank_lexicons=config["treebank_lexicons"])
    assert before.refine(values, forms, upos, "no_nynorsklia") == [["vere", "ikke", "hus"]]  # a folder written before: all's
    assert before.refine(values, forms, upos) == [["vere", "ikke", "hus"]]  # no treebank named: the lexicons of all
