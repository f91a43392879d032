"""spandep's version, in the bottom layer so that any module may name it (a saved model records it); the same as
pyproject.toml's (tests/test_cli_hostile.py checks the two)."""

__version__ = "0.1.0"
