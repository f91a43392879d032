"""How much the repository's history grew since a commit, by folder: what every clone downloads (issue 46's bar: the
history grows by at most 150 MB over the issue, models committed when final).

    python -m benchmarks.scripts.history_size --since 30c4d9c~1 --out benchmarks/results/history_size.json

Counts every object reachable from ``--until`` (default HEAD) and not from ``--since`` at its size in the pack
(``git cat-file``'s ``objectsize:disk``: compressed, a delta where git stored one), each under the first path git
lists it at: a model folder of ``src/spandep/resources/`` by its name, anything else by its first two path parts.
Run it after ``git gc`` for the sizes a fresh clone gets (loose objects count whole).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections import Counter
from pathlib import Path

from benchmarks.suite.record import checkout, machine, write_json
from benchmarks.suite.systems import REPO

RESOURCES = "src/spandep/resources/"


def group(path: str) -> str:
    """The folder an object's path is counted under (module docstring)."""
    if path.startswith(RESOURCES):
        rest = path[len(RESOURCES):].split("/")
        return RESOURCES + rest[0] if len(rest) > 1 else path
    return "/".join(path.split("/")[:2])


def growth(since: str, until: str = "HEAD", repo: Path = REPO) -> Counter[str]:
    """Pack bytes of the objects of ``until`` not in ``since``, by :func:`group` of their path."""
    listed = subprocess.run(["git", "rev-list", "--objects", f"{since}..{until}"], cwd=repo, check=True,
                            capture_output=True, text=True).stdout.splitlines()
    paths = dict(line.split(" ", 1) if " " in line else (line, "") for line in listed)
    if not paths:
        return Counter()
    sizes = subprocess.run(["git", "cat-file", "--batch-check=%(objectname) %(objectsize:disk)"], cwd=repo, check=True,
                           capture_output=True, text=True, input="\n".join(paths) + "\n").stdout.splitlines()
    out: Counter[str] = Counter()
    for line in sizes:
        name, size = line.split()
        out[group(paths[name]) if paths[name] else "(commits and trees)"] += int(size)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--since", required=True, help="the commit before the growth counted")
    ap.add_argument("--until", default="HEAD")
    ap.add_argument("--out", help="a JSON result file")
    args = ap.parse_args()
    sizes = growth(args.since, args.until)
    total = sum(sizes.values())
    for name, size in sizes.most_common():
        print(f"{size / 2**20:9.2f} MiB  {name}")
    print(f"{total / 2**20:9.2f} MiB  in all, {args.since}..{args.until}", file=sys.stderr)
    if args.out:
        write_json(Path(args.out), {
            "schema": "spandep-history-size/1", "command": "python -m benchmarks.scripts.history_size " + " ".join(sys.argv[1:]),
            "machine": machine(), **checkout(), "since": args.since, "until": args.until, "bytes": total,
            "by_folder": dict(sizes.most_common()),
        })


if __name__ == "__main__":
    main()
