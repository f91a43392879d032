"""spandep: dependency parsing as MRC-based span-span prediction, with a Biaffine baseline."""

__version__ = "0.1.0"
