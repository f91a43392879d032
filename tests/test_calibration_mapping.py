"""The calibration of head probabilities (``models/confidence.Calibration``, ``evaluation/calibration.py``): every
kind keeps the ranking of raw scores and keeps distinct scores distinct, an old Platt entry maps exactly as before,
the fits recover a known mapping, and ``spandep calibrate`` fits, chooses and saves one on a tiny model."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from spandep.cli.main import app
from spandep.errors import ModelError
from spandep.evaluation.calibration import (
    FITS, choose_kind, distinct_per_thousand, ece_floor, expected_calibration_error, fit_isotonic, fit_logit_platt, fit_pooled, log_loss,
    shrunk_targets,
)
from spandep.models.confidence import EPS, LOGIT_ISOTONIC, LOGIT_PLATT, ArcScores, Calibration, ChosenArcScores
from spandep.storage.model_io import load_model
from conftest import DEV

OLD_ENGLISH = {"head_scale": 0.24808850992568768, "head_shift": 0.05330389456538704}  # the en model's entry before the kinds


def synthetic(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Raw logits ``z (n,)`` spread as a parser's (a long confident tail, a few infinite), words right with the
    chance ``σ(0.15 · z + 0.5)``, and each word's sentence number (20 words a sentence)."""
    rng = np.random.default_rng(seed)
    z = rng.gamma(2.0, 12.0, n) - 6.0  # (n,)
    z[rng.random(n) < 0.03] = np.inf  # (n,): the words with one possible head
    chance = 1 / (1 + np.exp(-(0.15 * np.minimum(z, 60.0) + 0.5)))  # (n,)
    return z, rng.random(n) < chance, np.arange(n) // 20


@pytest.mark.parametrize("kind", list(FITS))
def test_a_fit_calibrates_a_synthetic_parser_on_words_it_did_not_see(kind: str) -> None:
    z, right, _ = synthetic(20000, 0)
    fitted = FITS[kind](z[:10000], right[:10000])
    mapped = fitted.from_logits(z[10000:])  # (10000,)
    assert fitted.kind == kind
    assert expected_calibration_error(mapped, right[10000:]) < 0.02 < expected_calibration_error(1 / (1 + np.exp(-z[10000:])), right[10000:])
    assert distinct_per_thousand(mapped) >= 100  # no plateau: the old mapping had 1 value for most of these words
    assert log_loss(mapped, right[10000:]) < log_loss(np.full(10000, right[:10000].mean()), right[10000:])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.floats(-40, 80), st.booleans()), min_size=2, max_size=200),
    st.lists(st.floats(-1e3, 1e3), min_size=2, max_size=50, unique=True),
    st.sampled_from(list(FITS)),
)
def test_every_fitted_mapping_is_strictly_increasing(data: list[tuple[float, bool]], probe: list[float], kind: str) -> None:
    z, right = np.array([a for a, _ in data]), np.array([b for _, b in data])
    fitted = Calibration.from_dict(FITS[kind](z, right).to_dict())  # as saved and loaded
    grid = np.array(sorted(probe + [-np.inf, np.inf]))  # (P,)
    mapped = fitted.from_logits(grid)  # (P,)
    assert np.all((mapped >= 0) & (mapped <= 1)) and np.all(np.diff(mapped) >= 0)  # monotone everywhere
    close = np.array(sorted({round(x, 3) for x in probe if abs(x) <= 30}))  # (Q,): distinct raw scores within float64's reach
    assert np.all(np.diff(fitted.from_logits(close)) > 0)  # distinct raw scores, distinct probabilities


def test_logits_read_in_log_space_keep_what_probabilities_lose() -> None:
    head_scores = np.array([[0.0, 40.0, -np.inf], [0.0, -np.inf, 45.0], [-np.inf, 3.0, 1.0]])  # (n, 1 + n)
    scores = ArcScores(head_scores, np.ones(3))
    heads = np.array([1, 2, 1])
    assert scores.head_probs(heads)[:2].tolist() == [1.0, 1.0]  # float64 cannot tell these two apart
    assert scores.head_logits(heads) == pytest.approx([40.0, 45.0, 2.0])  # the third: logit(e³ / (e³ + e¹))
    assert scores.head_logits(np.array([1, 2, 0])).tolist()[2] == -np.inf  # an impossible head
    assert ArcScores(np.array([[0.0, -np.inf]]), np.ones(1)).head_logits(np.array([0])).tolist() == [np.inf]  # the only head
    z, right, _ = synthetic(4000, 1)
    for kind, fit in FITS.items():
        probs = Calibration.from_dict(fit(z, right).to_dict()).confidence(scores, [1, 2, 1]).head
        assert probs[0] < probs[1] < 1.0, kind  # 0.9999 and 0.99999 stay distinct, and so do these
    saturated = Calibration.from_dict(OLD_ENGLISH).confidence(scores, [1, 2, 1]).head
    assert saturated[0] == saturated[1]  # the old mapping clipped p at 1 − EPS: every confident word tied


def test_chosen_arc_scores_give_the_logits_of_their_probabilities() -> None:
    chosen = ChosenArcScores(np.array([2, 0]), np.array([0.75, 1.0]), np.ones(2))
    assert chosen.head_logits(np.array([2, 0])).tolist() == pytest.approx([np.log(3.0), np.inf])


def test_an_old_platt_entry_loads_maps_and_saves_exactly_as_before() -> None:
    old = Calibration.from_dict(dict(OLD_ENGLISH))
    assert old.to_dict() == OLD_ENGLISH and Calibration.from_dict(None).to_dict() == {"head_scale": 1.0, "head_shift": 0.0}
    rng = np.random.default_rng(2)
    head_scores = np.where(rng.random((6, 7)) < 0.2, -np.inf, rng.normal(0, 8, (6, 7)))  # (n, 1 + n)
    head_scores[:, 0] = 0.0  # (n, 1 + n): every word may take ROOT
    scores, heads = ArcScores(head_scores, np.ones(6)), [0, 3, 0, 1, 5, 0]
    raw = scores.head_probs(np.array(heads))  # (n,)
    q = np.clip(raw, EPS, 1 - EPS)  # (n,): the formula of the mapping before the kinds, written out
    before = np.exp(-np.logaddexp(0.0, -(OLD_ENGLISH["head_scale"] * (np.log(q) - np.log1p(-q)) + OLD_ENGLISH["head_shift"])))
    assert old.confidence(scores, heads).head == before.tolist()  # bit for bit
    assert Calibration.from_dict(None).confidence(scores, heads).head == raw.tolist()  # no entry: the identity


@pytest.mark.parametrize("table", [
    {"kind": "temperature", "head_scale": 1.0},
    {"kind": LOGIT_PLATT, "head_scale": -0.2, "head_shift": 0.0},
    {"kind": LOGIT_ISOTONIC, "knots": [0.0, 1.0], "values": [0.6, 0.5]},
    {"kind": LOGIT_ISOTONIC, "knots": [0.0], "values": [0.5, 0.6]},
    {"kind": LOGIT_ISOTONIC, "head_scale": 1.0},
])
def test_a_calibration_that_is_not_one_is_a_model_error(table: dict) -> None:
    with pytest.raises(ModelError, match="spandep calibrate MODEL DEV --write"):
        Calibration.from_dict(table)


def test_isotonic_knots_rise_strictly_and_keep_away_from_0_and_1() -> None:
    z = np.array([-5.0, -5.0, 1.0, 2.0, 2.0, 7.0, np.inf, np.inf])
    right = np.array([False, False, True, False, True, True, True, True])
    fitted = fit_isotonic(z, right)
    assert np.all(np.diff(fitted.knots) > 0) and np.all(np.diff(fitted.values) > 0) and np.isfinite(fitted.knots).all()
    assert 0 < fitted.values[0] < 0.01 and 0.99 < fitted.values[-1] < 1
    assert fitted.from_logits(np.array([np.inf]))[0] < 1.0


def test_the_choice_is_made_on_held_out_halves_and_prefers_the_lower_log_loss() -> None:
    z, right, sentence = synthetic(6000, 3)
    bent = np.where(np.isfinite(z), np.sign(z) * np.abs(z) ** 0.3, z)  # (N,): no logistic curve of these fits well
    choice = choose_kind(bent, right, sentence)
    assert set(choice.held_out) == set(FITS)
    assert choice.kind == min(choice.held_out, key=lambda k: choice.held_out[k]["log_loss"])


def test_distinct_values_count_the_poorest_thousand_words_as_written() -> None:
    assert distinct_per_thousand(np.r_[np.linspace(0, 1, 1000), np.full(1000, 0.5)]) == 1.0
    assert distinct_per_thousand(np.array([0.12341, 0.12344, 0.9])) == 2.0  # 4 decimals, as in the output


@pytest.mark.parametrize("kind", ["span", "biaffine"])
def test_calibrate_fits_chooses_and_saves_without_changing_a_parse(tiny_models, tmp_path, kind: str) -> None:
    import shutil

    from spandep.data.conllu import read_conllu
    from spandep.pipeline.predict import parse_stream

    folder = tmp_path / "model"
    shutil.copytree(tiny_models[kind], folder)
    weights = (folder / "model.safetensors").read_bytes()
    before = list(parse_stream(load_model(folder), read_conllu(DEV)))
    result = CliRunner().invoke(app, ["calibrate", str(folder), str(DEV), "--write"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output.splitlines()[0])
    assert report["chosen"] == report["kind"] in FITS and set(report["held_out"]) == set(FITS)
    assert report["calibration"]["kind"] == report["kind"] and report["distinct_per_1000_fitted"] >= 1
    model = load_model(folder)
    assert model.calibration.to_dict() == report["calibration"] and (folder / "model.safetensors").read_bytes() == weights
    after = list(parse_stream(model, read_conllu(DEV)))
    tree = lambda parsed: [[(w.head, w.deprel, w.upos, w.lemma) for w in s.words] for s in parsed]  # noqa: E731
    assert tree(after) == tree(before)  # only the confidences change
    pairs = [(a.head_prob, b.head_prob) for s, t in zip(before, after) for a, b in zip(s.words, t.words)]
    order = sorted(pairs)  # the ranking is kept: sorted by the raw probability, the calibrated ones never fall
    assert all(b1 <= b2 for (a1, b1), (a2, b2) in zip(order, order[1:]) if a1 < a2)


def test_calibrate_with_an_unknown_kind_is_a_one_line_option_error(tiny_models) -> None:
    result = CliRunner().invoke(app, ["calibrate", str(tiny_models["span"]), str(DEV), "--kind", "temperature"])
    assert result.exit_code == 2 and "--kind must be auto or one of logit-platt, logit-isotonic" in result.output
    assert "Traceback" not in result.output


def test_a_model_of_several_treebanks_keeps_one_calibration_per_treebank() -> None:
    z, right, _ = synthetic(3000, 4)
    own = fit_isotonic(z, right)
    table = {**OLD_ENGLISH, "treebanks": {"a": own.to_dict()}}
    calibration = Calibration.from_dict(table)
    assert calibration.to_dict() == table and calibration.for_treebank("a") == own
    assert calibration.for_treebank("b").to_dict() == {**OLD_ENGLISH, "treebanks": table["treebanks"]}  # the model's own
    assert calibration.for_treebank(None) is calibration
    again = Calibration.from_dict(dict(OLD_ENGLISH)).with_treebank("a", own).with_treebank(None, fit_logit_platt(z, right))
    assert again.for_treebank("a") == own and again.kind == LOGIT_PLATT
    with pytest.raises(ModelError, match="--treebank NAME --write"):
        Calibration.from_dict({"treebanks": ["a"]})


@pytest.mark.parametrize("kind", list(FITS))
def test_a_word_weighed_twice_fits_as_the_word_given_twice(kind: str) -> None:
    z, right, _ = synthetic(2000, 5)
    z = np.where(np.isinf(z), 200.0, z)  # (2000,): finite, so that both ends count alike
    weights = np.where(np.arange(2000) % 3 == 0, 2.0, 1.0)  # (2000,)
    twice = np.arange(2000) % 3 == 0  # (2000,)
    weighed = FITS[kind](z, right, weights)
    repeated = FITS[kind](np.r_[z, z[twice]], np.r_[right, right[twice]])
    grid = np.linspace(-10, 80, 200)  # (200,)
    assert np.allclose(weighed.from_logits(grid), repeated.from_logits(grid), atol=1e-6)


def test_shrunk_targets_blend_each_word_with_the_prior_by_the_prior_words() -> None:
    z, right, _ = synthetic(400, 6)
    prior = fit_logit_platt(z, right)
    assert np.array_equal(shrunk_targets(z, right, None, 1000.0), right.astype(float))
    assert np.array_equal(shrunk_targets(z, right, prior, 0.0), right.astype(float))
    assert np.allclose(shrunk_targets(z, right, prior, 400.0), (right + prior.from_logits(z)) / 2)  # as many words as dev
    inside = np.minimum(z, 40.0)  # (400,): within the logits a fit reads as they are (FIT_LOGIT)
    pulled = fit_logit_platt(inside, shrunk_targets(inside, right, Calibration(0.05, -1.0, LOGIT_PLATT), 1e6))  # the prior outweighs dev
    assert abs(pulled.head_scale - 0.05) < 2e-3 and abs(pulled.head_shift + 1.0) < 2e-2


def test_the_pooled_mapping_weighs_each_treebank_the_same() -> None:
    (za, ra, _), (zb, rb, _) = synthetic(500, 7), synthetic(5000, 8)
    rb = rb & (np.arange(5000) % 4 != 0)  # (5000,): b's words are right less often than a's
    pooled = fit_pooled(LOGIT_PLATT, [(za, ra), (zb, rb)])
    a_ten_times = fit_logit_platt(np.r_[np.tile(za, 10), zb], np.r_[np.tile(ra, 10), rb])  # a's 500 words as many as b's
    assert abs(pooled.head_scale - a_ten_times.head_scale) < 1e-4 and abs(pooled.head_shift - a_ten_times.head_shift) < 1e-3
    assert abs(pooled.head_shift - fit_logit_platt(np.r_[za, zb], np.r_[ra, rb]).head_shift) > 0.01  # not the words pooled


def test_the_chance_ece_of_calibrated_confidences_shrinks_with_the_words() -> None:
    rng = np.random.default_rng(9)
    few, many = rng.beta(8, 2, 300), rng.beta(8, 2, 30000)  # (300,), (30000,)
    assert ece_floor(few, draws=300) == ece_floor(few, draws=300)  # seeded
    (mean_few, top_few), (mean_many, top_many) = ece_floor(few, draws=300), ece_floor(many, draws=100)
    assert mean_few <= top_few and mean_many <= top_many and mean_many < 1.0 < 3.0 < mean_few
    observed = 100 * expected_calibration_error(many, rng.random(30000) < many)
    assert observed <= ece_floor(many, draws=100, seed=1)[1] + 0.5  # calibrated: within chance
    assert 100 * expected_calibration_error(many, rng.random(30000) < many - 0.05) > top_many  # 5 points overconfident


def test_a_masked_heads_huge_logit_does_not_flatten_a_fit_on_soft_targets() -> None:
    z, right, _ = synthetic(2000, 10)
    z = np.where(np.isinf(z), 1e9, z)  # (2000,): a masked head's score, finite
    soft = np.where(right, 0.999, 0.001)  # (2000,): targets just inside (0, 1), as a shrunk fit gives
    fitted, hard = fit_logit_platt(z, soft), fit_logit_platt(z, right)
    assert fitted.head_scale > 0.5 * hard.head_scale  # not MIN_SCALE with a shift of −1,000
