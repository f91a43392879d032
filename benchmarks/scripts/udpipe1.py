"""UDPipe 1 as a peer, trained here and scored end to end on the same raw text as spandep.

    OMP_NUM_THREADS=1 .venv/bin/python -m benchmarks.scripts.udpipe1 cs_cltt en_ewt [--runs runs/udpipe1] [--data ../shared/data]

A treebank is a folder of the data with ``*-ud-{train,dev,test}.conllu`` files, plain or compressed (``.conllu.xz``).
UDPipe reads plain text only: a compressed split is decompressed (``spandep.data.reading.open_input``) into
``RUNS/<treebank>/<split>.conllu`` first. A UD v1 treebank (a folder named ``*_v1``, ``spandep.data.udv1.named_v1``)
is converted to v2 there, all three splits, as the multilingual pool is (``benchmarks.scripts.multilingual_pool``):
UDPipe is trained on v2 relations and scored against the v2 gold (``gold_labels`` in the result file says so).

For each treebank: train ``ufal.udpipe``'s ``morphodita_parsito`` model (tokenizer, tagger, parser; :data:`SETTINGS`)
on its train split with dev as heldout into ``RUNS/<treebank>.udpipe``, unless that file exists (written under a
temporary name, then renamed; training is not resumable, so an interrupted one starts again). UDPipe's training
output goes to ``RUNS/<treebank>.log``, its wall-clock minutes to ``RUNS/<treebank>.train.json``.

Then the test split is parsed twice and each output (``RUNS/<treebank>__<mode>.conllu``) is scored against the gold
test file by ``spandep.evaluation.conll18`` (the scorer of ``spandep evaluate``):

- ``raw``: the raw text of the split (``spandep.tokenization.corpus.raw_text``, the text spandep's tokenizer reads:
  paragraphs separated by a blank line, which UDPipe's tokenizer also takes as a paragraph break), through
  UDPipe's tokenizer, tagger and parser. Its tokens must spell the text's non-whitespace characters (the scorer
  needs it); a run where they do not stops with the count of differing characters.
- ``gold``: the gold test file with every column but ID and FORM blanked (MISC keeps only ``SpaceAfter=No``;
  multiword-token lines kept, empty nodes dropped), through UDPipe's tagger and parser.

Speed: the whole pipeline (input string to CoNLL-U string) on one thread, model load excluded, after one warm-up
run; words and sentences are the gold test file's; the 1-minute load average after the run is recorded (other
jobs on the machine slow it). One result file per treebank and mode:
``benchmarks/results/peers/udpipe1/<treebank>__<mode>.json`` (schema ``spandep-peer/1``).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import sys
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from dataclasses import replace
from difflib import SequenceMatcher
from importlib import metadata
from pathlib import Path
from typing import Any

from ufal import udpipe

from benchmarks.scripts.multilingual_pool import read as read_v2
from benchmarks.scripts.multilingual_pool import split_file as released_file
from benchmarks.suite.record import checkout, machine, write_result
from benchmarks.suite.systems import DATA, GOLD_LABELS, REPO
from spandep.data.conllu import read_conllu, write_conllu
from spandep.data.reading import open_input
from spandep.data.udv1 import named_v1
from spandep.evaluation.conll18 import evaluate_conll18
from spandep.tokenization.corpus import gold_tokens, raw_text, read_paragraphs

SCHEMA = "spandep-peer/1"
RESULTS = REPO / "benchmarks" / "results" / "peers" / "udpipe1"
SPLITS = ("train", "dev", "test")
REQUIRED = (
    "system", "udpipe_version", "treebank", "split", "mode", "conll18", "words", "sentences", "seconds",
    "words_per_s", "sentences_per_s", "train_minutes", "model_bytes", "settings", "command", "machine", "git_commit",
    "date",
)
# UDPipe 1's option strings for its three components (its defaults spelled out, iterations as in the recipe of
# ../shared/benchmarks/peers.md); the heldout (dev) split drives early stopping.
SETTINGS = {
    "method": "morphodita_parsito",
    "tokenizer": "dimension=24;epochs=30;early_stopping=1",
    "tagger": "models=2;iterations=20",
    "parser": (
        "iterations=10;transition_system=projective;transition_oracle=dynamic;embedding_form=50;"
        "embedding_upostag=20;embedding_feats=20;embedding_deprel=20;embedding_xpostag=0;embedding_lemma=0"
    ),
}
_SPACE = re.compile(r"\s+")


def version() -> str:
    """UDPipe's library version, and the ``ufal.udpipe`` package's (its Python bindings) in brackets."""
    v = udpipe.Version.current()
    return f"{v.major}.{v.minor}.{v.patch} (ufal.udpipe {metadata.version('ufal.udpipe')})"


def training_text(path: Path) -> str:
    """A training CoNLL-U file as UDPipe reads it. A sentence without ``# text`` gets the text spandep's raw text has
    for it (``tokenization.corpus``: zh_gsd_v1 has none, and its rebuilt text puts no space between Chinese
    characters; kk_ktb_v1 has none either) and ``SpaceAfter=No`` on each word outside a multiword token that no space
    follows there (a multiword token's range line already says, as the text is built from it): else UDPipe's tokenizer
    learns that every token ends at a space and never splits unspaced text."""
    sentences = list(read_conllu(path))
    if all(s.comment("text") is not None for s in sentences):
        return path.read_text(encoding="utf-8")
    paragraphs = read_paragraphs(path)
    spans = [spans for paragraph in paragraphs for spans in paragraph.sentences]
    texts = [paragraph.text for paragraph in paragraphs for _ in paragraph.sentences]
    rebuilt = []
    for sentence, tokens, text in zip(sentences, spans, texts):
        if sentence.comment("text") is not None:
            rebuilt.append(sentence)
            continue
        words, at = list(sentence.words), 0  # at: the token's first word
        for span, token in zip(tokens, gold_tokens(sentence)):
            joined = span.end < len(text) and not text[span.end].isspace()
            if span.words:  # a multiword token: its SpaceAfter is its range line's, kept as read
                if joined == token.space_after:
                    raise ValueError(f"{path}:{sentence.line}: no space follows a multiword token in the rebuilt text, and it lacks SpaceAfter=No")
                at += len(span.words)
            else:
                words[at] = replace(words[at], misc="SpaceAfter=No" if joined else "_")
                at += 1
        body = text[tokens[0].start : tokens[-1].end]
        rebuilt.append(replace(sentence, words=words, comments=[*sentence.comments, f"# text = {body}"]))
    out = io.StringIO()
    write_conllu(rebuilt, out)
    return out.getvalue()


def read_sentences(path: Path) -> udpipe.Sentences:
    """A CoNLL-U file as UDPipe sentences (its training input, :func:`training_text`)."""
    reader = udpipe.InputFormat.newConlluInputFormat()
    reader.setText(training_text(path))
    sentences, error = udpipe.Sentences(), udpipe.ProcessingError()
    sentence = udpipe.Sentence()
    while reader.nextSentence(sentence, error):
        sentences.push_back(sentence)
        sentence = udpipe.Sentence()
    if error.occurred():
        raise RuntimeError(f"{path}: {error.message}")
    return sentences


@contextlib.contextmanager
def stderr_to(log: Path) -> Iterator[None]:
    """Send file descriptor 2 (where UDPipe's C++ trainer reports) to ``log`` while the block runs."""
    sys.stderr.flush()
    saved = os.dup(2)
    with log.open("w", encoding="utf-8") as fh:
        os.dup2(fh.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)


def released(data: Path, treebank: str) -> dict[str, Path]:
    """The released train, dev and test files of ``treebank`` under the data folder ``data``."""
    files = {split: released_file(data / treebank, split) for split in SPLITS}
    missing = [split for split, path in files.items() if path is None]
    if missing:
        raise SystemExit(f"udpipe1: {data / treebank} has no {'/'.join(missing)} split (*-ud-<split>.conllu[.xz])")
    return files  # type: ignore[return-value]


def split_files(treebank: str, runs: Path, data: Path) -> dict[str, Path]:
    """The plain-text v2 CoNLL-U file of each split of ``treebank``: the released one where it is plain and v2, else
    ``runs/<treebank>/<split>.conllu`` (decompressed, and converted to v2 for a v1 treebank; written once)."""
    files, v1 = released(data, treebank), named_v1(treebank)
    if not v1 and all(path.suffix == ".conllu" for path in files.values()):
        return files
    plain = {split: runs / treebank / f"{split}.conllu" for split in SPLITS}
    for split, path in files.items():
        if plain[split].is_file():
            continue
        plain[split].parent.mkdir(parents=True, exist_ok=True)
        tmp = plain[split].with_name(f".{split}.conllu.tmp")
        if v1:
            with tmp.open("w", encoding="utf-8") as out:
                write_conllu(read_v2(path, v1=True), out)
        else:
            with open_input(path) as fh:
                tmp.write_bytes(fh.read())
        tmp.replace(plain[split])
    return plain


def train(treebank: str, runs: Path, data: Path) -> Path:
    """``runs/<treebank>.udpipe``, trained unless it exists (atomically: a temporary name, then a rename)."""
    model = runs / f"{treebank}.udpipe"
    if model.is_file():
        return model
    runs.mkdir(parents=True, exist_ok=True)
    print(f"{treebank}: training UDPipe 1 into {model}", flush=True)
    started = time.perf_counter()
    with stderr_to(runs / f"{treebank}.log"):
        error = udpipe.ProcessingError()
        train_set, dev_set = (read_sentences(split_files(treebank, runs, data)[split]) for split in ("train", "dev"))
        blob = udpipe.Trainer.train(
            SETTINGS["method"], train_set, dev_set, SETTINGS["tokenizer"], SETTINGS["tagger"], SETTINGS["parser"], error
        )
    if error.occurred():
        raise RuntimeError(f"{treebank}: UDPipe training failed: {error.message}")
    minutes = (time.perf_counter() - started) / 60
    tmp = model.with_name(f".{model.name}.tmp")
    tmp.write_bytes(blob)
    tmp.replace(model)
    (runs / f"{treebank}.train.json").write_text(
        json.dumps({"train_minutes": round(minutes, 2), "udpipe_version": version(), "settings": SETTINGS}, indent=2)
        + "\n", encoding="utf-8",
    )
    return model


def blank_gold(path: Path) -> str:
    """The gold CoNLL-U with every column but ID and FORM set to ``_`` (MISC keeps ``SpaceAfter=No``); empty
    nodes are dropped."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        cols = line.split("\t")
        if len(cols) != 10:
            out.append(line)
        elif "." not in cols[0]:
            misc = "SpaceAfter=No" if "SpaceAfter=No" in cols[9].split("|") else "_"
            out.append("\t".join([cols[0], cols[1], *["_"] * 7, misc]))
    return "\n".join(out) + "\n"


def changed_characters(text: str, conllu: str) -> int:
    """How many non-whitespace characters of ``text`` the tokens of ``conllu`` do not spell (0: all kept)."""
    forms, inside = [], 0  # inside: the last word ID of the multiword token being read
    for line in conllu.splitlines():
        cols = line.split("\t")
        if len(cols) != 10 or "." in cols[0]:
            inside = 0 if not line else inside
            continue
        if "-" in cols[0]:
            inside = int(cols[0].split("-")[1])
            forms.append(cols[1])
        elif int(cols[0]) > inside:
            forms.append(cols[1])
    spelled, expected = _SPACE.sub("", "".join(forms)), _SPACE.sub("", text)
    if spelled == expected:
        return 0
    blocks = SequenceMatcher(None, expected, spelled, autojunk=False).get_matching_blocks()
    return max(len(expected), len(spelled)) - sum(b.size for b in blocks)


def timed(pipeline: udpipe.Pipeline, text: str) -> tuple[str, float]:
    """The pipeline's output for ``text`` and its wall-clock seconds, after one warm-up run."""
    error = udpipe.ProcessingError()
    pipeline.process(text, error)
    started = time.perf_counter()
    output = pipeline.process(text, error)
    seconds = time.perf_counter() - started
    if error.occurred():
        raise RuntimeError(f"UDPipe failed: {error.message}")
    return output, seconds


def measure(treebank: str, mode: str, model: udpipe.Model, runs: Path, data: Path) -> dict[str, Any]:
    """Parse and score the test split of ``treebank`` in ``mode`` (``raw`` or ``gold``): the result's fields."""
    test = split_files(treebank, runs, data)["test"]
    if mode == "raw":
        text = raw_text(read_paragraphs(test))
        pipeline = udpipe.Pipeline(model, "tokenize", udpipe.Pipeline.DEFAULT, udpipe.Pipeline.DEFAULT, "conllu")
    else:
        text = blank_gold(test)
        pipeline = udpipe.Pipeline(model, "conllu", udpipe.Pipeline.DEFAULT, udpipe.Pipeline.DEFAULT, "conllu")
    output, seconds = timed(pipeline, text)
    if mode == "raw" and (changed := changed_characters(text, output)):
        raise RuntimeError(f"{treebank}: UDPipe's tokens do not spell the raw text ({changed} characters differ)")
    pred = runs / f"{treebank}__{mode}.conllu"
    pred.write_text(output, encoding="utf-8")
    gold = list(read_conllu(test))
    report = evaluate_conll18(gold, list(read_conllu(pred)), gold_source=str(test), system_source=str(pred))
    conll18 = {name: score.to_dict() for name, score in report.metrics()}
    words, sentences = len([w for s in gold for w in s.words]), len(gold)
    return {
        "conll18": conll18, "words": words, "sentences": sentences, "seconds": round(seconds, 3),
        "words_per_s": round(words / seconds, 1), "sentences_per_s": round(sentences / seconds, 1),
        "load_average_1min": os.getloadavg()[0],  # other work on the machine slows the timed run
        "gold_lemmas": any(w.lemma != "_" for s in gold for w in s.words),  # False: Lemmas and BLEX compare "_" with "_"
    }


def run(treebank: str, runs: Path, data: Path, command: str, provenance: dict[str, Any]) -> None:
    """Train (unless done) and measure one treebank, writing its two result files (``provenance``: the checkout's
    commit and state when the command started, before it wrote any result file)."""
    model_path = train(treebank, runs, data)
    trained = json.loads((runs / f"{treebank}.train.json").read_text(encoding="utf-8"))
    model = udpipe.Model.load(str(model_path))
    if model is None:
        raise RuntimeError(f"cannot load {model_path}")
    for mode in ("raw", "gold"):
        result = {
            "system": "udpipe1", "udpipe_version": version(), "treebank": treebank, "split": "test", "mode": mode,
            **measure(treebank, mode, model, runs, data),
            "train_minutes": trained["train_minutes"], "model_bytes": model_path.stat().st_size,
            "settings": trained["settings"], "gold_labels": GOLD_LABELS[named_v1(treebank)],
            "command": command, "machine": machine(),
            **provenance, "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
        write_result(RESULTS / f"{treebank}__{mode}.json", result, schema=SCHEMA, required=REQUIRED)
        las, words_s = result["conll18"]["LAS"]["f1"], result["words_per_s"]
        print(f"{treebank} {mode}: LAS {las:.2f}, {words_s:,.0f} words/s", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("treebanks", nargs="+", help="folders of --data with train, dev and test splits")
    parser.add_argument("--runs", type=Path, default=REPO / "runs" / "udpipe1", help="models, logs and outputs")
    parser.add_argument("--data", type=Path, default=DATA, help="the treebanks' folder (default: ../shared/data)")
    args = parser.parse_args(argv)
    command = " ".join(["python -m benchmarks.scripts.udpipe1", *sys.argv[1:]])
    provenance = checkout()
    for treebank in args.treebanks:
        run(treebank, args.runs.resolve(), args.data.resolve(), command, provenance)


if __name__ == "__main__":
    main()
