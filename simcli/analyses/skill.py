"""`--skill LEVELS`: the same deals at each skill level, every player seat at that level.

``skill_jobs`` turns each job into one job per level (fixed seats such as forecasts-bid's Rival
stay; the level is the ``skill`` label column of every table). ``SkillAnalysis`` plays a job's
levels chunk by chunk on the same game indices (``skill_chunk``), folds each level into the
usual tables, and keeps per-deal sums of a few headline quantities and of their paired
differences against the strongest level (levels are ordered as given, weakest first).
``verdicts`` is a pure function of the ``skill_levels`` table: for each quantity, whether it
holds at every level, appears only at some, or reverses, and whether the two strongest levels
still disagree (the paired difference between them). docs/balance.md, "Across skill".
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import polars as pl

from kernels import layout
from simcli.config import jobs as cfg
from simcli.errors import SimError
from simcli.stats import Z95, mean_ci, normal_sf2
from simcli.engine.runspec import Analysis

# per-deal quantities (besides one win-units column per seat row): tie, length, timeout
EXTRA = ("tie_rate", "length_mean", "timeout_rate")
ALPHA = 0.05


def parse_levels(text: str | None, job: cfg.Job) -> list[str] | None:
    """``heuristic,tuned,mc:16`` -> canonical level labels for ``job``'s game, weakest first."""
    if text is None:
        return None
    words = [w.strip() for w in text.split(",")]
    if len(words) < 2 or any(not w for w in words):
        raise SimError(f"--skill {text!r}: give two or more comma-separated levels, weakest first "
                       f"(e.g. heuristic,tuned,mc:16)")
    labels = [_level_row(w, job)[0] for w in words]
    if len(set(labels)) != len(labels):
        raise SimError(f"--skill {text!r} names a level twice; give each level once")
    return labels


def _level_row(word: str, job: cfg.Job):
    mod = job.module
    valid = cfg.user_policies(mod, job.players, job.params)
    try:
        label, row = cfg.parse_policy(word, valid, getattr(mod, "POLICY_ARGS", {}),
                                      getattr(mod, "RESTRICTIONS", ()),
                                      cfg.knob_source(mod, job.variant, job.players))
        return label, cfg.checked_seat(mod, word, row)
    except SimError as e:
        raise SimError(f"--skill level {word!r} for {job.game}: {e}") from None


def at_level(job: cfg.Job, word: str) -> cfg.Job:
    """``job`` with every player seat at ``word`` (fixed seats stay), labelled ``skill``."""
    label, row = _level_row(word, job)
    seats = job.seats.copy()
    seats[: job.players] = row
    policies = [label] * job.players + list(job.policies[job.players:])
    return replace(job, seats=seats, policies=policies, labels={**job.labels, "skill": label})


def skill_jobs(jobs: list[cfg.Job], text: str) -> tuple[list[cfg.Job], list[str], list[int]]:
    """Each job once per level (job-major, levels in the given order), the levels, and each new
    job's source index; jobs that differ only in their seat policies collapse into one."""
    levels = parse_levels(text, jobs[0])
    out, seen, src = [], set(), []
    for i, job in enumerate(jobs):
        key = (job.game, job.variant, job.players, tuple(sorted(job.labels.items())),
               tuple(sorted((k, str(v)) for k, v in job.rules.items())))
        if key in seen:
            continue
        seen.add(key)
        out += [at_level(job, w) for w in text.split(",")]
        src += [i] * len(levels)
    return out, levels, src


def check_options(levels, until_ci=None, per_game=False) -> None:
    if levels and until_ci is not None:
        raise SimError("--skill and --until-ci cannot be combined (every level plays the same deals)")
    if levels and per_game:
        raise SimError("--skill and --per-game cannot be combined")


def deal_metrics(rows: np.ndarray, S: int) -> np.ndarray:
    """(games x (S + 3)) integers: each seat row's win units, tie, length, timeout."""
    from simcli.engine.runner import win_units
    out = np.zeros((rows.shape[0], S + len(EXTRA)), dtype=np.int64)
    units = win_units(rows, S)
    out[:, :S] = units
    out[:, S] = (units > 0).sum(axis=1) > 1
    out[:, S + 1] = rows[:, layout.col_length(S)]
    out[:, S + 2] = rows[:, layout.col_flags(S)] & layout.FLAG_TIMEOUT
    return out


def skill_chunk(jobs: list, seed: int, start: int, stop: int, rotate: bool):
    """Games [start, stop) at every level (a pure function): (ChunkTally per level, sums) where
    sums[l] = (sum m, sum m^2, sum d, sum d^2) over deals of the per-deal quantities m of level
    l (summed over rotations) and d = m(strongest) - m(l)."""
    from simcli.engine.runner import chunk_tally
    S = jobs[0].seats.shape[0]
    per_level, tallies = [], []
    for job in jobs:
        m = np.zeros((stop - start, S + len(EXTRA)), dtype=np.int64)

        def observe(rows, m=m):
            m += deal_metrics(rows, S)
        tallies.append(chunk_tally(job, seed, start, stop, rotate, observe=observe))
        per_level.append(m)
    top = per_level[-1]
    sums = np.stack([np.stack([m.sum(0), (m * m).sum(0), (top - m).sum(0), ((top - m) ** 2).sum(0)])
                     for m in per_level])
    return tallies, sums


class SkillAnalysis(Analysis):
    """`run`/`sweep --skill`: the standard tables for every (job, level), plus ``skill_levels``
    and ``skill_verdicts``; the verdict lines are printed after the tables."""
    name = "run"

    def __init__(self, levels: list[str]):
        from simcli.engine.runspec import Analysis
        self.levels, self.base = levels, Analysis()

    def simulate(self, spec, ex, per_game=None):
        L = len(self.levels)
        results, self.sums = [], []
        for g in range(0, len(spec.jobs), L):
            res, sums = play_levels(spec.jobs[g:g + L], spec.games[g], spec, ex)
            results += res
            self.sums.append(sums)
        return results

    def tables(self, spec, results) -> dict:
        tables = self.base.tables(spec, results)
        tables["skill_levels"] = levels_table(results, self.sums, len(self.levels))
        tables["skill_verdicts"] = verdicts(tables["skill_levels"])
        return tables

    def lines(self, spec, tables, results) -> list[str]:
        return self.base.lines(spec, tables, results) + verdict_lines(tables["skill_verdicts"])

    def files(self, spec, tables) -> dict:
        return {}

    def meta(self, spec, results) -> dict:
        return {"skill": {"levels": self.levels, "alpha": ALPHA}}


def play_levels(jobs: list, games: int, spec, ex):
    """One job's levels on games 0..games-1: (Result per level, summed skill sums)."""
    import time
    from tqdm import tqdm
    from simcli.engine import runner
    rotate = spec.rotate
    reps = jobs[0].players if rotate else 1
    accs = [runner.accumulators_for(j) for j in jobs]
    pts = [runner.policy_tally_for(j, reps) if rotate else None for j in jobs]
    sums = None
    t0 = time.perf_counter()
    plan = runner.plan_chunks(0, games, spec.chunk)
    tasks = ((jobs, spec.seed, a, b, rotate) for a, b in plan)
    with tqdm(total=games, unit="deal", disable=not spec.progress, leave=False,
              desc=jobs[0].describe()) as bar:
        for (a, b), (tallies, s) in zip(plan, ex.map(skill_chunk, tasks)):
            for acc, pt, ct in zip(accs, pts, tallies):
                acc.merge(ct.acc)
                if pt is not None:
                    pt.merge(ct.policy)
            sums = s if sums is None else sums + s
            bar.update(b - a)
    wall = time.perf_counter() - t0
    return [runner.Result(j, acc, games, spec.seed, wall / len(jobs), reps, pt)
            for j, acc, pt in zip(jobs, accs, pts)], sums


def _quantities(job) -> list[tuple[str, str, int, float]]:
    """(name, kind, column, reference): ``effect`` quantities are judged against their reference
    (a seat's share against 1/S), ``level`` quantities by how they move."""
    S = job.seats.shape[0]
    q = []
    for s in range(S):
        if s < job.players and S > 1:
            q.append((f"seat{s}_edge", "effect", s, 1 / S))
        else:
            q.append((f"{job.policies[s] if s >= job.players else 'success'}_share", "level", s, 0.0))
    return q + [(n, "level", S + i, 0.0) for i, n in enumerate(EXTRA)]


def _keys(job) -> dict:
    return {"game": job.game, "variant": job.variant, "players": job.players,
            **{k: v for k, v in job.labels.items() if k != "skill"}}


def levels_table(results, sums_by_group: list, L: int) -> pl.DataFrame:
    """One row per (job, quantity, level): value (minus its reference for effects) with a 95%
    interval over deals, and the paired difference strongest - this level on the same deals."""
    rows = []
    for g, sums in enumerate(sums_by_group):
        group = results[g * L:(g + 1) * L]
        for name, kind, col, ref in _quantities(group[0].job):
            for rank, r in enumerate(group):
                scale = r.rotations * (layout.SHARE_UNIT if col < r.acc.n_seats else 1)
                n = r.games
                tot, sq, d, dsq = (float(x) for x in sums[rank, :, col])
                m, lo, hi = mean_ci(tot / scale, sq / scale ** 2, n)
                dm, dlo, dhi = mean_ci(d / scale, dsq / scale ** 2, n)
                half = (dhi - dm) / Z95 if dhi == dhi else float("nan")
                p = 1.0 if rank == L - 1 else (normal_sf2(dm / half) if half and half == half else
                                              (1.0 if dm == 0 else 0.0))
                rows.append({**_keys(r.job), "quantity": name, "kind": kind, "skill": r.job.labels["skill"],
                             "rank": rank, "deals": n, "value": m - ref, "ci_low": lo - ref, "ci_high": hi - ref,
                             "strongest_minus_this": dm, "diff_ci_low": dlo, "diff_ci_high": dhi, "p_value": p})
    return pl.DataFrame(rows)


def _sign(lo: float, hi: float) -> int:
    return 1 if lo > 0 else (-1 if hi < 0 else 0)


def judge(kind: str, rows: list[dict]) -> str:
    """The verdict for one quantity from its per-level rows (weakest first)."""
    if kind == "effect":
        signs = [_sign(r["ci_low"], r["ci_high"]) for r in rows]
        if 1 in signs and -1 in signs:
            return "reverses"
        if all(s == 0 for s in signs):
            return "absent at every level"
        if all(s == signs[0] for s in signs):
            return "holds at every level"
        return "only at " + ",".join(r["skill"] for r, s in zip(rows, signs) if s)
    moved = [r["skill"] for r in rows[:-1] if r["p_value"] < ALPHA]
    if not moved:
        return "holds at every level"
    return "changes with skill (differs from the strongest at " + ",".join(moved) + ")"


def verdicts(levels: pl.DataFrame) -> pl.DataFrame:
    """Pure: the ``skill_levels`` table -> one verdict row per (job, quantity)."""
    keys = [c for c in levels.columns if c not in (
        "kind", "skill", "rank", "deals", "value", "ci_low", "ci_high", "strongest_minus_this",
        "diff_ci_low", "diff_ci_high", "p_value")]
    out = []
    for _, part in levels.sort("rank").group_by(keys, maintain_order=True):
        rows = part.to_dicts()
        weak, second, top = rows[0], rows[-2], rows[-1]
        moving = second["p_value"] < ALPHA
        out.append({**{k: top[k] for k in keys}, "kind": top["kind"], "verdict": judge(top["kind"], rows),
                    "weakest": weak["skill"], "value_weakest": weak["value"],
                    "strongest": top["skill"], "value_strongest": top["value"],
                    "top_two_diff": second["strongest_minus_this"], "top_two_ci_low": second["diff_ci_low"],
                    "top_two_ci_high": second["diff_ci_high"], "top_two_p": second["p_value"],
                    "top_two": "still moving" if moving else "settled"})
    return pl.DataFrame(out)


def verdict_lines(table: pl.DataFrame) -> list[str]:
    """One printed line per verdict (after the tables)."""
    keys = table.columns[:table.columns.index("kind")]
    lines = ["verdicts across skill (weakest -> strongest; top two: paired difference on the same deals):"]
    for r in table.iter_rows(named=True):
        extra = [f"{k}={r[k]}" for k in r if k in keys and k not in ("game", "variant", "players", "quantity")]
        where = " ".join([f"{r['game']}/{r['variant']}/{r['players']}p", *extra])
        lines.append(f"  {where} {r['quantity']}: {r['verdict']} ({r['weakest']} {r['value_weakest']:+.4f}"
                     f" -> {r['strongest']} {r['value_strongest']:+.4f}; top two {r['top_two']}: "
                     f"{r['top_two_diff']:+.4f} [{r['top_two_ci_low']:+.4f}, {r['top_two_ci_high']:+.4f}])")
    return lines


def with_skill(jobs: list, counts: list, analysis, text: str | None, until_ci=None, per_game=False,
               policy=None, seats=None):
    """(jobs, games per job, analysis) for `run`/`sweep`: unchanged without ``--skill``."""
    if text is None:
        return jobs, counts, analysis
    if policy is not None or seats is not None:
        raise SimError("--skill sets every seat's policy at each level: give --skill or --policy/--seats, not both")
    from simcli.engine.runspec import Analysis
    if analysis is not None and type(analysis) is not Analysis:
        raise SimError("--skill is not available for a daily-weather calendar run; "
                       "it needs a game, the default suite or a sweep")
    out, levels, src = skill_jobs(jobs, text)
    check_options(levels, until_ci, per_game)
    return out, [counts[i] for i in src], SkillAnalysis(levels)
