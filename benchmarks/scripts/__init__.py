"""One-off measurements and helpers beside the suite (benchmarks/README.md lists them); their outputs are in the
folders of ``benchmarks/results/`` that README names (older ones in ``benchmarks/results/legacy/``)."""
