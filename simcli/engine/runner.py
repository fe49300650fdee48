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
from dataclasses import dataclass, field, replace
from pathlib import Path

import numba
import numpy as np

from kernels import arc, layout
from kernels.tally import Accumulators
from simcli.config.jobs import Job

DEFAULT_CHUNK = 1 << 16


@dataclass
class PolicyTally:
    """Per-deal win units by policy, for policy win shares and paired differences.

    For each game g and policy q, ``u_q(g)`` = win units (x60) won by q's seats summed over
    all rotations of that deal. Kept as integer sums over games of u_q, u_q^2 and of the
    scaled paired difference d_ab(g) = u_a(g) * n_b - u_b(g) * n_a (n_q = seats q holds)
    and d_ab^2, so means and standard errors come out exactly whatever the chunking.
    """
    names: list
    seats_held: np.ndarray          # n_q
    rotations: int
    games: int = 0
    total: np.ndarray = None        # sum_g u_q
    total_sq: np.ndarray = None     # sum_g u_q^2
    pair: np.ndarray = None         # sum_g d_ab
    pair_sq: np.ndarray = None      # sum_g d_ab^2

    def __post_init__(self):
        q = len(self.names)
        for name, shape in (("total", (q,)), ("total_sq", (q,)), ("pair", (q, q)), ("pair_sq", (q, q))):
            if getattr(self, name) is None:
                setattr(self, name, np.zeros(shape, dtype=np.int64))

    def add_games(self, units: np.ndarray) -> None:
        """Fold u (games x policies) for one chunk."""
        n = self.seats_held
        self.games += units.shape[0]
        self.total += units.sum(axis=0)
        self.total_sq += (units * units).sum(axis=0)
        d = units[:, :, None] * n[None, None, :] - units[:, None, :] * n[None, :, None]
        self.pair += d.sum(axis=0)
        self.pair_sq += (d * d).sum(axis=0)

    def merge(self, other: "PolicyTally") -> None:
        self.games += other.games
        for name in ("total", "total_sq", "pair", "pair_sq"):
            getattr(self, name).__iadd__(getattr(other, name))


@dataclass
class Result:
    """One job's integer tallies plus how they were obtained.

    ``acc`` sums every rotation (so with ``rotations`` R > 1 it describes R x ``games`` games,
    each seat having held every policy equally often) and holds per-deal squares (``win_sq``);
    ``policy`` is set for rotated runs.
    """
    job: Job
    acc: Accumulators
    games: int
    seed: int
    wall: float = 0.0
    rotations: int = 1
    policy: PolicyTally | None = None
    extra: dict = field(default_factory=dict)


def rotated_jobs(job: Job) -> list[Job]:
    """The job once per rotation of its players' seat policies (fixed seats stay put).

    Rotation r gives seat s the policy that seat (s + r) mod P has in ``job``. Deals depend only
    on (seed, game index), so every rotation replays the same deals.
    """
    P = job.players
    out = []
    for r in range(P):
        order = [(s + r) % P for s in range(P)] + list(range(P, job.seats.shape[0]))
        seats = job.seats[order].copy()
        policies = [job.policies[i] for i in order]
        out.append(replace(job, seats=seats, policies=policies))
    return out


def policy_tally_for(job: Job, rotations: int) -> PolicyTally:
    names = list(dict.fromkeys(job.policies[: job.players]))
    held = np.array([job.policies[: job.players].count(q) for q in names], dtype=np.int64)
    return PolicyTally(names, held, rotations)


def win_units(rows: np.ndarray, S: int) -> np.ndarray:
    """(games x S) win units: SHARE_UNIT // k to each of k winners."""
    winners = rows[:, layout.col_winners(S)]
    bits = (winners[:, None] >> np.arange(S)[None, :]) & 1
    k = np.maximum(bits.sum(axis=1), 1)
    return bits * (layout.SHARE_UNIT // k)[:, None]


def accumulators_for(job: Job) -> Accumulators:
    mod = job.module
    S = job.seats.shape[0]
    lo, hi = mod.score_range(job.players, job.params)
    llo, lhi = mod.length_range(job.players, job.params)
    return Accumulators(S, len(mod.COUNTERS), int(lo), int(hi), int(llo), int(lhi))


class ChunkPlan:
    """[start, stop) game-index ranges of at most ``chunk`` games, computed on demand.

    A lazy sequence (``len``, indexing, iteration), so ``--games 10**18`` costs no memory.
    With ``segment`` the ranges also break at every multiple of ``segment`` games from
    ``first`` (the ``--until-ci`` checkpoints): chunks fill each segment from its start.
    """

    def __init__(self, first: int, games: int, chunk: int, segment: int | None = None):
        if chunk < 1:
            raise ValueError("chunk must be at least 1")
        self.first, self.games, self.chunk = int(first), int(games), int(chunk)
        self.segment = int(segment) if segment else max(self.games, 1)
        self.per_segment = -(-self.segment // self.chunk)
        full, rest = divmod(self.games, self.segment)
        self.n = full * self.per_segment + -(-rest // self.chunk)

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> tuple[int, int]:
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError(i)
        seg, k = divmod(i, self.per_segment)
        seg_start = seg * self.segment
        seg_stop = min(seg_start + self.segment, self.games)
        start = seg_start + k * self.chunk
        return self.first + start, self.first + min(start + self.chunk, seg_stop)

    def __iter__(self):
        for i in range(self.n):
            yield self[i]

    def at_checkpoint(self, i: int) -> bool:
        """True when chunk i ends a segment (an ``--until-ci`` checkpoint) or the plan."""
        stop = self[i][1] - self.first
        return stop % self.segment == 0 or stop == self.games


def plan_chunks(first: int, games: int, chunk: int, segment: int | None = None) -> ChunkPlan:
    """[start, stop) game-index ranges of at most ``chunk`` games (a lazy ``ChunkPlan``)."""
    return ChunkPlan(first, games, chunk, segment)


def play_chunk(job: Job, seed: int, start: int, stop: int, out: np.ndarray | None = None) -> np.ndarray:
    """Result rows of games [start, stop) (a pure function of its arguments)."""
    mod = job.module
    width = layout.out_width(job.seats.shape[0], len(mod.COUNTERS))
    n = stop - start
    if out is None or out.shape[0] < n:
        out = np.zeros((n, width), dtype=np.int64)
    buf = out[:n]   # not zeroed here: every game's play_one writes every column of its row
    mod.play_games(job.params, job.seats, np.int64(seed), np.int64(start), buf)
    return buf


def set_threads(threads: int | None) -> int:
    maxt = numba.config.NUMBA_NUM_THREADS
    t = maxt if not threads else max(1, min(int(threads), maxt))
    numba.set_num_threads(t)
    return t


class PerGameWriter:
    """Streams one job's per-game rows to ``path`` (Parquet or CSV), one part per chunk.

    Parts go to a hidden temporary folder beside ``path`` (or to ``parts``, a folder in the
    run's journal, so that a resumed run keeps the parts of its finished chunks: ``adopt``);
    ``close`` streams them into the final file (``sink_*``, so memory stays bounded) and
    renames it into place atomically.
    """

    def __init__(self, path: Path, fmt: str, parts: Path | None = None):
        self.path, self.fmt = path, fmt
        path.parent.mkdir(parents=True, exist_ok=True)
        self._own = parts is None  # parts in a journal stay until the journal is removed
        if parts is None:
            self.tmpdir = Path(tempfile.mkdtemp(prefix=".pergame-", dir=path.parent))
        else:
            parts.mkdir(parents=True, exist_ok=True)
            self.tmpdir = parts
        self.parts: list[Path] = []

    def _next_part(self) -> Path:
        return self.tmpdir / f"part-{len(self.parts):06d}.parquet"

    def adopt(self) -> None:
        """A chunk answered from the journal: its part was written before the chunk was kept."""
        part = self._next_part()
        if not part.is_file():
            from simcli.errors import SimError
            raise SimError(f"--resume: the journal lacks the per-game part {part.name} of a "
                           f"finished chunk (it is corrupt); rerun with --force to start again")
        self.parts.append(part)

    def write(self, job: Job, start: int, rows: np.ndarray) -> None:
        import polars as pl
        row = job.row
        frame = {"game_index": np.arange(start, start + rows.shape[0], dtype=np.int64)}
        for s in range(row.S):
            frame[f"score_{s}"] = rows[:, row.scores][:, s].copy()
        for s in range(row.S):
            frame[f"place_{s}"] = rows[:, row.places][:, s].copy()
        frame["winners"] = rows[:, row.winners].copy()
        frame["length"] = rows[:, row.length].copy()
        frame["timeout"] = (rows[:, row.flags] & layout.FLAG_TIMEOUT) != 0
        frame["decisions"] = rows[:, row.decisions].copy()
        for i, c in enumerate(job.module.COUNTERS):
            frame[c.name] = rows[:, row.counter(i)].copy()
        part = self._next_part()
        tmp = part.with_name("." + part.name)
        pl.DataFrame(frame).write_parquet(tmp)
        os.replace(tmp, part)
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
        if self._own:
            shutil.rmtree(self.tmpdir, ignore_errors=True)


@dataclass
class ChunkTally:
    """What one chunk of one job contributes: a pure function of (job, seed, start, stop, rotate)."""
    acc: Accumulators
    policy: PolicyTally | None
    games: int


def chunk_tally(job: Job, seed: int, start: int, stop: int, rotate: bool = False,
                buf: np.ndarray | None = None, per_game: "PerGameWriter | None" = None,
                observe=None) -> ChunkTally:
    """Play games [start, stop) of ``job`` (every rotation when ``rotate``) and fold them.

    ``observe(rows)``, when given, sees each played block of rows (once per rotation) before the
    buffer is reused (``simcli/analyses/skill.py`` takes paired per-deal metrics from them).

    Each deal's per-seat win units are summed over its rotations before they are squared
    (``Accumulators.fold_deals``): the deal, not the game, is the independent unit.
    """
    if not rotate:
        acc = accumulators_for(job)
        buf = play_chunk(job, seed, start, stop, buf)
        acc.fold(buf, bool(job.module.LOWER_IS_BETTER))
        if observe is not None:
            observe(buf)
        if per_game is not None:
            per_game.write(job, start, buf)
        return ChunkTally(acc, None, stop - start)
    jobs = rotated_jobs(job)
    acc = accumulators_for(job)
    lower = bool(job.module.LOWER_IS_BETTER)
    pt = policy_tally_for(job, len(jobs))
    S = job.seats.shape[0]
    units = np.zeros((stop - start, len(pt.names)), dtype=np.int64)
    seat_units = np.zeros((stop - start, S), dtype=np.int64)
    arc_hits = np.zeros((stop - start, arc.N_SLOTS, 2), dtype=np.int64) if S > 1 else None
    for rj in jobs:
        buf = play_chunk(rj, seed, start, stop, buf)
        acc.fold(buf, lower, game_is_deal=False)
        if observe is not None:
            observe(buf)
        if arc_hits is not None:
            acc.arc_hits(buf, arc_hits)     # a deal's rotations add into its row
        if per_game is not None:
            per_game.write(rj, start, buf)
        u = win_units(buf, S)
        seat_units += u
        for qi, q in enumerate(pt.names):
            cols = [s for s in range(rj.players) if rj.policies[s] == q]
            units[:, qi] += u[:, cols].sum(axis=1)
    acc.fold_deals(seat_units)
    if arc_hits is not None:
        acc.fold_arc_deals(arc_hits)
    pt.add_games(units)
    return ChunkTally(acc, pt, stop - start)


# --until-ci looks at the intervals only after multiples of this many deals, whatever --chunk
# or backend: the stopping point is then the same for every chunk size
UNTIL_CI_STEP = 4096


def widest_interval(acc: Accumulators, policy: PolicyTally | None) -> float:
    """The widest 95% interval among seat win shares and policy win shares (both over deals)."""
    from simcli.stats import policy_share, seat_share
    if int(acc.misc[0]) == 0:
        return float("inf")
    rotations = policy.rotations if policy is not None else 1
    w = 0.0
    for s in range(acc.n_seats):
        r = seat_share(acc, s, rotations)
        w = max(w, r["high"] - r["low"])
    if policy is not None:
        for qi in range(len(policy.names)):
            _, lo, hi = policy_share(policy, qi)
            w = max(w, hi - lo)
    return w


# a job with a search seat plays tens of games a second: with a progress bar it is played in
# chunks this small, so the bar moves every few seconds (results do not depend on the chunk)
SLOW_CHUNK = 128


def progress_chunk(job: Job, chunk: int, progress: bool) -> int:
    """The chunk a job is played in: ``SLOW_CHUNK`` at most for a search player under a bar."""
    if not progress:
        return chunk
    from simcli.engine.compile import _has_search
    return min(chunk, SLOW_CHUNK) if _has_search(job) else chunk


CHUNK_TASK = "chunk_tally"  # the journal's name of a chunk task, the same on every backend


def journaled_chunk(journal, job: Job, seed: int, start: int, stop: int, rotate: bool, buf,
                    writer: PerGameWriter | None) -> ChunkTally:
    """``chunk_tally``, answered from the journal when it holds this chunk."""
    def play():
        return chunk_tally(job, seed, start, stop, rotate, buf, writer)
    if journal is None:
        return play()
    replay = journal.has_next()
    ct = journal.call(CHUNK_TASK, (job, seed, start, stop, rotate), play)
    if replay and writer is not None:
        writer.adopt()
    return ct


def run_jobs(jobs: list[Job], games: int, seed: int, threads: int | None = None,
             chunk: int = DEFAULT_CHUNK, progress: bool = True,
             per_game: list[PerGameWriter] | None = None, first_game: int = 0,
             rotate: bool = False, until_ci: float | None = None, journal=None,
             ready=None) -> list[Result]:
    """Play ``games`` deals of each job (indices first_game ..), one progress bar over all.

    ``rotate`` replays each deal once per rotation of the seat policies. ``until_ci`` stops a
    job early once every win-share interval is narrower than it; the rule is evaluated only at
    checkpoints every ``UNTIL_CI_STEP`` deals (and at ``games``), so the deals played are the
    same for any chunk size or backend. ``per_game`` holds one writer per job. One result
    buffer of at most ``chunk`` rows per job is reused for every chunk. With a ``journal``
    (``simcli.engine.journal``) finished chunks are answered from it and new ones recorded.
    ``ready(job)``, when given, is called before each job and returns once the job can run (a
    first run compiling in the background: ``simcli.engine.compile.start_compiling``).
    """
    from tqdm import tqdm
    set_threads(threads)
    reps = [(job.players if rotate else 1) for job in jobs]
    bar = tqdm(total=sum(games * r for r in reps), unit="game", unit_scale=True,
               disable=not progress, file=sys.stderr, dynamic_ncols=True, leave=False)
    results = []
    try:
        for j, job in enumerate(jobs):
            bar.set_description(job.describe())
            if ready is not None:
                ready(job)
            acc = accumulators_for(job)
            pt = policy_tally_for(job, reps[j]) if rotate else None
            played = 0
            t0 = time.perf_counter()
            c = progress_chunk(job, chunk, progress)
            plan = plan_chunks(first_game, games, c, UNTIL_CI_STEP if until_ci is not None else None)
            width = layout.out_width(job.seats.shape[0], len(job.module.COUNTERS))
            buf = np.zeros((min(c, games), width), dtype=np.int64)
            writer = per_game[j] if per_game is not None else None
            for i, (start, stop) in enumerate(plan):
                ct = journaled_chunk(journal, job, seed, start, stop, rotate, buf, writer)
                acc.merge(ct.acc)
                if pt is not None:
                    pt.merge(ct.policy)
                played += ct.games
                bar.update(ct.games * reps[j])
                if (until_ci is not None and played < games and plan.at_checkpoint(i)
                        and widest_interval(acc, pt) < until_ci):
                    bar.update((games - played) * reps[j])
                    break
            results.append(Result(job, acc, played, seed, time.perf_counter() - t0, reps[j], pt))
    finally:
        bar.close()
    return results
