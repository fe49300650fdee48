"""The simcli command line (Typer). Commands stay thin: parse -> resolve -> run -> report -> export."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

# Typer >= 0.29 carries its own copy of click; the plain install has no `click` module.
from typer._click.exceptions import ClickException as _ClickException

from simcli.config import jobs as cfg
from simcli.errors import SimError, WriteError
from simcli.report.output import OutputFile, OutputFolder
from simcli.analyses import tune as tune_defaults
from simcli.analyses.run import resolve_run
from simcli.engine.runspec import DEFAULT_CHUNK, DEFAULT_SEED, Backend, RunSpec, execute

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


def _output(out: Optional[str], force: bool, *inputs) -> OutputFolder:
    """The validated --out; ``inputs`` (files the command reads) must not lie inside it."""
    return OutputFolder(out, force=force, inputs=inputs).validate()


@app.command("list")
def list_cmd(as_json: Annotated[bool, typer.Option("--json", help="machine-readable")] = False) -> None:
    """Games, their variants and player counts, rule switches and policies."""
    from simcli.config import catalogue
    info = catalogue.cached_games()
    for line in ([json.dumps(info, indent=2)] if as_json else catalogue.lines(info)):
        typer.echo(line)


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
ResumeOpt = Annotated[bool, typer.Option("--resume", help="continue an interrupted run from its journal (the same options and --out); finished work is not replayed, the result is identical")]
SkillOpt = Annotated[Optional[str], typer.Option("--skill", help="levels, weakest first, e.g. heuristic,tuned,mc:16: the same deals at each level, every seat at that level (a skill column, skill_levels and skill_verdicts tables)")]


@app.command("run")
def run_cmd(
    game: GameArg = None, variant: VariantOpt = None, players: PlayersOpt = None,
    games: Annotated[Optional[int], typer.Option("--games", min=1, help="games per job (default 100000, or the suite's)")] = None,
    seed: SeedOpt = None, policy: PolicyOpt = None, seats: SeatsOpt = None, rule: RuleOpt = None,
    threads: ThreadsOpt = None, out: OutOpt = None, fmt: FormatOpt = "parquet",
    per_game: Annotated[bool, typer.Option("--per-game", help="also write one row per game (streamed)")] = False,
    chunk: ChunkOpt = DEFAULT_CHUNK, rotate: RotateOpt = False, until_ci: UntilCiOpt = None,
    html: HtmlOpt = False, backend: BackendOpt = "local", scheduler: SchedulerOpt = None,
    workers: WorkersOpt = None,
    year: Annotated[Optional[int], typer.Option("--year", help="daily-weather: every date of this year (default: this year)")] = None,
    date: Annotated[Optional[str], typer.Option("--date", help="daily-weather: one date, YYYY-MM-DD")] = None,
    birthday: Annotated[Optional[str], typer.Option("--birthday", help="daily-weather: a birthday holiday, MM-DD")] = None,
    cards: Annotated[Optional[Path], typer.Option("--cards", help="daily-weather: card data file (default: the shipped stand-in set)")] = None,
    no_progress: NoProgressOpt = False, force: ForceOpt = False, wide: WideOpt = False,
    threshold: ThresholdOpt = 0.02, skill: SkillOpt = None, resume: ResumeOpt = False,
) -> None:
    """Simulate games and report balance statistics (no GAME: the default suite; no --policy or
    --seats: the game's designed play)."""
    from simcli.analyses.skill import with_skill
    jobs, counts, seed, extra, analysis = resolve_run(
        game, variant=variant, players=players, policy=policy, seats=seats,
        rules=cfg.parse_rule_flags(rule), games=games, seed=seed, year=year, date=date,
        birthday=birthday, cards=cards)
    jobs, counts, analysis = with_skill(jobs, counts, analysis, skill, until_ci, per_game, policy, seats)
    execute(RunSpec(jobs=jobs, games=counts, seed=seed, threads=threads, chunk=chunk,
                    backend=Backend(backend, scheduler, workers), rotate=rotate, until_ci=until_ci,
                    progress=show_progress(no_progress), per_game=per_game, fmt=fmt, html=html,
                    output=_output(out, force, cards), extra_meta=extra, echo=typer.echo,
                    wide=wide, threshold=threshold, resume=resume), analysis)


@app.command("sweep")
def sweep_cmd(
    file: Annotated[Path, typer.Argument(help="sweep file (TOML), e.g. configs/sweeps/all-variants.toml")],
    games: Annotated[Optional[int], typer.Option("--games", min=1, help="games per grid point (default: the file's, else 20000)")] = None,
    seed: SeedOpt = None, threads: ThreadsOpt = None, out: OutOpt = None, fmt: FormatOpt = "parquet",
    chunk: ChunkOpt = DEFAULT_CHUNK, rotate: RotateOpt = False, until_ci: UntilCiOpt = None,
    html: HtmlOpt = False, backend: BackendOpt = "local", scheduler: SchedulerOpt = None,
    workers: WorkersOpt = None, no_progress: NoProgressOpt = False, force: ForceOpt = False,
    wide: WideOpt = False, threshold: ThresholdOpt = 0.02, skill: SkillOpt = None,
    resume: ResumeOpt = False,
) -> None:
    """Play a grid of games x variants x player counts x seat policies x rule values."""
    from simcli.analyses.skill import with_skill
    from simcli.analyses.sweep import load_sweep
    output = _output(out, force, file)
    jobs, settings, axes = load_sweep(file)
    default = games or settings["games"] or 20000
    # --games overrides every grid; otherwise a grid's own `games` beats the file's
    counts = [default if games or c is None else int(c) for c in settings["counts"]]
    seed = seed if seed is not None else (settings["seed"] if settings["seed"] is not None else DEFAULT_SEED)
    jobs, counts, analysis = with_skill(jobs, counts, None, skill, until_ci)
    execute(RunSpec(jobs=jobs, games=counts, seed=seed, threads=threads, chunk=chunk,
                    backend=Backend(backend, scheduler, workers), rotate=rotate or settings["rotate"],
                    until_ci=until_ci, progress=show_progress(no_progress), fmt=fmt, html=html, output=output,
                    extra_meta={"axes": axes + (["skill"] if skill else []), "sweep_file": str(file)},
                    echo=typer.echo, wide=wide, threshold=threshold, resume=resume), analysis)


@app.command("ablate")
def ablate_cmd(
    game: Annotated[str, typer.Argument(help="game id")],
    variant: VariantOpt = None, players: PlayersOpt = None,
    policy: Annotated[Optional[str], typer.Option("--policy", help="base policy of every seat (default: the game's heuristic)")] = None,
    restrictions: Annotated[Optional[str], typer.Option("--restrictions", help="comma-separated restrictions (default: every one; see `simcli list`)")] = None,
    games: Annotated[int, typer.Option("--games", min=1, help="deals per restriction: game indices 0..N-1, each played once per seat of the restricted seat and once all-base")] = 20_000,
    seed: SeedOpt = None, rule: RuleOpt = None, threads: ThreadsOpt = None, out: OutOpt = None,
    fmt: FormatOpt = "parquet", chunk: ChunkOpt = DEFAULT_CHUNK, html: HtmlOpt = False,
    date: Annotated[Optional[str], typer.Option("--date", help="daily-weather: the date, YYYY-MM-DD (default 1 January this year)")] = None,
    backend: BackendOpt = "local", scheduler: SchedulerOpt = None, workers: WorkersOpt = None,
    no_progress: NoProgressOpt = False, force: ForceOpt = False, wide: WideOpt = False,
    threshold: ThresholdOpt = 0.02, skill: SkillOpt = None, resume: ResumeOpt = False,
) -> None:
    """What each option is worth: one restricted seat vs the base policy on the same deals.

    Deal d is game index d under --seed (the cards depend only on seed and game index); `simcli
    trace --seed S --game-index d` replays it. Each deal is played once per seat of the
    restricted seat: rotation r puts POLICY+RESTRICTION at seat (P - r) mod P, the base policy
    elsewhere. The base arm is the all-base game of the same index: its share per seat is exactly
    1/P when every game has a winner, so diff = restricted share - 1/P. The interval is the 95%
    normal interval of the mean per-deal difference over deals (the deal is the unit; deals are
    independent, a deal's rotations are not); p_holm is Holm-adjusted across the restrictions.
    See docs/balance.md.
    """
    from simcli.analyses import ablate
    output = _output(out, force)
    jobs, analysis = ablate.ablate_plan(game, variant, players, policy, restrictions, rule, date, skill)
    execute(RunSpec(jobs=jobs, games=games, seed=DEFAULT_SEED if seed is None else seed,
                    threads=threads, chunk=chunk, backend=Backend(backend, scheduler, workers),
                    progress=show_progress(no_progress), fmt=fmt, html=html, output=output,
                    echo=typer.echo, wide=wide, threshold=threshold, resume=resume), analysis)


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
    target = OutputFile(default_html_path(folder) if out is None else out, force=force,
                        replace_ok=out is None).validate()
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
    force: Annotated[bool, typer.Option("--force", help="with --update: replace a --baseline folder that is not an earlier baseline")] = False,
) -> None:
    """Balance regression: compare a fresh run with the committed baselines (exit 1 if something moved)."""
    from simcli.analyses import check
    code = check.check_command(update=update, games=games, config_file=config_file, baseline=baseline,
                               expectations=expectations, alpha=alpha, threads=threads,
                               backend=Backend(backend, scheduler, workers),
                               progress=show_progress(no_progress), echo=typer.echo, force=force,
                               wide=wide)
    if code:
        raise typer.Exit(code=code)


@app.command("ladder")
def ladder_cmd(
    game: Annotated[str, typer.Argument(help="game id")],
    players: PlayersOpt = None, variant: VariantOpt = None,
    games: Annotated[int, typer.Option("--games", min=1, help="deals per rung (each replayed once per rotation)")] = 200,
    budgets: Annotated[Optional[str], typer.Option("--budgets", help="mc budgets, increasing from rung to rung (doubling by convention) [default: 4,8,16,32,64]")] = None,
    rollout: Annotated[Optional[str], typer.Option("--rollout", help="mc rollout policy [default: heuristic]")] = None,
    tuned: Annotated[bool, typer.Option("--tuned/--no-tuned", help="a tuned rung after heuristic (games with a trained file)")] = True,
    rungs: Annotated[Optional[str], typer.Option("--rungs", help="the rungs instead, weakest first: comma-separated policies, e.g. heuristic,tuned,mc:64,ismcts:64:tuned (replaces --budgets, --rollout, --tuned)")] = None,
    both_ways: Annotated[bool, typer.Option("--both-ways", help="also play each pair the other way round (one lower seat among upper seats) and say whether it has a table-free order")] = False,
    seed: SeedOpt = None, threads: ThreadsOpt = None, out: OutOpt = None, fmt: FormatOpt = "parquet",
    backend: BackendOpt = "local", scheduler: SchedulerOpt = None, workers: WorkersOpt = None,
    no_progress: NoProgressOpt = False, force: ForceOpt = False, wide: WideOpt = False,
    threshold: ThresholdOpt = 0.02, resume: ResumeOpt = False,
) -> None:
    """Skill ladder: random, heuristic, tuned and mc at doubling budgets, each against the rung below; rated."""
    from simcli.report import export
    from simcli.analyses import ladder
    output = _output(out, force)
    if fmt not in export.FORMATS:
        raise SimError(f"unknown --format {fmt!r}; valid formats: {', '.join(export.FORMATS)}")
    names = None
    if rungs is not None:
        if budgets is not None or rollout is not None:
            raise SimError("--rungs names every rung; leave out --budgets and --rollout (they build the default rungs)")
        names = ladder.parse_rungs(game, rungs)
    budgets = "4,8,16,32,64" if budgets is None else budgets
    rollout = "heuristic" if rollout is None else rollout
    pairs = ladder.ladder_jobs(game, players, variant, ladder.parse_budgets(budgets), rollout, tuned,
                               names, both_ways)
    execute(RunSpec(jobs=[j for _, _, j in pairs], games=games, seed=DEFAULT_SEED if seed is None else seed,
                    threads=threads, backend=Backend(backend, scheduler, workers), rotate=True,
                    progress=show_progress(no_progress), fmt=fmt, output=output, echo=typer.echo, wide=wide,
                    threshold=threshold, resume=resume), ladder.LadderAnalysis(budgets, rollout, names,
                                                                               both_ways))


@app.command("tune")
def tune_cmd(
    game: Annotated[str, typer.Argument(help="game id (see `simcli list`)")],
    target: Annotated[str, typer.Option("--target", help="METRIC=VALUE, METRIC=min or METRIC=max, e.g. seat0_advantage=0")],
    rule: Annotated[Optional[list[str]], typer.Option("--rule", help="NAME=LO..HI[:STEP] or NAME=a,b,c to vary (one or two); NAME=VALUE fixes a rule")] = None,
    variant: VariantOpt = None, players: PlayersOpt = None, policy: PolicyOpt = None, seats: SeatsOpt = None,
    rotate: RotateOpt = False,
    games: Annotated[int, typer.Option("--games", min=tune_defaults.JK_GROUPS, help="the most games any one candidate plays")] = tune_defaults.DEFAULT_GAMES,
    seed: SeedOpt = None,
    alpha: Annotated[float, typer.Option("--alpha", min=1e-9, max=0.5, help="most probability, over the whole race, that a best value is dropped (split over the planned rounds)")] = tune_defaults.DEFAULT_ALPHA,
    threads: ThreadsOpt = None, chunk: ChunkOpt = DEFAULT_CHUNK, out: OutOpt = None, fmt: FormatOpt = "parquet",
    html: HtmlOpt = False, backend: BackendOpt = "local", scheduler: SchedulerOpt = None,
    workers: WorkersOpt = None, no_progress: NoProgressOpt = False, force: ForceOpt = False,
    skill: SkillOpt = None, resume: ResumeOpt = False,
) -> None:
    """Which rule value(s) hit a balance target: race candidates on common deals."""
    from simcli.analyses import tune
    from simcli.analyses.skill_tune import tune_skill_plan
    output = _output(out, force)
    cands, analysis = tune.tune_plan(game, target, rule, variant, players, policy, seats, rotate, alpha)
    jobs, analysis = tune_skill_plan(cands, analysis, skill, policy, seats)
    execute(RunSpec(jobs=jobs, games=games, seed=DEFAULT_SEED if seed is None else seed,
                    threads=threads, chunk=chunk, backend=Backend(backend, scheduler, workers),
                    rotate=rotate, progress=show_progress(no_progress), fmt=fmt, html=html,
                    output=output, echo=typer.echo, resume=resume), analysis)


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





@app.command("train")
def train_cmd(
    game: Annotated[str, typer.Argument(help="game id (a game with knobs: see `simcli list`)")],
    players: Annotated[Optional[int], typer.Option("--players", help="player count (default: the variant's first)")] = None,
    variant: Annotated[Optional[str], typer.Option("--variant", help="variant to train on (default: the game's default; its file is then <game>-<variant>-<P>p.toml)")] = None,
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**63 - 1, help="master seed: deals and mutations")] = 1,
    generations: Annotated[int, typer.Option("--generations", min=1, max=10000, help="generations of the (1+lambda) search")] = 24,
    candidates: Annotated[int, typer.Option("--candidates", min=1, max=1000, help="children per generation")] = 10,
    games: Annotated[int, typer.Option("--games", min=1, max=10**7, help="deals per child and opponent in stage A (each played once per seat rotation)")] = 300,
    finalists: Annotated[int, typer.Option("--finalists", min=1, max=1000, help="children raced again in stage B")] = 3,
    final_games: Annotated[int, typer.Option("--final-games", min=1, max=10**7, help="deals per contender, opponent and exploit in stage B")] = 600,
    pool: Annotated[str, typer.Option("--pool", help="opponents, comma-separated: incumbent, self (the candidate's own table: its timeouts count as losses), or any policy text (heuristic, heuristic+bid-zero, tuned@FILE, mc:4, mc:16:tuned@FILE)")] = "heuristic,incumbent,self",
    exploits: Annotated[Optional[str], typer.Option("--exploits", help="restrictions whose gain is penalised, comma-separated, or none (default: all the game's)")] = None,
    exploit_weight: Annotated[float, typer.Option("--exploit-weight", min=0.0, max=1000.0, help="fitness = mean pool share - weight x sum of positive exploit gains")] = 2.0,
    start: Annotated[str, typer.Option("--start", help="heuristic (the knobs' defaults) or a parameter file to start from (only the knobs it lists are searched: a knob added after it was made stays at its default)")] = "heuristic",
    exploit_penalty: Annotated[str, typer.Option("--exploit-penalty", help="sum or max: the fitness subtracts the weight x the sum of the positive exploit gains, or x the largest one")] = "sum",
    horizon: Annotated[int, typer.Option("--horizon", min=0, max=10**6, help="0 (off), or a game length (the game's length unit: turns, tricks, plays): a game longer than this counts as won by nobody, so knobs that lock tables up into long games lose")] = 0,
    no_win_weight: Annotated[float, typer.Option("--no-win-weight", min=0.0, max=1000.0, help="fitness also subtracts this x the share of the candidate's own table's games that nobody wins (within --horizon): knobs whose tables lock up lose")] = 0.0,
    search: Annotated[Optional[str], typer.Option("--search", help="knobs to search, comma-separated (default: every knob the start lists); every other knob keeps its --start value, e.g. to retune a few knobs after a rule change")] = None,
    out: Annotated[Optional[str], typer.Option("--out", help="parameter file to write (default configs/tuned/<game>[-<variant>]-<P>p.toml); see --force")] = None,
    force: Annotated[bool, typer.Option("--force", help="replace an existing --out file")] = False,
    threads: Annotated[Optional[int], typer.Option("--threads", min=1, help="worker threads (default: all cores; results do not depend on it)")] = None,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="no progress bar")] = False,
    resume: ResumeOpt = False,
) -> None:
    """Search a game's tuned knobs by racing on common, seat-rotated deals; write the parameter file."""
    from simcli.analyses import train as tr
    s = tr.Settings(game, players or 0, variant, seed, generations, candidates, games, finalists,
                    final_games, tr._split(pool) or [], tr._split(exploits), exploit_weight, start,
                    exploit_penalty, horizon, no_win_weight, tr._split(search) or None)
    tr.train_command(s, out=out, force=force, threads=threads, progress=show_progress(no_progress),
                     echo=typer.echo, resume=resume)


def _one_line(e) -> str:
    """A usage error as one line that names the option, e.g. "invalid value for --games: ..."."""
    msg = " ".join(e.format_message().split())
    param = getattr(e, "param", None)
    if param is not None and getattr(param, "opts", None):
        name = "/".join(param.opts)
        if name not in msg:
            msg = f"invalid value for {name}: {msg}"
    return msg


def _fail(code: int, e) -> None:
    """One line on stderr, every staged output of this process removed, exit ``code``."""
    from simcli.report.output import abandon_all
    abandon_all()
    typer.echo(f"error: {e}", err=True)
    sys.exit(code)


def _stream_error(e: OSError) -> str:
    """An OS error that reached the top: a write to standard output failed (or, naming a file,
    an OS call no narrower handler caught).
    Standard output is pointed at /dev/null so that Python's own flush at exit stays quiet."""
    if e.filename is not None:
        return f"{e.filename}: {e.strerror or e}"
    try:
        if sys.stdout is sys.__stdout__:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return f"cannot write standard output: {e.strerror or e}"


def main() -> None:
    """Console entry point: errors become one line; exit 2 bad input, 1 a failed write (or `check`
    finding a move), 130/143 interrupted (SIGINT/SIGTERM), with nothing half-written."""
    from simcli.engine.interrupt import run_interruptibly
    from simcli.cli.validation import check_environment
    try:
        check_environment()
        code = run_interruptibly(lambda: app(standalone_mode=False))  # returns typer.Exit's code
        if isinstance(code, int) and code:
            sys.exit(code)
    except SimError as e:
        _fail(2, e)
    except WriteError as e:
        _fail(1, e)
    except OSError as e:  # printing failed (stdout on a full device, a closed pipe)
        _fail(1, _stream_error(e))
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
