"""Whole-command costs of `simcli run`: start-up, compile, wall time, peak memory.

* cold: first run with an empty Numba cache (NUMBA_CACHE_DIR pointed at a fresh folder)
* warm: a 1,000-game run with the cache filled (the start-up cost a designer feels)
* 1M:   wall time of `simcli run GAME --games 1000000` (warm cache)
* 10M:  peak resident memory of `simcli run GAME --games 10000000` (bounded by chunking)

``python3 benchmarks/cli_costs.py --cold-suite [REPEATS] [--ensure-compiled]`` times only the
DEFAULT SUITE's cold first run (`simcli run`, no GAME, NUMBA_CACHE_DIR pointed at an empty folder
each time) and one warm run after it (``--ensure-compiled``: with ``simcli.engine.compile.ensure_compiled``
called on the suite's jobs first, in the same process): wall seconds, CPU seconds of the simcli process and its children
(``resource.getrusage(RUSAGE_CHILDREN)``, user + system) and the load average before each run.
On a shared machine wall time moves with the load; CPU time says how much work was done.
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

GAME = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else "forecasts-cubes"


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


# `simcli run` preceded by simcli.engine.compile.ensure_compiled on the suite's jobs, in one process (what
# `run` does once the first-run compile is wired in; a no-op second check if it already is)
ENSURE_FIRST = ("import sys; from simcli import cli, compile, config; "
                "compile.ensure_compiled(config.suite_jobs()[0], lambda s: print(s, file=sys.stderr)); "
                "sys.argv = ['simcli', *sys.argv[1:]]; cli.main()")


def timed_suite(env=None, ensure: bool = False) -> dict:
    """Wall and CPU seconds (children, user + system) of one default-suite `simcli run`."""
    load = os.getloadavg()[0]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    cmd = ["-c", ENSURE_FIRST] if ensure else ["-m", "simcli.cli"]
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([sys.executable, *cmd, "run", "--no-progress", "--out", out + "/o"],
                       check=True, env=env, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "load1_before": round(load, 2)}


def cold_suite(repeats: int, ensure: bool) -> None:
    """The default suite's cold first run (empty Numba cache), then a warm run, REPEATS times."""
    cold, warm = [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, NUMBA_CACHE_DIR=cache)
            cold.append(timed_suite(env, ensure))
            warm.append(timed_suite(env, ensure))
        print(json.dumps({"cold": cold[-1], "warm": warm[-1]}), flush=True)
    res = {"cold_wall_median_s": statistics.median(c["wall_s"] for c in cold),
           "cold_cpu_median_s": statistics.median(c["cpu_s"] for c in cold),
           "warm_wall_median_s": statistics.median(w["wall_s"] for w in warm),
           "warm_cpu_median_s": statistics.median(w["cpu_s"] for w in warm),
           "cores": os.cpu_count(), "repeats": repeats, "ensure_compiled_first": ensure}
    print(json.dumps(res))


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
    if len(sys.argv) > 1 and sys.argv[1] == "--cold-suite":
        n = [a for a in sys.argv[2:] if a.isdigit()]
        cold_suite(int(n[0]) if n else 1, "--ensure-compiled" in sys.argv)
    else:
        main()
