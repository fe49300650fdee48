"""Throughput measurements for `simcli bench` and benchmarks/ (never timed unit tests)."""
from __future__ import annotations

import statistics
import time

import numba
import numpy as np

import kernels
from kernels import layout
from simcli.config import jobs as cfg
from simcli.engine import runner


def measure(job: cfg.Job, threads: int, seconds: float, repeats: int, seed: int = 1) -> tuple[float, float]:
    """Median (games/s, decisions/s) of ``repeats`` runs sized to take about ``seconds`` each."""
    runner.set_threads(threads)
    S = job.seats.shape[0]
    runner.play_chunk(job, seed, 0, 1)  # compile / warm
    n = 1  # grow from one game: a search player may take seconds per game
    while True:
        t = time.perf_counter()
        runner.play_chunk(job, seed, 0, n)
        dt = time.perf_counter() - t
        if dt > seconds / 4 or n >= 1 << 24:
            break
        n *= 4
    n = max(1, int(n * seconds / max(dt, 1e-9)))
    rates, drates = [], []
    first = 0
    # one buffer for every repeat, as the runner reuses its own across chunks (touched once here)
    out = np.zeros((n, layout.out_width(S, len(job.module.COUNTERS))), dtype=np.int64)
    for _ in range(repeats):
        t = time.perf_counter()
        out = runner.play_chunk(job, seed, first, first + n, out)
        dt = time.perf_counter() - t
        rates.append(n / dt)
        drates.append(float(out[:, job.row.decisions].sum()) / dt)
        first += n
    return statistics.median(rates), statistics.median(drates)


def bench(game: str | None = None, seconds: float = 0.5, repeats: int = 3,
          players: int | None = None) -> list[dict]:
    games = [game] if game else cfg.known_games()
    rows = []
    all_threads = numba.config.NUMBA_NUM_THREADS
    for gid in games:
        job0 = cfg.resolve(gid, None, players)
        mod = job0.module
        for pol in cfg.user_policies(mod, job0.players, job0.params):
            job = cfg.resolve(gid, job0.variant, job0.players, policy=pol)
            for th in sorted({1, all_threads}):
                gps, dps = measure(job, th, seconds, repeats)
                rows.append({"game": gid, "variant": job.variant, "players": job.players,
                             "policy": pol, "threads": th, "games_per_s": gps, "decisions_per_s": dps})
    runner.set_threads(None)
    return rows
