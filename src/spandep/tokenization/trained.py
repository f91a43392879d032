"""A trained tokenizer: the character network (:mod:`.model`) read over each paragraph, its probabilities decoded
into tokens, sentences and multiword tokens, and the words of those from the lexicon (:mod:`.mwt`).

Reading: a paragraph is cut into pieces of ``window`` characters, each read with up to ``context`` characters of
the paragraph on either side; pieces of every paragraph go through the network together, in batches.

Decoding, per paragraph (every rule keeps each non-whitespace character in exactly one token):

- a token ends at a character whose ``token`` probability reaches ``thresholds.token``, and always before
  whitespace, except that a token may go on over one plain space (French "1 000") where the network says so;
- never before a combining mark, a format character (ZWJ, ZWSP, soft hyphen) or an emoji skin tone, nor after a
  ZWJ;
- a sentence ends at a token whose last character's ``sentence`` probability reaches ``thresholds.sentence``,
  and at the paragraph's end; with ``max_tokens`` (0: none; chosen on dev, for text without sentence punctuation
  such as Thai), a sentence of more tokens is cut after the token of the highest ``sentence`` probability among
  its tokens ``max_tokens // 2 + 1`` to ``max_tokens``, again until no piece is longer (:func:`bound_sentences`);
- a token is a multiword token where its ``mwt`` probability reaches ``thresholds.mwt`` (``mwt_decision="net"``),
  or, with ``"lexicon"``, where the lexicon saw its form as one at least half of the time (the network decides
  for forms the lexicon never saw as one), and the lexicon gives it two words or more.

Saved as a folder: ``config.json`` (sizes, characters, thresholds, training record), ``model.safetensors`` and
``mwt.json``; with a lexicon feature (:mod:`.features`) also ``words.json``, its words, and with a dictionary
``dictionary.txt.xz``, its words one a line (xz-compressed: a dictionary holds some 10⁵ words); with encoder features
(:mod:`.encoder_features`) the config names the base encoder, whose weights stay where it is installed (the loader's
``encoder_folder`` finds it) and, as ``encoder_precision``, the precision its layers run in where it is not float32
(chosen on dev: docs/tokenizer.md). :func:`load_tokenizer` also accepts a model folder that holds such a folder as
``tokenizer/``. A compact model's copy is :func:`packed`: ``mwt.json`` and ``words.json`` xz-compressed (a seventh of
the bytes), ``config.json`` without indentation.
"""

from __future__ import annotations

import copy
import json
import lzma
import re
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_file, save_file

from spandep.data.output import write_blocks, write_bytes
from spandep.errors import ModelError
from spandep.quantised import loaded
from spandep.tokenization.encoder_features import PieceVectors, local_folder
from spandep.tokenization.features import CharFeatures
from spandep.tokenization.model import CLASSES, CharTagger, CharVocab, NetConfig
from spandep.tokenization.mwt import MwtLexicon
from spandep.tokenization.rules import RuleTokenizer
from spandep.tokenization.text import EMOJI_MODIFIERS, TOKENIZER_FOLDER, Paragraph, SentenceSpans, Tokenizer, TokenSpan, tokenizer_folder

__all__ = ["FORMAT", "Thresholds", "TrainedTokenizer", "bound_sentences", "load_tokenizer", "tokenizer_for"]

FORMAT = "spandep-tokenizer"
FORMAT_VERSION = 1
WORDS_FILE = "words.json"
MWT_FILE = "mwt.json"
PACKED = (MWT_FILE, WORDS_FILE)  # xz-compressed in a compact model's copy, as ``<name>.xz``
DICTIONARY_FILE = "dictionary.txt.xz"
WEIGHTS_FILE = "model.safetensors"
_ATTACHING = np.array([name in ("Mn", "Mc", "Me", "Cf") for name in CLASSES])
_ZWJ = re.compile("\u200d")
_MODIFIER = re.compile(f"[{EMOJI_MODIFIERS}]")


@dataclass(frozen=True)
class Thresholds:
    """Probabilities from which a token, a sentence, a multiword token ends (module docstring)."""

    token: float = 0.5
    sentence: float = 0.5
    mwt: float = 0.5


def bound_sentences(ends: np.ndarray, scores: np.ndarray, most: int) -> np.ndarray:
    """``ends`` (n_tokens,) bool, the last one True, with more ends so that no sentence holds more than ``most``
    tokens: a longer one is cut after the token of the highest ``scores`` (n_tokens,) among its tokens
    ``most // 2 + 1`` to ``most``, and its rest again."""
    out = ends.copy()  # (n_tokens,)
    start = 0
    for end in np.flatnonzero(ends).tolist():
        while end - start + 1 > most:
            low = start + most // 2
            cut = low + int(np.argmax(scores[low : start + most]))
            out[cut] = True
            start = cut + 1
        start = end + 1
    return out


class TrainedTokenizer(Tokenizer):
    """Tokens, sentences and multiword tokens from a trained network (module docstring); ``pieces``: the encoder
    features of a network with an ``encoder``."""

    def __init__(
        self,
        vocab: CharVocab,
        net: CharTagger,
        lexicon: MwtLexicon,
        thresholds: Thresholds = Thresholds(),
        mwt_decision: str = "net",
        window: int = 250,
        context: int = 50,
        batch_size: int = 64,
        max_tokens: int = 0,
        pieces: PieceVectors | None = None,
    ) -> None:
        if mwt_decision not in ("net", "lexicon"):
            raise ValueError(f"mwt_decision must be 'net' or 'lexicon', not {mwt_decision!r}")
        self.vocab = vocab
        self.net = net.eval()
        self.lexicon = lexicon
        self.thresholds = thresholds
        self.mwt_decision = mwt_decision
        self.window = window
        self.context = context
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self.pieces = pieces

    # ------------------------------------------------------------------------------------------ reading

    def probabilities(self, text: str, paras: list[Paragraph]) -> tuple[list[np.ndarray], np.ndarray]:
        """Per paragraph, ``(n_chars, 3)`` float32 probabilities of :data:`~.model.HEADS`; and the encoded text."""
        ids = self.vocab.encode(text)  # (len(text), 2 + features)
        vectors = self.pieces.vectors(text, paras) if self.pieces else None  # (len(text), width + 1)
        pieces: list[tuple[int, int, int, int, int]] = []  # paragraph, read from, core from, core to, read to
        for k, (a, b) in enumerate(paras):
            for s in range(a, b, self.window):
                core_to = min(b, s + self.window)
                pieces.append((k, max(a, s - self.context), s, core_to, min(b, core_to + self.context)))
        pieces.sort(key=lambda piece: piece[1] - piece[4])  # longest first: little padding in a batch
        out = [np.zeros((b - a, 3), dtype=np.float32) for a, b in paras]  # (n_chars, 3) each
        with torch.inference_mode():
            for first in range(0, len(pieces), self.batch_size):
                batch = pieces[first : first + self.batch_size]
                lengths = [read_to - read_from for _, read_from, _, _, read_to in batch]
                padded = np.zeros((len(batch), max(lengths), ids.shape[1]), dtype=np.int64)  # (batch, n_chars, 2 + features)
                for row, (_, read_from, _, _, read_to) in enumerate(batch):
                    padded[row, : read_to - read_from] = ids[read_from:read_to]
                spans = [(read_from, read_to) for _, read_from, _, _, read_to in batch]
                logits = self.net(torch.from_numpy(padded), torch.tensor(lengths), padded_rows(vectors, spans))  # (batch, n_chars, 3)
                probs = torch.sigmoid(logits).numpy()  # (batch, n_chars, 3)
                for row, (k, read_from, core_from, core_to, _) in enumerate(batch):
                    a = paras[k][0]
                    out[k][core_from - a : core_to - a] = probs[row, core_from - read_from : core_to - read_from]
        return out, ids

    # ------------------------------------------------------------------------------------------ decoding

    def decode(self, text: str, para: Paragraph, probs: np.ndarray, classes: np.ndarray) -> list[SentenceSpans]:
        """The sentences of paragraph ``para`` of ``text`` from its ``probs`` (n_chars, 3) and character ``classes``."""
        a, b = para
        n = b - a
        space = classes == CLASSES.index("space")  # (n_chars,)
        ends = (probs[:, 0] >= self.thresholds.token) & ~space  # (n_chars,)
        before_space = np.zeros(n, dtype=bool)  # (n_chars,)
        before_space[:-1] = space[1:] & ~space[:-1]
        before_space[-1] = True
        ends |= before_space
        joins = np.flatnonzero(before_space[:-2] & (probs[:-2, 0] < self.thresholds.token) & ~space[2:])
        for i in joins:
            if text[a + i + 1] == " ":
                ends[i] = False
        attach = np.zeros(n, dtype=bool)  # (n_chars,): the next character attaches to this one
        attach[:-1] = _ATTACHING[classes[1:]]
        attach[[m.start() - a for m in _ZWJ.finditer(text, a, b)]] = True
        attach[[m.start() - a - 1 for m in _MODIFIER.finditer(text, a + 1, b)]] = True
        ends &= ~(attach & ~before_space)
        ends[-1] = True
        last = np.flatnonzero(ends)  # (n_tokens,)
        nonspace = np.flatnonzero(~space)  # (n_nonspace,)
        starts = np.empty_like(last)  # (n_tokens,)
        starts[0] = nonspace[0]
        starts[1:] = nonspace[np.searchsorted(nonspace, last[:-1] + 1)]
        sentence_end = probs[last, 1] >= self.thresholds.sentence  # (n_tokens,)
        sentence_end[-1] = True
        if self.max_tokens:
            sentence_end = bound_sentences(sentence_end, probs[last, 1], self.max_tokens)  # (n_tokens,)
        mwt = probs[last, 2] >= self.thresholds.mwt  # (n_tokens,)
        sentences: list[SentenceSpans] = []
        current: SentenceSpans = []
        for s, e, is_end, is_mwt in zip(starts.tolist(), last.tolist(), sentence_end.tolist(), mwt.tolist()):
            current.append(self._token(text, a + s, a + e + 1, is_mwt))
            if is_end:
                sentences.append(current)
                current = []
        return sentences

    def _token(self, text: str, start: int, end: int, net_says_mwt: bool) -> TokenSpan:
        surface = text[start:end]
        if self.mwt_decision == "lexicon":
            rate = self.lexicon.known_rate(surface)
            is_mwt = net_says_mwt if rate is None else rate >= 0.5
        else:
            is_mwt = net_says_mwt
        words = self.lexicon.expand(surface) if is_mwt else ()
        return TokenSpan(start, end, words if len(words) > 1 else ())

    def split(self, text: str, paras: list[Paragraph]) -> list[list[SentenceSpans]]:
        if not paras:
            return []
        probs, ids = self.probabilities(text, paras)
        return [self.decode(text, p, pr, ids[p[0] : p[1], 1]) for p, pr in zip(paras, probs)]

    # ------------------------------------------------------------------------------------------ saving

    def with_settings(self, thresholds: Thresholds, mwt_decision: str, max_tokens: int = 0) -> "TrainedTokenizer":
        """The same network and lexicon with other decoding settings."""
        out = copy.copy(self)
        out.thresholds, out.mwt_decision, out.max_tokens = thresholds, mwt_decision, max_tokens
        return out

    def save(self, folder: Path, record: dict[str, Any]) -> None:
        """Write the tokenizer into ``folder`` (created); ``record`` goes into config.json as ``training``."""
        folder.mkdir(parents=True, exist_ok=True)
        config = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "net": self.net.settings(),
            "chars": "".join(self.vocab.chars),
            "thresholds": asdict(self.thresholds),
            "mwt_decision": self.mwt_decision,
            "window": self.window,
            "context": self.context,
            **({"max_tokens": self.max_tokens} if self.max_tokens else {}),
            **({"encoder_precision": self.pieces.precision} if self.pieces and self.pieces.precision != "float32" else {}),
            "training": record,
        }
        tensors = {k: v.detach().contiguous() for k, v in self.net.state_dict().items()}
        save_file(tensors, str(folder / WEIGHTS_FILE))
        (folder / MWT_FILE).write_text(json.dumps(self.lexicon.to_json(), ensure_ascii=False), encoding="utf-8")
        (folder / "config.json").write_text(json.dumps(config, ensure_ascii=False, indent=1), encoding="utf-8")
        if self.net.config.lexicon_lengths:
            (folder / WORDS_FILE).write_text(json.dumps(self.vocab.features.words, ensure_ascii=False), encoding="utf-8")
        if self.net.config.dictionary:
            with lzma.open(folder / DICTIONARY_FILE, "wt", encoding="utf-8") as f:
                f.writelines(w + "\n" for w in self.vocab.features.dictionary or ())


def padded_rows(vectors: np.ndarray | None, spans: list[tuple[int, int]]) -> torch.Tensor | None:
    """The rows ``[a, b)`` of ``vectors`` (n_chars, columns) for each span, right-padded with zeros: (batch,
    longest, columns); ``None`` for no vectors."""
    if vectors is None:
        return None
    out = np.zeros((len(spans), max(b - a for a, b in spans), vectors.shape[1]), dtype=np.float32)  # (batch, n_chars, columns)
    for row, (a, b) in enumerate(spans):
        out[row, : b - a] = vectors[a:b]
    return torch.from_numpy(out)


def packed(folder: Path) -> None:
    """Make a saved tokenizer folder compact in place (a shipped model's copy): each of ``PACKED`` replaced by its
    xz-compressed ``<name>.xz`` (the 84 tokenizers of the pool: 1.61 → 0.27 MB), ``config.json`` rewritten without
    indentation; every file written atomically; a folder packed before is left as it is."""
    for name in PACKED:
        plain = folder / name
        if plain.is_file():
            write_bytes(lzma.compress(plain.read_bytes()), folder / f"{name}.xz")
            plain.unlink()
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    write_blocks([json.dumps(config, ensure_ascii=False, separators=(",", ":"))], folder / "config.json")


def _read_json(folder: Path, name: str) -> Any:
    """The JSON file ``name`` of a tokenizer folder: as saved, or its :func:`packed` ``<name>.xz``."""
    if (folder / name).is_file():
        return json.loads((folder / name).read_text(encoding="utf-8"))
    with lzma.open(folder / f"{name}.xz", "rt", encoding="utf-8") as f:
        return json.load(f)


def load_tokenizer(path: str | Path, encoder_folder: Callable[[str], str] = local_folder, precision: str | None = None) -> TrainedTokenizer:
    """The tokenizer saved in ``path``, or in ``path/tokenizer`` (a parser's model folder); ``encoder_folder`` turns
    the name of the encoder of encoder features into its folder; ``precision`` of those features' layers
    (:data:`~.encoder_features.PRECISIONS`): the saved ``encoder_precision`` (float32 where none is saved) unless
    given."""
    folder = Path(path)
    if not (folder / "config.json").is_file() and (folder / TOKENIZER_FOLDER / "config.json").is_file():
        folder = folder / TOKENIZER_FOLDER
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        if config.get("format") != FORMAT or config.get("format_version") != FORMAT_VERSION:
            raise ModelError(f"{folder} is not a spandep tokenizer (format {FORMAT} version {FORMAT_VERSION})")
        net_config = NetConfig(**config["net"])
        words = _read_json(folder, WORDS_FILE) if net_config.lexicon_lengths else []
        dictionary = None
        if net_config.dictionary:
            with lzma.open(folder / DICTIONARY_FILE, "rt", encoding="utf-8") as f:
                dictionary = [line.rstrip("\n") for line in f]
        features = CharFeatures(net_config.ngram_buckets, net_config.lexicon_lengths, words, dictionary)
        vocab = CharVocab(list(config["chars"]), features)
        precision = precision or config.get("encoder_precision", "float32")
        pieces = PieceVectors(net_config.encoder, encoder_folder(net_config.encoder), net_config.encoder_layers, precision) if net_config.encoder else None
        net = CharTagger(len(vocab), net_config, pieces.width if pieces else 0)
        net.load_state_dict(loaded(load_file(str(folder / WEIGHTS_FILE))))  # a compact model's may hold int8 rows
        lexicon = MwtLexicon.from_json(_read_json(folder, MWT_FILE))
    except (OSError, ValueError, KeyError, RuntimeError, EOFError, lzma.LZMAError) as exc:
        raise ModelError(f"cannot load the tokenizer in {folder}: {exc}") from None
    thresholds = replace(Thresholds(), **config["thresholds"])
    return TrainedTokenizer(vocab, net, lexicon, thresholds, config["mwt_decision"], config["window"], config["context"],
                            max_tokens=config.get("max_tokens", 0), pieces=pieces)


def tokenizer_for(
    model: str | Path, treebank: str | None = None, encoder_folder: Callable[[str], str] = local_folder, precision: str | None = None
) -> Tokenizer:
    """The tokenizer of a parser's model folder: its trained ``tokenizer/`` (for ``treebank`` of a model trained on
    several, ``tokenizers/<treebank>/``) where it has one, else the rule fallback (``encoder_folder`` and
    ``precision``: :func:`load_tokenizer`)."""
    folder = tokenizer_folder(Path(model), treebank)
    return load_tokenizer(folder, encoder_folder, precision) if (folder / "config.json").is_file() else RuleTokenizer()
