"""Digest of search tables: a check that a search change keeps every decision.

sha256 of the result rows (`runner.play_chunk`, one thread) of a fixed set of whole tables with
search seats of every kind (mc / race / halve / sift / ismcts; heuristic, tuned and random rollouts; objectives
0-4; 2p Rival Station, 3p, 4p, base and no-market). The rows hold every seat's score and the
search counters (rollouts, rollout card plays, decisions), so one changed decision shows.
Run it on two checkouts and compare the lines:

    PYTHONPATH=/path/to/old python3 benchmarks/search_digest.py > old.txt
    PYTHONPATH=$PWD python3 benchmarks/search_digest.py > new.txt && diff old.txt new.txt

``--game forecasts-cubes``: the same for forecasts-cubes (mc / race / sift / ismcts, heuristic,
tuned and random rollouts, 3p and 4p, base and advisory); ``--game pgc`` and
``--game sudden-skies``: their random, heuristic, tuned and mc tables at several player counts;
``--game daily-weather``: random, greedy, mc and the solver.
"""
from __future__ import annotations

import argparse
import hashlib

import numba
import numpy as np

# game: ((variant, seats, seed, games), ...)
TABLES = {"forecasts-bid": (
    ("base", "mc:8:heuristic,heuristic,heuristic,heuristic", 26, 60),
    ("base", "halve:8:heuristic,race:8:tuned,mc:4:random,heuristic", 27, 40),
    ("base", "mc:4:heuristic,mc:4:heuristic,mc:4:heuristic,mc:4:heuristic", 28, 16),
    ("base", "mc:8:heuristic:1,tuned,mc:4:tuned:2", 29, 60),
    ("rival", "mc:8:heuristic:3,heuristic", 30, 40),
    ("rival", "halve:8:tuned,mc:4:heuristic:2", 31, 60),
    ("no-market", "mc:8:heuristic:4,halve:4:tuned,heuristic,random", 32, 60),
    ("no-market", "race:8:heuristic:2,mc:4:heuristic,random", 33, 60),
    ("base", "sift:16:heuristic:100,sift:8:tuned,heuristic,mc:4:heuristic", 34, 30),
    ("rival", "sift:16:heuristic:100,heuristic", 35, 40),
    ("base", "ismcts:4:heuristic:30,heuristic,mc:4:heuristic,tuned", 36, 12),
    ("rival", "ismcts:4:tuned,heuristic", 37, 20),
), "forecasts-cubes": (
    ("base", "mc:8:heuristic,heuristic,heuristic,heuristic", 26, 30),
    ("advisory", "mc:8:tuned,race:8:tuned,sift:8:tuned:10,ismcts:8:tuned:30", 27, 20),
    ("advisory", "mc:4:random,tuned,mc:8:tuned,heuristic", 28, 30),
    ("base", "mc:8:tuned,ismcts:8:heuristic:30,race:8:heuristic", 29, 30),
    ("advisory", "heuristic,tuned,random,heuristic", 30, 3000),
    ("base", "tuned,heuristic,tuned", 31, 3000),
), "pgc": (
    ("base", "random,random,random,random", 26, 400),
    ("base", "heuristic,tuned,random,heuristic,tuned", 27, 300),
    ("base", "mc:4:tuned,heuristic,mc:4:random,tuned", 28, 12),
    ("base", "mc:4:heuristic,random", 29, 20),
    ("base", "tuned,heuristic,mc:2:tuned", 30, 20),
    ("base", "random,heuristic,tuned,random,heuristic,tuned", 31, 200),
), "sudden-skies": (
    ("base", "random,random,random,random", 26, 400),
    ("base", "heuristic,tuned,random", 27, 400),
    ("base", "mc:4:tuned,heuristic,mc:4:random,tuned", 28, 12),
    ("base", "mc:4:heuristic,random", 29, 20),
    ("base", "tuned,heuristic,tuned,heuristic", 30, 400),
), "daily-weather": (
    ("base", "random", 26, 2000),
    ("base", "greedy", 27, 2000),
    ("base", "mc:4:greedy", 28, 40),
    ("base", "mc:4:random", 29, 40),
    ("base", "solver", 30, 40),
)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--game", default="forecasts-bid", choices=sorted(TABLES))
    ap.add_argument("--scale", type=float, default=1.0, help="games per table x this")
    a = ap.parse_args()
    numba.set_num_threads(1)
    from kernels import layout
    from simcli.config.jobs import resolve
    from simcli.engine import runner
    whole = hashlib.sha256()
    for variant, seats, seed, games in TABLES[a.game]:
        n = max(1, int(games * a.scale))
        job = resolve(a.game, variant=variant, players=len(seats.split(",")), seats=seats)
        rows = runner.play_chunk(job, seed, 0, n)
        d = hashlib.sha256(np.ascontiguousarray(rows).tobytes()).hexdigest()
        whole.update(d.encode())
        print(f"{variant:9s} {seats:55s} seed {seed} games {n}: {d[:16]}", flush=True)
    print("all", whole.hexdigest()[:16])


if __name__ == "__main__":
    main()
