"""Every bound on what comes from outside (a user, a file, a client), in one place.

Each :class:`Limit` has a name, the values it allows (a :class:`~spandep.checks.Range`) and one line saying what it
bounds; a value out of it is one line naming the limit (the command line exits 2, the service answers 400 or 413).
docs/limits.md lists them all (``tests/test_limits.py`` keeps that table equal to :data:`LIMITS`).
"""

from __future__ import annotations

from dataclasses import dataclass

from spandep.checks import Range

__all__ = ["LIMITS", "Limit", "check_counts", "limit"]


@dataclass(frozen=True)
class Limit:
    """A bound: ``name`` (as the option or field it bounds is spelt), ``allowed`` and ``what`` it bounds and why."""

    name: str
    allowed: Range
    what: str

    @property
    def high(self) -> float:
        return self.allowed.high

    @property
    def from_one(self) -> Range:
        """The allowed ints from 1 up: for a count whose 0 (torch's default threads on the command line) is no
        value where it is given (the Python API, Ray, the tokenizer's training)."""
        return Range(1, self.high)

    def problem(self, value: object, label: str | None = None) -> str | None:
        """"LABEL must be an int in [1, 64], not 1000000000" (``label`` defaults to the name), or ``None``."""
        return self.allowed.problem(label or self.name, value)


LIMITS: dict[str, Limit] = {
    lim.name: lim
    for lim in (
        # inference settings (CLI options, spandep.load(), config [inference], the service's fields)
        Limit("k", Range(1, 64), "span models: spans proposed per word (memory and time grow with k per word)"),
        Limit("lam", Range(0, 1000, integer=False), "span models: weight of link scores against span scores"),
        Limit("arc_weight", Range(0, 1000, integer=False), "span models: weight of the word head's arc scores"),
        Limit("prune", Range(0, 1, integer=False), "span models: a word's proposed spans after its best are kept only at this share of its probability or more (0: all k)"),
        Limit("batch_tokens", Range(1, 50_000), "padded words per model batch (memory grows with it)"),
        # input read from a file, standard input or a request
        Limit("line_chars", Range(1, 1_000_000), "characters in one line of any text input; a longer line is an error after reading that many"),
        Limit("token_chars", Range(1, 4096), "characters in one token or word"),
        Limit("sentence_words", Range(1, 100_000), "words in one sentence given to spandep parse or the API"),
        # reading raw text (spandep parse, the API, the service): memory stays bounded on any input
        Limit("paragraph_chars", Range(1, 1_000_000), "raw text: characters of a paragraph tokenized as one; a longer one is cut after the line that reaches this many, and its sentence going on over that line end is ended there (no character is lost)"),
        # numbers given on the command line (spandep parse, tune, benchmark-speed, train, train-tokenizer)
        Limit("threads", Range(0, 1024), "torch CPU threads of a command, per process (0: torch's default)"),
        Limit("workers", Range(1, 64), "parser processes of spandep parse --workers (each holds a model in memory)"),
        Limit("runs", Range(1, 1000), "timed runs of spandep benchmark-speed"),
        Limit("calibrate_files", Range(1, 1000), "DEV files of one spandep calibrate (a model of several treebanks: one per --treebank)"),
        Limit("prior_words", Range(0, 10_000_000, integer=False), "spandep calibrate --prior-words: how many words the pooled mapping weighs in each treebank's own"),
        Limit("warmup", Range(0, 1000), "untimed warm-up runs of spandep benchmark-speed"),
        Limit("sweep_values", Range(1, 64), "values in one list of spandep tune (--ks, --lams, --arc-weights; the sweep runs every combination)"),
        Limit("within", Range(0, 100, integer=False), "spandep tune --within: LAS points below the best"),
        Limit("epochs", Range(1, 100_000), "epochs of spandep train and train-tokenizer (--epochs, and --patience of train-tokenizer)"),
        Limit("lr_decay_patience", Range(0, 100_000), "spandep train-tokenizer --lr-decay-patience: epochs (0: never)"),
        Limit("max_train_sentences", Range(0, 100_000_000), "spandep train --max-train-sentences"),
        Limit("tokenizer_size", Range(1, 4096), "spandep train-tokenizer --embedding and --hidden"),
        Limit("tokenizer_layers", Range(1, 16), "spandep train-tokenizer --layers"),
        Limit("tokenizer_window", Range(1, 100_000), "spandep train-tokenizer --window: characters per training piece"),
        Limit("tokenizer_batch", Range(1, 100_000), "spandep train-tokenizer --batch-size: pieces per batch"),
        Limit("tokenizer_min_batches", Range(0, 10_000), "spandep train-tokenizer --min-batches: batches an epoch makes at least (0: one pass)"),
        Limit("tokenizer_lr", Range(0, 10, integer=False, open_low=True), "spandep train-tokenizer --lr"),
        Limit("heads_lr", Range(0, 10, integer=False, open_low=True), "spandep train-heads --lr"),
        Limit("head_setting", Range(0, 4096, integer=False), "spandep train-heads --set HEAD.KEY=VALUE: a head's dimension, weight or dropout"),
        Limit("seed", Range(0, 4_294_967_295), "random seeds (spandep train-tokenizer --seed): what numpy takes"),
        # the Python API and the integrations (spandep.load(threads=), Pipeline.pipe, Ray's parse_dataset)
        Limit("pipe_batch", Range(1, 100_000), "items read and parsed together by Pipeline.pipe (batch_size) and by a Ray actor (batch_size)"),
        Limit("ray_actors", Range(1, 10_000), "parser actors of the Ray integration (parse_dataset actors), each holding a model"),
        # spandep serve: each request, and every option of the command (docs/serve.md, "Limits")
        Limit("max_bytes", Range(1, 10_000_000), "spandep serve --max-bytes: bytes of a request's data (413 past it)"),
        Limit("max_sentence_words", Range(1, 5000), "spandep serve --max-sentence-words: words in one sentence of a request (413 past it)"),
        Limit("max_sentences", Range(1, 1_000_000), "spandep serve --max-sentences: sentences in one request (413 past it)"),
        Limit("max_words", Range(1, 1_000_000), "spandep serve --max-words: words in one request (413 past it)"),
        Limit("max_queue", Range(1, 10_000), "spandep serve --max-queue: requests waiting for the worker (503 past it)"),
        Limit("batch_words", Range(1, 100_000), "spandep serve --batch-words: words (a sentence counts one more) the worker takes at a time, the most a request waits for another's"),
        Limit("batch_wait_ms", Range(0, 10_000, integer=False), "spandep serve --batch-wait-ms: how long a batch waits for more requests"),
        Limit("timeout", Range(0, 3600, integer=False, open_low=True), "spandep serve --timeout: seconds from a request's arrival to its answer (504 past it; its work stops)"),
        Limit("read_timeout", Range(0, 600, integer=False, open_low=True), "spandep serve --read-timeout: seconds a connection has to send a whole request (closed past it)"),
        Limit("idle_timeout", Range(0, 600, integer=False, open_low=True), "spandep serve --idle-timeout: seconds a kept-alive connection may wait between requests"),
        Limit("max_connections", Range(1, 100_000), "spandep serve --max-connections: open connections (below the open-file limit; past it the oldest idle one is closed)"),
        Limit("port", Range(0, 65535), "spandep serve --port (0: any free port)"),
        # compressed input (gzip, xz, bzip2: data/compression.py), wherever a file or request is read
        Limit("compressed_ratio", Range(1, 1000), "compressed input: decompressed bytes per compressed byte, checked once 1 MiB is out (UD treebanks: 5 to 15; a decompression bomb: thousands)"),
        # tokenizer training on typographic variants (issue 47)
        Limit("tokenizer_augment", Range(0, 1, integer=False), "spandep train-tokenizer --augment: share of training sentences rewritten into typographic and casing variants each epoch (0: none)"),
        # tokenizer features for scripts without spaces (issue 47, tokenization/features.py)
        Limit("tokenizer_ngram_buckets", Range(0, 4_194_304), "spandep train-tokenizer --ngram-buckets: hash buckets of the character bigrams and trigrams (0: none)"),
        Limit("tokenizer_lexicon_lengths", Range(0, 32), "spandep train-tokenizer --lexicon-lengths: word-length buckets of the training-word lexicon flags (0: none); words up to 32 characters"),
        Limit("tokenizer_dictionary_words", Range(1, 10_000_000), "spandep train-tokenizer --dictionary: words of the dictionary file (kept in the tokenizer's folder)"),
        # tokenizer encoder features (issue 47, tokenization/encoder_features.py)
        Limit("tokenizer_encoder_layers", Range(1, 64), "spandep train-tokenizer --encoder-layers: the first layers of the --encoder read for its features (at most the encoder's own)"),
    )
}


def limit(name: str) -> Limit:
    """The limit called ``name`` (a ``KeyError`` for a name not in :data:`LIMITS`: a bug)."""
    return LIMITS[name]


def check_counts(*counts: tuple[str, object, str]) -> None:
    """A ``ValueError`` for the first ``(name, value, limit name)`` whose value is not an int from 1 to the high end
    of that limit (:attr:`Limit.from_one`): the counts of the Python API and the integrations."""
    for name, value, bound in counts:
        problem = limit(bound).from_one.problem(name, value)
        if problem:
            raise ValueError(problem)
