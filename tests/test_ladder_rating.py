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
