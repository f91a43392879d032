"""Word encoders: a pretrained transformer (alone, or with character vectors beside it) or a from-scratch word +
character BiLSTM.

``ENCODERS`` is the registry: a new encoder is one file (a :class:`WordEncoder` subclass) plus one line here.
Every module here that imports Hugging Face ``transformers`` does so after this file has set it offline: no model hub
is ever asked (a name that is no local folder is an error at once).
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from spandep.encoders.base import WordEncoder
from spandep.registry import Registry

ENCODERS: Registry[type[WordEncoder]] = Registry("encoder type")
ENCODERS.add("transformer", "spandep.encoders.transformer:TransformerEncoder")
ENCODERS.add("bilstm", "spandep.encoders.bilstm:BiLSTMEncoder")
ENCODERS.add("transformer_chars", "spandep.encoders.transformer_chars:CharTransformerEncoder")

__all__ = ["ENCODERS", "WordEncoder"]
