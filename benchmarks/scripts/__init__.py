"""One-off measurements and helpers beside the suite (benchmarks/README.md lists them); their outputs are in
``benchmarks/results/legacy/``."""
