"""The simcli command line (Typer). Commands stay thin: parse -> resolve -> run -> report -> export."""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Optional

import click
import typer

try:  # newer Typer vendors its own copy of click; its exceptions are separate classes
    from typer._click import exceptions as _typer_click
    _CLICK_ERRORS = (click.exceptions.ClickException, _typer_click.ClickException)
    _ABORTS = (click.exceptions.Abort, getattr(_typer_click, "Abort", click.exceptions.Abort))
except ImportError:  # pragma: no cover - older Typer uses click itself
    _CLICK_ERRORS = (click.exceptions.ClickException,)
    _ABORTS = (click.exceptions.Abort,)

from . import config as cfg
from .errors import SimError

app = typer.Typer(add_completion=False, no_args_is_help=False,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  pretty_exceptions_enable=False, rich_markup_mode=None,
                  help="Rules-balance simulator for the Forecasts family of card games.")

DEFAULT_SEED = 1
DEFAULT_GAMES = 100_000

GameArg = Annotated[Optional[str], typer.Argument(help="game id (see `simcli list`)", show_default=False)]
VariantOpt = Annotated[Optional[str], typer.Option("--variant", help="variant name (default: the game's default)")]
PlayersOpt = Annotated[Optional[int], typer.Option("--players", help="player count (default: the variant's first)")]
PolicyOpt = Annotated[Optional[str], typer.Option("--policy", help="policy for every seat, e.g. random, heuristic")]
SeatsOpt = Annotated[Optional[str], typer.Option("--seats", help="comma-separated policy per seat, e.g. heuristic,random,random,random")]
RuleOpt = Annotated[Optional[list[str]], typer.Option("--rule", help="NAME=VALUE rule override (repeatable)")]
SeedOpt = Annotated[Optional[int], typer.Option("--seed", min=0, max=2**63 - 1, help="master seed (default 1, or the suite's)")]
ThreadsOpt = Annotated[Optional[int], typer.Option("--threads", min=1, help="worker threads (default: all cores)")]
NoProgressOpt = Annotated[bool, typer.Option("--no-progress", help="no progress bar (it is off anyway when stderr is not a terminal)")]


def show_progress(no_progress: bool) -> bool:
    return not no_progress and sys.stderr.isatty()


def _resolve_jobs(game, variant, players, policy, seats, rule) -> list[cfg.Job]:
    rules = cfg.parse_rule_flags(rule)
    return cfg.expand(game, variant, players, policy=policy, seats=seats, rules=rules)


@app.command("list")
def list_cmd(as_json: Annotated[bool, typer.Option("--json", help="machine-readable")] = False) -> None:
    """Games, their variants and player counts, rule switches and policies."""
    import kernels
    info = []
    for gid in cfg.known_games():
        mod = kernels.load(gid)
        default_variant, variants = cfg.variants_of(gid)
        info.append({
            "game": gid, "version": mod.VERSION, "default_variant": default_variant,
            "variants": {v: {"players": d["players"], "rules": d.get("rules", {}),
                             "description": d.get("description", "")} for v, d in variants.items()},
            "rules": [{"name": r.name, "default": r.default, "domain": r.domain(), "help": r.help}
                      for r in mod.RULES],
            "policies": [p for p in mod.POLICIES if p not in getattr(mod, "FIXED_POLICIES", ())],
            "restrictions": [{"name": r.name, "help": r.help} for r in getattr(mod, "RESTRICTIONS", ())],
        })
    if as_json:
        typer.echo(json.dumps(info, indent=2))
        return
    for g in info:
        typer.echo(f"{g['game']}  (version {g['version']})")
        typer.echo("  variants:")
        for v, d in g["variants"].items():
            mark = " (default)" if v == g["default_variant"] else ""
            rules = ", ".join(f"{k}={val}" for k, val in d["rules"].items())
            typer.echo(f"    {v}{mark}: players {', '.join(map(str, d['players']))}"
                       + (f"; {rules}" if rules else "") + (f" - {d['description']}" if d['description'] else ""))
        typer.echo("  rules:")
        for r in g["rules"]:
            typer.echo(f"    {r['name']} = {str(r['default']).lower() if isinstance(r['default'], bool) else r['default']}"
                       f"  [{r['domain']}]  {r['help']}")
        typer.echo(f"  policies: {', '.join(g['policies'])}")
        if g["restrictions"]:
            typer.echo("  restrictions (POLICY+NAME, e.g. heuristic+" + g["restrictions"][0]["name"] + "):")
            for r in g["restrictions"]:
                typer.echo(f"    {r['name']}  {r['help']}")


RotateOpt = Annotated[bool, typer.Option("--rotate", help="play every deal once per rotation of the seat policies (paired policy comparison)")]
UntilCiOpt = Annotated[Optional[float], typer.Option("--until-ci", min=1e-6, max=1.0, help="add chunks until every win-share 95% interval is narrower than this (capped by --games)")]
OutOpt = Annotated[Optional[Path], typer.Option("--out", help="output folder (default reports/run-<time>)")]
FormatOpt = Annotated[str, typer.Option("--format", help="parquet | csv")]
ChunkOpt = Annotated[int, typer.Option("--chunk", min=1, help="games per chunk")]
BackendOpt = Annotated[str, typer.Option("--backend", help="local | dask")]
SchedulerOpt = Annotated[Optional[str], typer.Option("--scheduler", help="with --backend dask: tcp://HOST:PORT of a running scheduler")]
WorkersOpt = Annotated[Optional[int], typer.Option("--workers", min=1, help="with --backend dask: start a local cluster of N worker processes")]
HtmlOpt = Annotated[bool, typer.Option("--html", help="also write report.html (self-contained, with plots)")]


@app.command("run")
def run_cmd(
    game: GameArg = None, variant: VariantOpt = None, players: PlayersOpt = None,
    games: Annotated[Optional[int], typer.Option("--games", min=1, help="games per job (default 100000, or the suite's)")] = None,
    seed: SeedOpt = None, policy: PolicyOpt = None, seats: SeatsOpt = None, rule: RuleOpt = None,
    threads: ThreadsOpt = None, out: OutOpt = None, fmt: FormatOpt = "parquet",
    per_game: Annotated[bool, typer.Option("--per-game", help="also write one row per game (streamed)")] = False,
    chunk: ChunkOpt = 1 << 16, rotate: RotateOpt = False, until_ci: UntilCiOpt = None,
    html: HtmlOpt = False, backend: BackendOpt = "local", scheduler: SchedulerOpt = None,
    workers: WorkersOpt = None,
    year: Annotated[Optional[int], typer.Option("--year", help="daily-weather: every date of this year (default: this year)")] = None,
    date: Annotated[Optional[str], typer.Option("--date", help="daily-weather: one date, YYYY-MM-DD")] = None,
    birthday: Annotated[Optional[str], typer.Option("--birthday", help="daily-weather: a birthday holiday, MM-DD")] = None,
    cards: Annotated[Optional[Path], typer.Option("--cards", help="daily-weather: card data file (default: the shipped stand-in set)")] = None,
    no_progress: NoProgressOpt = False,
) -> None:
    """Simulate games and report balance statistics (no GAME: the default suite)."""
    if game is None:
        if any(x is not None for x in (variant, players, policy, seats)) or rule:
            raise SimError("--variant/--players/--policy/--seats/--rule need a GAME; "
                           "without one, simcli run plays the default suite (configs/suite.toml)")
        jobs, suite_games, suite_seed = cfg.suite_jobs()
        games = [games] * len(jobs) if games else suite_games
        seed = suite_seed if seed is None else seed
    elif game == "daily-weather":
        from . import daily
        return daily.run_calendar(execute, variant, players, policy, seats, rule, games, seed, threads,
                                  chunk, out, fmt, per_game, show_progress(no_progress), html,
                                  Backend(backend, scheduler, workers), year, date, birthday, cards)
    else:
        if any(x is not None for x in (year, date, birthday, cards)):
            raise SimError("--year, --date, --birthday and --cards are for daily-weather only")
        jobs = _resolve_jobs(game, variant, players, policy, seats, rule)
        games = games or DEFAULT_GAMES
        seed = DEFAULT_SEED if seed is None else seed
    execute(jobs, games, seed, threads, chunk, out, fmt, per_game, show_progress(no_progress),
            rotate, until_ci, html=html, backend=Backend(backend, scheduler, workers))


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
        if self.name == "dask" and per_game:
            raise SimError("--per-game is not available with --backend dask")

    def describe(self) -> dict:
        return {"backend": self.name, "scheduler": self.scheduler, "workers": self.workers}


def simulate(jobs, games, seed, threads, chunk, progress, backend: Backend, per_game=None,
             rotate=False, until_ci=None):
    """Run jobs on the chosen backend; ``games`` is one count or one per job."""
    from . import runner
    counts = games if isinstance(games, list) else [games] * len(jobs)
    results = [None] * len(jobs)
    for n in dict.fromkeys(counts):
        idx = [i for i, c in enumerate(counts) if c == n]
        group = [jobs[i] for i in idx]
        if backend.name == "dask":
            from .dask_backend import run_jobs_dask
            res = run_jobs_dask(group, n, seed, chunk, scheduler=backend.scheduler, workers=backend.workers,
                                progress=progress, rotate=rotate, until_ci=until_ci)
        else:
            writers = [per_game[i] for i in idx] if per_game is not None else None
            res = runner.run_jobs(group, n, seed, threads, chunk, progress, writers, rotate=rotate,
                                  until_ci=until_ci)
        for i, r in zip(idx, res):
            results[i] = r
    return results


def execute(jobs, games, seed, threads, chunk, out, fmt, per_game, progress, rotate=False,
            until_ci=None, extra_meta=None, html=False, backend: Backend | None = None,
            post=None):
    """Shared by run, sweep and year runs: validate the output, simulate, print, write atomically.

    ``post(tables)``, when given, returns (extra tables, extra files, lines to print) and
    replaces the standard printed summary (year runs print their own).
    """
    from . import export, report, runner
    if fmt not in export.FORMATS:
        raise SimError(f"unknown --format {fmt!r}; valid formats: {', '.join(export.FORMATS)}")
    backend = backend or Backend()
    backend.validate(per_game)
    if per_game and rotate:
        raise SimError("--per-game and --rotate cannot be combined (per-game rows are per seating)")
    out = out or export.default_out()
    export.prepare_out(out)
    writers = None
    if per_game:
        names = ["per_game"] if len(jobs) == 1 else [
            f"per_game-{i:03d}-{j.game}-{j.variant}-{j.players}p" for i, j in enumerate(jobs)]
        writers = [runner.PerGameWriter(out / f"{n}.{fmt}", fmt) for n in names]
    t0 = time.time()
    try:
        results = simulate(jobs, games, seed, threads, chunk, progress, backend, writers,
                           rotate=rotate, until_ci=until_ci)
    except BaseException:
        for w in writers or []:
            w.discard()
        raise
    tables = report.build_tables(results)
    wall = time.time() - t0
    meta = run_meta(results, seed, games, threads, chunk, wall)
    meta.update({"rotate": rotate, "until_ci": until_ci, **backend.describe()})
    meta.update(extra_meta or {})
    files = {}
    if post is not None:
        extra_tables, files, lines = post(tables)
        tables.update(extra_tables)
        for line in lines:
            typer.echo(line)
    else:
        export.print_tables(tables, typer.echo)
    for line in report.skill_gaps(tables):
        typer.echo(line)
    if until_ci is not None:
        for i, r in enumerate(results):
            cap = games[i] if isinstance(games, list) else games
            typer.echo(f"{r.job.describe()}: {r.games} deals to reach intervals narrower than {until_ci}"
                       + ("" if r.games < cap else " (capped by --games)"))
    paths = export.write_tables(tables, out, fmt, meta, files)
    for w in writers or []:
        w.close()
    if html:
        from .html_report import default_html_path, write_html
        paths.append(write_html(out, default_html_path(out)))
    typer.echo(f"wrote {len(paths) + len(writers or [])} files to {out} ({wall:.1f} s)")
    return tables, out


@app.command("sweep")
def sweep_cmd(
    file: Annotated[Path, typer.Argument(help="sweep file (TOML), e.g. configs/sweeps/all-variants.toml")],
    games: Annotated[Optional[int], typer.Option("--games", min=1, help="games per grid point (default: the file's, else 20000)")] = None,
    seed: SeedOpt = None, threads: ThreadsOpt = None, out: OutOpt = None, fmt: FormatOpt = "parquet",
    chunk: ChunkOpt = 1 << 16, rotate: RotateOpt = False, until_ci: UntilCiOpt = None,
    html: HtmlOpt = False, backend: BackendOpt = "local", scheduler: SchedulerOpt = None,
    workers: WorkersOpt = None, no_progress: NoProgressOpt = False,
) -> None:
    """Play a grid of games x variants x player counts x seat policies x rule values."""
    from .sweep import load_sweep
    jobs, settings, axes = load_sweep(file)
    default = games or settings["games"] or 20000
    # --games overrides every grid; otherwise a grid's own `games` beats the file's
    games = [default if games or c is None else int(c) for c in settings["counts"]]
    seed = seed if seed is not None else (settings["seed"] if settings["seed"] is not None else DEFAULT_SEED)
    execute(jobs, games, seed, threads, chunk, out, fmt, False, show_progress(no_progress),
            rotate or settings["rotate"], until_ci, {"axes": axes, "sweep_file": str(file)}, html=html,
            backend=Backend(backend, scheduler, workers))


@app.command("ablate")
def ablate_cmd(
    game: Annotated[str, typer.Argument(help="game id")],
    variant: VariantOpt = None, players: PlayersOpt = None,
    policy: Annotated[Optional[str], typer.Option("--policy", help="base policy of every seat (default: the game's heuristic)")] = None,
    restrictions: Annotated[Optional[str], typer.Option("--restrictions", help="comma-separated restrictions (default: every one; see `simcli list`)")] = None,
    games: Annotated[int, typer.Option("--games", min=1, help="deals per restriction (each replayed once per seat)")] = 20_000,
    seed: SeedOpt = None, rule: RuleOpt = None, threads: ThreadsOpt = None, out: OutOpt = None,
    fmt: FormatOpt = "parquet", chunk: ChunkOpt = 1 << 16, html: HtmlOpt = False,
    date: Annotated[Optional[str], typer.Option("--date", help="daily-weather: the date, YYYY-MM-DD (default 1 January this year)")] = None,
    no_progress: NoProgressOpt = False,
) -> None:
    """What each option is worth: one restricted seat vs the base policy on the same deals."""
    from . import ablate
    ablate.ablate_cmd(game, variant, players, policy, restrictions, games,
                      DEFAULT_SEED if seed is None else seed, threads, chunk, rule, out, fmt, html, date,
                      show_progress(no_progress), typer.echo)


@app.command("report")
def report_cmd(
    folder: Annotated[Path, typer.Argument(help="a folder written by run, sweep or ladder")],
    out: Annotated[Optional[Path], typer.Option("--out", help="HTML file (default FOLDER/report.html)")] = None,
) -> None:
    """One self-contained HTML file with plots: win shares, score and length distributions, sweeps, calendar."""
    from .html_report import default_html_path, write_html
    path = write_html(folder, out or default_html_path(folder))
    typer.echo(f"wrote {path}")


@app.command("check")
def check_cmd(
    update: Annotated[bool, typer.Option("--update", help="re-make the baselines instead of checking")] = False,
    games: Annotated[Optional[int], typer.Option("--games", min=1, help="games per job (default: configs/check.toml)")] = None,
    config_file: Annotated[Optional[Path], typer.Option("--config", help="check config (default configs/check.toml)")] = None,
    baseline: Annotated[Path, typer.Option("--baseline", help="baseline folder")] = Path("reports/baseline"),
    expectations: Annotated[Optional[Path], typer.Option("--expectations", help="designer expectations (default configs/expectations.toml)")] = None,
    alpha: Annotated[Optional[float], typer.Option("--alpha", min=1e-9, max=0.5, help="family-wise error rate")] = None,
    threads: ThreadsOpt = None, backend: BackendOpt = "local", scheduler: SchedulerOpt = None,
    workers: WorkersOpt = None, no_progress: NoProgressOpt = False,
) -> None:
    """Balance regression: compare a fresh run with the committed baselines (exit 1 if something moved)."""
    from . import check, report
    be = Backend(backend, scheduler, workers)
    be.validate()
    conf = check.load_check_config(config_file)
    counts = [games] * len(conf.jobs) if games else conf.counts
    alpha = alpha or conf.alpha
    seed = conf.baseline_seed if update else conf.check_seed
    if update:
        from . import export
        export.prepare_out(baseline)
    elif not (baseline / "variants.parquet").is_file():
        raise SimError(f"no baseline in {baseline}; make one with `simcli check --update`")
    results = simulate(conf.jobs, counts, seed, threads, 1 << 16, show_progress(no_progress), be)
    tables = report.build_tables(results)
    if update:
        conf.counts = counts
        check.write_baseline(tables, baseline, check.meta_for(conf, seed))
        typer.echo(f"baseline of {len(conf.jobs)} jobs ({sum(counts)} games) written to {baseline}")
        return
    base = check.read_tables(baseline)
    result = check.compare(base, tables, alpha)
    moved = result.filter(pl_col_true("moved")) if result.height else result
    failed = [e for e in check.check_expectations(tables, check.load_expectations(expectations)) if not e["ok"]]
    typer.echo(f"checked {len(conf.jobs)} jobs ({sum(counts)} games) against {baseline}: "
               f"{result.height} tests, Holm-Bonferroni at alpha = {alpha}")
    for line in check.summary_lines(moved, failed):
        typer.echo(line)
    if moved.height or failed:
        raise typer.Exit(code=1)
    typer.echo("no significant change; every expectation holds")


@app.command("ladder")
def ladder_cmd(
    game: Annotated[str, typer.Argument(help="game id")],
    players: PlayersOpt = None, variant: VariantOpt = None,
    games: Annotated[int, typer.Option("--games", min=1, help="deals per rung (each replayed once per rotation)")] = 200,
    budgets: Annotated[str, typer.Option("--budgets", help="mc budgets, doubling")] = "4,8,16,32,64",
    rollout: Annotated[str, typer.Option("--rollout", help="mc rollout policy")] = "heuristic",
    seed: SeedOpt = None, threads: ThreadsOpt = None, out: OutOpt = None, fmt: FormatOpt = "parquet",
    backend: BackendOpt = "local", scheduler: SchedulerOpt = None, workers: WorkersOpt = None,
    no_progress: NoProgressOpt = False,
) -> None:
    """Skill ladder: random, heuristic and mc at doubling budgets, each against the rung below."""
    from . import export, ladder, report, runner
    pairs = ladder.ladder_jobs(game, players, variant, ladder.parse_budgets(budgets), rollout)
    seed = DEFAULT_SEED if seed is None else seed
    out = out or export.default_out()
    export.prepare_out(out)
    t0 = time.time()
    be = Backend(backend, scheduler, workers)
    be.validate()
    results = simulate([j for _, _, j in pairs], games, seed, threads, runner.DEFAULT_CHUNK,
                       show_progress(no_progress), be, rotate=True)
    tables = report.build_tables(results)
    table = ladder.ladder_table(results, pairs)
    tables["ladder"] = table
    import polars as pl
    with pl.Config(tbl_rows=50, tbl_cols=20, tbl_width_chars=180, float_precision=4,
                   tbl_hide_dataframe_shape=True, tbl_hide_column_data_types=True):
        typer.echo(str(table.select("rung", "versus", "deals", "win_share", "win_ci_low", "win_ci_high",
                                    "diff_vs_previous", "diff_ci_low", "diff_ci_high")))
    import tempfile as _tf
    with _tf.TemporaryDirectory() as tmp:
        png = Path(tmp) / "ladder.png"
        ladder.ladder_png(table, png)
        meta = run_meta(results, seed, games, threads, runner.DEFAULT_CHUNK, time.time() - t0)
        meta["ladder"] = {"budgets": budgets, "rollout": rollout}
        paths = export.write_tables(tables, out, fmt, meta, {"ladder.png": png.read_bytes()})
    typer.echo(f"wrote {len(paths)} files to {out}")


def pl_col_true(name):
    import polars as pl
    return pl.col(name)


def run_meta(results, seed, games, threads, chunk, wall) -> dict:
    from . import export, runner
    return {
        "seed": seed, "games": games, "threads": runner.set_threads(threads), "chunk": chunk,
        "wall_time_s": round(wall, 3), "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "command": sys.argv, "packages": export.package_versions(),
        "jobs": [{"game": r.job.game, "version": r.job.module.VERSION, "variant": r.job.variant,
                  "players": r.job.players, "policies": r.job.policies, "rules": r.job.rules,
                  "labels": r.job.labels, "wall_time_s": round(r.wall, 3),
                  "notes": list(getattr(r.job.module, "REPORT_NOTES", ()))}
                 for r in results],
    }


@app.command("trace")
def trace_cmd(
    game: Annotated[str, typer.Argument(help="game id")],
    game_index: Annotated[int, typer.Option("--game-index", min=0, help="index of the first game to trace")] = 0,
    count: Annotated[int, typer.Option("--count", min=1, help="games to trace")] = 1,
    variant: VariantOpt = None, players: PlayersOpt = None, seed: SeedOpt = None,
    policy: PolicyOpt = None, seats: SeatsOpt = None, rule: RuleOpt = None,
    out: Annotated[Optional[Path], typer.Option("--out", help="JSON Lines file (default: stdout)")] = None,
) -> None:
    """JSON Lines of every event of game(s) I.. of a run with the same seed and options."""
    from .trace import trace_events
    jobs = _resolve_jobs(game, variant, players, policy, seats, rule)
    seed = DEFAULT_SEED if seed is None else seed
    if out is not None and (out.is_dir() or not _parent_writable(out)):
        raise SimError(f"--out {out} is not a writable file path")
    lines = []
    for job in jobs:
        for i in range(game_index, game_index + count):
            lines += [json.dumps(e, separators=(",", ":")) for e in trace_events(job, seed, i)]
    text = "\n".join(lines) + "\n"
    if out is None:
        sys.stdout.write(text)
    else:
        fd, tmp = tempfile.mkstemp(prefix=".trace-", dir=out.parent or Path("."))
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, out)


def _parent_writable(path: Path) -> bool:
    parent = path.parent if str(path.parent) else Path(".")
    return parent.is_dir() and os.access(parent, os.W_OK)


@app.command("bench")
def bench_cmd(
    game: GameArg = None,
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable")] = False,
    seconds: Annotated[float, typer.Option("--seconds", min=0.05, help="target time per measurement")] = 0.5,
    repeats: Annotated[int, typer.Option("--repeats", min=1, help="measurements per point (median)")] = 3,
    players: PlayersOpt = None,
) -> None:
    """Games/s and decisions/s per game and policy, at one thread and at all threads."""
    from .bench import bench
    rows = bench(game, seconds=seconds, repeats=repeats, players=players)
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    typer.echo(f"{'game':16} {'variant':10} {'p':>2} {'policy':10} {'threads':>7} {'games/s':>12} {'decisions/s':>14}")
    for r in rows:
        typer.echo(f"{r['game']:16} {r['variant']:10} {r['players']:>2} {r['policy']:10} {r['threads']:>7} "
                   f"{r['games_per_s']:>12,.0f} {r['decisions_per_s']:>14,.0f}")


def _one_line(e) -> str:
    """A usage error as one line that names the option, e.g. "invalid value for --games: ..."."""
    msg = " ".join(e.format_message().split())
    param = getattr(e, "param", None)
    if param is not None and getattr(param, "opts", None):
        name = "/".join(param.opts)
        if name not in msg:
            msg = f"invalid value for {name}: {msg}"
    return msg


def main() -> None:
    """Console entry point: domain and usage errors become one line and exit code 2."""
    try:
        code = app(standalone_mode=False)  # click returns typer.Exit's code in this mode
        if isinstance(code, int) and code:
            sys.exit(code)
    except SimError as e:
        typer.echo(f"error: {e}", err=True)
        sys.exit(2)
    except (typer.Exit, click.exceptions.Exit) as e:
        sys.exit(e.exit_code)
    except _ABORTS:
        typer.echo("aborted", err=True)
        sys.exit(130)
    except _CLICK_ERRORS as e:
        typer.echo(f"error: {_one_line(e)}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)


if __name__ == "__main__":
    main()
