"""`simcli ablate` (issue #15): restricted seat vs the all-base game on the same deals."""
from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from kernels import forecasts_cubes as fc
from kernels.spec import SEAT_WATCH
from simcli.analyses import ablate
from simcli.engine import runner
from simcli import stats
from tests.helpers import invoke

CUBES = "forecasts-cubes"
COLUMNS = ["game", "variant", "players", "policy", "restriction", "deals", "win_share_restricted",
           "win_share_base", "diff", "ci_low", "ci_high", "z", "p_value", "p_holm",
           "forbidden_per_game", "yielded_per_game"]


def test_never_offered_restrictions_give_exactly_zero():
    """No Advisory in the base variant: the restricted games are the base games, diff is 0."""
    job = ablate.resolve_job(CUBES, "base", 4, "heuristic", {})
    abls = ablate.run_ablations(ablate.ablations_for(job, ["no-advisory", "always-advisory"]), 150, 3)
    t = ablate.ablations_table(abls)
    assert t.columns == COLUMNS
    assert t["diff"].to_list() == [0.0, 0.0]
    assert t["ci_low"].to_list() == [0.0, 0.0] and t["ci_high"].to_list() == [0.0, 0.0]
    assert t["p_holm"].to_list() == [1.0, 1.0]
    assert t["forbidden_per_game"].to_list() == [0.0, 0.0] and t["yielded_per_game"].to_list() == [0.0, 0.0]
    assert (t["win_share_restricted"] == t["win_share_base"]).all()


def test_base_game_played_once_equals_the_rotated_single_watcher():
    """Every player seat watching in one base game == one watching seat over the P rotations."""
    job = ablate.resolve_job(CUBES, "advisory", 4, "heuristic", {})
    (ab,) = ablate.ablations_for(job, ["always-advisory"])
    ablate.play_chunk(ab, 7, 0, 120)
    lone = job.seats.copy()
    lone[0, SEAT_WATCH] = 1 << fc.RX_ALWAYS_ADVISORY
    one = runner.rotated_jobs(ablate.cfg.Job(**{**job.__dict__, "seats": lone}))
    units = np.zeros(120, dtype=np.int64)
    forbidden = 0
    col = ablate._counter_col(job, "restriction_forbidden")
    for r, rj in enumerate(one):
        rows = runner.play_chunk(rj, 7, 0, 120)
        seat = int(np.flatnonzero(rj.seats[:, SEAT_WATCH])[0])
        assert seat == (4 - r) % 4
        units += runner.win_units(rows, 4)[:, seat]
        forbidden += int(rows[:, col].sum())
    assert ab.tally.total[1] == units.sum() and ab.tally.total_sq[1] == (units * units).sum()
    assert ab.forbidden == forbidden > 0


def test_reproducible_across_threads_and_chunks():
    job = ablate.resolve_job(CUBES, "advisory", 4, "heuristic", {})
    a = ablate.run_ablations(ablate.ablations_for(job), 260, 11, threads=1, chunk=37)
    b = ablate.run_ablations(ablate.ablations_for(job), 260, 11, threads=2)
    for x, y in zip(a, b):
        for name in ("total", "total_sq", "pair", "pair_sq"):
            np.testing.assert_array_equal(getattr(x.tally, name), getattr(y.tally, name))
        assert (x.forbidden, x.yielded) == (y.forbidden, y.yielded)
    assert ablate.ablations_table(a).equals(ablate.ablations_table(b))


def test_holm_adjusted_by_hand():
    # sorted 0.01, 0.03, 0.04: 3 x 0.01 = 0.03; 2 x 0.03 = 0.06; max(0.06, 1 x 0.04) = 0.06
    assert stats.holm_adjusted([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert stats.holm_adjusted([0.5, 0.9]) == pytest.approx([1.0, 1.0])


def test_solo_games_report_success_rates(monkeypatch):
    monkeypatch.setattr(fc, "SOLO", True, raising=False)
    job = ablate.resolve_job(CUBES, "base", 4, "heuristic", {})
    t = ablate.ablations_table(ablate.run_ablations(ablate.ablations_for(job, ["hot-only"]), 20, 1))
    assert "success_rate_restricted" in t.columns and "success_rate_base" in t.columns
    assert "win_share_base" not in t.columns


def test_cli_writes_the_table_png_and_html(tmp_path):
    out = tmp_path / "abl"
    r = invoke("ablate", CUBES, "--variant", "advisory", "--games", "120", "--out", str(out), "--html")
    assert r.exit_code == 0, r.output
    t = pl.read_parquet(out / "ablations.parquet")
    assert t.columns == COLUMNS and t.height == 4
    assert t["diff"].to_list() == sorted(t["diff"].to_list())
    assert set(t["restriction"]) == {"no-advisory", "always-advisory", "hot-only", "cold-only"}
    assert (t["deals"] == 120).all() and (t["policy"] == "heuristic").all()
    assert (out / "ablations.png").read_bytes()[:4] == b"\x89PNG"
    html = (out / "report.html").read_text()
    assert "What each option is worth" in html and "always-advisory" in html
    # issue 23: the page says what a deal is, how to trace it, how the seat rotates, the base arm
    for words in ("Deal d is game index d", "--game-index d", "(P&minus;r) mod P", "exactly 1/P"):
        assert words in html, words
    # and the footnote names every interval's method and limits
    for words in ("ratio estimator", "Wilson over the games reaching the checkpoint", "jackknife",
                  "restricted minus base"):
        assert words in html, words
    # t = win_share_restricted - win_share_base: every forecasts-cubes game has a winner
    assert t["win_share_base"].to_list() == pytest.approx([1 / 4] * 4, abs=1e-15)
    assert t["diff"].to_list() == pytest.approx((t["win_share_restricted"] - 0.25).to_list(), abs=1e-12)


def test_help_says_what_a_deal_is():
    r = invoke("ablate", "--help")
    text = " ".join(r.output.split())
    for words in ("Deal d is game index d", "--game-index d", "(P - r) mod P", "exactly 1/P"):
        assert words in text, words


@pytest.mark.parametrize("args,needle", [
    (["--restrictions", "no-wind"], "unknown restriction 'no-wind'"),
    (["--policy", "heuristic+bogus"], "unknown restriction 'bogus'"),
    (["--date", "2026-01-01"], "--date is for daily-weather only"),
])
def test_cli_bad_input_is_one_line(args, needle, tmp_path):
    r = invoke("ablate", CUBES, "--games", "5", "--out", str(tmp_path / "x"), *args)
    assert r.exit_code == 2 and needle in r.output and r.output.strip().count("\n") == 0, r.output


def test_run_report_says_the_advisory_counters_are_not_causal(tmp_path):
    out = tmp_path / "run"
    r = invoke("run", CUBES, "--variant", "advisory", "--games", "200", "--out", str(out), "--html")
    assert r.exit_code == 0, r.output
    html = (out / "report.html").read_text()
    assert "advisory_effect" in html and "correlations, not causes" in html and "simcli ablate" in html


def _traced_units(deal: int, seed: int, seats: list[str]) -> list[int]:
    """Win units (x60, shared wins split) of each seat in `simcli trace --game-index deal`."""
    r = invoke("trace", CUBES, "--variant", "advisory", "--players", len(seats), "--seed", seed,
               "--game-index", deal, "--seats", ",".join(seats))
    assert r.exit_code == 0, r.output
    result = json.loads(r.output.strip().splitlines()[-1])
    assert result["event"] == "result" and result["game_index"] == deal
    return [60 // len(result["winners"]) if s in result["winners"] else 0 for s in range(len(seats))]


@pytest.mark.parametrize("deal", [0, 1, 2, 3, 4, 5])
def test_trace_reproduces_an_ablate_deal(deal):
    """Deal d of `simcli ablate --seed S` is game index d of `simcli trace --seed S`: in rotation
    r the restricted seat sits at seat (P - r) mod P, the others play the base policy; the base
    arm is the all-base game of the same index (its watch bits only count, never change play)."""
    P, seed, restricted = 4, 3, "heuristic+no-advisory"
    job = ablate.resolve_job(CUBES, "advisory", P, "heuristic", {})
    (ab,) = ablate.ablations_for(job, ["no-advisory"])
    ablate.play_chunk(ab, seed, deal, deal + 1)   # ablate's deal d alone
    mine = 0
    for r in range(P):
        seat = (P - r) % P
        seats = ["heuristic"] * P
        seats[seat] = restricted
        mine += _traced_units(deal, seed, seats)[seat]
    base = sum(_traced_units(deal, seed, ["heuristic"] * P))
    assert base == 60   # every forecasts-cubes game has a winner: the base arm is exactly 1/P
    assert (int(ab.tally.games), int(ab.tally.total[0]), int(ab.tally.total[1])) == (1, mine, base)
