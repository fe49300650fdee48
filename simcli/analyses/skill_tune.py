"""`tune --skill LEVELS`: the same race at each level (every seat at that level, the same seed,
so the same deals), and whether the best rule value holds across skill.

Every table gains a ``skill`` column. ``skill_verdicts`` has one row: the best value(s) at each
level (the best and those the race could not tell from it), and the verdict: ``holds at every
level`` when the weakest level's best value is among the best at every level, ``only at ...``
when it is among them at some, ``changes with skill`` when at none but the weakest; ``top_two``
is ``settled`` when the second-strongest level's best value is among the strongest level's best
(its race compared them on the same deals and could not tell them apart), else ``still moving``.
"""
from __future__ import annotations

from dataclasses import replace

import polars as pl

from simcli.analyses import skill, tune
from simcli.errors import SimError
from simcli.engine.runspec import Analysis


class TuneSkillAnalysis(Analysis):
    name = "tune"

    def __init__(self, levels: list[str], per_level: list):
        self.levels, self.per_level = levels, per_level      # one TuneAnalysis per level

    def simulate(self, spec, ex, per_game=None):
        n = len(self.per_level[0].cands)
        out = []
        for i, a in enumerate(self.per_level):
            sub = replace(spec, jobs=spec.jobs[i * n:(i + 1) * n], games=spec.games[i * n:(i + 1) * n])
            out.append(a.simulate(sub, ex))
        return out

    def tables(self, spec, results) -> dict:
        tables: dict = {}
        for name, a, res in zip(self.levels, self.per_level, results):
            for k, t in a.tables(spec, res).items():
                t = t if "skill" in t.columns else t.with_columns(pl.lit(name).alias("skill"))
                tables[k] = pl.concat([tables[k], t], how="diagonal_relaxed") if k in tables else t
        tables["skill_verdicts"] = tune_verdicts(tables["tune"], self.levels, self.per_level[0].rules)
        return tables

    def lines(self, spec, tables, results) -> list[str]:
        out = []
        for a, res in zip(self.per_level, results):
            out += tune.verdict_lines(a.race, spec.games[0])
        v = tables["skill_verdicts"].row(0, named=True)
        out.append(f"best value across skill: {v['verdict']} (top two {v['top_two']}); "
                   + "; ".join(f"{lv}: {v['best_' + lv]}" for lv in self.levels))
        return out

    def files(self, spec, tables) -> dict:
        return {}

    def verdict(self, spec, tables, results) -> None:
        """The findings over every level's candidates (the target's verdict is the line above)."""
        from simcli.report import findings
        judged = {k: v for k, v in tables.items() if k not in ("tune", "skill_verdicts")}
        tables["findings"] = findings.add_to(judged, findings.Settings(threshold=spec.threshold), spec.echo)

    def meta(self, spec, results) -> dict:
        m = self.per_level[-1].meta(spec, results[-1])
        return {**m, "skill": {"levels": self.levels}}


def tune_verdicts(table: pl.DataFrame, levels: list[str], rules: list[str]) -> pl.DataFrame:
    """Pure: the ``tune`` table (with ``skill``) -> one verdict row on the best value."""
    def best(level):
        t = table.filter((pl.col("skill") == level) & pl.col("status").is_in(["best", "indistinguishable"]))
        return {", ".join(f"{r}={row[r]}" for r in rules) for row in t.iter_rows(named=True)}
    sets = [best(lv) for lv in levels]
    first = next(iter(sorted(table.filter((pl.col("skill") == levels[0]) & (pl.col("status") == "best"))
                             .select(rules).iter_rows())), None)
    claim = ", ".join(f"{r}={v}" for r, v in zip(rules, first)) if first is not None else ""
    held = [lv for lv, s in zip(levels, sets) if claim in s]
    verdict = ("holds at every level" if len(held) == len(levels) else
               "changes with skill" if held == [levels[0]] else "only at " + ",".join(held))
    top_best = next(iter(sorted(table.filter((pl.col("skill") == levels[-2]) & (pl.col("status") == "best"))
                                .select(rules).iter_rows())), None)
    top_claim = ", ".join(f"{r}={v}" for r, v in zip(rules, top_best)) if top_best is not None else ""
    row = {"quantity": "best value", "claim": claim, "verdict": verdict,
           "top_two": "settled" if top_claim in sets[-1] else "still moving",
           **{f"best_{lv}": " | ".join(sorted(s)) for lv, s in zip(levels, sets)}}
    return pl.DataFrame([row])


def tune_skill_plan(cands, analysis, text: str | None, policy, seats):
    """(jobs, analysis) for `tune`: unchanged without ``--skill``."""
    if text is None:
        return [c.job for c in cands], analysis
    if policy is not None or seats is not None:
        raise SimError("--skill sets every seat's policy at each level: give --skill or --policy/--seats, not both")
    levels = skill.parse_levels(text, cands[0].job)
    per_level = []
    for w in text.split(","):
        lc = [tune.Candidate(c.values, skill.at_level(c.job, w)) for c in cands]
        per_level.append(tune.TuneAnalysis(lc, analysis.target, analysis.rules, analysis.alpha,
                                          first=analysis.first))
    return [c.job for a in per_level for c in a.cands], TuneSkillAnalysis(levels, per_level)
