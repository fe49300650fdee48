"""The simcli command line (Typer). Commands stay thin: parse -> resolve -> run -> report -> export."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

# Typer >= 0.29 carries its own copy of click; the plain install has no `click` module.
from typer._click.exceptions import ClickException as _ClickException

from simcli.config import jobs as cfg
from simcli.errors import SimError, WriteError
from simcli.report.output import OutputFile, OutputFolder
from simcli.engine.runspec import DEFAULT_CHUNK, DEFAULT_SEED, Backend, RunSpec, execute, resolve_run

app = typer.Typer(add_completion=False, no_args_is_help=False,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  pretty_exceptions_enable=False, rich_markup_mode=None,
                  help="Rules-balance simulator for the Forecasts family of card games.")


GameArg = Annotated[Optional[str], typer.Argument(help="game id (see `simcli list`)", show_default=False)]
VariantOpt = Annotated[Optional[str], typer.Option("--variant", help="variant name (default: the game's default)")]
PlayersOpt = Annotated[Optional[int], typer.Option("--players", help="player count (default: the variant's first)")]
PolicyOpt = Annotated[Optional[str], typer.Option("--policy", help="policy for every seat, e.g. random, heuristic (default: the game's designed play, configs/<game>.toml)")]
SeatsOpt = Annotated[Optional[str], typer.Option("--seats", help="comma-separated policy per seat, e.g. heuristic,random,random,random")]
RuleOpt = Annotated[Optional[list[str]], typer.Option("--rule", help="NAME=VALUE rule override (repeatable)")]
SeedOpt = Annotated[Optional[int], typer.Option("--seed", min=0, max=2**63 - 1, help="master seed (default 1, or the suite's)")]
ForceOpt = Annotated[bool, typer.Option("--force", help="replace a non-empty --out whole (default: refuse it)")]
ThreadsOpt = Annotated[Optional[int], typer.Option("--threads", min=1, help="worker threads (default: all cores)")]
NoProgressOpt = Annotated[bool, typer.Option("--no-progress", help="no progress bar (it is off anyway when stderr is not a terminal)")]


def show_progress(no_progress: bool) -> bool:
    return not no_progress and sys.stderr.isatty()


def _resolve_jobs(game, variant, players, policy, seats, rule) -> list[cfg.Job]:
    rules = cfg.parse_rule_flags(rule)
    if policy is None and seats is None:   # as `run`: the game's designed play
        policy = cfg.designed_play(game)
    return cfg.expand(game, variant, players, policy=policy, seats=seats, rules=rules)


def _output(out: Optional[str], force: bool) -> OutputFolder:
    return OutputFolder(out, force=force).validate()


@app.command("list")
def list_cmd(as_json: Annotated[bool, typer.Option("--json", help="machine-readable")] = False) -> None:
    """Games, their variants and player counts, rule switches, policies and restrictions."""
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
            "designed_play": cfg.designed_play(gid),
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
        typer.echo(f"  policies: {', '.join(g['policies'])} (designed play: {g['designed_play']})")
        if g["restrictions"]:
            typer.echo(f"  restrictions (POLICY+NAME, e.g. {restriction_example(g)}):")
            for r in g["restrictions"]:
                typer.echo(f"    {r['name']}  {r['help']}")


def restriction_example(g: dict) -> str:
    """A restricted policy `simcli list` shows as an example: the designed play + the first name."""
    return f"{g['designed_play']}+{g['restrictions'][0]['name']}"


RotateOpt = Annotated[bool, typer.Option("--rotate", help="play every deal once per rotation of the seat policies (paired policy comparison)")]
UntilCiOpt = Annotated[Optional[float], typer.Option("--until-ci", min=1e-6, max=1.0, help="stop at the first checkpoint (every 4096 deals) where every win-share 95% interval is narrower than this (capped by --games)")]
OutOpt = Annotated[Optional[str], typer.Option("--out", help="output folder, new or empty (default reports/run-<time>); see --force")]
FormatOpt = Annotated[str, typer.Option("--format", help="parquet | csv")]
ChunkOpt = Annotated[int, typer.Option("--chunk", min=1, max=1 << 20, help="games per chunk (results do not depend on it)")]
BackendOpt = Annotated[str, typer.Option("--backend", help="local | dask")]
SchedulerOpt = Annotated[Optional[str], typer.Option("--scheduler", help="with --backend dask: tcp://HOST:PORT of a running scheduler")]
WorkersOpt = Annotated[Optional[int], typer.Option("--workers", min=1, help="with --backend dask: start a local cluster of N worker processes")]
HtmlOpt = Annotated[bool, typer.Option("--html", help="also write report.html (self-contained, with plots)")]
WideOpt = Annotated[bool, typer.Option("--wide", help="print tables in one block with every column and full cells (default: fit the terminal, or 100 columns)")]
ThresholdOpt = Annotated[float, typer.Option("--threshold", min=0.0, max=1.0, help="findings: the smallest win-share effect flagged in the verdict (significant smaller effects stay in the findings table)")]


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
    no_progress: NoProgressOpt = False, force: ForceOpt = False, wide: WideOpt = False,
    threshold: ThresholdOpt = 0.02,
) -> None:
    """Simulate games and report balance statistics (no GAME: the default suite; no --policy or
    --seats: the game's designed play)."""
    jobs, counts, seed, extra, post = resolve_run(
        game, variant=variant, players=players, policy=policy, seats=seats,
        rules=cfg.parse_rule_flags(rule), games=games, seed=seed, year=year, date=date,
        birthday=birthday, cards=cards)
    execute(RunSpec(jobs, counts, seed, threads, chunk, Backend(backend, scheduler, workers), rotate,
                    until_ci, show_progress(no_progress), per_game, fmt, html, _output(out, force),
                    extra, post, typer.echo, wide=wide, threshold=threshold))


@app.command("sweep")
def sweep_cmd(
    file: Annotated[Path, typer.Argument(help="sweep file (TOML), e.g. configs/sweeps/all-variants.toml")],
    games: Annotated[Optional[int], typer.Option("--games", min=1, help="games per grid point (default: the file's, else 20000)")] = None,
    seed: SeedOpt = None, threads: ThreadsOpt = None, out: OutOpt = None, fmt: FormatOpt = "parquet",
    chunk: ChunkOpt = 1 << 16, rotate: RotateOpt = False, until_ci: UntilCiOpt = None,
    html: HtmlOpt = False, backend: BackendOpt = "local", scheduler: SchedulerOpt = None,
    workers: WorkersOpt = None, no_progress: NoProgressOpt = False, force: ForceOpt = False,
    wide: WideOpt = False, threshold: ThresholdOpt = 0.02,
) -> None:
    """Play a grid of games x variants x player counts x seat policies x rule values."""
    from simcli.analyses.sweep import load_sweep
    output = _output(out, force)
    jobs, settings, axes = load_sweep(file)
    default = games or settings["games"] or 20000
    # --games overrides every grid; otherwise a grid's own `games` beats the file's
    counts = [default if games or c is None else int(c) for c in settings["counts"]]
    seed = seed if seed is not None else (settings["seed"] if settings["seed"] is not None else DEFAULT_SEED)
    execute(RunSpec(jobs, counts, seed, threads, chunk, Backend(backend, scheduler, workers),
                    rotate or settings["rotate"], until_ci, show_progress(no_progress), False, fmt, html,
                    output, {"axes": axes, "sweep_file": str(file)}, None, typer.echo, wide=wide,
                    threshold=threshold))


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
    no_progress: NoProgressOpt = False, force: ForceOpt = False, wide: WideOpt = False,
    threshold: ThresholdOpt = 0.02,
) -> None:
    """What each option is worth: one restricted seat vs the base policy on the same deals."""
    from simcli.analyses import ablate
    ablate.ablate_cmd(game, variant, players, policy, restrictions, games,
                      DEFAULT_SEED if seed is None else seed, threads, chunk, rule, _output(out, force),
                      fmt, html, date, show_progress(no_progress), typer.echo, wide, threshold)


@app.command("report")
def report_cmd(
    folder: Annotated[Path, typer.Argument(help="a folder written by run, sweep or ladder")],
    out: Annotated[Optional[str], typer.Option("--out", help="HTML file (default FOLDER/report.html, regenerated)")] = None,
    force: Annotated[bool, typer.Option("--force", help="replace an existing --out file")] = False,
) -> None:
    """One self-contained HTML file with plots: win shares, score and length distributions, sweeps, calendar."""
    from simcli.report.html import default_html_path, render_html
    from simcli.report.html.page import Progress
    if folder.exists() and not folder.is_dir():
        raise SimError(f"{folder} is a file; give a folder written by run, sweep or ladder")
    if not folder.is_dir():
        raise SimError(f"report folder {folder} does not exist")
    target = OutputFile(out or default_html_path(folder), force=force, replace_ok=out is None).validate()
    path = target.write_text(render_html(folder, progress=Progress(Path(target.path).name)))
    typer.echo(f"wrote {path}")


@app.command("check")
def check_cmd(
    update: Annotated[bool, typer.Option("--update", help="re-make the baselines instead of checking")] = False,
    games: Annotated[Optional[int], typer.Option("--games", min=1, help="games per job (default: configs/check.toml)")] = None,
    config_file: Annotated[Optional[Path], typer.Option("--config", help="check config (default configs/check.toml)")] = None,
    baseline: Annotated[Optional[Path], typer.Option("--baseline", help="baseline folder (default: the project's reports/baseline, wherever simcli is run from)")] = None,
    expectations: Annotated[Optional[Path], typer.Option("--expectations", help="designer expectations (default configs/expectations.toml)")] = None,
    alpha: Annotated[Optional[float], typer.Option("--alpha", min=1e-9, max=0.5, help="family-wise error rate")] = None,
    threads: ThreadsOpt = None, backend: BackendOpt = "local", scheduler: SchedulerOpt = None,
    workers: WorkersOpt = None, no_progress: NoProgressOpt = False, wide: WideOpt = False,
) -> None:
    """Balance regression: compare a fresh run with the committed baselines (exit 1 if something moved)."""
    from simcli.analyses import check
    conf = check.load_check_config(config_file)
    baseline = check.baseline_folder(baseline, update)
    counts = [games] * len(conf.jobs) if games else conf.counts
    alpha = alpha or conf.alpha
    seed = conf.baseline_seed if update else conf.check_seed
    # --update replaces the baseline folder whole; it is what the option is for
    output = OutputFolder(baseline, force=True, option="--baseline").validate() if update else None
    if not update:
        base = check.read_tables(baseline)
        expected = check.load_expectations(expectations)
    spec = RunSpec(conf.jobs, counts, seed, threads, DEFAULT_CHUNK, Backend(backend, scheduler, workers),
                   progress=show_progress(no_progress)).validate()
    from simcli.engine.runspec import compute
    _, tables, _ = compute(spec)
    if update:
        conf.counts = counts
        from simcli.engine.runspec import write_result
        keep = {k: tables[k] for k in check.BASELINE_TABLES if k in tables}
        final = write_result(output, keep, "parquet", check.meta_for(conf, seed))
        typer.echo(f"baseline of {len(conf.jobs)} jobs ({sum(counts)} games) written to {final}")
        return
    result = check.compare(base, tables, alpha)
    moved = result.filter(pl_col_true("moved")) if result.height else result
    failed = [e for e in check.check_expectations(tables, expected) if not e["ok"]]
    typer.echo(f"checked {len(conf.jobs)} jobs ({sum(counts):,} games) against {baseline}: "
               f"{result.height} tests, Holm-Bonferroni at alpha = {alpha}")
    for line in check.summary_lines(moved, failed, wide):
        typer.echo(line)
    from simcli.report import findings
    findings.add_to({}, findings.Settings(alpha=alpha), typer.echo, findings.check_rows(result, failed))
    if moved.height or failed:
        raise typer.Exit(code=1)
    typer.echo("no significant change; every expectation holds")


@app.command("ladder")
def ladder_cmd(
    game: Annotated[str, typer.Argument(help="game id")],
    players: PlayersOpt = None, variant: VariantOpt = None,
    games: Annotated[int, typer.Option("--games", min=1, help="deals per rung (each replayed once per rotation)")] = 200,
    budgets: Annotated[str, typer.Option("--budgets", help="mc budgets, increasing from rung to rung (doubling by convention)")] = "4,8,16,32,64",
    rollout: Annotated[str, typer.Option("--rollout", help="mc rollout policy")] = "heuristic",
    seed: SeedOpt = None, threads: ThreadsOpt = None, out: OutOpt = None, fmt: FormatOpt = "parquet",
    backend: BackendOpt = "local", scheduler: SchedulerOpt = None, workers: WorkersOpt = None,
    no_progress: NoProgressOpt = False, force: ForceOpt = False, wide: WideOpt = False,
    threshold: ThresholdOpt = 0.02,
) -> None:
    """Skill ladder: random, heuristic and mc at doubling budgets, each against the rung below."""
    from simcli.report import export
    from simcli.analyses import ladder
    output = _output(out, force)
    if fmt not in export.FORMATS:
        raise SimError(f"unknown --format {fmt!r}; valid formats: {', '.join(export.FORMATS)}")
    pairs = ladder.ladder_jobs(game, players, variant, ladder.parse_budgets(budgets), rollout)
    seed = DEFAULT_SEED if seed is None else seed

    def post(tables, results):
        import tempfile
        from simcli.report.fmt import table_lines
        table = ladder.ladder_table(results, pairs)
        text = table_lines(table.select("rung", "versus", "deals", "win_share", "win_ci_low", "win_ci_high",
                                        "diff_vs_previous", "diff_ci_low", "diff_ci_high"),
                           title="Skill ladder (each rung against the rung below, same deals)", wide=wide)
        with tempfile.TemporaryDirectory() as tmp:
            png = Path(tmp) / "ladder.png"
            ladder.ladder_png(table, png)
            return {"ladder": table}, {"ladder.png": png.read_bytes()}, text

    execute(RunSpec([j for _, _, j in pairs], games, seed, threads, DEFAULT_CHUNK,
                    Backend(backend, scheduler, workers), True, None, show_progress(no_progress), False,
                    fmt, False, output, {"ladder": {"budgets": budgets, "rollout": rollout}}, post,
                    typer.echo, wide=wide, threshold=threshold))


def pl_col_true(name):
    import polars as pl
    return pl.col(name)


MAX_TRACE_GAMES = 100_000


@app.command("trace")
def trace_cmd(
    game: Annotated[str, typer.Argument(help="game id")],
    game_index: Annotated[int, typer.Option("--game-index", min=0, max=2**63 - 1, help="index of the first game to trace")] = 0,
    count: Annotated[int, typer.Option("--count", min=1, max=MAX_TRACE_GAMES, help="games to trace")] = 1,
    variant: VariantOpt = None, players: PlayersOpt = None, seed: SeedOpt = None,
    policy: PolicyOpt = None, seats: SeatsOpt = None, rule: RuleOpt = None,
    out: Annotated[Optional[str], typer.Option("--out", help="JSON Lines file, new (default: stdout)")] = None,
    force: Annotated[bool, typer.Option("--force", help="replace an existing --out file")] = False,
) -> None:
    """JSON Lines of every event of game(s) I.. of a run with the same seed and options."""
    from simcli.analyses.trace import trace_events
    if game_index + count - 1 > 2**63 - 1:
        raise SimError(f"--game-index {game_index} + --count {count} goes past the last game index, 2**63 - 1")
    target = OutputFile(out, force=force).validate() if out is not None else None
    jobs = _resolve_jobs(game, variant, players, policy, seats, rule)
    seed = DEFAULT_SEED if seed is None else seed

    def write_all(f):
        for job in jobs:
            for i in range(game_index, game_index + count):
                for e in trace_events(job, seed, i):
                    f.write(json.dumps(e, separators=(",", ":")) + "\n")
    if target is None:
        write_all(sys.stdout)
    else:
        with target.open() as f:
            write_all(f)


@app.command("bench")
def bench_cmd(
    game: GameArg = None,
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable")] = False,
    seconds: Annotated[float, typer.Option("--seconds", min=0.05, max=600.0, help="target time per measurement (0.05..600)")] = 0.5,
    repeats: Annotated[int, typer.Option("--repeats", min=1, max=100, help="measurements per point (median)")] = 3,
    players: PlayersOpt = None,
) -> None:
    """Games/s and decisions/s per game and policy, at one thread and at all threads."""
    from simcli.analyses.bench import bench
    rows = bench(game, seconds=seconds, repeats=repeats, players=players)
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    typer.echo(f"{'game':16} {'variant':10} {'p':>2} {'policy':10} {'threads':>7} {'games/s':>12} {'decisions/s':>14}")
    for r in rows:
        typer.echo(f"{r['game']:16} {r['variant']:10} {r['players']:>2} {r['policy']:10} {r['threads']:>7} "
                   f"{r['games_per_s']:>12,.0f} {r['decisions_per_s']:>14,.0f}")


@app.command("compile")
def compile_cmd(
    games: Annotated[Optional[list[str]], typer.Argument(help="game ids (default: every game)", show_default=False)] = None,
) -> None:
    """Compile the games' kernels (every build, the search player's too) into Numba's disk cache
    ahead of time, e.g. for a Docker image or a CI cache step; runs then start warm."""
    from simcli.engine.compile import compile_command
    compile_command(games or [], lambda line: typer.echo(line, err=True))


from simcli.analyses.tune import tune_cmd  # noqa: E402 - the command lives in simcli/tune.py

app.command("tune")(tune_cmd)


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
    """Console entry point: errors become one line; exit 2 bad input, 1 a failed write (or `check`
    finding a move), 130/143 interrupted (SIGINT/SIGTERM), with nothing half-written."""
    from simcli.engine.interrupt import run_interruptibly
    try:
        code = run_interruptibly(lambda: app(standalone_mode=False))  # returns typer.Exit's code
        if isinstance(code, int) and code:
            sys.exit(code)
    except SimError as e:
        typer.echo(f"error: {e}", err=True)
        sys.exit(2)
    except WriteError as e:
        typer.echo(f"error: {e}", err=True)
        sys.exit(1)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except typer.Abort:
        typer.echo("interrupted: nothing written", err=True)
        sys.exit(130)
    except _ClickException as e:
        typer.echo(f"error: {_one_line(e)}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        typer.echo("interrupted: nothing written", err=True)
        sys.exit(130)


if __name__ == "__main__":
    main()
