"""`ablate --skill LEVELS`: every restriction measured at each level on the same deals.

At each level every player seat plays that level (the base policy) and one seat that level
with the restriction (``simcli/analyses/ablate.py``); a chunk task plays all levels of one
restriction on the same deals, so each restriction's per-deal difference (restricted seat minus
base seat) is paired across levels. The ``ablations`` table gains a ``skill`` column (Holm within
each level, as without --skill); ``skill_levels`` and ``skill_verdicts`` follow
``simcli/analyses/skill.py`` (each restriction's diff is an ``effect``: judged against 0).
"""
from __future__ import annotations

import numpy as np
import polars as pl

from kernels import layout
from simcli.analyses import ablate, skill
from simcli.engine import runner
from simcli.errors import SimError
from simcli.stats import Z95, mean_ci, normal_sf2
from simcli.engine.runspec import Analysis


def skill_deal_units(pairs: list, seed: int, start: int, stop: int):
    """One chunk task: ``ablate.deal_units`` at every level, and (sum, sum of squares) over
    deals of the strongest level's per-deal difference minus each level's."""
    res = [ablate.deal_units(r, b, seed, start, stop) for r, b in pairs]
    diffs = [u[:, 0] - u[:, 1] for u, _, _ in res]
    sums = np.array([[int((diffs[-1] - d).sum()), int(((diffs[-1] - d) ** 2).sum())] for d in diffs],
                    dtype=np.int64)
    return res, sums


class AblateSkillAnalysis(Analysis):
    name = "ablate"

    def __init__(self, levels: list[str], plans: list[list]):
        self.levels, self.plans = levels, plans          # plans[level][restriction]

    def simulate(self, spec, ex, per_game=None):
        games = spec.games[0]
        n = len(self.plans[0])
        self.sums = [np.zeros((len(self.levels), 2), dtype=np.int64) for _ in range(n)]
        keys = [(i, a, b) for i in range(n) for a, b in runner.plan_chunks(0, games, spec.chunk)]
        tasks = (([(lv[i].restricted, lv[i].base) for lv in self.plans], spec.seed, a, b) for i, a, b in keys)
        for (i, _, _), (res, sums) in zip(keys, ex.map(skill_deal_units, tasks)):
            for lv, r in zip(self.plans, res):
                ablate.fold(lv[i], r)
            self.sums[i] += sums
        return self.plans

    def tables(self, spec, results) -> dict:
        parts = [ablate.ablations_table(lv).with_columns(pl.lit(name).alias("skill"))
                 for name, lv in zip(self.levels, self.plans)]
        levels = levels_table(self.levels, self.plans, self.sums)
        return {"ablations": pl.concat(parts), "skill_levels": levels,
                "skill_verdicts": skill.verdicts(levels)}

    def lines(self, spec, tables, results) -> list[str]:
        with pl.Config(tbl_rows=200, tbl_cols=20, tbl_width_chars=200, float_precision=4,
                       tbl_hide_dataframe_shape=True, tbl_hide_column_data_types=True):
            text = str(tables["ablations"].select("skill", "restriction", "diff", "ci_low", "ci_high", "p_holm"))
        return [text] + skill.verdict_lines(tables["skill_verdicts"])

    def files(self, spec, tables) -> dict:
        return {}

    def meta(self, spec, results) -> dict:
        return {"ablate": {"restrictions": [a.name for a in self.plans[0]]},
                "skill": {"levels": self.levels, "alpha": skill.ALPHA}}


def levels_table(levels: list[str], plans: list[list], sums: list) -> pl.DataFrame:
    """``skill_levels`` rows: each restriction's diff per level, paired against the strongest."""
    rows = []
    for i, a0 in enumerate(plans[0]):
        for rank, (name, lv) in enumerate(zip(levels, plans)):
            a = lv[i]
            d = ablate.stats.paired_difference(a.tally, 0, 1)
            scale = layout.SHARE_UNIT * a.tally.rotations
            n = a.tally.games
            dm, dlo, dhi = mean_ci(sums[i][rank, 0] / scale, sums[i][rank, 1] / scale ** 2, n)
            se = (dhi - dm) / Z95 if dhi == dhi else float("nan")
            p = 1.0 if rank == len(levels) - 1 else (normal_sf2(dm / se) if se and se == se else float(dm == 0))
            rows.append({"game": a0.base.game, "variant": a0.base.variant, "players": a0.base.players,
                         "quantity": f"+{a0.name}", "kind": "effect", "skill": name, "rank": rank, "deals": n,
                         "value": d["diff"], "ci_low": d["ci_low"], "ci_high": d["ci_high"],
                         "strongest_minus_this": dm, "diff_ci_low": dlo, "diff_ci_high": dhi, "p_value": p})
    return pl.DataFrame(rows)


def ablate_skill_plan(job, names, text: str | None, policy: str | None):
    """(jobs to compile and list, analysis) for `ablate --skill`."""
    if policy is not None:
        raise SimError("--skill sets every seat's policy at each level: give --skill or --policy, not both")
    levels = skill.parse_levels(text, job)
    jobs = [skill.at_level(job, w) for w in text.split(",")]
    plans = [ablate.ablations_for(j, names) for j in jobs]
    return jobs, AblateSkillAnalysis(levels, plans)
