"""Benchmarks (README.md here): the suite in ``suite/``, one-off measurements in ``scripts/``, what they wrote in
``results/`` (``spandep tune`` chooses a span model's inference settings on dev)."""
