"""Fast version of benchmarks/interval_coverage.py on the toy game (exact truth): every 95% interval
covers about 95% of the time, and the interval before issue #19 (Wilson, n = games) does not
under --rotate, so this test can tell the two apart."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _coverage_module():
    spec = importlib.util.spec_from_file_location("coverage_study", ROOT / "benchmarks" / "interval_coverage.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def toy():
    # 150 replications x 1000 deals; 600 seat intervals per kind (4 seats), 150-300 for the others
    return _coverage_module().toy_coverage(reps=150, deals=1000, seed0=7)


def test_every_interval_holds_its_coverage(toy):
    for kind, rate in toy["coverage"].items():
        if "old" in kind:
            continue
        c, n = toy["counts"][kind]
        # 0.95 +- 3.5 binomial SE (correlated seats make it a bit wider): wide bounds, fixed seeds
        se = (0.95 * 0.05 / n) ** 0.5
        assert 0.95 - 3.5 * se - 0.01 <= rate <= min(1.0, 0.95 + 3.5 * se + 0.01), (kind, c, n)


def test_the_old_rotated_interval_is_too_narrow(toy):
    # the seven-to-eight-tenths coverage that counting rotations as games gives on this game
    assert toy["coverage"]["seats, --rotate (old: Wilson n=games)"] < 0.85


def test_arc_intervals_at_rare_points_where_a_leader_always_or_almost_always_wins():
    # issue 23: the arc toy (tests/toygame/arcs.py, exact truth), ~16 of 1000 games reach the
    # rare checkpoints. Wilson over the games (deals, with --rotate) that reach them covers ~95%
    # (the exact binomial mixture gives 0.956 at 15/16 and 1/16); the old interval (Wilson over
    # every deal when R is 0 or 1) misses whenever all ~16 games agree (~38% of replications).
    r = _coverage_module().arc_degenerate_coverage(reps=200, deals=1000, seed0=11)
    for kind, rate in r["coverage"].items():
        c, n = r["counts"][kind]
        if "(truth 0)" in kind or "(truth 1)" in kind:
            assert rate == 1.0, (kind, c, n)   # the observed 0 or 1 is the truth: always inside
        elif "old" in kind:
            assert rate < 0.8, (kind, c, n)
        else:
            se = (0.95 * 0.05 / n) ** 0.5
            assert 0.95 - 3.5 * se <= rate <= min(1.0, 0.95 + 3.5 * se), (kind, c, n)
    assert 0.5 < r["truth_1_mean_ci_low"] < 0.9   # Wilson over ~16 games at p = 1: about 0.8
