"""Balance analysis: seat rotation with paired statistics, --until-ci, sweeps and `check`."""
from __future__ import annotations

import json
import re

import numpy as np
import polars as pl
import pytest

from simcli.config import jobs as cfg
from simcli.engine import runner
from simcli.analyses.trace import trace_events
from tests.test_cli import invoke

GAME = "forecasts-cubes"


def test_rotation_replays_the_same_deals_with_rotated_seats():
    job = cfg.resolve(GAME, seats="heuristic,random,random,random")
    rot = runner.rotated_jobs(job)
    assert [j.policies for j in rot] == [
        ["heuristic", "random", "random", "random"], ["random", "random", "random", "heuristic"],
        ["random", "random", "heuristic", "random"], ["random", "heuristic", "random", "random"]]
    deals = []
    for j in rot:
        deals.append([(e["seat"], e["round"], tuple(e["hand"])) for e in trace_events(j, 5, 9) if e["event"] == "deal"])
    assert all(d == deals[0] for d in deals)


def test_identical_policies_share_exactly_one_over_n():
    (res,) = runner.run_jobs([cfg.resolve(GAME)], 500, 3, progress=False, rotate=True)
    assert res.policy.names == ["random"]
    from simcli.stats import policy_share
    m, lo, hi = policy_share(res.policy, 0)
    # every game has winners worth one full win, all held by 'random' in all 4 seats
    assert m == pytest.approx(0.25) and lo == pytest.approx(0.25) and hi == pytest.approx(0.25)


def test_rotated_run_separates_policy_edge_from_seat_edge(tmp_path):
    r = invoke("run", GAME, "--seats", "heuristic,random,random,random", "--rotate", "--games", "3000",
               "--out", str(tmp_path), "--no-progress")
    assert r.exit_code == 0, r.output
    seats = pl.read_parquet(tmp_path / "seats.parquet")
    assert seats["games"].to_list() == [12000] * 4 and set(seats["policy"]) == {"rotated"}
    pol = pl.read_parquet(tmp_path / "policies.parquet")
    share = dict(zip(pol["policy"], pol["win_share"]))
    # shares per seat held: 1 heuristic seat + 3 random seats account for every win
    assert share["heuristic"] + 3 * share["random"] == pytest.approx(1.0)
    paired = pl.read_parquet(tmp_path / "paired.parquet").row(0, named=True)
    assert {paired["policy_a"], paired["policy_b"]} == {"heuristic", "random"}
    sign = 1 if paired["policy_a"] == "heuristic" else -1
    assert sign * paired["diff"] == pytest.approx(share["heuristic"] - share["random"])
    assert min(sign * paired["ci_low"], sign * paired["ci_high"]) > 0.1, "heuristic clearly beats random"
    assert paired["p_value"] < 1e-6
    assert "skill gap forecasts-cubes/base/4p: heuristic - random" in r.output
    # seat edge: with rotation every seat held every policy, so seats are close to 1/4
    assert (seats["win_share"] - 0.25).abs().max() < 0.03


def test_until_ci_stops_at_the_first_checkpoint_where_intervals_are_narrow_enough():
    job = cfg.resolve(GAME)
    step = runner.UNTIL_CI_STEP
    (res,) = runner.run_jobs([job], 200_000, 1, chunk=1000, progress=False, until_ci=0.02)
    assert step < res.games < 200_000 and res.games % step == 0
    assert runner.widest_interval(res.acc, None) < 0.02
    # one checkpoint fewer would not have been enough
    (prev,) = runner.run_jobs([job], res.games - step, 1, chunk=1000, progress=False)
    assert runner.widest_interval(prev.acc, None) >= 0.02
    (again,) = runner.run_jobs([job], 200_000, 1, chunk=1000, progress=False, until_ci=0.02)
    assert again.games == res.games and np.array_equal(again.acc.score_hist, res.acc.score_hist)


def test_sweep_grid_has_its_axes_as_columns(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text('games = 300\nseed = 2\n[[grid]]\ngame = "forecasts-cubes"\nplayers = [3]\n'
                 'policies = ["random", "heuristic"]\nrules = { tricks_per_round = [5, 10], advisory = [true, false] }\n')
    out = tmp_path / "o"
    r = invoke("sweep", str(f), "--out", str(out), "--no-progress")
    assert r.exit_code == 0, r.output
    v = pl.read_parquet(out / "variants.parquet")
    # 2 variants x 1 count x 2 policies x 2 x 2 rule values
    assert v.height == 16
    assert set(v["tricks_per_round"]) == {"5", "10"} and set(v["advisory"]) == {"true", "false"}
    assert v.select("variant", "policies", "tricks_per_round", "advisory").unique().height == 16
    assert json.loads((out / "meta.json").read_text())["axes"] == [
        "game", "variant", "players", "policies", "tricks_per_round", "advisory"]
    lengths = pl.read_parquet(out / "lengths.parquet")
    assert set(lengths.filter(pl.col("tricks_per_round") == "5")["length"]) == {20}


@pytest.mark.parametrize("text,needle", [
    ('[[grid]]\ngame = "nope"\n', "unknown game"),
    ('[[grid]]\ngame = "forecasts-cubes"\ncolour = 1\n', "unknown key(s) colour"),
    ('games = 1\n', "no [[grid]]"),
    ('[[grid]]\ngame = "forecasts-cubes"\nrules = { tricks_per_round = [99] }\n', "outside"),
])
def test_bad_sweep_files_are_one_line_errors(tmp_path, text, needle):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    r = invoke("sweep", str(f), "--out", str(tmp_path / "o"))
    assert r.exit_code == 2 and needle in r.output and len(r.output.strip().splitlines()) == 1


CHECK = """games = 4000
baseline_seed = 11
check_seed = {seed}
alpha = 0.01
[[job]]
game = "forecasts-cubes"
players = [4]
{extra}
"""


def _check(tmp_path, seed=22, extra="", update=False, expectations=None):
    conf = tmp_path / f"check-{seed}-{abs(hash(extra))}.toml"
    conf.write_text(CHECK.format(seed=seed, extra=extra))
    args = ["check", "--config", str(conf), "--baseline", str(tmp_path / "baseline"), "--no-progress"]
    if expectations:
        e = tmp_path / "expect.toml"
        e.write_text(expectations)
        args += ["--expectations", str(e)]
    return invoke(*args, *(["--update"] if update else []))


def test_check_passes_a_reseeded_run_of_unchanged_rules(tmp_path):
    assert _check(tmp_path, update=True).exit_code == 0
    assert (tmp_path / "baseline" / "seats.parquet").is_file()
    r = _check(tmp_path, expectations="")
    assert r.exit_code == 0, r.output
    assert "no significant change" in r.output


def test_check_catches_a_rule_change(tmp_path):
    assert _check(tmp_path, update=True).exit_code == 0
    r = _check(tmp_path, extra="rules = { tricks_per_round = 7 }", expectations="")
    assert r.exit_code == 1, r.output
    assert "score_distribution" in r.output and "length_distribution" in r.output


def test_check_reports_a_failed_designer_expectation(tmp_path):
    assert _check(tmp_path, update=True, extra='policy = "random"').exit_code == 0
    # the Advisory switched on under the same job key: the designer said it should stay rare
    r = _check(tmp_path, extra='policy = "random"\nrules = { advisory = true }',
               expectations='[[expect]]\nmetric = "advisory_use_rate"\nbelow = 0.01\n')
    assert r.exit_code == 1
    assert "expectation failed: forecasts-cubes/base/4p" in r.output and "advisory_use_rate" in r.output


def test_check_flags_a_seat_made_stronger(tmp_path):
    assert _check(tmp_path, update=True, extra='policy = "random"').exit_code == 0
    # Relabel the baseline's job as if it had been made with the seat list the new run uses,
    # so the two are compared as the same job: seat 0's edge must show as a moved win share.
    for name in ("seats", "variants", "scores", "lengths"):
        p = tmp_path / "baseline" / f"{name}.parquet"
        df = pl.read_parquet(p).with_columns(pl.lit("heuristic,random,random,random").alias("policies"))
        df.write_parquet(p)
    r = _check(tmp_path, extra='seats = "heuristic,random,random,random"', expectations=(
        '[[expect]]\nmetric = "seat0_advantage"\nwithin = 0.03\n'))
    assert r.exit_code == 1
    moved_rows = [l for l in r.output.splitlines() if "win_share" in l]
    assert any(re.search(r"win_share\s+0\s", l) for l in moved_rows), r.output
    assert "expectation failed" in r.output and "seat0_advantage" in r.output


def test_check_without_baseline_names_the_folder_and_never_advises_update(tmp_path):
    # --update would bless today's code as the baseline: a missing folder is not a reason for it
    r = _check(tmp_path)
    assert r.exit_code == 2 and "--baseline" in r.output and "baseline" in r.output
    assert "--update" not in r.output


def test_check_finds_the_project_baseline_from_any_folder(tmp_path, monkeypatch):
    from simcli.analyses import check
    from simcli.config import jobs as cfg
    monkeypatch.chdir(tmp_path)
    project = cfg.configs_dir().parent / "reports" / "baseline"
    assert check.baseline_folder(None) == project and (project / "variants.parquet").is_file()
    assert check.baseline_folder(tmp_path) == tmp_path


def test_ladder_climbs_with_paired_rungs_and_a_picture(tmp_path):
    r = invoke("ladder", GAME, "--games", "30", "--budgets", "2,4", "--out", str(tmp_path), "--no-progress")
    assert r.exit_code == 0, r.output
    t = pl.read_parquet(tmp_path / "ladder.parquet")
    # forecasts-cubes has a trained tuned file: a tuned rung after heuristic (issue 24)
    assert t["rung"].to_list() == ["heuristic", "tuned", "mc:2:heuristic", "mc:4:heuristic"]
    assert t["versus"].to_list() == ["random", "heuristic", "tuned", "mc:2:heuristic"]
    ratings = pl.read_parquet(tmp_path / "ladder_ratings.parquet")
    assert ratings["rung"].to_list() == ["random", *t["rung"].to_list()]
    assert ratings.filter(pl.col("rung") == "heuristic")["rating"][0] == 0
    # heuristic over random is a large, clear gap even on 30 deals
    first = t.row(0, named=True)
    assert first["diff_ci_low"] > 0 and first["win_share"] > 0.25
    assert (tmp_path / "ladder.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert invoke("ladder", GAME, "--budgets", "0").exit_code == 2


def test_a_grid_may_set_its_own_game_count(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text('games = 300\n[[grid]]\ngame = "forecasts-cubes"\nplayers = [3]\nvariants = ["base"]\n'
                 '[[grid]]\ngame = "forecasts-cubes"\nplayers = [4]\nvariants = ["base"]\ngames = 120\n')
    out = tmp_path / "o"
    r = invoke("sweep", str(f), "--out", str(out), "--no-progress")
    assert r.exit_code == 0, r.output
    v = pl.read_parquet(out / "variants.parquet").sort("players")
    assert v["games"].to_list() == [300, 120]
    r = invoke("sweep", str(f), "--out", str(tmp_path / "o2"), "--no-progress", "--games", "50")
    assert pl.read_parquet(tmp_path / "o2" / "variants.parquet")["games"].to_list() == [50, 50]
