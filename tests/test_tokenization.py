"""Raw text → sentences of tokens: losslessness of the rule fallback and of a trained tokenizer over arbitrary
Unicode, multiword-token expansion, ``# text``, SpaceAfter and TokenRange, and ``spandep train-tokenizer``."""

from __future__ import annotations

import functools
import io
import json
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from conftest import DEV, TRAIN
from spandep.cli.main import app
from spandep.data.conllu import format_sentence, read_conllu
from spandep.data.sentence import Sentence
from spandep.tokenization import RuleTokenizer, paragraphs, token_ranges
from spandep.tokenization.corpus import gold_tokens, lossless_problems, raw_text, read_paragraphs
from spandep.tokenization.model import CharTagger, CharVocab, NetConfig
from spandep.tokenization.mwt import MwtLexicon
from spandep.tokenization.selection import gold_sentences
from spandep.tokenization.text import Paragraph
from spandep.tokenization.trained import Thresholds, TrainedTokenizer, load_tokenizer, tokenizer_for

RULES = RuleTokenizer()

# Hand-written sentences (no treebank text) with French-style multiword tokens and a token holding a space.
MWT_CONLLU = """# newpar
# text = Il va au marché du village.
1\tIl\t_\t_\t_\t_\t_\t_\t_\t_
2\tva\t_\t_\t_\t_\t_\t_\t_\t_
3-4\tau\t_\t_\t_\t_\t_\t_\t_\t_
3\tà\t_\t_\t_\t_\t_\t_\t_\t_
4\tle\t_\t_\t_\t_\t_\t_\t_\t_
5\tmarché\t_\t_\t_\t_\t_\t_\t_\t_
6-7\tdu\t_\t_\t_\t_\t_\t_\t_\t_
6\tde\t_\t_\t_\t_\t_\t_\t_\t_
7\tle\t_\t_\t_\t_\t_\t_\t_\t_
8\tvillage\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No
9\t.\t_\t_\t_\t_\t_\t_\t_\t_

# text = Du pain coûte 1 000 euros.
1-2\tDu\t_\t_\t_\t_\t_\t_\t_\t_
1\tDe\t_\t_\t_\t_\t_\t_\t_\t_
2\tle\t_\t_\t_\t_\t_\t_\t_\t_
3\tpain\t_\t_\t_\t_\t_\t_\t_\t_
4\tcoûte\t_\t_\t_\t_\t_\t_\t_\t_
5\t1 000\t_\t_\t_\t_\t_\t_\t_\t_
6\teuros\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No
7\t.\t_\t_\t_\t_\t_\t_\t_\t_

# newpar
# text = Il parle des enfants.
1\tIl\t_\t_\t_\t_\t_\t_\t_\t_
2\tparle\t_\t_\t_\t_\t_\t_\t_\t_
3-4\tdes\t_\t_\t_\t_\t_\t_\t_\t_
3\tde\t_\t_\t_\t_\t_\t_\t_\t_
4\tles\t_\t_\t_\t_\t_\t_\t_\t_
5\tenfants\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No
6\t.\t_\t_\t_\t_\t_\t_\t_\t_

"""

SAMPLES = [
    "search-engine", "e-mail", "snake_case", "Dr.", "Ph.D.", "www.test-site.org", "https://example.org/a?b=c.",
    "john.doe@example.com", "(mail@x.co)", "👨\u200d👩\u200d👧", "👍🏽", "看似簡單。只是二選一！", "مرحبا بالعالم", "שָׁלוֹם",
    "cafe\u0301", "co\u00adop", "a\u200bb", "\x00", "\x07x", "\x1b[0m", "\u202etxet", "...", "1 000", "l'homme", "don't",
    "\u0301", "\u200d", "\ufeff", "e.g.", "U.S.", "3.14", "10:30", "?!", "\u2029", "\ud7ff", "\U0010fffd",
]
SEPARATORS = ["", " ", "  ", "\n", "\n\n", "\t", "\r\n", "\r\n\r\n", "\u00a0", "\u2028", " \n \n ", "\x1c", "\u3000"]
TEXTS = st.lists(
    st.tuples(st.one_of(st.sampled_from(SAMPLES), st.text(max_size=12)), st.sampled_from(SEPARATORS)), max_size=25
).map(lambda parts: "".join(a + b for a, b in parts))


MWT_TOKENS = [("au", ("à", "le")), ("du", ("de", "le")), ("Du", ("De", "le")), ("des", ("de", "les"))] * 2 + [("des", ())]


def lexicon() -> MwtLexicon:
    return MwtLexicon.learn(MWT_TOKENS)


@functools.lru_cache(maxsize=None)
def tiny_tokenizer(seed: int = 0, hidden: int = 8) -> TrainedTokenizer:
    """A randomly initialised network with the characters of the EWT fixture and a small French lexicon."""
    torch.manual_seed(seed)
    vocab = CharVocab.build([p.text for p in read_paragraphs(TRAIN)], min_count=1)
    net = CharTagger(len(vocab), NetConfig(embedding=8, hidden=hidden, layers=2, dropout=0.0))
    return TrainedTokenizer(vocab, net, lexicon(), window=16, context=4)


def mwt_file(folder: Path) -> Path:
    """MWT_CONLLU with a tree (word 1 the root, the others attached to it), as the official scorer wants."""
    lines = []
    for line in MWT_CONLLU.split("\n"):
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            cols[6:8] = ["0", "root"] if cols[0] == "1" else ["1", "dep"]
        lines.append("\t".join(cols))
    path = folder / "mwt.conllu"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


class Oracle(TrainedTokenizer):
    """Reads its probabilities off gold sentences (offsets into the text it will be given)."""

    def __init__(self, gold: list[list], mwt_threshold: float = 0.5) -> None:
        super().__init__(CharVocab([]), CharTagger(3, NetConfig(4, 4, 1, 0.0)), lexicon(), Thresholds(mwt=mwt_threshold))
        self.gold = gold

    def probabilities(self, text: str, paras: list[Paragraph]) -> tuple[list[np.ndarray], np.ndarray]:
        probs = np.zeros((len(text), 3), dtype=np.float32)  # (n_chars, 3)
        for sentence in self.gold:
            for t in sentence:
                probs[t.end - 1, 0] = 1.0
                probs[t.end - 1, 2] = float(bool(t.words))
            probs[sentence[-1].end - 1, 1] = 1.0
        return [probs[a:b] for a, b in paras], self.vocab.encode(text)


def check_lossless(text: str, sentences: list[Sentence]) -> None:
    assert lossless_problems(text, sentences) == []
    for s in sentences:
        assert s.words and all(w.form and "\n" not in w.form and "\t" not in w.form for w in s.words)
        assert "\n" not in s.comment("text")


# ------------------------------------------------------------------------------------------ losslessness


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_rule_fallback_is_lossless(text):
    check_lossless(text, RULES.tokenize(text))


@settings(max_examples=150, deadline=None)
@given(TEXTS, st.integers(0, 3), st.floats(0, 1), st.floats(0, 1), st.floats(0, 1))
def test_trained_tokenizer_is_lossless(text, seed, token, sentence, mwt):
    tokenizer = tiny_tokenizer(seed).with_settings(Thresholds(token, sentence, mwt), "net")
    check_lossless(text, tokenizer.tokenize(text))


@pytest.mark.slow
@pytest.mark.parametrize("tokenizer", [RULES, tiny_tokenizer()], ids=["rules", "trained"])
def test_very_long_lines(tokenizer):
    text = ("word-" * 20_000) + " " + ("x" * 60_000) + "@" + ("é" * 30_000) + "\n" + "a. " * 20_000
    started = time.perf_counter()
    sentences = tokenizer.tokenize(text)
    # a hang bound, never reached by a linear pass however loaded the machine (a quadratic one would take hours)
    assert time.perf_counter() - started < 600
    check_lossless(text, sentences)


def test_paragraphs_are_blank_lines():
    text = "One.\nstill one\n \n\r\nTwo \u2029Three\n\n\n"
    assert [text[a:b] for a, b in paragraphs(text)] == ["One.\nstill one", "Two", "Three"]


# ------------------------------------------------------------------------------------------ the rules


@pytest.mark.parametrize(
    "text, tokens",
    [
        ("a search-engine and e-mail", ["a", "search-engine", "and", "e-mail"]),
        ("my_var = 1", ["my_var", "=", "1"]),
        ("Dr. Smith has a Ph.D. now", ["Dr.", "Smith", "has", "a", "Ph.D.", "now"]),
        ("see www.test-site.org.", ["see", "www.test-site.org", "."]),
        ("(john.doe@example.com)", ["(", "john.doe@example.com", ")"]),
        ("cafe\u0301 co\u00adop a\u200bb", ["cafe\u0301", "co\u00adop", "a\u200bb"]),
        ("Wait... what?!", ["Wait", "...", "what", "?!"]),
        ("end.Next file.txt", ["end", ".", "Next", "file.txt"]),
        ("看似簡單", ["看", "似", "簡", "單"]),
    ],
)
def test_rule_tokens(text, tokens):
    [sentence] = RULES.tokenize(text)
    assert sentence.forms == tokens


def test_rule_sentences():
    text = "Dr. Smith came. He left! \"Why?\" she asked. e.g. this stays\n\nNew paragraph 看。再"
    sentences = RULES.tokenize(text)
    assert [s.comment("text") for s in sentences] == [
        "Dr. Smith came.", "He left!", "\"Why?\" she asked. e.g. this stays", "New paragraph 看。", "再"
    ]
    assert ["# newpar" in s.comments for s in sentences] == [True, False, False, True, False]


def test_paragraph_ending_in_whitespace_gives_no_empty_token():
    [sentence] = RULES.tokenize("Hello world\n")
    assert sentence.forms == ["Hello", "world"]


def test_text_space_after_and_token_range():
    text = "Hi  there,\tfriend.\nbye"
    [sentence] = RULES.tokenize(text)
    assert sentence.comment("text") == "Hi  there, friend. bye"
    assert token_ranges(sentence) == [(0, 2), (4, 9), (9, 10), (11, 17), (17, 18), (19, 22)]
    assert [w.misc.startswith("SpaceAfter=No") for w in sentence.words] == [False, True, False, True, False, False]
    rebuilt = "".join(w.form + ("" if "SpaceAfter=No" in w.misc else " ") for w in sentence.words)
    assert rebuilt.strip() == "Hi there, friend. bye"


def test_conllu_round_trip(tmp_path):
    sentences = RULES.tokenize("Hello world. Jean-Luc's e-mail: jl@x.org!\n\nSecond paragraph")
    path = tmp_path / "out.conllu"
    path.write_text("".join(map(format_sentence, sentences)), encoding="utf-8")
    assert [s.forms for s in read_conllu(path, heads=False)] == [s.forms for s in sentences]


# ------------------------------------------------------------------------------------------ multiword tokens


def test_lexicon_expansion():
    lex = lexicon()
    assert lex.expand("au") == ("à", "le")
    assert lex.expand("Du") == ("De", "le")
    assert lex.expand("DU") == ("DE", "LE")
    assert lex.expand("zzz") == ()
    rules = MwtLexicon.learn([("farlo", ("far", "lo")), ("dirlo", ("dir", "lo")), ("don't", ("do", "n't"))] * 2)
    assert rules.expand("vederlo") == ("veder", "lo")
    assert rules.expand("DONt") == ("DO", "Nt")  # no suffix rule: "don't"'s prefix "do" before the rest
    assert rules.expand("Won't") == ("Wo", "n't")
    english = MwtLexicon.learn([("dont", ("do", "nt"))])
    assert english.expand("DONt") == ("DO", "Nt")
    assert MwtLexicon.from_json(json.loads(json.dumps(rules.to_json()))) == rules
    before = {k: v for k, v in rules.to_json().items() if k != "prefixes"}  # a lexicon learned before prefix rules
    assert MwtLexicon.from_json(before).expand("DONt") == () and MwtLexicon.from_json(before).expand("vederlo") == ("veder", "lo")


def test_prefix_rules_split_the_clitics_written_before_a_word() -> None:
    """Hebrew writes its conjunction, prepositions and article before the word: an unseen token takes the words of
    the longest prefix seen at least twice, the rest its last word."""
    hebrew = MwtLexicon.learn([("והבית", ("ו", "ה", "בית")), ("והספר", ("ו", "ה", "ספר")), ("לבית", ("ל", "בית")),
                               ("לילד", ("ל", "ילד")), ("וכלב", ("ו", "כלב"))])
    assert hebrew.expand("והרווחה") == ("ו", "ה", "רווחה")  # "וה" seen twice
    assert hebrew.expand("לספר") == ("ל", "ספר")
    assert hebrew.expand("וספר") == ()  # "ו" alone seen once
    assert hebrew.expand("וה") == ()  # nothing left for the word
    assert MwtLexicon.from_json(json.loads(json.dumps(hebrew.to_json()))) == hebrew


def test_oracle_output_matches_gold(tmp_path):
    gold_file = mwt_file(tmp_path)
    paras = read_paragraphs(gold_file)
    text = raw_text(paras)
    sentences = Oracle(gold_sentences(paras)).tokenize(text)
    check_lossless(text, sentences)
    gold = list(read_conllu(gold_file, heads=False))
    assert [s.comment("text") for s in sentences] == [s.comment("text") for s in gold]
    assert [s.forms for s in sentences] == [s.forms for s in gold]
    assert [[(t.form, t.words) for t in gold_tokens(s)] for s in sentences] == [
        [(t.form, t.words) for t in gold_tokens(s)] for s in gold
    ]
    block = format_sentence(sentences[0])
    assert "3-4\tau\t_\t_\t_\t_\t_\t_\t_\tTokenRange=6:8\n3\tà\t_" in block
    assert "1 000" in sentences[1].forms
    assert [w.misc for w in sentences[0].words][-2:] == ["SpaceAfter=No|TokenRange=19:26", "TokenRange=26:27"]


def test_oracle_scores_100_with_the_official_scorer(tmp_path):
    udeval = pytest.importorskip("udtools.udeval")
    gold_file = mwt_file(tmp_path)
    paras = read_paragraphs(gold_file)
    sentences = Oracle(gold_sentences(paras)).tokenize(raw_text(paras))
    for s in sentences:
        for w in s.words:
            w.head, w.deprel = (0, "root") if w.id == 1 else (1, "dep")
    system = udeval.load_conllu(io.StringIO("".join(map(format_sentence, sentences))), "<system>", {})
    scores = udeval.evaluate(udeval.load_conllu_file(str(gold_file)), system)
    assert [scores[m].f1 for m in ("Tokens", "Sentences", "Words")] == [1.0, 1.0, 1.0]


def test_lexicon_decision_overrides_the_network(tmp_path):
    paras = read_paragraphs(mwt_file(tmp_path))
    oracle = Oracle(gold_sentences(paras), mwt_threshold=2.0)  # the network never says "multiword"
    text = raw_text(paras)
    assert all(not s.extra_lines for s in oracle.tokenize(text))
    by_lexicon = oracle.with_settings(oracle.thresholds, "lexicon")
    assert sum(len(s.extra_lines) for s in by_lexicon.tokenize(text)) == 4


# ------------------------------------------------------------------------------------------ training


@pytest.mark.slow
def test_train_tokenizer_cli_and_resume(tmp_path):
    runner = CliRunner()
    out = tmp_path / "run"
    args = ["train-tokenizer", str(TRAIN), "--dev", str(DEV), "-o", str(out), "--embedding", "8", "--hidden", "8",
            "--layers", "1", "--window", "64"]
    result = runner.invoke(app, [*args, "--epochs", "2"])
    assert result.exit_code == 0, result.output
    assert {p.name for p in (out / "tokenizer").iterdir()} == {"config.json", "model.safetensors", "mwt.json"}
    first = json.loads((out / "record.json").read_text())
    assert [h["epoch"] for h in first["history"]] == [1, 2]
    result = runner.invoke(app, [*args, "--epochs", "3"])
    assert result.exit_code == 0, result.output
    second = json.loads((out / "record.json").read_text())
    assert second["history"][:2] == first["history"] and len(second["history"]) == 3
    tokenizer = load_tokenizer(out)  # a folder holding tokenizer/ works too
    assert isinstance(tokenizer_for(out), TrainedTokenizer)
    text = "Don't stop. We've e-mailed Dr. Smith!\n\nNew paragraph"
    check_lossless(text, tokenizer.tokenize(text))


def test_load_tokenizer_errors(tmp_path):
    from spandep.errors import ModelError

    with pytest.raises(ModelError):
        load_tokenizer(tmp_path)
    (tmp_path / "config.json").write_text('{"format": "other"}')
    with pytest.raises(ModelError, match="not a spandep tokenizer"):
        load_tokenizer(tmp_path)


def test_tokenizer_for_a_model_folder(tmp_path):
    assert isinstance(tokenizer_for(tmp_path), RuleTokenizer)


def _conllu(sentences: list[list[str]], space_after: bool = True) -> str:
    lines = []
    for k, forms in enumerate(sentences, 1):
        lines.append(f"# sent_id = {k}")
        for i, form in enumerate(forms, 1):
            misc = "_" if space_after else "SpaceAfter=No"
            lines.append(f"{i}\t{form}\t_\t_\t_\t_\t{i - 1}\t{'root' if i == 1 else 'dep'}\t_\t{misc}")
        lines.append("")
    return "\n".join(lines) + "\n"


def test_sentences_of_cjk_text_are_joined_as_chinese_is_written(tmp_path):
    """In a file written mostly in CJK characters, sentences follow each other without a space (UD's conllu_to_text
    for zh and ja), but for one between two alphanumeric non-CJK characters; any other file joins them by one."""
    cjk = tmp_path / "zh.conllu"
    cjk.write_text(_conllu([["我们", "来", "了", "。"], ["他", "说", "OK"], ["DEF", "好", "."], ["是", "的"]], False),
                   encoding="utf-8")
    (paragraph,) = read_paragraphs(cjk)
    assert paragraph.text == "我们来了。他说OK DEF好.是的"
    assert [paragraph.text[s[0].start : s[-1].end] for s in paragraph.sentences] == ["我们来了。", "他说OK", "DEF好.", "是的"]
    latin = tmp_path / "en.conllu"
    latin.write_text(_conllu([["He", "came", "."], ["我们", "."]]), encoding="utf-8")
    assert [p.text for p in read_paragraphs(latin)] == ["He came . 我们."]  # (a sentence with no # text, rebuilt)
