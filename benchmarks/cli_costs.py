"""Whole-command costs of `simcli run`: start-up, compile, wall time, peak memory.

* cold: first run with an empty Numba cache (NUMBA_CACHE_DIR pointed at a fresh folder)
* warm: a 1,000-game run with the cache filled (the start-up cost a designer feels)
* 1M:   wall time of `simcli run GAME --games 1000000` (warm cache)
* 10M:  peak resident memory of `simcli run GAME --games 10000000` (bounded by chunking)
"""
from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

GAME = sys.argv[1] if len(sys.argv) > 1 else "forecasts-cubes"


def run(args: list[str], env=None) -> tuple[float, int]:
    """(wall seconds, peak RSS in KiB) of one simcli process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t = time.perf_counter()
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([sys.executable, "-m", "simcli.cli", "run", GAME, "--no-progress",
                        "--out", out, *args], check=True, env=env, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, max(peak, before)


def main() -> None:
    res = {"game": GAME}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        res["cold_first_run_s"] = round(run(["--games", "1000"], env)[0], 2)
    run(["--games", "1000"])  # make sure the default cache is warm
    res["warm_small_run_s"] = round(statistics.median(run(["--games", "1000"])[0] for _ in range(5)), 3)
    res["run_1M_s"] = round(statistics.median(run(["--games", "1000000"])[0] for _ in range(3)), 2)
    wall, peak = run(["--games", "10000000"])
    res["run_10M_s"] = round(wall, 2)
    res["peak_rss_10M_MiB"] = round(peak / 1024, 1)
    for k, v in res.items():
        print(f"{k:22} {v}")
    print(json.dumps(res))


if __name__ == "__main__":
    main()
