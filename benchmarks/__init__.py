"""The benchmark suite: ``python -m benchmarks.run`` writes results/*.json, ``python -m benchmarks.report`` turns
them into the tables of BENCHMARKS.md; the other scripts here are one-off measurements."""
