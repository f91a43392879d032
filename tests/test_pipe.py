"""``nlp.pipe``: batches yielded as they are parsed, in input order, in one process or several; ``load``'s options;
workers that cannot load the model stop the pool with their error."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import pytest
import torch
from conftest import DEV

import spandep
from spandep.api import Pipeline
from spandep.data.conllu import read_conllu


@pytest.fixture(scope="module")
def nlp(tiny_models) -> Pipeline:
    return spandep.load(tiny_models["biaffine"], threads=1)


ITEMS = ["Dogs bark. Cats purr.", "", ["I", "saw", "her"], *list(read_conllu(DEV))[:4], "   ", "Last one."]


def test_first_doc_comes_before_the_second_batch_is_read(nlp):
    read = []

    def texts():
        for i in range(50):
            read.append(i)
            yield f"Text number {i} is here. It has two sentences."

    docs = nlp.pipe(texts(), batch_size=4)
    assert read == []  # lazy
    first = next(docs)
    assert len(read) == 4 and first.text == "Text number 0 is here. It has two sentences." and len(first) == 2
    rest = list(docs)
    assert len(read) == 50 and [d.text for d in rest] == [f"Text number {i} is here. It has two sentences." for i in range(1, 50)]
    assert rest[-1].to_conllu() == nlp("Text number 49 is here. It has two sentences.").to_conllu()


def test_one_doc_per_item_in_order(nlp):
    docs = list(nlp.pipe(iter(ITEMS), batch_size=3))
    assert [len(d) for d in docs] == [2, 0, 1, 1, 1, 1, 1, 0, 1]
    assert [d.text for d in docs[:2]] == ["Dogs bark. Cats purr.", ""] and docs[2].text == "I saw her"
    assert docs[0][1][0].start_char == 11 and docs[2][0][0].start_char is None  # offsets into raw-text items only
    assert [d[0].data.forms for d in docs[3:7]] == [s.forms for s in ITEMS[3:7]]
    assert [d.to_conllu() for d in nlp.stream(ITEMS)] == [d.to_conllu() for d in docs]


@pytest.mark.slow
def test_processes_give_the_same_docs(nlp):
    one = list(nlp.pipe(ITEMS, batch_size=2))
    two = list(nlp.pipe(ITEMS, batch_size=2, n_process=2))
    assert [(d.text, d.to_conllu()) for d in two] == [(d.text, d.to_conllu()) for d in one]


@pytest.mark.parametrize(
    ("items", "options", "error", "message"),
    [
        ("One text.", {}, TypeError, "pipe takes an iterable of items (texts, token lists, Sentences); for one text call nlp(text)"),
        (7, {}, TypeError, "pipe takes an iterable of items"),
        ([], {"batch_size": 0}, ValueError, "batch_size must be an int in [1, 100000], not 0"),
        ([], {"batch_size": 10**9}, ValueError, "batch_size must be an int in [1, 100000], not 1000000000"),
        ([], {"n_process": "2"}, ValueError, "n_process must be an int in [1, 64], not '2'"),
        ([], {"n_process": True}, ValueError, "n_process must be an int in [1, 64], not True"),
        ([], {"n_process": 65}, ValueError, "n_process must be an int in [1, 64], not 65"),
    ],
)
def test_bad_pipe_arguments(nlp, items, options, error, message):
    with pytest.raises(error, match=re.escape(message)):
        nlp.pipe(items, **options)


def test_processes_need_a_loaded_pipeline(nlp):
    with pytest.raises(ValueError, match=re.escape("n_process > 1 needs a pipeline made by spandep.load()")):
        Pipeline(nlp.model, nlp.options).pipe(["Hi."], n_process=2)


def test_load_options(tiny_models):
    spandep.load(tiny_models["biaffine"], device="cpu", threads=1)
    assert torch.get_num_threads() == 1
    with pytest.raises(ValueError, match=re.escape("threads must be an int in [1, 1024], not 0")):
        spandep.load(tiny_models["biaffine"], threads=0)
    with pytest.raises(ValueError, match=re.escape("device must be cpu, cuda, cuda:N or auto, not 'gpu'")):  # OptionError
        spandep.load(tiny_models["biaffine"], device="gpu")
    with pytest.raises(TypeError, match="device must be a str"):
        spandep.load(tiny_models["biaffine"], device=0)  # type: ignore[arg-type]


@pytest.mark.slow
def test_workers_that_cannot_load_the_model_stop_the_pool(tmp_path, nlp):
    """A script as the README shows it (the ``__main__`` guard): a bad model path is the worker's error, at once."""
    script = tmp_path / "bad_model.py"
    script.write_text(textwrap.dedent(f"""
        import spandep
        from spandep.api import Pipeline
        from spandep.errors import ModelError
        from spandep.api import ModelSpec
        from spandep.pipeline.workers import parse_parallel
        from spandep.data.sentence import Sentence

        if __name__ == "__main__":
            bad = ModelSpec({str(tmp_path / "no-model")!r})
            try:
                list(parse_parallel(bad, [Sentence.from_tokens(["a"])] * 5, workers=2, chunk_size=1))
            except ModelError as exc:
                print("parse_parallel:", exc)
            nlp = spandep.load({str(nlp.spec.folder)!r})
            nlp.spec = bad
            try:
                list(nlp.pipe(["One.", "Two."], batch_size=1, n_process=2))
            except ModelError as exc:
                print("pipe:", exc)
    """))
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2 and all("no-model: not a spandep model folder (no config.json)" in line for line in lines)
    assert [line.split(":")[0] for line in lines] == ["parse_parallel", "pipe"]


@pytest.mark.slow
def test_a_worker_that_dies_is_an_error_naming_its_status_not_a_wait(tiny_models):
    """A worker killed midway (as the kernel kills one for memory): the caller gets one error with the exit status,
    and the other worker is stopped; nothing waits forever."""
    import signal

    from spandep.data.sentence import Sentence
    from spandep.api import ModelSpec
    from spandep.pipeline.workers import parse_chunks

    chunks = ([Sentence.from_tokens(["I", "saw", "her", "."])] * 50 for _ in range(200))
    parsed = parse_chunks(ModelSpec(tiny_models["biaffine"], threads=1), chunks, workers=2)
    next(parsed)  # both workers started and the model loaded
    workers = parsed.gi_frame.f_locals["pool"].processes
    victim = workers[1]
    victim.kill()
    with pytest.raises(RuntimeError, match=rf"a parsing worker \(pid {victim.pid}\) ended with status -{int(signal.SIGKILL)}"):
        list(parsed)
    assert [worker.exitcode is not None for worker in workers] == [True, True]  # the other one was stopped too
