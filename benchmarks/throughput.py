"""Games/s and decisions/s per game and policy at one thread and at all threads (medians)."""
from __future__ import annotations

import json
import sys

from simcli.analyses.bench import bench


def main(argv: list[str]) -> None:
    games = argv or [None]
    rows = []
    for g in games:
        rows += bench(g, seconds=1.0, repeats=5)
    for r in rows:
        print(f"{r['game']:16} {r['players']}p {r['policy']:10} threads={r['threads']}  "
              f"{r['games_per_s']:>12,.0f} games/s  {r['decisions_per_s']:>14,.0f} decisions/s")
    print(json.dumps(rows))


if __name__ == "__main__":
    main(sys.argv[1:])
