"""Word encoders: a pretrained transformer or a from-scratch word + character BiLSTM.

``ENCODERS`` is the registry: a new encoder is one file (a :class:`WordEncoder` subclass) plus one line here.
"""

from __future__ import annotations

from spandep.encoders.base import WordEncoder
from spandep.registry import Registry

ENCODERS: Registry[type[WordEncoder]] = Registry("encoder type")
ENCODERS.add("transformer", "spandep.encoders.transformer:TransformerEncoder")
ENCODERS.add("bilstm", "spandep.encoders.bilstm:BiLSTMEncoder")

__all__ = ["ENCODERS", "WordEncoder"]
