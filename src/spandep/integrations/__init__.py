"""Adapters to other NLP libraries (optional dependencies, imported only on use)."""
