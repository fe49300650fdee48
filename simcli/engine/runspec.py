"""One validated run specification shared by every command that simulates.

``RunSpec`` holds everything a run needs (jobs, games per job, seed, threads, chunk, backend,
rotation, stopping rule, progress, output). ``RunSpec.validate`` checks all of it before anything
is simulated or created, so every command (`run`, `sweep`, `check`, `ladder`, `tune`, `ablate`,
year runs) and the Python API (``simcli.run``) inherit the same checks and the same output contract
(``simcli.output``): ``execute`` simulates, prints, and writes the result folder atomically.
"""
from __future__ import annotations

import contextlib
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

    @contextlib.contextmanager
    def executor(self, spec: "RunSpec"):
        """Where the spec's chunk tasks run (``simcli.engine.executor``): here, or on a Dask
        cluster (connected to, or started and stopped here), its workers checked once."""
        from simcli.engine.executor import DaskExecutor, LocalExecutor
        if self.name == "local":
            yield LocalExecutor(spec.threads)
            return
        from simcli.engine import dask_backend as db
        numba_threads = db.local_numba_threads(int(self.workers)) if self.workers else None
        with db.dask_client(self.scheduler, self.workers) as client:
            db.check_workers(client, spec.jobs)
            yield DaskExecutor(client, numba_threads)


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


@dataclass(kw_only=True)
class RunSpec:
    """Everything one simulation needs, validated once (``validate``) before anything runs.

    ``games`` is one count per job (or one for all). ``output`` None: nothing is written (the
    Python API). What is measured, printed and added to the files is the ``Analysis`` given to
    ``execute``; the spec only says which games are played, where, and where results go.
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
    echo: Callable = print
    wide: bool = False            # printed tables in one block, every column, no cut cells
    threshold: float = 0.02       # findings: the smallest win-share effect that is a headline
    resume: bool = False          # continue from the journal of an interrupted run (same --out)

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


class Analysis:
    """What a command measures, on top of the games its ``RunSpec`` names.

    The base class is ``simcli run``: every job is played by the runner (or on Dask) and
    reported as the standard tables. A command that measures something else (tune's race,
    ablate's restricted seats, the ladder, a year of daily-weather) overrides the parts that
    differ; ``execute`` does the rest the same way for all of them (validation, compile check,
    progress, printing, one meta.json shape, the output contract, the "wrote N files" line).
    """
    name = "run"
    has_skill = True   # the command takes --skill: a verdict at one level of play says how to check others

    def header(self, spec: RunSpec) -> list[str]:
        """Printed before anything is played: what is simulated, with which play, what --games counts."""
        from simcli.report.headers import run_header
        play = spec.extra_meta.get("play") or {}
        return [run_header(spec.jobs, spec.games, spec.rotate, play, suite=play.get("suite", False))]

    def simulate(self, spec: RunSpec, ex, per_game=None) -> list:
        """Play; returns one ``runner.Result`` per job (or what ``tables`` expects)."""
        return simulate(spec, ex, per_game)

    def tables(self, spec: RunSpec, results) -> dict:
        from simcli.report import tables as report
        return report.build_tables(results)

    def lines(self, spec: RunSpec, tables: dict, results) -> list[str]:
        """What is printed after the run (the tables, then notes)."""
        from simcli.report import export
        from simcli.report import tables as report
        from simcli.report.fmt import fit
        out: list[str] = []
        export.print_tables(tables, out.append, wide=spec.wide)
        out += report.skill_gaps(tables)
        if spec.until_ci is not None:
            out += [part for line in until_ci_lines(results, spec) for part in fit(line)]
        return out

    def verdict(self, spec: RunSpec, tables: dict, results) -> None:
        """The findings: printed last (worst first), and added to the tables as ``findings``."""
        from simcli.report import findings
        findings.add_to(tables, findings.Settings(threshold=spec.threshold, skill_note=self.has_skill),
                        spec.echo)

    def files(self, spec: RunSpec, tables: dict) -> dict:
        """Extra files (name -> bytes) beside the tables."""
        return {}

    def meta(self, spec: RunSpec, results) -> dict:
        """This analysis' own entries of meta.json (beside the shared ones)."""
        return {}

    def settings(self) -> dict:
        """What identifies this analysis' work beside the spec (a resumed run must match it):
        by default its public attributes before it runs."""
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}

    def total_games(self, spec: RunSpec) -> int | None:
        """The deals this analysis plays, when its tasks are the runner's chunks (else None)."""
        return sum(spec.games) if type(self).simulate is Analysis.simulate else None


class PostAnalysis(Analysis):
    """A run whose printed summary, extra tables and files come from ``post(tables, results)``
    -> (extra tables, files, lines) (the daily-weather year run)."""

    def __init__(self, post: Callable):
        self.post = post
        self._files: dict = {}

    def tables(self, spec, results):
        tables = super().tables(spec, results)
        extra, self._files, self._lines = self.post(tables, results)
        tables.update(extra)
        return tables

    def lines(self, spec, tables, results):
        from simcli.report import tables as report
        return list(self._lines) + report.skill_gaps(tables)

    def files(self, spec, tables):
        return self._files


def simulate(spec: RunSpec, ex, per_game=None):
    """Run the spec's jobs on ``ex``'s backend; returns one runner.Result per job."""
    from simcli.engine import runner
    counts = spec.games
    results = [None] * len(spec.jobs)
    for n in dict.fromkeys(counts):
        idx = [i for i, c in enumerate(counts) if c == n]
        group = [spec.jobs[i] for i in idx]
        if ex.name == "dask":
            from simcli.engine.dask_backend import run_jobs_on
            res = run_jobs_on(ex.client, group, n, spec.seed, spec.chunk, spec.progress,
                              rotate=spec.rotate, until_ci=spec.until_ci, numba_threads=ex.numba_threads,
                              check=False, journal=getattr(ex, "journal", None))
        else:
            writers = [per_game[i] for i in idx] if per_game is not None else None
            res = runner.run_jobs(group, n, spec.seed, spec.threads, spec.chunk, spec.progress, writers,
                                  rotate=spec.rotate, until_ci=spec.until_ci,
                                  journal=getattr(ex, "journal", None), ready=getattr(ex, "ready", None))
        for i, r in zip(idx, res):
            results[i] = r
    return results


def job_meta(job, result=None) -> dict:
    """One job's entry in meta.json (with what was played, when the analysis has a Result)."""
    entry = {"game": job.game, "version": job.module.VERSION, "variant": job.variant,
             "players": job.players, "policies": job.policies, "rules": job.rules,
             "labels": job.labels, "notes": list(job.notes)}
    if result is not None and hasattr(result, "games"):
        entry.update(games=result.games, wall_time_s=round(result.wall, 3))
    return entry


def run_meta(spec: RunSpec, analysis: Analysis, results, wall: float, threads: int) -> dict:
    """meta.json: the same shape for every command that simulates."""
    from simcli.report import export
    games = spec.games[0] if len(set(spec.games)) == 1 else spec.games
    per_job = results if isinstance(results, list) and len(results) == len(spec.jobs) else [None] * len(spec.jobs)
    return {
        "command": sys.argv, "analysis": analysis.name, "seed": spec.seed, "games": games,
        "threads": threads, "chunk": spec.chunk, "wall_time_s": round(wall, 3),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "packages": export.package_versions(),
        "rotate": spec.rotate, "until_ci": spec.until_ci, **spec.backend.describe(),
        "findings": {"threshold": spec.threshold, "alpha": 0.05},
        "jobs": [job_meta(j, r) for j, r in zip(spec.jobs, per_job)],
        **analysis.meta(spec, results), **spec.extra_meta,
    }


def fingerprint(spec: RunSpec, analysis: Analysis) -> dict:
    """What a journal must match to be resumed: everything that decides the results."""
    from simcli.engine.journal import code_version, digest
    jobs = [(j.game, int(j.module.VERSION), j.variant, j.players, list(j.policies), j.rules,
             j.params, j.seats) for j in spec.jobs]
    return {"code": code_version(), "analysis": analysis.name, "settings": digest(analysis.settings()),
            "jobs": digest(jobs), "games": spec.games, "seed": spec.seed, "chunk": spec.chunk,
            "rotate": spec.rotate, "until_ci": spec.until_ci, "per_game": spec.per_game}


def open_journal(spec: RunSpec, analysis: Analysis):
    """The journal of a run that writes a folder (None for the Python API): loaded with
    ``--resume``, else refused (or discarded with --force) if one is left from an interruption."""
    from simcli.engine.journal import Journal
    out = spec.output
    if out is None:
        return None
    journal = Journal(out.target or out.path, fingerprint(spec, analysis), resume=spec.resume,
                      force=out.force, option=out.option, shown=out.path,
                      total_games=analysis.total_games(spec)).open()
    line = journal.resuming_line()
    if line:
        print(line, file=sys.stderr, flush=True)
    elif spec.resume:
        print(f"--resume: no journal of {out.option} {out.path}; starting from the beginning",
              file=sys.stderr, flush=True)
    return journal


def compute(spec: RunSpec, analysis: Analysis | None = None, per_game=None, journal=None):
    """Compile what is missing, simulate on the spec's backend and build the tables:
    (results, tables, wall seconds, threads used). With a ``journal``, finished tasks are
    answered from it and new ones recorded (``simcli.engine.journal``)."""
    from simcli.engine.journal import journaled
    analysis = analysis or Analysis()
    compiling, forget = None, None
    if spec.backend.name == "local":
        # cold builds compile concurrently, saying so (Dask workers compile their own); the
        # runner's jobs start as soon as their game is compiled, the others wait for all of it
        from simcli.engine import compile as comp
        from simcli.engine.interrupt import on_interrupt
        compiling = comp.start_compiling(play_order(spec), _echo_beside_bar)
        if compiling is not None:
            forget = on_interrupt(compiling.stop_for_exit)   # Ctrl-C / SIGTERM stop the compile processes
            if type(analysis).simulate is not Analysis.simulate:
                _wait_all(compiling, forget)
                compiling = None
    t0 = time.time()
    if journal is not None:
        journal.opened = time.monotonic()  # compiling is not work a journal keeps
    try:
        with spec.backend.executor(spec) as ex:
            if compiling is not None:
                ex.ready = compiling.wait_for
            results = analysis.simulate(spec, journaled(ex, journal), per_game)
            threads = ex.threads
        if compiling is not None:
            _wait_all(compiling, forget)   # every job waited for its game: only the last line is left
    except BaseException:
        if compiling is not None:
            compiling.cancel()
            forget()
        raise
    if journal is not None:
        journal.flush()  # everything played is kept if what follows fails
    waited = compiling.waited if compiling is not None else 0.0   # not simulating: compiling
    return results, analysis.tables(spec, results), time.time() - t0 - waited, threads


def _echo_beside_bar(line: str) -> None:
    """A line on stderr that a progress bar (tqdm, drawn on stderr) does not overwrite."""
    tqdm = sys.modules.get("tqdm")
    if tqdm is not None:
        tqdm.tqdm.write(line, file=sys.stderr)
        sys.stderr.flush()
    else:
        print(line, file=sys.stderr, flush=True)


def _wait_all(compiling, forget) -> None:
    """Wait for a background compile to finish, then drop its interrupt cleanup."""
    try:
        compiling.wait_all()
    except BaseException:
        compiling.cancel()
        raise
    finally:
        forget()


def play_order(spec: RunSpec) -> list:
    """The spec's jobs in the order ``simulate`` plays them (grouped by their game count)."""
    games = spec.games if isinstance(spec.games, list) else [spec.games] * len(spec.jobs)
    return [j for n in dict.fromkeys(games) for j, c in zip(spec.jobs, games) if c == n]


def execute(spec: RunSpec, analysis: Analysis | None = None):
    """Validate, simulate, print, and write the result folder under the output contract.

    Finished work is journaled as it goes (``simcli.engine.journal``): if the command fails or is
    interrupted, the journal stays and ``--resume`` continues it. Returns (tables, final folder
    or None).
    """
    analysis = analysis or Analysis()
    spec.validate()
    journal = open_journal(spec, analysis)
    from simcli.engine.journal import kept_on_failure
    with kept_on_failure(journal):
        tables, final = _simulate_and_write(spec, analysis, journal)
    if journal is not None:
        journal.close(keep=False)  # the result is complete: the journal has done its work
    return tables, final


def _simulate_and_write(spec: RunSpec, analysis: Analysis, journal):
    from simcli.engine import runner
    from simcli.report.fmt import fit
    for line in analysis.header(spec):
        for part in fit(line):
            spec.echo(part)
    note = spec.thread_note()
    if note:
        print(note, file=sys.stderr)
    writers = None
    out = spec.output
    if spec.per_game and out is not None:
        staging = out.stage()
        names = ["per_game"] if len(spec.jobs) == 1 else [
            f"per_game-{i:03d}-{j.game}-{j.variant}-{j.players}p" for i, j in enumerate(spec.jobs)]
        writers = [runner.PerGameWriter(staging / f"{n}.{spec.fmt}", spec.fmt,
                                        parts=journal.folder / f"per_game-{i:03d}")
                   for i, n in enumerate(names)]
    try:
        results, tables, wall, threads = compute(spec, analysis, writers, journal)
    except (OSError, _polars_error()) as e:
        if out is None or writers is None:
            raise
        out.abandon()  # a per-game stream could not be written
        raise write_failure(out.path, e) from None
    except BaseException:
        if out is not None:
            out.abandon()
        raise
    for line in analysis.lines(spec, tables, results):
        spec.echo(line)
    analysis.verdict(spec, tables, results)
    if out is None:
        return tables, None
    meta = run_meta(spec, analysis, results, wall, threads)
    if journal is not None:
        meta["journal"] = journal.describe()
    final = write_result(out, tables, spec.fmt, meta, analysis.files(spec, tables), writers, spec.html)
    n_files = sum(1 for p in final.iterdir() if not p.name.startswith("."))
    spec.echo(f"wrote {n_files} files to {final} ({wall:.1f} s)")
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
