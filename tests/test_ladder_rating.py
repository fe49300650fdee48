"""The ladder's tuned rung and its Bradley-Terry rating (simcli/analyses/rating.py)."""
from __future__ import annotations

import math

import polars as pl
import pytest

from simcli.analyses import ladder, rating


def _ladder(P, rows):
    return pl.DataFrame([{"players": P, "rung": u, "versus": l, "win_share": w, "win_ci_low": lo,
                          "win_ci_high": hi} for u, l, w, lo, hi in rows])


def test_ratings_by_hand():
    # P = 2: w = 10/11 is odds 10 -> 400 Elo points; P = 4: w = 1/4 is equal skill -> 0
    t = _ladder(2, [("heuristic", "random", 10 / 11, 10 / 11 - 0.01, 10 / 11 + 0.01),
                    ("mc:4", "heuristic", 0.5, 0.45, 0.55), ("mc:8", "mc:4", 100 / 101, 0.98, 0.995)])
    r = {row["rung"]: row for row in rating.ratings(t).iter_rows(named=True)}
    assert r["heuristic"]["rating"] == 0 and r["heuristic"]["anchor"] == "heuristic"
    assert r["random"]["rating"] == pytest.approx(-400)
    assert r["mc:4"]["rating"] == pytest.approx(0, abs=1e-9)
    assert r["mc:8"]["rating"] == pytest.approx(800)
    # intervals widen away from the anchor (standard errors add in quadrature)
    w4 = r["mc:4"]["rating_ci_high"] - r["mc:4"]["rating_ci_low"]
    w8 = r["mc:8"]["rating_ci_high"] - r["mc:8"]["rating_ci_low"]
    assert 0 < w4 < w8
    assert r["random"]["rating_ci_low"] < -400 < r["random"]["rating_ci_high"]
    four = rating.ratings(_ladder(4, [("heuristic", "random", 0.25, 0.2, 0.3)]))
    assert four["rating"].to_list() == pytest.approx([0.0, 0.0])


def test_unbeaten_rung_is_infinite():
    r = rating.ratings(_ladder(2, [("heuristic", "random", 1.0, 0.99, 1.0)]))
    assert r.filter(pl.col("rung") == "random")["rating"][0] == -math.inf


def test_tuned_rung_only_with_a_trained_file(monkeypatch, tmp_path):
    names = ladder.rungs("forecasts-cubes", [4], "heuristic", "base", 3)
    assert names == ["random", "heuristic", "tuned", "mc:4:heuristic"]
    # a game with a tuned policy but no trained file for that player count: no tuned rung
    from simcli.config import tuned
    monkeypatch.setattr(tuned, "default_file", lambda game, variant, players: tmp_path / "missing.toml")
    assert "tuned" not in ladder.rungs("pgc", [4], "heuristic", None, 4)
    assert "tuned" not in ladder.rungs("forecasts-cubes", [4], "heuristic", "base", 3, tuned=False)


# ---- --rungs and --both-ways: does a pair have a table-free order? -------------------------------
def _d(diff, lo, hi):
    return {"diff": diff, "ci_low": lo, "ci_high": hi}


@pytest.mark.parametrize("f,r,word", [
    (_d(0.10, 0.08, 0.12), _d(-0.05, -0.07, -0.03), "upper stronger"),          # both ways agree
    (_d(0.10, 0.08, 0.12), _d(0.00, -0.02, 0.02), "upper stronger"),            # the reverse n.s.
    (_d(0.01, -0.01, 0.03), _d(-0.04, -0.06, -0.02), "upper stronger"),         # only the reverse
    (_d(-0.05, -0.07, -0.03), _d(0.01, -0.01, 0.03), "lower stronger"),
    (_d(0.10, 0.08, 0.12), _d(0.04, 0.02, 0.06), "odd seat out wins: no table-free order"),
    (_d(-0.03, -0.05, -0.01), _d(-0.04, -0.06, -0.02), "the majority wins: no table-free order"),
    (_d(0.01, -0.01, 0.03), _d(0.01, -0.01, 0.03), "level"),
])
def test_order_verdict(f, r, word):
    assert ladder.order_verdict(f, r) == word


def test_both_ways_plays_the_reverse_seating_on_the_same_deals(tmp_path):
    from tests.helpers import invoke, paired_match
    r = invoke("ladder", "forecasts-cubes", "--players", "4", "--rungs", "random,heuristic,tuned",
               "--both-ways", "--games", "200", "--seed", "5", "--out", tmp_path / "l", "--no-progress")
    assert r.exit_code == 0, r.output
    t = pl.read_parquet(tmp_path / "l" / "ladder.parquet")
    assert t["rung"].to_list() == ["heuristic", "tuned"] and t["versus"].to_list() == ["random", "heuristic"]
    # the reverse column is what a plain rotated run of one lower seat among upper seats gives
    for row in t.iter_rows(named=True):
        P = 4
        _, d = paired_match("forecasts-cubes", ",".join([row["versus"]] + [row["rung"]] * (P - 1)), 200, seed=5)
        assert row["reverse_diff"] == pytest.approx(d["diff"], abs=1e-12)
        assert row["order"] == ladder.order_verdict(
            _d(row["diff_vs_previous"], row["diff_ci_low"], row["diff_ci_high"]),
            _d(row["reverse_diff"], row["reverse_ci_low"], row["reverse_ci_high"]))
    # random against the heuristic has one order both ways (a random seat among heuristics loses)
    assert t["order"][0] == "upper stronger" and t["reverse_ci_high"][0] < 0
    assert "The other way round" in r.stdout


@pytest.mark.parametrize("args,needle", [
    (["--rungs", "heuristic"], "at least two policies"),
    (["--rungs", "heuristic,tuned,heuristic"], "names a policy twice"),
    (["--rungs", "mc:8,mc:8:heuristic"], "names a policy twice"),
    (["--rungs", "heuristic,tuned", "--budgets", "2,4"], "leave out --budgets"),
    (["--rungs", "heuristic,bogus"], "valid policies"),
])
def test_bad_rungs_are_one_line(args, needle, tmp_path):
    from tests.helpers import invoke
    r = invoke("ladder", "forecasts-cubes", *args, "--out", tmp_path / "o")
    assert r.exit_code == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_both_ways_adds_the_other_seating_to_the_findings(tmp_path):
    """The reverse row's effect is the upper rung's seats minus the lower odd seat: flagged, as a
    forward row is, when the upper rung loses by the threshold (hand-made ladder rows)."""
    from simcli.report import findings as fd
    lad = pl.DataFrame([{"game": "g", "variant": "v", "players": 4, "rung": "b", "versus": "a",
                         "diff_vs_previous": 0.12, "diff_ci_low": 0.09, "diff_ci_high": 0.15, "p_value": 1e-9,
                         "reverse_diff": 0.05, "reverse_ci_low": 0.03, "reverse_ci_high": 0.07,
                         "reverse_p_value": 1e-5, "order": "odd seat out wins: no table-free order"}])
    rows = fd.finalize(fd.ladder_rows({"ladder": lad}), fd.Settings())
    back = rows.filter(pl.col("subject") == "b - a (other way round)").row(0, named=True)
    assert back["effect"] == pytest.approx(-0.05) and back["ci_low"] == pytest.approx(-0.07)
    assert back["ci_high"] == pytest.approx(-0.03) and back["flagged"]
    assert "no table-free order" in back["message"]
    fwd = rows.filter(pl.col("subject") == "b - a").row(0, named=True)
    assert not fwd["flagged"]          # the stronger rung winning is no imbalance
