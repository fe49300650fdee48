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


# ---- the real commands (forecasts-cubes 3p, random and heuristic: the plain build) ----

from helpers import invoke  # noqa: E402


def _read(folder, name):
    return pl.read_parquet(folder / f"{name}.parquet")


def test_run_skill_levels_equal_plain_runs_of_each_policy(tmp_path):
    """Every level plays the deals a plain run of that policy plays (same seed and indices)."""
    r = invoke("run", "forecasts-cubes", "--players", "3", "--games", "600", "--chunk", "250",
               "--skill", "random,heuristic", "--out", tmp_path / "s", "--no-progress")
    assert r.exit_code == 0, r.output
    assert "verdicts across skill" in r.stdout and "seat0_edge" in r.stdout
    # the first line names the levels played, not the designed play the levels replaced
    assert r.stdout.splitlines()[0] == ("2 jobs: seats random x3 | heuristic x3; 600 games per job"), r.stdout
    seats = _read(tmp_path / "s", "seats")
    for level in ("random", "heuristic"):
        p = invoke("run", "forecasts-cubes", "--players", "3", "--games", "600", "--policy", level,
                   "--out", tmp_path / level, "--no-progress")
        assert p.exit_code == 0, p.output
        plain = _read(tmp_path / level, "seats").drop("win_se")
        mine = seats.filter(pl.col("skill") == level).drop("skill", "win_se")
        assert mine.equals(plain.select(mine.columns)), level
    v = _read(tmp_path / "s", "skill_verdicts")
    assert set(v["quantity"]) == {"seat0_edge", "seat1_edge", "seat2_edge", "tie_rate", "length_mean",
                                  "timeout_rate"}


def test_ablate_skill_levels_equal_plain_ablations(tmp_path):
    r = invoke("ablate", "forecasts-cubes", "--players", "3", "--games", "400", "--restrictions",
               "hot-only,cold-only", "--skill", "random,heuristic", "--out", tmp_path / "s", "--no-progress")
    assert r.exit_code == 0, r.output
    table = _read(tmp_path / "s", "ablations")
    for level in ("random", "heuristic"):
        p = invoke("ablate", "forecasts-cubes", "--players", "3", "--games", "400", "--restrictions",
                   "hot-only,cold-only", "--policy", level, "--out", tmp_path / level, "--no-progress")
        plain = _read(tmp_path / level, "ablations")
        mine = table.filter(pl.col("skill") == level).drop("skill")
        assert mine.equals(plain), level
    assert set(_read(tmp_path / "s", "skill_verdicts")["quantity"]) == {"+hot-only", "+cold-only"}


def test_tune_skill_races_each_level(tmp_path):
    r = invoke("tune", "forecasts-cubes", "--players", "3", "--rule", "tricks_per_round=8..10",
               "--target", "tie_rate=min", "--games", "2000", "--skill", "random,heuristic",
               "--out", tmp_path / "t", "--no-progress")
    assert r.exit_code == 0, r.output
    assert set(_read(tmp_path / "t", "tune")["skill"]) == {"random", "heuristic"}
    v = _read(tmp_path / "t", "skill_verdicts").row(0, named=True)
    assert v["verdict"] in ("holds at every level", "changes with skill") or v["verdict"].startswith("only at")
    assert "best value across skill" in r.stdout


@pytest.mark.parametrize("args, needle", [
    (("run", "forecasts-cubes", "--skill", "random,wizard"), "unknown policy 'wizard'"),
    (("run", "forecasts-cubes", "--skill", "heuristic"), "two or more"),
    (("run", "forecasts-cubes", "--skill", "random,heuristic", "--until-ci", "0.1"), "--until-ci"),
    (("ablate", "forecasts-cubes", "--skill", "random,heuristic", "--policy", "random"), "not both"),
    (("tune", "forecasts-cubes", "--target", "tie_rate=min", "--rule", "tricks_per_round=8..9",
      "--skill", "random,heuristic", "--seats", "random,random,random,random"), "not both"),
    (("run", "forecasts-cubes", "--skill", "random,heuristic", "--policy", "random"), "not both"),
])
def test_bad_skill_input_is_one_line(args, needle, tmp_path):
    r = invoke(*args, "--out", tmp_path / "o")
    assert r.exit_code == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.output
    assert not (tmp_path / "o").exists()


def test_sweep_skill_collapses_policies_and_adds_the_axis(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text('[[grid]]\ngame = "forecasts-cubes"\nvariants = ["base"]\nplayers = [3]\n'
                 'policies = ["random", "heuristic"]\nrules = { tricks_per_round = [8, 10] }\n')
    r = invoke("sweep", f, "--games", "300", "--skill", "random,heuristic", "--out", tmp_path / "o",
               "--html", "--no-progress")
    assert r.exit_code == 0, r.output
    variants = _read(tmp_path / "o", "variants")
    # 2 rule values x 2 levels: the file's two policy lists are replaced by the levels
    assert variants.select("tricks_per_round", "skill").rows() == [
        ("8", "random"), ("8", "heuristic"), ("10", "random"), ("10", "heuristic")]
    import json
    assert json.loads((tmp_path / "o" / "meta.json").read_text())["axes"][-1] == "skill"
    assert (tmp_path / "o" / "report.html").is_file()


def test_skill_tables_do_not_depend_on_threads_or_chunk(tmp_path):
    common = ("run", "forecasts-cubes", "--players", "3", "--games", "500", "--skill", "random,heuristic",
              "--no-progress")
    a = invoke(*common, "--threads", "1", "--chunk", "64", "--out", tmp_path / "a")
    b = invoke(*common, "--threads", "2", "--chunk", "500", "--out", tmp_path / "b")
    assert a.exit_code == 0 and b.exit_code == 0, a.output + b.output
    for name in ("seats", "skill_levels", "skill_verdicts"):
        assert _read(tmp_path / "a", name).equals(_read(tmp_path / "b", name)), name


def test_the_python_api_takes_skill_and_gives_the_cli_tables(tmp_path):
    import simcli
    r = invoke("run", "forecasts-cubes", "--players", "3", "--games", "400", "--skill", "random,heuristic",
               "--out", tmp_path / "c", "--no-progress")
    assert r.exit_code == 0, r.output
    for skill in ("random,heuristic", ["random", "heuristic"]):
        t = simcli.run("forecasts-cubes", players=3, games=400, skill=skill)
        for name in ("seats", "skill_levels", "skill_verdicts"):
            assert t[name].equals(_read(tmp_path / "c", name)), name
    with pytest.raises(ValueError, match="skill must be a comma-separated string"):
        simcli.run("forecasts-cubes", games=10, skill=3)
    with pytest.raises(ValueError, match="not both"):
        simcli.run("forecasts-cubes", games=10, skill="random,heuristic", policy="random")


@pytest.mark.slow
@pytest.mark.parametrize("argv", [
    ["run", "forecasts-cubes", "--players", "3", "--games", "500", "--skill", "random,heuristic"],
    ["ablate", "forecasts-cubes", "--players", "3", "--games", "300", "--restrictions", "hot-only",
     "--skill", "random,heuristic"],
])
def test_skill_tables_on_dask_equal_local(tmp_path, argv):
    pytest.importorskip("distributed")
    a = invoke(*argv, "--out", tmp_path / "local", "--no-progress")
    b = invoke(*argv, "--backend", "dask", "--workers", "1", "--out", tmp_path / "dask", "--no-progress")
    assert a.exit_code == 0 and b.exit_code == 0, a.output + b.output
    for p in sorted((tmp_path / "local").glob("*.parquet")):
        x, y = pl.read_parquet(p), pl.read_parquet(tmp_path / "dask" / p.name)
        drop = [c for c in x.columns if c in ("wall_s", "games_per_s")]
        assert x.drop(drop).equals(y.drop(drop)), p.name
