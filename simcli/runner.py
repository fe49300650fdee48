"""Play jobs in chunks of game indices, fold each chunk at once, keep memory bounded.

The kernel fills a reused int64 buffer for one chunk (``play_games``), ``kernels.tally``
folds it into integer accumulators, and only then is the next chunk played. Per-game rows
are written only when asked, one Parquet part per chunk. Results do not depend on threads
or chunk size: every game is a pure function of (seed, game index) and every sum is integer.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numba
import numpy as np

from kernels import layout
from kernels.tally import Accumulators
from .config import Job

DEFAULT_CHUNK = 1 << 16


@dataclass
class Result:
    """One job's integer tallies plus how they were obtained."""
    job: Job
    acc: Accumulators
    games: int
    seed: int
    wall: float = 0.0
    extra: dict = field(default_factory=dict)


def accumulators_for(job: Job) -> Accumulators:
    mod = job.module
    S = job.seats.shape[0]
    lo, hi = mod.score_range(job.players, job.params)
    llo, lhi = mod.length_range(job.players, job.params)
    return Accumulators(S, len(mod.COUNTERS), int(lo), int(hi), int(llo), int(lhi))


def plan_chunks(first: int, games: int, chunk: int) -> list[tuple[int, int]]:
    """[start, stop) game-index ranges of at most ``chunk`` games."""
    return [(s, min(s + chunk, first + games)) for s in range(first, first + games, chunk)]


def play_chunk(job: Job, seed: int, start: int, stop: int, out: np.ndarray | None = None) -> np.ndarray:
    """Result rows of games [start, stop) (a pure function of its arguments)."""
    mod = job.module
    width = layout.out_width(job.seats.shape[0], len(mod.COUNTERS))
    n = stop - start
    if out is None or out.shape[0] < n:
        out = np.zeros((n, width), dtype=np.int64)
    buf = out[:n]
    buf[:] = 0
    mod.play_games(job.params, job.seats, np.int64(seed), np.int64(start), buf)
    return buf


def set_threads(threads: int | None) -> int:
    maxt = numba.config.NUMBA_NUM_THREADS
    t = maxt if not threads else max(1, min(int(threads), maxt))
    numba.set_num_threads(t)
    return t


class PerGameWriter:
    """Streams one job's per-game rows to ``path`` (Parquet or CSV), one part per chunk.

    Parts go to a hidden temporary folder beside ``path``; ``close`` streams them into the
    final file (``sink_*``, so memory stays bounded) and renames it into place atomically.
    """

    def __init__(self, path: Path, fmt: str):
        self.path, self.fmt = path, fmt
        path.parent.mkdir(parents=True, exist_ok=True)
        self.tmpdir = Path(tempfile.mkdtemp(prefix=".pergame-", dir=path.parent))
        self.parts: list[Path] = []

    def write(self, job: Job, start: int, rows: np.ndarray) -> None:
        import polars as pl
        S = job.seats.shape[0]
        frame = {"game_index": np.arange(start, start + rows.shape[0], dtype=np.int64)}
        for s in range(S):
            frame[f"score_{s}"] = rows[:, s].copy()
        for s in range(S):
            frame[f"place_{s}"] = rows[:, S + s].copy()
        frame["winners"] = rows[:, 2 * S].copy()
        frame["length"] = rows[:, 2 * S + 1].copy()
        frame["timeout"] = (rows[:, 2 * S + 2] & layout.FLAG_TIMEOUT) != 0
        frame["decisions"] = rows[:, 2 * S + 3].copy()
        for i, c in enumerate(job.module.COUNTERS):
            frame[c.name] = rows[:, 2 * S + layout.N_FIXED + i].copy()
        part = self.tmpdir / f"part-{len(self.parts):06d}.parquet"
        pl.DataFrame(frame).write_parquet(part)
        self.parts.append(part)

    def close(self) -> None:
        import polars as pl
        if self.parts:
            lf = pl.scan_parquet([str(p) for p in self.parts])
            tmp = self.path.with_name("." + self.path.name + ".partial")
            if self.fmt == "csv":
                lf.sink_csv(tmp)
            else:
                lf.sink_parquet(tmp)
            os.replace(tmp, self.path)
        self.discard()

    def discard(self) -> None:
        shutil.rmtree(self.tmpdir, ignore_errors=True)


def run_jobs(jobs: list[Job], games: int, seed: int, threads: int | None = None,
             chunk: int = DEFAULT_CHUNK, progress: bool = True,
             per_game: list[PerGameWriter] | None = None, first_game: int = 0) -> list[Result]:
    """Play ``games`` games of each job (indices first_game ..), one progress bar over all.

    ``per_game``, when given, holds one writer per job.
    """
    from tqdm import tqdm
    set_threads(threads)
    total = games * len(jobs)
    bar = tqdm(total=total, unit="game", unit_scale=True, disable=not progress,
               file=sys.stderr, dynamic_ncols=True, leave=False)
    results = []
    try:
        for j, job in enumerate(jobs):
            bar.set_description(job.describe())
            acc = accumulators_for(job)
            lower = bool(job.module.LOWER_IS_BETTER)
            buf = None
            t0 = time.perf_counter()
            for start, stop in plan_chunks(first_game, games, chunk):
                buf = play_chunk(job, seed, start, stop, buf)
                acc.fold(buf, lower)
                if per_game is not None:
                    per_game[j].write(job, start, buf)
                bar.update(stop - start)
            results.append(Result(job, acc, games, seed, time.perf_counter() - t0))
    finally:
        bar.close()
    return results
