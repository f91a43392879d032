"""``spandep train-tokenizer TRAIN --dev DEV -o OUT``: train a tokenizer, sentence splitter and multiword-token
expander on a treebank's CoNLL-U; rerunning the same command resumes."""

from __future__ import annotations

import logging
from pathlib import Path

import typer

from spandep.checks import Range
from spandep.cli.common import bound, check_input, check_options, handle_errors
from spandep.errors import OptionError
from spandep.limits import limit


def train_tokenizer(
    train: Path = typer.Argument(..., help="Training CoNLL-U (its # text, SpaceAfter=No, multiword tokens, # newpar)."),
    dev: Path = typer.Option(..., "--dev", help="Dev CoNLL-U: early stopping and decoding settings."),
    output: Path = typer.Option(..., "--output", "-o", help="Run folder; the tokenizer is written to OUTPUT/tokenizer."),
    epochs: int = typer.Option(100, help="Most epochs."),
    patience: int = typer.Option(20, help="Stop after this many epochs without a better dev score."),
    embedding: int = typer.Option(32, help="Character embedding size."),
    hidden: int = typer.Option(64, help="LSTM size per direction."),
    layers: int = typer.Option(2, help="BiLSTM layers."),
    ngram_buckets: int = typer.Option(0, help="Hash buckets of the character bigrams and trigrams ending and starting at each character, whose embeddings are added to it (0: none; 2**16 or so for Chinese and Japanese)."),
    lexicon_lengths: int = typer.Option(0, help="Word-length buckets of the lexicon flags: for each character, whether a training word (seen twice or more) of that length starts, ends or goes on there (0: none)."),
    dictionary: Path = typer.Option(None, help="With --lexicon-lengths: a word list of the language (one word a line, its first field: a jieba-style 'word frequency tag' file works; compressed or not), read by flags of its own beside the training words' (scripts without spaces: words training never saw); kept in the tokenizer's folder."),
    encoder: str = typer.Option("", help="Encoder features: each character also reads the hidden state of the word piece that covers it, from the first --encoder-layers layers of this base encoder (a name of `spandep models`' bases such as multilingual-e5-small, or a local Hugging Face folder; frozen, not copied into the tokenizer; --augment is then drawn once and trained on beside the original text). Empty: none."),
    encoder_layers: int = typer.Option(4, help="With --encoder: how many of its first layers are read."),
    dropout: float = typer.Option(0.2, help="Dropout on embeddings, between and after the LSTM layers."),
    window: int = typer.Option(256, help="Training pieces: characters."),
    batch_size: int = typer.Option(32, help="Pieces per batch."),
    min_batches: int = typer.Option(0, help="An epoch passes over the training text again, from new random offsets, until it has at least this many batches (0: one pass; for small treebanks)."),
    lr: float = typer.Option(2e-3, help="Adam learning rate."),
    lr_decay_patience: int = typer.Option(0, help="Halve the learning rate after this many epochs without a better dev score (0: never)."),
    augment: float = typer.Option(0.3, help="Share of training sentences rewritten each epoch into typographic and casing variants (curly quotes, dashes, no-break spaces, capitals), some paragraphs joined; 0: none."),
    seed: int = typer.Option(1, help="Random seed."),
    threads: int = typer.Option(1, help="Torch CPU threads."),
) -> None:
    """Train a tokenizer; the best epoch on dev, with decoding settings chosen on dev, goes to OUTPUT/tokenizer."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    with handle_errors():
        import torch

        from spandep.encoders.bases import model_path_problem
        from spandep.tokenization.model import NetConfig
        from spandep.training.tokenizer import TrainSettings, train_tokenizer as run

        check_options(
            ("--epochs", epochs, bound("epochs")), ("--patience", patience, bound("epochs")),
            ("--embedding", embedding, bound("tokenizer_size")), ("--hidden", hidden, bound("tokenizer_size")),
            ("--layers", layers, bound("tokenizer_layers")), ("--window", window, bound("tokenizer_window")),
            ("--batch-size", batch_size, bound("tokenizer_batch")), ("--min-batches", min_batches, bound("tokenizer_min_batches")), ("--lr-decay-patience", lr_decay_patience, bound("lr_decay_patience")),
            ("--threads", threads, limit("threads").from_one), ("--dropout", dropout, Range(0, 1, integer=False, open_high=True)),
            ("--ngram-buckets", ngram_buckets, bound("tokenizer_ngram_buckets")),
            ("--lexicon-lengths", lexicon_lengths, bound("tokenizer_lexicon_lengths")),
            ("--encoder-layers", encoder_layers, bound("tokenizer_encoder_layers")),
            ("--lr", lr, bound("tokenizer_lr")), ("--seed", seed, bound("seed")), ("--augment", augment, bound("tokenizer_augment")),
        )
        if dictionary is not None:
            if not lexicon_lengths:
                raise OptionError("--dictionary needs --lexicon-lengths (its flags have the lexicon's length buckets): add --lexicon-lengths 8")
            check_input(dictionary, stdin=False)
        if encoder and (problem := model_path_problem("--encoder", encoder)):
            raise OptionError(problem)
        check_input(train, stdin=False)
        check_input(dev, stdin=False)
        torch.set_num_threads(threads)
        net = NetConfig(embedding=embedding, hidden=hidden, layers=layers, dropout=dropout, ngram_buckets=ngram_buckets,
                        lexicon_lengths=lexicon_lengths, encoder=encoder, encoder_layers=encoder_layers if encoder else 0,
                        dictionary=dictionary is not None)
        settings = TrainSettings(net, epochs, patience, batch_size, window, lr, seed=seed, lr_decay_patience=lr_decay_patience,
                                 augment=augment, min_batches=min_batches, dictionary=str(dictionary or ""))
        record = run(train, dev, output, settings)
        scores = record["dev_scores"]
        typer.echo(
            f"done: best dev epoch {record['best_epoch']}: tokens {scores['tokens']:.2f} sentences {scores['sentences']:.2f} "
            f"words {scores['words']:.2f} (quick dev scores); tokenizer in {output / 'tokenizer'}"
        )
