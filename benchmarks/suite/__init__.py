"""The benchmark suite: ``python -m benchmarks.suite.run`` trains or reuses each system of ``systems.py``, parses and
scores the test split (``measure.py``, one child process each) and writes results/<dataset>__<system>.json
(``record.py``); ``python -m benchmarks.suite.report`` turns those files into the tables of BENCHMARKS.md."""
