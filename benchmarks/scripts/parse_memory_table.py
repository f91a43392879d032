"""The table of ``parse_memory.py``'s result files (``benchmarks/results/speed/parse_memory__*.json``): per model, the
memory and CPU time of loading and parsing under the old revision and this code, as markdown (``--doc FILE``: between
``<!-- parse-memory:begin -->`` and ``<!-- parse-memory:end -->`` of that file).

    python -m benchmarks.scripts.parse_memory_table --doc BENCHMARKS.md
"""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.suite.report import table_main

RESULTS = Path(__file__).resolve().parents[1] / "results" / "speed"
BEGIN, END = "<!-- parse-memory:begin -->", "<!-- parse-memory:end -->"


def render() -> str:
    rows = [
        "| model | parsed (words) | machine | resident after loading | peak while loading | API: peak while parsing | API: parse CPU s | "
        "`spandep parse`: peak | `spandep parse`: CPU s | same trees | source |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for path in sorted(RESULTS.glob("parse_memory__*.json")):
        r = json.loads(path.read_text(encoding="utf-8"))
        old, new = r["median"]["old"], r["median"]["new"]

        def pair(key: str, digits: int = 3) -> str:
            return f"{old[key]:.{digits}f} → **{new[key]:.{digits}f}**"

        same = "yes" if r["same_trees"] and r["same_cli_output"] else "no"
        rows.append(
            f"| `{r['model']}` | {Path(r['input']).name} ({r['words']:,}) | {r['machine']['cpu']} | {pair('loaded_gb')} GB | {pair('load_peak_gb')} GB | {pair('parse_peak_gb')} GB | "
            f"{pair('cpu_seconds', 1)} | {pair('cli_peak_gb')} GB | {pair('cli_cpu_seconds', 1)} | {same} | "
            f"`{path.relative_to(RESULTS.parents[2])}` (old: {r['old']}) |"
        )
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    table_main(__doc__, render, BEGIN, END, "the parse memory table")
