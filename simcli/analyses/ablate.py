"""`simcli ablate`: what each option is worth, measured causally by restricted play (issue #15).

For each restriction of a game (``RESTRICTIONS``, a policy modifier ``POLICY+NAME``), one seat
plays the base policy with that restriction against P-1 seats of the base policy, seat-rotated,
and is compared with the all-base game on the same deals (Jaffe et al., "Evaluating Competitive
Game Balance with Restricted Play", AIIDE 2012). The deal is the unit: per deal, the restricted
seat's win units summed over the P rotations against the base seat's in the same seat,
summed over the same rotations (a paired difference, as ``--rotate`` compares policies).

The all-base game is the same game whichever seat is watched (every player seat holds the same
row), so it is played once per deal with every player seat watching the restriction: its
player seats' win units and ``restriction_forbidden`` counts summed are exactly the sums over
the P rotations with one watching seat (tests/test_ablate.py checks this).
A solo game (``SOLO``) has one seat: its win share is the success rate.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, replace

import numpy as np
import polars as pl

from kernels import layout
from kernels.spec import SEAT_FORBID, SEAT_KNOBS, SEAT_WATCH
from simcli.config import jobs as cfg
from simcli.engine import runner
from simcli import stats
from simcli.errors import SimError
from simcli.engine.runspec import Analysis

DEFAULT_GAMES = 20_000


@dataclass
class Ablation:
    """One restriction of a job: the restricted job (restricted seat 0, to be rotated), the
    all-base job with every player seat watching the restriction, and their integer tallies."""
    name: str
    restricted: cfg.Job
    base: cfg.Job
    tally: runner.PolicyTally       # policies: 0 = the restricted seat, 1 = the base seat
    forbidden: int = 0              # restriction_forbidden summed over the base games' seats
    yielded: int = 0                # restriction_yielded summed over the restricted games


def solo(job: cfg.Job) -> bool:
    return bool(getattr(job.module, "SOLO", False))


def ablations_for(job: cfg.Job, names: list[str] | None = None) -> list[Ablation]:
    """The ablations of ``job`` (every player seat on one base policy) for restrictions ``names``
    (default: every restriction of the game, in declaration order)."""
    mod = job.module
    declared = {r.name: r for r in getattr(mod, "RESTRICTIONS", ())}
    if not declared:
        raise SimError(f"{job.game} declares no restrictions to ablate")
    if names is None:
        names = list(declared)
    for n in names:
        if n not in declared:
            raise SimError(f"unknown restriction {n!r} for {job.game}; valid restrictions: {', '.join(declared)}")
    P = job.players
    base_label = job.policies[0]
    if len(set(job.policies[:P])) != 1:
        raise SimError("ablate compares one restricted seat with the base policy: give --policy, not --seats")
    valid = cfg.user_policies(mod, P, job.params)
    out = []
    for n in dict.fromkeys(names):
        label, row = cfg.parse_policy(f"{base_label}+{n}", valid, getattr(mod, "POLICY_ARGS", {}),
                                      tuple(declared.values()))
        row[SEAT_KNOBS:] = job.seats[0, SEAT_KNOBS:]     # a tuned base: the same knobs
        seats = job.seats.copy()
        seats[0] = row
        restricted = replace(job, seats=seats, policies=[label] + job.policies[1:])
        watch = job.seats.copy()
        watch[:P, SEAT_WATCH] |= 1 << declared[n].bit
        base = replace(job, seats=watch, policies=list(job.policies))
        tally = runner.PolicyTally([label, base_label], np.ones(2, dtype=np.int64), P)
        out.append(Ablation(n, restricted, base, tally))
    return out


def _counter_col(job: cfg.Job, name: str) -> int:
    names = [c.name for c in job.module.COUNTERS]
    return layout.col_counter(job.seats.shape[0], names.index(name))


def deal_units(restricted: cfg.Job, base: cfg.Job, seed: int, start: int, stop: int) -> tuple:
    """One chunk task: deals [start, stop) played P times with the restricted seat rotated and
    once all-base. A pure function of its arguments (it runs the same here or on a Dask worker):
    returns (per-deal win units of the restricted seat and of the base seat (deals x 2),
    restriction_yielded summed over the restricted games, restriction_forbidden summed over the
    base game's seats)."""
    P = base.players
    S = base.seats.shape[0]
    units = np.zeros((stop - start, 2), dtype=np.int64)
    yc = _counter_col(restricted, "restriction_yielded")
    yielded = 0
    buf = None
    for r, rj in enumerate(runner.rotated_jobs(restricted)):
        buf = runner.play_chunk(rj, seed, start, stop, buf)
        units[:, 0] += runner.win_units(buf, S)[:, (P - r) % P]  # rotation r puts seat 0's row at seat -r
        yielded += int(buf[:, yc].sum())
    buf = runner.play_chunk(base, seed, start, stop, buf)
    units[:, 1] = runner.win_units(buf, S)[:, :P].sum(axis=1)
    forbidden = int(buf[:, _counter_col(base, "restriction_forbidden")].sum())
    return units, yielded, forbidden


def fold(ab: Ablation, task_result: tuple) -> None:
    """Add one chunk task's result into the ablation's integer tallies."""
    units, yielded, forbidden = task_result
    ab.tally.add_games(units)
    ab.yielded += yielded
    ab.forbidden += forbidden


def play_chunk(ab: Ablation, seed: int, start: int, stop: int) -> None:
    """Fold deals [start, stop) into ``ab``, here."""
    fold(ab, deal_units(ab.restricted, ab.base, seed, start, stop))


def run_ablations(abls: list[Ablation], games: int, seed: int, threads: int | None = None,
                  chunk: int = runner.DEFAULT_CHUNK, progress: bool = False, ex=None) -> list[Ablation]:
    """Play ``games`` deals (indices 0..games-1) of every ablation, chunk tasks on ``ex`` (here by
    default, or a Dask executor); integer tallies only, so the result is the same for any thread
    count, chunk size or backend."""
    from tqdm import tqdm
    if ex is None:
        from simcli.engine.executor import LocalExecutor
        ex = LocalExecutor(threads)
    keys = [(a, start, stop) for a in abls for start, stop in runner.plan_chunks(0, games, chunk)]
    tasks = ((a.restricted, a.base, seed, start, stop) for a, start, stop in keys)
    bar = tqdm(total=games * sum(a.base.players + 1 for a in abls), unit="game", unit_scale=True,
               disable=not progress, file=sys.stderr, dynamic_ncols=True, leave=False)
    try:
        for (a, start, stop), res in zip(keys, ex.map(deal_units, tasks)):
            bar.set_description(f"{a.base.describe()} +{a.name}")
            fold(a, res)
            bar.update((stop - start) * (a.base.players + 1))
    finally:
        bar.close()
    return abls


holm_adjusted = stats.holm_adjusted   # its home is simcli/stats.py


def ablations_table(abls: list[Ablation]) -> pl.DataFrame:
    """Table ``ablations``: one row per restriction, sorted by ``diff`` (docs/reports.md)."""
    rows = []
    for a in abls:
        job, pt = a.base, a.tally
        r_share = stats.policy_share(pt, 0)[0]
        b_share = stats.policy_share(pt, 1)[0]
        d = stats.paired_difference(pt, 0, 1)
        seat_games = max(pt.games * job.players, 1)
        rows.append({
            "game": job.game, "variant": job.variant, "players": job.players,
            "policy": job.policies[0], "restriction": a.name, "deals": pt.games,
            "share_restricted": r_share, "share_base": b_share, **d,
            "forbidden_per_game": a.forbidden / seat_games,
            "yielded_per_game": a.yielded / seat_games,
        })
    for row, p in zip(rows, stats.holm_adjusted([r["p_value"] for r in rows])):
        row["p_holm"] = p
    kind = "success_rate" if abls and solo(abls[0].base) else "win_share"
    order = ["game", "variant", "players", "policy", "restriction", "deals",
             f"{kind}_restricted", f"{kind}_base", "diff", "ci_low", "ci_high", "z", "p_value",
             "p_holm", "forbidden_per_game", "yielded_per_game"]
    for row in rows:
        row[f"{kind}_restricted"] = row.pop("share_restricted")
        row[f"{kind}_base"] = row.pop("share_base")
    schema = {c: (pl.Int64 if c in ("players", "deals") else pl.String if c in order[:5] else pl.Float64)
              for c in order}
    df = pl.DataFrame([{c: r[c] for c in order} for r in rows], schema=schema, orient="row")
    return df.sort("diff", "restriction")


def ablations_png(table: pl.DataFrame) -> bytes:
    """Each restriction's paired difference with its 95% interval (a zero line for no effect)."""
    from simcli.report.plots import figure_bytes, pyplot
    plt = pyplot()
    kind = "success rate" if "success_rate_base" in table.columns else "win share"
    labels = [f"{r['game']} {r['variant']} {r['players']}p +{r['restriction']}" for r in table.iter_rows(named=True)]
    fig, ax = plt.subplots(figsize=(7.5, 0.9 + 0.38 * max(len(labels), 1)))
    y = np.arange(len(labels))
    diff = table["diff"].to_numpy()
    lo = table["ci_low"].to_numpy()
    hi = table["ci_high"].to_numpy()
    ax.errorbar(diff, y, xerr=[np.nan_to_num(diff - lo), np.nan_to_num(hi - diff)], fmt="o",
                color="#2b5797", ecolor="#8aa6d6", capsize=3)
    ax.axvline(0.0, color="#999", lw=1)
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.set_xlabel(f"{kind}: restricted seat minus base seat, same deals (95% interval)")
    fig.tight_layout()
    return figure_bytes(fig, dpi=110)


def _daily_date(date: str | None) -> tuple[dict, dict]:
    """daily-weather: (rule overrides, labels) of one date (default: the first of this year)."""
    import datetime as dt
    from simcli.analyses import calendar as daily
    d = dt.date(dt.date.today().year, 1, 1)
    if date is not None:
        try:
            d = dt.date.fromisoformat(date)
        except ValueError:
            raise SimError(f"--date {date!r} is not a date written YYYY-MM-DD") from None
    (entry,) = [e for e in daily.calendar_jobs(d.year) if e["labels"]["date"] == d.isoformat()]
    return entry["rules"], entry["labels"]


def resolve_job(game: str, variant: str | None, players: int | None, policy: str | None,
                rules: dict, date: str | None = None) -> cfg.Job:
    """The all-base job ablate starts from (default policy: the game's heuristic; daily-weather:
    one date, default 1 January this year)."""
    labels = {}
    if game == "daily-weather":
        drules, labels = _daily_date(date)
        rules = {**drules, **rules}
    elif date is not None:
        raise SimError("--date is for daily-weather only")
    if policy is None:  # the game's designed play (configs/<game>.toml)
        policy = cfg.designed_play(game)
    (job,) = cfg.expand(game, variant, players, policy=policy, rules=rules, labels=labels)
    return job


def ablate(game: str, variant: str | None = None, players: int | None = None, policy: str | None = None,
           restrictions: str | None = None, games: int = DEFAULT_GAMES, seed: int = 1,
           threads: int | None = None, chunk: int = runner.DEFAULT_CHUNK, rule_flags=None,
           date: str | None = None, progress: bool = False) -> tuple[pl.DataFrame, cfg.Job]:
    """Resolve, play and tabulate one ablation job (the command's logic, without output)."""
    job = resolve_job(game, variant, players, policy, cfg.parse_rule_flags(rule_flags), date)
    abls = run_ablations(ablations_for(job, restriction_names(restrictions)), games, seed, threads,
                         chunk, progress)
    return ablations_table(abls), job


def restriction_names(restrictions: str | None) -> list[str] | None:
    """``--restrictions a,b`` -> names (None: every restriction of the game)."""
    if restrictions is None:
        return None
    names = [n.strip().lower() for n in restrictions.split(",") if n.strip()]
    if not names:
        raise SimError("--restrictions lists no restriction")
    return names


def header_line(job: cfg.Job, games: int, designed: bool) -> str:
    """What ablate plays, and what its --games counted."""
    from simcli.report.headers import games_phrase
    P = job.players
    play = (f"base policy {job.policies[0]} (the game's designed play; --policy chooses another)"
            if designed else f"base policy {job.policies[0]}")
    return (f"{job.describe().split(' [')[0]}: {play}; per restriction "
            f"{games_phrase(games, P)} with the restricted seat + {games:,} all-base games")


class AblateAnalysis(Analysis):
    """`simcli ablate` on the run pipeline: the spec's one job is the all-base job; each
    restriction's chunk tasks run on the spec's backend; prints and writes the ablations table."""
    name = "ablate"

    def __init__(self, plans: list[Ablation], designed: bool = False):
        self.plans, self.designed = plans, designed

    def header(self, spec) -> list[str]:
        return [header_line(spec.jobs[0], spec.games[0], self.designed)]

    def simulate(self, spec, ex, per_game=None) -> list[Ablation]:
        return run_ablations(self.plans, spec.games[0], spec.seed, spec.threads, spec.chunk,
                             spec.progress, ex)

    def tables(self, spec, results) -> dict:
        return {"ablations": ablations_table(results)}

    def lines(self, spec, tables, results) -> list[str]:
        from simcli.report.fmt import echo_table
        job, table = spec.jobs[0], tables["ablations"]
        kind = "success_rate" if solo(job) else "win_share"
        out: list[str] = []
        echo_table(out.append, table.select("restriction", f"{kind}_restricted", f"{kind}_base", "diff",
                                            "ci_low", "ci_high", "p_holm", "forbidden_per_game",
                                            "yielded_per_game"), n=spec.games[0], wide=spec.wide)
        return out

    def verdict(self, spec, tables, results) -> None:
        from simcli.report import findings
        findings.add_to(tables, findings.Settings(threshold=spec.threshold), spec.echo)

    def files(self, spec, tables) -> dict:
        return {"ablations.png": ablations_png(tables["ablations"])}

    def meta(self, spec, results) -> dict:
        return {"ablate": {"policy": spec.jobs[0].policies[0],
                           "restrictions": [a.name for a in self.plans]}}


def ablate_plan(game, variant, players, policy, restrictions, rule, date, skill=None):
    """The user's words for `ablate` -> ([the all-base job(s)], analysis); unknown names fail
    here. ``skill``: ``--skill LEVELS`` (simcli/analyses/skill_ablate.py), one job per level."""
    job = resolve_job(game, variant, players, None if skill else policy, cfg.parse_rule_flags(rule), date)
    if skill is not None:
        from simcli.analyses.skill_ablate import ablate_skill_plan
        return ablate_skill_plan(job, restriction_names(restrictions), skill, policy)
    return [job], AblateAnalysis(ablations_for(job, restriction_names(restrictions)), designed=policy is None)
