"""The multilingual training pool (benchmarks/scripts/multilingual_pool.py): dev-only treebanks train on their dev less
a held-out part, a sentence of one treebank in another's test or held-out split never trains, the same sentence
trains once, v1 treebanks come out in v2; on the real data, the overlaps the data README names are gone (checked over
sentence texts); an epoch's share of each treebank is capped."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest

from benchmarks.scripts.multilingual_pool import build, held_out, main, text_key
from spandep.data.conllu import read_conllu
from spandep.data.sentence import Sentence, Token
from spandep.training.treebanks import epoch_sentences

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def sentence(text: str, deprel: str = "root") -> str:
    words = text.split()
    lines = [f"# text = {text}"] + [
        f"{i}\t{w}\t_\tNOUN\t_\t_\t{0 if i == 1 else 1}\t{deprel if i == 1 else 'dep'}\t_\t_" for i, w in enumerate(words, 1)
    ]
    return "\n".join(lines) + "\n\n"


def treebank(root: Path, name: str, **splits: list[str]) -> None:
    folder = root / name
    folder.mkdir(parents=True)
    for split, texts in splits.items():
        (folder / f"{name}-ud-{split}.conllu").write_text("".join(sentence(t) for t in texts), encoding="utf-8")


@pytest.fixture
def data(tmp_path):
    """Two Finnish treebanks as fi_tdt (dev-only) and fi_ftb (complete), a Polish pair, and a v1 treebank."""
    root = tmp_path / "data"
    dev = [f"tdt dev {i}" for i in range(10)]
    treebank(root / "devtest_only", "fi_tdt", dev=[*dev[:3], "ftb test shared", *dev[3:]], test=["tdt test"])
    treebank(root, "fi_ftb", train=["ftb train", "tdt dev 1", "tdt dev 9"], dev=["ftb dev", "tdt dev 2 ．"], test=["ftb test shared", "ftb test 2"])
    treebank(root / "devtest_only", "pl_pdb", dev=["both", "pdb only", "x", "y", "z"], test=["pdb test"])
    treebank(root / "devtest_only", "pl_lfg", dev=["both", "lfg only", "a", "b", "c"], test=["lfg test"])
    treebank(root, "kk_ktb_v1", train=["kk train"], dev=["kk dev"], test=["kk test"])
    (root / "kk_ktb_v1" / "kk_ktb_v1-ud-train.conllu").write_text(sentence("kk train", "dobj"), encoding="utf-8")
    (root / "README.md").write_text("| `fi_ftb/` | Finnish | UD_Finnish-FTB @ r2.18 (UD 2.18) |\n", encoding="utf-8")
    return root


def texts(path: str) -> list[str]:
    return [s.comment("text") for s in read_conllu(path)]


def test_overlaps_between_treebanks_of_a_language_never_train(data, tmp_path):
    info = build(data, tmp_path / "pool", 0.2)
    assert set(info) == {"fi_tdt", "fi_ftb", "pl_pdb", "pl_lfg", "kk_ktb_v1"}
    tdt = info["fi_tdt"]
    assert tdt["train_split"].startswith("dev") and tdt["sentences"]["test"] == 1 and tdt["release"] is None
    assert texts(tdt["files"]["dev"]) == ["tdt dev 8", "tdt dev 9"]  # its last fifth, held out for choices
    assert "ftb test shared" not in texts(tdt["files"]["train"])  # fi_ftb's test sentence in fi_tdt's dev
    assert tdt["dropped"]["train: in another treebank's test split"] == 1
    assert texts(info["fi_ftb"]["files"]["train"]) == ["ftb train", "tdt dev 1"]  # tdt dev 9 is held out by fi_tdt
    assert info["fi_ftb"]["dropped"]["train: in another treebank's split for choices"] == 1 and info["fi_ftb"]["release"] == "2.18"
    # the same sentence with a full-width stop: fi_tdt trains on it (it has no other training text), fi_ftb's dev loses it
    assert "tdt dev 2" in texts(tdt["files"]["train"]) and texts(info["fi_ftb"]["files"]["dev"]) == ["ftb dev"]
    assert info["fi_ftb"]["dropped"]["dev: in a dev-only treebank's training part"] == 1
    pooled = texts(info["pl_lfg"]["files"]["train"]) + texts(info["pl_pdb"]["files"]["train"])
    assert pooled.count("both") == 1  # shared by pl_pdb and pl_lfg: trains once
    assert read_conllu(info["kk_ktb_v1"]["files"]["train"]).__next__().deprels == ["obj", "dep"]
    assert info["kk_ktb_v1"]["ud_version"] == 1


def test_held_out_starts_at_a_document(data):
    dev = [Sentence([Token(1, f"s{i}")], comments=["# newdoc"] if i == 17 else []) for i in range(100)]
    train, kept = held_out(dev, 0.2)
    assert [len(train), len(kept)] == [80, 20]  # no document starts within the first half of the held-out part
    dev[83].comments = ["# newdoc id = d2"]
    train, kept = held_out(dev, 0.2)
    assert [len(train), len(kept)] == [83, 17]


def test_a_text_key_ignores_spacing_and_punctuation_and_reads_multiword_tokens():
    a = next(read_conllu(Path(__file__).parent / "fixtures" / "en_ewt_excerpt.conllu"))
    plain = Sentence(a.words, extra_lines=a.extra_lines)  # no # text: the surface forms
    assert text_key(a) == text_key(plain) == re.sub(r"[\s\W_]+", "", a.comment("text"))
    assert text_key(Sentence([], comments=["# text = 北京，是首都。"])) == text_key(Sentence([], comments=["# text = 北京, 是首都."])) == "北京是首都"
    assert text_key(Sentence([], comments=["# text = * * *"])) != text_key(Sentence([], comments=["# text = ____"]))  # punctuation only


def test_the_cap_limits_a_treebanks_share_of_an_epoch():
    epoch = epoch_sentences([1000, 100, 10], 0.5, seed=3, cap=300)
    shares = [sum(lo <= i < hi for i in epoch) for lo, hi in ((0, 1000), (1000, 1100), (1100, 1110))]
    assert shares[0] == 300 and shares[1] == round(1110 * 10 / (1000**0.5 + 10 + 10**0.5)) and shares[2] > 10


@pytest.mark.skipif(not (DATA / "devtest_only" / "fi_tdt").is_dir(), reason="the treebanks of ../shared/data are not here")
def test_the_data_readme_overlaps_are_gone(tmp_path):
    only = ["fi_tdt", "fi_ftb", "pl_pdb", "pl_lfg", "ja_gsd", "ja_gsd_v1", "zh_gsd", "zh_gsd_v1"]
    manifest = tmp_path / "pool.json"
    main(["--data", str(DATA), "--out", str(tmp_path / "pool"), "--manifest", str(manifest), "--only", *only])
    pool = json.loads(manifest.read_text(encoding="utf-8"))["treebanks"]

    def spaced(path: str | Path) -> set[str]:  # the README's own reading: # text without its spaces
        return {re.sub(r"\s+", "", s.comment("text")) for s in read_conllu(path) if s.comment("text")}

    def loose(path: str | Path) -> set[str]:  # nor punctuation, any width: zh_gsd's "，" is zh_gsd_v1's ","
        return {re.sub(r"[\s\W_]+", "", unicodedata.normalize("NFKC", s.comment("text"))) for s in read_conllu(path) if s.comment("text")}

    ftb_test, tdt_dev = spaced(DATA / "devtest_only/fi_ftb/fi_ftb-ud-test.conllu.xz"), spaced(DATA / "devtest_only/fi_tdt/fi_tdt-ud-dev.conllu.xz")
    assert len(ftb_test & tdt_dev) >= 47 and not ftb_test & spaced(pool["fi_tdt"]["files"]["train"])
    pdb, lfg = spaced(pool["pl_pdb"]["files"]["train"]), spaced(pool["pl_lfg"]["files"]["train"])
    assert not pdb & lfg and not pdb & spaced(pool["pl_lfg"]["files"]["dev"]) and not lfg & spaced(pool["pl_pdb"]["files"]["dev"])
    ja_gsd = spaced(pool["ja_gsd"]["files"]["test"]) | spaced(pool["ja_gsd"]["files"]["dev"])
    assert not ja_gsd & spaced(pool["ja_gsd_v1"]["files"]["train"])
    for name in only:  # nothing trains that another treebank of the language tests or chooses on
        others = set().union(*(loose(pool[o]["files"][s]) for o in only if o != name and o[:2] == name[:2] for s in ("dev", "test")))
        assert not loose(pool[name]["files"]["train"]) & others, name
    assert pool["zh_gsd"]["sentences"]["train"] >= 400 and pool["ja_gsd"]["sentences"]["train"] >= 400  # the UD 2 ones train


@pytest.mark.skipif(not DATA.is_dir(), reason="needs ../shared/data")
def test_the_pool_catalogue_names_every_language_once_and_every_treebank(tmp_path, monkeypatch, capsys):
    """pool_catalogue.py gives each treebank of the pool without a model of its own one line of the multilingual
    folder: a language's default treebank by its ISO code (the catalogue's ``find``), the others by treebank; one
    without a trained tokenizer in the folder is left out; the tokenizer and card of one another folder serves are
    removed from the folder, the others kept."""
    from benchmarks.scripts import pool_catalogue
    from benchmarks.suite.systems import pool_entries
    from spandep.data.languages import LANGUAGES
    from spandep.storage import catalogue

    path = tmp_path / "catalogue.json"
    real = json.loads(catalogue.CATALOGUE_FILE.read_text(encoding="utf-8"))
    real["models"] = {name: line for name, line in real["models"].items() if line["folder"] != "multilingual"}  # the models of their own
    path.write_text(json.dumps(real), encoding="utf-8")
    for treebank in pool_entries():  # a trained tokenizer for every treebank but one
        if treebank != "af_afribooms":
            (tmp_path / "multilingual" / "tokenizers" / treebank).mkdir(parents=True)
            (tmp_path / "multilingual" / "tokenizers" / treebank / "config.json").write_text("{}")
    for treebank in ("en_ewt", "de_gsd"):  # en_ewt has a folder of its own, de_gsd a line of this one
        (tmp_path / "multilingual" / f"card-{treebank}.json").write_text("{}")
    monkeypatch.setattr(pool_catalogue, "CATALOGUE_FILE", path)
    monkeypatch.setattr(catalogue, "CATALOGUE_FILE", path)
    monkeypatch.setattr("sys.argv", ["pool_catalogue", "multilingual"])
    before = json.loads(path.read_text(encoding="utf-8"))["models"]
    pool_catalogue.main()
    pool_catalogue.main()  # written again: the same lines, not twice
    models = catalogue.read_catalogue()[1]
    lines = {name: m for name, m in models.items() if m.folder.name == "multilingual"}
    own = {line["code"] for line in before.values()}
    assert {m.model_treebank for m in lines.values()} == set(pool_entries()) - own - {"af_afribooms"}
    assert len(models) == len(before) + len(lines) and "left out, no trained tokenizer" in capsys.readouterr().out
    assert all(m.code == m.model_treebank and m.treebank.startswith("UD_") for m in lines.values())
    for lang in LANGUAGES:  # every language loads by its code: its own model, else the pool's line of its default treebank
        found = catalogue.find(lang.code, models)
        assert (found is None) if lang.code == "af" else (found is not None and found.code == lang.treebank), lang.code
    assert catalogue.find("de", models).name == "de" and catalogue.find("es_gsd", models).model_treebank == "es_gsd"
    assert len({m.language for m in models.values()}) >= 55
    assert [m.name for m in models.values()][: len(before)] == list(before)  # the lines before kept, in order
    left = {p.name for p in (tmp_path / "multilingual" / "tokenizers").iterdir()}
    assert left == set(pool_entries()) - own - {"af_afribooms"} and "en_ewt" in own
    assert not (tmp_path / "multilingual" / "card-en_ewt.json").exists() and (tmp_path / "multilingual" / "card-de_gsd.json").is_file()
    before_served = path.read_text(encoding="utf-8")
    monkeypatch.setattr("sys.argv", ["pool_catalogue", "multilingual", "--served"])  # what export_pool.sh cuts the folder to
    pool_catalogue.main()
    assert capsys.readouterr().out.split() == [t for t in pool_entries() if t not in own] and path.read_text(encoding="utf-8") == before_served
