"""One validated run specification shared by every command that simulates.

``RunSpec`` holds everything a run needs (jobs, games per job, seed, threads, chunk, backend,
rotation, stopping rule, progress, output). ``RunSpec.validate`` checks all of it before anything
is simulated or created, so every command (`run`, `sweep`, `check`, `ladder`, `tune`, `ablate`,
year runs) and the Python API (``simcli.run``) inherit the same checks and the same output contract
(``simcli.output``): ``execute`` simulates, prints, and writes the result folder atomically.
"""
from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from simcli.config import jobs as cfg
from simcli.errors import SimError, WriteError
from simcli.report.output import OutputFolder
from simcli.config.schema import MAX_GAMES, SEED_MAX as MAX_SEED

DEFAULT_SEED = 1
DEFAULT_GAMES = 100_000
DEFAULT_CHUNK = 1 << 16
MAX_CHUNK = 1 << 20         # a chunk's result buffer is chunk x row width x 8 bytes
MAX_GAME_INDEX = 2**63 - 1  # game indices are int64 in the kernels
SCHEDULER_PREFLIGHT_S = 5.0  # how long a --scheduler may take to answer before anything runs


@dataclass
class Backend:
    name: str = "local"
    scheduler: Optional[str] = None
    workers: Optional[int] = None

    def validate(self, per_game: bool = False) -> None:
        if self.name not in ("local", "dask"):
            raise SimError(f"unknown --backend {self.name!r}; valid backends: local, dask")
        if self.name == "local" and (self.scheduler or self.workers):
            raise SimError("--scheduler and --workers need --backend dask")
        if self.name == "dask":
            if per_game:
                raise SimError("--per-game is not available with --backend dask")
            if bool(self.scheduler) == bool(self.workers):
                raise SimError("--backend dask needs --scheduler tcp://HOST:PORT (a running cluster) "
                               "or --workers N (a local cluster), one of the two")
            from simcli.engine.dask_backend import _distributed, _wait_reachable
            _distributed()  # one line if the dask extra is not installed
            if self.scheduler:
                _wait_reachable(self.scheduler, SCHEDULER_PREFLIGHT_S)

    def describe(self) -> dict:
        return {"backend": self.name, "scheduler": self.scheduler, "workers": self.workers}


def check_games(n, what: str = "--games") -> int:
    if isinstance(n, bool) or not isinstance(n, int):
        raise SimError(f"{what} {n!r} is not a whole number of games (1..{MAX_GAMES:,})")
    if not 1 <= n <= MAX_GAMES:
        raise SimError(f"{what} {n:,} is outside 1..{MAX_GAMES:,}")
    return n


def check_seed(seed, what: str = "--seed") -> int:
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise SimError(f"{what} {seed!r} is not a whole number in 0..{MAX_SEED}")
    return seed


@dataclass
class RunSpec:
    """Everything one simulation needs, validated once (``validate``) before anything runs.

    ``games`` is one count per job. ``output`` None: nothing is written (the Python API).
    ``post(tables, results)``, when given, returns (extra tables, extra files, lines to print)
    and replaces the standard printed summary (year runs and the ladder print their own).
    """
    jobs: list
    games: list
    seed: int = DEFAULT_SEED
    threads: Optional[int] = None
    chunk: int = DEFAULT_CHUNK
    backend: Backend = field(default_factory=Backend)
    rotate: bool = False
    until_ci: Optional[float] = None
    progress: bool = False
    per_game: bool = False
    fmt: str = "parquet"
    html: bool = False
    output: Optional[OutputFolder] = None
    extra_meta: dict = field(default_factory=dict)
    post: Optional[Callable] = None
    echo: Callable = print
    wide: bool = False            # printed tables in one block, every column, no cut cells
    threshold: float = 0.02       # findings: the smallest win-share effect that is a headline

    def validate(self) -> "RunSpec":
        from simcli.report import export
        if not self.jobs:
            raise SimError("nothing to run: the job list is empty")
        if isinstance(self.games, int):
            self.games = [self.games] * len(self.jobs)
        for n in self.games:
            check_games(n)
        check_seed(self.seed)
        if isinstance(self.chunk, bool) or not isinstance(self.chunk, int) or not 1 <= self.chunk <= MAX_CHUNK:
            raise SimError(f"--chunk {self.chunk!r} is outside 1..{MAX_CHUNK:,}")
        if self.threads is not None:
            if isinstance(self.threads, bool) or not isinstance(self.threads, int) or self.threads < 1:
                raise SimError(f"--threads {self.threads!r} is not a whole number >= 1")
        if self.until_ci is not None and not (0 < self.until_ci <= 1):
            raise SimError(f"--until-ci {self.until_ci} is outside (0, 1]")
        if self.fmt not in export.FORMATS:
            raise SimError(f"unknown --format {self.fmt!r}; valid formats: {', '.join(export.FORMATS)}")
        self.backend.validate(self.per_game)
        if self.per_game and self.rotate:
            raise SimError("--per-game and --rotate cannot be combined (per-game rows are per seating)")
        if self.output is not None:
            self.output.validate()
        return self

    def thread_note(self) -> Optional[str]:
        """A line saying what was used when --threads asks for more than this machine has."""
        import numba
        maxt = numba.config.NUMBA_NUM_THREADS
        if self.threads is not None and self.threads > maxt:
            return f"note: --threads {self.threads} is more than the {maxt} available; using {maxt}"
        return None


def simulate(spec: RunSpec, per_game=None):
    """Run the spec's jobs on its backend; returns one runner.Result per job."""
    from simcli.engine import runner
    counts = spec.games
    results = [None] * len(spec.jobs)
    for n in dict.fromkeys(counts):
        idx = [i for i, c in enumerate(counts) if c == n]
        group = [spec.jobs[i] for i in idx]
        if spec.backend.name == "dask":
            from simcli.engine.dask_backend import run_jobs_dask
            res = run_jobs_dask(group, n, spec.seed, spec.chunk, scheduler=spec.backend.scheduler,
                                workers=spec.backend.workers, progress=spec.progress,
                                rotate=spec.rotate, until_ci=spec.until_ci)
        else:
            writers = [per_game[i] for i in idx] if per_game is not None else None
            res = runner.run_jobs(group, n, spec.seed, spec.threads, spec.chunk, spec.progress, writers,
                                  rotate=spec.rotate, until_ci=spec.until_ci)
        for i, r in zip(idx, res):
            results[i] = r
    return results


def run_meta(results, spec: RunSpec, wall: float) -> dict:
    from simcli.report import export
    from simcli.engine import runner
    games = spec.games[0] if len(set(spec.games)) == 1 else spec.games
    return {
        "seed": spec.seed, "games": games, "threads": runner.set_threads(spec.threads),
        "chunk": spec.chunk, "wall_time_s": round(wall, 3),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "command": sys.argv, "packages": export.package_versions(),
        "rotate": spec.rotate, "until_ci": spec.until_ci, **spec.backend.describe(),
        "findings": {"threshold": spec.threshold, "alpha": 0.05},
        "jobs": [{"game": r.job.game, "version": r.job.module.VERSION, "variant": r.job.variant,
                  "players": r.job.players, "policies": r.job.policies, "rules": r.job.rules,
                  "labels": r.job.labels, "wall_time_s": round(r.wall, 3),
                  "notes": list(getattr(r.job.module, "REPORT_NOTES", ()))}
                 for r in results],
        **spec.extra_meta,
    }


def compute(spec: RunSpec, per_game=None):
    """Simulate and build the report tables: (results, tables, wall seconds)."""
    from simcli.report import tables as report
    if spec.backend.name == "local":
        # cold builds compile first, concurrently, saying so (Dask workers compile their own)
        from simcli.engine.compile import ensure_compiled
        ensure_compiled(spec.jobs, lambda line: print(line, file=sys.stderr, flush=True))
    t0 = time.time()
    results = simulate(spec, per_game)
    return results, report.build_tables(results), time.time() - t0


def execute(spec: RunSpec):
    """Validate, simulate, print, and write the result folder under the output contract.

    Returns (tables, final folder or None).
    """
    from simcli.report import export
    from simcli.report import tables as report
    from simcli.engine import runner
    from simcli.report.headers import run_header
    spec.validate()
    echo = spec.echo
    play = spec.extra_meta.get("play") or {}
    from simcli.report.fmt import fit
    for line in fit(run_header(spec.jobs, spec.games, spec.rotate, play, suite=play.get("suite", False))):
        echo(line)
    note = spec.thread_note()
    if note:
        print(note, file=sys.stderr)
    writers = None
    out = spec.output
    if spec.per_game and out is not None:
        staging = out.stage()
        names = ["per_game"] if len(spec.jobs) == 1 else [
            f"per_game-{i:03d}-{j.game}-{j.variant}-{j.players}p" for i, j in enumerate(spec.jobs)]
        writers = [runner.PerGameWriter(staging / f"{n}.{spec.fmt}", spec.fmt) for n in names]
    try:
        results, tables, wall = compute(spec, writers)
    except (OSError, _polars_error()) as e:
        if out is None or writers is None:
            raise
        out.abandon()  # a per-game stream could not be written
        raise write_failure(out.path, e) from None
    except BaseException:
        if out is not None:
            out.abandon()
        raise
    meta = run_meta(results, spec, wall)
    files = {}
    if spec.post is not None:
        extra_tables, files, lines = spec.post(tables, results)
        tables.update(extra_tables)
        for line in lines:
            echo(line)
    else:
        export.print_tables(tables, echo, wide=spec.wide)
    for line in report.skill_gaps(tables):
        echo(line)
    if spec.until_ci is not None:
        from simcli.report.fmt import fit
        for line in until_ci_lines(results, spec):
            for part in fit(line):
                echo(part)
    from simcli.report import findings
    findings.add_to(tables, findings.Settings(threshold=spec.threshold), echo)
    if out is None:
        return tables, None
    final = write_result(out, tables, spec.fmt, meta, files, writers, spec.html)
    n_files = sum(1 for p in final.iterdir() if not p.name.startswith("."))
    echo(f"wrote {n_files} files to {final} ({wall:.1f} s)")
    return tables, final


def until_ci_lines(results, spec: RunSpec) -> list[str]:
    """Why each job stopped: every interval narrow enough, or the --games cap."""
    lines = []
    for i, r in enumerate(results):
        cap = spec.games[i]
        why = (f"every win-share interval narrower than {spec.until_ci} (--until-ci)" if r.games < cap
               else f"the --games cap; an interval is still {spec.until_ci} or wider")
        from simcli.report.fmt import short_policies
        job = f"{r.job.game}/{r.job.variant}/{r.job.players}p [{short_policies(r.job.policy_label)}]"
        lines.append(f"{job}: stopped after {r.games:,} of {cap:,} deals: {why}")
    return lines


def _polars_error():
    import polars as pl
    return pl.exceptions.PolarsError


def write_failure(path, e: BaseException) -> WriteError:
    """One line naming the path and the OS's words for the cause (Polars wraps them)."""
    import re
    text = " ".join(str(e).split())
    m = re.search(r"os error (\d+)", text)
    cause = getattr(e, "strerror", None) or (os.strerror(int(m.group(1))) if m else text or type(e).__name__)
    return WriteError(f"cannot write {path}: {cause}")


def write_result(out: OutputFolder, tables: dict, fmt: str, meta: dict, files: dict | None = None,
                 writers=None, html: bool = False):
    """Write tables, meta.json, extra files, per-game streams and the HTML page into the staging
    folder, then rename it into place. Any failure leaves nothing behind (exit 1 for OS errors)."""
    from simcli.report import export
    import polars as pl
    staging = out.stage()
    try:
        export.write_tables(tables, staging, fmt, meta, files)
        for w in writers or []:
            w.close()
        if html:
            from simcli.report.html import write_html
            write_html(staging, staging / "report.html", shown_as=out.path)
    except (OSError, pl.exceptions.PolarsError) as e:
        out.abandon()
        raise write_failure(out.path, e) from None
    except BaseException:
        out.abandon()
        raise
    return out.commit()


def resolve_run(game: Optional[str], *, variant=None, players=None, policy=None, seats=None,
                rules: Optional[dict] = None, games: Optional[int] = None, seed: Optional[int] = None,
                year=None, date=None, birthday=None, cards=None) -> tuple[list, list, int, dict, Optional[Callable]]:
    """The user's words for `run` -> (jobs, games per job, seed, extra meta, post).

    Shared by the CLI's `run` and the Python API, so both accept and refuse the same things.
    """
    if games is not None:
        check_games(games)
    if seed is not None:
        check_seed(seed)
    if game is None:
        if any(x is not None for x in (variant, players, policy, seats)) or rules:
            raise SimError("--variant/--players/--policy/--seats/--rule need a GAME; "
                           "without one, simcli run plays the default suite (configs/suite.toml)")
        if any(x is not None for x in (year, date, birthday, cards)):
            raise SimError("--year, --date, --birthday and --cards need GAME daily-weather")
        jobs, suite_games, suite_seed = cfg.suite_jobs()
        counts = [games] * len(jobs) if games else suite_games
        return jobs, counts, (suite_seed if seed is None else seed), {"play": {"suite": True}}, None
    if game == "daily-weather":
        from simcli.analyses import calendar as daily
        jobs, n, extra, post = daily.calendar_run(variant, players, policy, seats, rules or {}, games,
                                                  year, date, birthday, cards)
        return jobs, [n] * len(jobs), (DEFAULT_SEED if seed is None else seed), extra, post
    if any(x is not None for x in (year, date, birthday, cards)):
        raise SimError("--year, --date, --birthday and --cards are for daily-weather only")
    policy, extra = designed_default(game, policy, seats)
    jobs = cfg.expand(game, variant, players, policy=policy, seats=seats, rules=rules or {})
    n = games or DEFAULT_GAMES
    return jobs, [n] * len(jobs), (DEFAULT_SEED if seed is None else seed), extra, None


def designed_default(game: str, policy: Optional[str], seats: Optional[str]) -> tuple[Optional[str], dict]:
    """(policy to use, meta) : the game's designed play when neither --policy nor --seats is given."""
    if policy is not None or seats is not None:
        return policy, {"play": {"designed": False}}
    designed = cfg.designed_play(game)
    return designed, {"play": {"designed": True, "policy": designed}}

