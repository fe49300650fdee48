"""The simcli command line (Typer). Commands stay thin: parse -> resolve -> run -> report -> export."""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time
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
            "policies": [p for p in mod.POLICIES],
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


@app.command("run")
def run_cmd(
    game: GameArg = None, variant: VariantOpt = None, players: PlayersOpt = None,
    games: Annotated[Optional[int], typer.Option("--games", min=1, help="games per job (default 100000, or the suite's)")] = None,
    seed: SeedOpt = None, policy: PolicyOpt = None, seats: SeatsOpt = None, rule: RuleOpt = None,
    threads: ThreadsOpt = None,
    out: Annotated[Optional[Path], typer.Option("--out", help="output folder (default reports/run-<time>)")] = None,
    fmt: Annotated[str, typer.Option("--format", help="parquet | csv")] = "parquet",
    per_game: Annotated[bool, typer.Option("--per-game", help="also write one row per game (streamed)")] = False,
    chunk: Annotated[int, typer.Option("--chunk", min=1, help="games per chunk")] = 1 << 16,
    no_progress: NoProgressOpt = False,
) -> None:
    """Simulate games and report balance statistics (no GAME: the default suite)."""
    from . import export, report, runner
    if fmt not in export.FORMATS:
        raise SimError(f"unknown --format {fmt!r}; valid formats: {', '.join(export.FORMATS)}")
    if game is None:
        if any(x is not None for x in (variant, players, policy, seats)) or rule:
            raise SimError("--variant/--players/--policy/--seats/--rule need a GAME; "
                           "without one, simcli run plays the default suite (configs/suite.toml)")
        jobs, suite_games, suite_seed = cfg.suite_jobs()
        games = games or suite_games
        seed = suite_seed if seed is None else seed
    else:
        jobs = _resolve_jobs(game, variant, players, policy, seats, rule)
        games = games or DEFAULT_GAMES
        seed = DEFAULT_SEED if seed is None else seed
    out = out or export.default_out()
    export.prepare_out(out)
    writers = None
    if per_game:
        names = ["per_game"] if len(jobs) == 1 else [
            f"per_game-{i:03d}-{j.game}-{j.variant}-{j.players}p" for i, j in enumerate(jobs)]
        writers = [runner.PerGameWriter(out / f"{n}.{fmt}", fmt) for n in names]
    t0 = time.time()
    try:
        results = runner.run_jobs(jobs, games, seed, threads, chunk, show_progress(no_progress), writers)
    except BaseException:
        for w in writers or []:
            w.discard()
        raise
    tables = report.build_tables(results)
    wall = time.time() - t0
    meta = run_meta(results, seed, games, threads, chunk, wall)
    export.print_tables(tables, typer.echo)
    paths = export.write_tables(tables, out, fmt, meta)
    for w in writers or []:
        w.close()
    typer.echo(f"wrote {len(paths) + len(writers or [])} files to {out} ({wall:.1f} s)")


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
        app(standalone_mode=False)
    except SimError as e:
        typer.echo(f"error: {e}", err=True)
        sys.exit(2)
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
