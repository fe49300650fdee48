"""The Dask backend against the local threaded backend, and the cost of one Dask chunk.

1. sweep: every forecasts-cubes variant x player count, GAMES games each (default 1,000,000),
   default chunk size: `runner.run_jobs` (all cores, threads) vs `dask_backend.run_jobs_on`
   on a local cluster of 2 worker processes (cores shared among them), cluster already up;
   plus `run_jobs_dask(workers=2)` as `--backend dask --workers 2` runs it (start + stop
   included). The tallies are checked to be identical.
2. per chunk: one job of TINY games (default 2,000) cut into chunks of 1 game vs 1 chunk, on
   the cluster and locally: (t(1-game chunks) - t(1 chunk)) / (chunks - 1).

    python benchmarks/dask_vs_local.py [--games N] [--tiny N] [--repeats R]

Prints medians and one JSON line. Run on an otherwise idle machine: other load makes the
figures noisy (the script reports the load average before and after).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import numpy as np

from simcli.config import jobs as cfg
from simcli.engine import dask_backend as db
from simcli.engine import runner

GAME = "forecasts-cubes"


def sweep_jobs() -> list[cfg.Job]:
    _, variants = cfg.variants_of(GAME)
    return [cfg.resolve(GAME, v, p) for v, d in variants.items() for p in d["players"]]


def timed(fn, repeats: int) -> tuple[float, list[float], object]:
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), times, out


def same(a: list, b: list) -> bool:
    return all(np.array_equal(x.acc.arrays()[k], y.acc.arrays()[k])
               for x, y in zip(a, b) for k in db.ACC_FIELDS) and len(a) == len(b)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=1_000_000, help="games per sweep job")
    ap.add_argument("--tiny", type=int, default=2_000, help="games cut into 1-game chunks")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    jobs, seed, R = sweep_jobs(), 20261129, args.repeats
    nt = db.local_numba_threads(args.workers)
    res: dict = {"game": GAME, "jobs": len(jobs), "games_per_job": args.games, "cores": os.cpu_count(),
                 "workers": args.workers, "numba_threads_per_task": nt,
                 "loadavg_before": round(os.getloadavg()[0], 2)}

    runner.run_jobs(jobs, 2000, seed, progress=False)  # compile / load the Numba cache
    local_t, local_all, local = timed(lambda: runner.run_jobs(jobs, args.games, seed, progress=False), R)

    t = time.perf_counter()
    with db.dask_client(workers=args.workers) as client:
        res["cluster_start_s"] = round(time.perf_counter() - t, 2)
        db.run_jobs_on(client, jobs, 2000, seed, progress=False, numba_threads=nt)  # warm the workers
        dask_t, dask_all, dask = timed(
            lambda: db.run_jobs_on(client, jobs, args.games, seed, progress=False, numba_threads=nt), R)

        tiny = [cfg.resolve(GAME, "base", 4)]
        n = args.tiny
        one_t, _, one = timed(lambda: db.run_jobs_on(client, tiny, n, seed, chunk=n, progress=False,
                                                     numba_threads=nt), R)
        many_t, _, many = timed(lambda: db.run_jobs_on(client, tiny, n, seed, chunk=1, progress=False,
                                                       numba_threads=nt), R)
    cold_t, _, cold = timed(lambda: db.run_jobs_dask(jobs, args.games, seed, workers=args.workers,
                                                     progress=False), 1)
    lone_t, _, _ = timed(lambda: runner.run_jobs(tiny, n, seed, chunk=n, progress=False), R)
    lmany_t, _, _ = timed(lambda: runner.run_jobs(tiny, n, seed, chunk=1, progress=False), R)

    total = args.games * len(jobs)
    res.update({
        "identical": same(local, dask) and same(local, cold) and same(one, many),
        "local_threads_s": round(local_t, 2), "local_games_per_s": round(total / local_t),
        "dask_warm_cluster_s": round(dask_t, 2), "dask_games_per_s": round(total / dask_t),
        "dask_vs_local": round(dask_t / local_t, 3),
        "dask_with_cluster_start_stop_s": round(cold_t, 2),
        "sweep_chunks": sum(len(runner.plan_chunks(0, args.games, runner.DEFAULT_CHUNK)) for _ in jobs),
        "tiny_one_chunk_s": round(one_t, 3), "tiny_1_game_chunks_s": round(many_t, 3),
        "dask_overhead_per_chunk_ms": round(1000 * (many_t - one_t) / (n - 1), 3),
        "local_overhead_per_chunk_ms": round(1000 * (lmany_t - lone_t) / (n - 1), 4),
        "local_all_s": [round(x, 2) for x in local_all], "dask_all_s": [round(x, 2) for x in dask_all],
        "loadavg_after": round(os.getloadavg()[0], 2),
    })
    for k, v in res.items():
        print(f"{k:32} {v}")
    print(json.dumps(res))


if __name__ == "__main__":
    main()
