"""--skill: the same deals at each level, and the verdicts across skill (simcli/analyses/skill.py).

The verdicts are checked on tests/toygame/skill.py, whose seat-0 effect is known exactly to
reverse with skill (an edge at random, none at heuristic, a deficit at strong)."""
from __future__ import annotations

import sys
from pathlib import Path

import polars as pl
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from toygame import skill as toy  # noqa: E402

from simcli.analyses import skill  # noqa: E402
from simcli.engine.executor import LocalExecutor  # noqa: E402
from simcli.engine.runspec import RunSpec  # noqa: E402
from simcli.errors import SimError  # noqa: E402

LEVELS = "random,heuristic,strong"


def toy_tables(players=3, games=20_000, chunk=3000, rotate=False, levels=LEVELS):
    jobs, lv, _ = skill.skill_jobs([toy.job(players)], levels)
    spec = RunSpec(jobs=jobs, games=games, seed=7, chunk=chunk, rotate=rotate).validate()
    analysis = skill.SkillAnalysis(lv)
    results = analysis.simulate(spec, LocalExecutor(1))
    return analysis.tables(spec, results), results


def test_every_level_plays_the_same_deals_with_every_seat_at_that_level():
    jobs, levels, src = skill.skill_jobs([toy.job(3)], LEVELS)
    assert levels == ["random", "heuristic", "strong"] and src == [0, 0, 0]
    assert [j.labels["skill"] for j in jobs] == levels
    assert [j.policies for j in jobs] == [[lv] * 3 for lv in levels]
    assert [list(j.seats[:, 0]) for j in jobs] == [[0] * 3, [1] * 3, [2] * 3]
    tables, _ = toy_tables(games=2000)
    # the deal is the same at every level: a card's score part 2c is common, so the best card wins
    assert tables["seats"]["skill"].to_list() == [lv for lv in levels for _ in range(3)]


def test_the_seat_verdict_reverses_and_matches_exact_values():
    tables, _ = toy_tables()
    lv = tables["skill_levels"]
    for code, name in enumerate(["random", "heuristic", "strong"]):
        ex = toy.exact(code, 3)
        row = lv.filter((pl.col("quantity") == "seat0_edge") & (pl.col("skill") == name)).row(0, named=True)
        truth = float(ex["seat0_share"]) - 1 / 3
        assert row["ci_low"] <= truth <= row["ci_high"], (name, row, truth)
        tie = lv.filter((pl.col("quantity") == "tie_rate") & (pl.col("skill") == name)).row(0, named=True)
        assert tie["ci_low"] <= float(ex["tie_rate"]) <= tie["ci_high"]
    v = {r["quantity"]: r for r in tables["skill_verdicts"].iter_rows(named=True)}
    assert v["seat0_edge"]["verdict"] == "reverses"
    assert v["seat0_edge"]["top_two"] == "still moving"     # heuristic 0 -> strong < 0
    # seat 2 loses to seat 0's bonus at random and has its own at strong; seat 1, with no bonus,
    # is behind whenever someone has one (random, strong), and level at heuristic
    assert v["seat2_edge"]["verdict"] == "reverses"
    assert v["seat1_edge"]["verdict"] == "only at random,strong"
    assert v["tie_rate"]["verdict"].startswith("changes with skill (differs from the strongest at random")
    assert v["length_mean"]["verdict"] == "holds at every level"


def test_results_do_not_depend_on_chunk_or_rotation_bookkeeping():
    a, _ = toy_tables(games=5000, chunk=5000)
    b, _ = toy_tables(games=5000, chunk=777)
    for name in ("seats", "variants", "skill_levels", "skill_verdicts"):
        assert a[name].drop([c for c in a[name].columns if c == "wall_s"]).equals(
            b[name].drop([c for c in b[name].columns if c == "wall_s"])), name


def test_judge_rules():
    def rows(*ci):
        return [{"skill": f"l{i}", "ci_low": lo, "ci_high": hi, "p_value": 1.0} for i, (lo, hi) in enumerate(ci)]
    assert skill.judge("effect", rows((0.1, 0.2), (0.05, 0.1), (0.01, 0.3))) == "holds at every level"
    assert skill.judge("effect", rows((0.1, 0.2), (-0.1, 0.1), (-0.3, -0.1))) == "reverses"
    assert skill.judge("effect", rows((0.1, 0.2), (-0.1, 0.1))) == "only at l0"
    assert skill.judge("effect", rows((-0.1, 0.2), (-0.1, 0.1))) == "absent at every level"
    level = rows((0, 1), (0, 1), (0, 1))
    level[0]["p_value"] = 0.001
    assert skill.judge("level", level).endswith("at l0)")


@pytest.mark.parametrize("text, words", [
    ("heuristic", "two or more"), ("random,random", "twice"), ("random,bogus", "unknown policy"),
    ("random,,strong", "two or more")])
def test_bad_levels_are_one_line(text, words):
    with pytest.raises(SimError, match=words):
        skill.parse_levels(text, toy.job(3))


def test_skill_refuses_until_ci():
    with pytest.raises(SimError, match="--until-ci"):
        skill.with_skill([toy.job(3)], [10], None, "random,strong", until_ci=0.1)
