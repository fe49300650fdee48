"""Findings (the verdict of every command) and printed tables that fit (issue #25).

Expectations are worked out by hand from the inputs (fair share 1/S, z = effect / se, Holm's
step-down), not copied from the code's output.
"""
from __future__ import annotations

import math
import re

import polars as pl
import pytest

from simcli import stats
from simcli.report import findings as fd
from simcli.report import fmt


def _seats(shares, se=0.002, policy="heuristic", players=None, game="g", variant="base", policies=None):
    S = len(shares)
    players = players or S
    rows = []
    for s, w in enumerate(shares):
        rows.append({"game": game, "variant": variant, "players": players,
                     "policies": policies or ",".join([policy] * S), "seat": s,
                     "policy": policy if s < players else "rival", "games": 20000, "deals": 20000,
                     "win_share": w, "win_ci_low": w - 1.96 * se, "win_ci_high": w + 1.96 * se,
                     "win_se": se, "mean_place": 1.0})
    return pl.DataFrame(rows)


def test_a_seat_far_from_its_fair_share_is_flagged_and_a_fair_one_is_not():
    t = {"seats": _seats([0.4169, 0.2915, 0.2916])}
    table = fd.build(t)
    by_seat = {r["subject"]: r for r in table.iter_rows(named=True)}
    s0 = by_seat["seat 0"]
    assert s0["effect"] == pytest.approx(0.4169 - 1 / 3)
    assert s0["flagged"] and s0["kind"] == "seat"
    # z = 0.0836 / 0.002 = 41.8 -> p ~ 1e-380 underflows to 0 (printed <1e-300)
    assert s0["p_value"] == 0.0
    lines = fd.verdict_lines(table)
    assert lines[0].startswith("Verdict: 3 finding(s)") and "seat 0 wins 0.417" in lines[1]


def test_balanced_seats_give_nothing_out_of_balance():
    table = fd.build({"seats": _seats([0.2510, 0.2490, 0.2505, 0.2495])})
    assert not table["flagged"].any()
    assert fd.verdict_lines(table)[0].startswith("Verdict: nothing out of balance at threshold 0.02")


def test_the_threshold_keeps_a_small_significant_effect_out_of_the_verdict():
    # seat 0 +0.010 with se 0.001: z = 10, significant, but under the 0.02 threshold
    table = fd.build({"seats": _seats([0.26, 0.2467, 0.2467, 0.2466], se=0.001)})
    assert not table["flagged"].any()
    # seat 0: z = 0.0100 / 0.001 = 10; seats 1-3: z = -0.0033 / 0.001 = -3.3 (p 0.001, x3 after Holm): all four
    assert "4 significant effect(s) not flagged" in fd.verdict_lines(table)[0]
    flagged = fd.build({"seats": _seats([0.26, 0.2467, 0.2467, 0.2466], se=0.001)},
                       fd.Settings(threshold=0.005))
    assert flagged.filter(pl.col("subject") == "seat 0")["flagged"][0]


def test_holm_runs_over_every_test_of_the_run():
    assert stats.holm_adjusted([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert stats.holm_adjusted([0.5, float("nan")]) == pytest.approx([1.0, 1.0])
    # two seats of one job and a policy pair: three tests in one family
    seats = _seats([0.5 + 0.03, 0.5 - 0.03], se=0.03 / 2.5)   # z = 2.5 each: p = 0.01242
    paired = pl.DataFrame([{"game": "g", "variant": "base", "players": 2, "policies": "a,b",
                            "policy_a": "a", "policy_b": "b", "deals": 100, "diff": 0.1,
                            "ci_low": 0.0, "ci_high": 0.2, "z": 2.0, "p_value": 0.0455}])
    table = fd.build({"seats": seats, "paired": paired})
    p = stats.normal_sf2(2.5)
    got = {r["kind"] + r["subject"]: r["p_holm"] for r in table.iter_rows(named=True)}
    assert got["seatseat 0"] == pytest.approx(3 * p) and got["seatseat 1"] == pytest.approx(3 * p)
    assert got["policya - b"] == pytest.approx(max(3 * p, 0.0455))


def test_seats_that_differ_by_policy_or_a_solo_game_have_no_seat_test():
    mixed = _seats([0.6, 0.2, 0.2]).with_columns(
        pl.Series("policy", ["heuristic", "random", "random"]))
    assert fd.build({"seats": mixed}).height == 0
    assert fd.build({"seats": _seats([0.73])}).height == 0


def test_the_rival_seat_is_tested_against_its_fair_share():
    table = fd.build({"seats": _seats([0.03, 0.04, 0.93], players=2)})
    rival = table.filter(pl.col("subject") == "seat 2 (rival)")
    assert rival.height == 1 and rival["flagged"][0]
    assert rival["effect"][0] == pytest.approx(0.93 - 1 / 3)


def _variants(rows):
    base = {"game": "g", "players": 1, "policies": "greedy", "games": 2000, "deals": 2000,
            "tie_rate": 0.0, "timeout_rate": 0.0, "length_mean": 40.0, "wall_s": 1.0}
    return pl.DataFrame([{**base, **r} for r in rows])


def test_a_variant_equal_to_another_is_flagged_and_wall_time_is_ignored():
    nan = float("nan")   # a solo game's leader gap: NaN in both rows is the same number
    v = _variants([{"variant": "base", "tie_rate": 0.1, "leader_gap": nan},
                   {"variant": "easy", "tie_rate": 0.1, "wall_s": 9.0, "leader_gap": nan},
                   {"variant": "hard", "tie_rate": 0.2, "leader_gap": nan}])
    table = fd.build({"variants": v})
    assert table.height == 1 and table["subject"][0] == "variant easy = base" and table["flagged"][0]


def test_timeouts_above_the_threshold():
    # 6% of 20,000 deals against 2%: z = 0.04 / sqrt(.02 * .98 / 20000) = 40.4
    many = fd.build({"variants": _variants([{"variant": "a", "timeout_rate": 0.06, "deals": 20000}])})
    assert many["kind"][0] == "timeouts" and many["flagged"][0]
    # 2.1% of 1,000: z = 0.001 / 0.00443 = 0.23, p = 0.41: not above the threshold
    few = fd.build({"variants": _variants([{"variant": "a", "timeout_rate": 0.021, "deals": 1000}])})
    assert few["p_value"][0] == pytest.approx(0.5 * math.erfc(0.001 / math.sqrt(0.02 * 0.98 / 1000) / math.sqrt(2)))
    assert not few["flagged"][0]


def test_a_restriction_that_helps_its_base_is_flagged_and_one_that_costs_is_not():
    abl = pl.DataFrame([
        {"game": "g", "variant": "base", "players": 3, "policy": "heuristic", "restriction": "hot-only",
         "deals": 20000, "diff": 0.082, "ci_low": 0.075, "ci_high": 0.089, "p_value": 1e-50},
        {"game": "g", "variant": "base", "players": 3, "policy": "heuristic", "restriction": "no-bid",
         "deals": 20000, "diff": -0.30, "ci_low": -0.31, "ci_high": -0.29, "p_value": 1e-90}])
    table = fd.build({"ablations": abl})
    flags = dict(zip(table["subject"], table["flagged"]))
    assert flags == {"heuristic+hot-only": True, "heuristic+no-bid": False}
    assert "misplays" in table.filter(pl.col("flagged"))["message"][0]


def test_check_rows_flag_exactly_what_moved():
    cmp = pl.DataFrame([{"game": "g", "variant": "base", "players": 4, "policies": "random", "metric": m,
                         "seat": s, "baseline": 0.25, "current": 0.25 + e, "effect": e, "p_value": p,
                         "note": ""} for m, s, e, p in (("win_share", 0, 0.01, 1e-9), ("tie_rate", None, 0.001, 0.2))])
    moved = stats.holm([1e-9, 0.2], 0.01)
    table = fd.finalize(fd.check_rows(cmp, []), fd.Settings(alpha=0.01))
    assert sorted(table["flagged"].to_list()) == sorted(moved)


# ------------------------------------------------------------------------------ fmt

def test_policy_lists_are_shortened():
    assert fmt.short_policies("heuristic,heuristic,heuristic,heuristic") == "heuristic x4"
    assert fmt.short_policies("heuristic,random,random,random") == "heuristic,random x3"
    assert fmt.short_policies("heuristic,heuristic,rival") == "heuristic x2,rival"
    assert fmt.short_policies("random") == "random"


def test_p_values_and_precision():
    assert fmt.fmt_p(0.0) == "<1e-300" and fmt.fmt_p(3.2e-5) == "3.2e-05" and fmt.fmt_p(0.5) == "0.5"
    assert fmt.fmt_p(None) == "-" and fmt.fmt_p(float("nan")) == "-"
    # se = 0.5 / sqrt(n): 0.0112 at 2,000 (3 decimals), 0.00112 at 200,000 (4)
    assert fmt.decimals_for(2000) == 3 and fmt.decimals_for(200_000) == 4


def test_a_wide_table_is_printed_in_blocks_without_split_headers_or_hidden_rows():
    cols = {f"a_long_metric_name_{i}": [0.123456 + i, 0.5] for i in range(12)}
    df = pl.DataFrame({"game": ["forecasts-cubes", "pgc"], "policies": ["heuristic,heuristic,heuristic", "random"],
                       **cols, "solo_only": [None, None]})
    lines = fmt.table_lines(df, limit=80, n=2000)
    assert max(len(x) for x in lines) <= 80
    text = "\n".join(lines)
    for name in cols:    # every header whole, once
        assert len(re.findall(rf"\b{name}\b", text)) == 1
    assert "solo_only" not in text                     # null in every row: left out
    blocks = text.split("\n\n")
    assert len(blocks) > 1 and all("forecasts-cubes" in b and "pgc" in b for b in blocks)
    assert "heuristic x3" in text
    assert fmt.table_lines(df, limit=80, wide=True)[0].count("a_long_metric_name_") == 12


def test_width_comes_from_columns_or_is_100_off_a_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    assert fmt.width() == 120
    monkeypatch.delenv("COLUMNS")
    monkeypatch.setattr("sys.stdout.isatty", lambda: False, raising=False)
    assert fmt.width() == fmt.NOT_A_TTY_WIDTH == 100


def test_integral_floats_print_as_integers_and_large_values_keep_significant_digits():
    df = pl.DataFrame({"length_mean": [40.0, 40.0], "score_mean": [123.456, 7.5], "share": [0.41234, 0.5]})
    lines = fmt.table_lines(df, n=2000, limit=200)
    assert lines[2].split() == ["40", "123.5", "0.412"]


# ------------------------------------------------------------------------------ stale words

def test_every_restriction_example_printed_by_list_is_accepted():
    from simcli.config import jobs as cfg
    from tests.helpers import invoke
    r = invoke("list")
    assert r.exit_code == 0, r.output
    game, examples = None, []
    for line in r.output.splitlines():
        if line and not line.startswith(" "):
            game = line.split()[0]
        m = re.search(r"restrictions \(POLICY\+NAME, e\.g\. (\S+)\):", line)
        if m:
            examples.append((game, m.group(1)))
    assert len(examples) == len([g for g in cfg.known_games() if getattr(cfg.game_module(g), "RESTRICTIONS", ())])
    for game, example in examples:
        job = cfg.resolve(game, policy=example)          # raises SimError if refused
        assert job.policies[0] == example


def test_designed_play_is_declared_per_game_and_names_a_policy():
    from simcli.config import jobs as cfg
    for game in cfg.known_games():
        p = cfg.designed_play(game)
        assert p in cfg.game_module(game).POLICIES
    assert cfg.designed_play("forecasts-cubes") == "heuristic"
    assert cfg.designed_play("daily-weather") == "greedy"


def test_with_timeouts_the_fair_share_is_that_of_the_games_with_a_winner():
    # 90% of games time out: the seats share 0.10; fair = 0.05 each, seat 0 is +0.01 above it
    table = fd.build({"seats": _seats([0.06, 0.04], se=0.002)})
    s0 = table.filter(pl.col("subject") == "seat 0").row(0, named=True)
    assert s0["effect"] == pytest.approx(0.01)
    assert "1/S of the 10.0% of games with a winner" in s0["message"]


# ------------------------------------------------------------------------------ the CLI

def test_run_plays_designed_play_and_flags_seat_0_of_three_player_cubes(tmp_path, monkeypatch):
    # issue 25's "done when": heuristic seats by default; seat 0 of forecasts-cubes 3p wins
    # about 0.42 against a fair 0.333 (+0.08; se about 0.008 at 4,000 deals: z near 10)
    from tests.helpers import invoke
    monkeypatch.setenv("COLUMNS", "120")
    r = invoke("run", "forecasts-cubes", "--players", "3", "--games", "4000", "--out", str(tmp_path / "r"),
               "--no-progress")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0].startswith("forecasts-cubes/base/3p: designed play, every seat heuristic")
    assert max(len(x) for x in lines) <= 120
    verdict = lines[[i for i, x in enumerate(lines) if x.startswith("Verdict:")][0] + 1]
    assert "seat 0 wins" in verdict and "[heuristic x3]" in verdict
    f = pl.read_parquet(tmp_path / "r" / "findings.parquet")
    s0 = f.filter((pl.col("kind") == "seat") & (pl.col("subject") == "seat 0"))
    assert s0["flagged"][0] and s0["effect"][0] > 0.05
    assert set(fd.COLUMNS) <= set(f.columns)


def test_a_balanced_game_flags_no_seat(tmp_path):
    from tests.helpers import invoke
    r = invoke("run", "forecasts-cubes", "--players", "4", "--policy", "heuristic", "--games", "4000",
               "--out", str(tmp_path / "r"), "--no-progress")
    assert r.exit_code == 0, r.output
    assert "Verdict: nothing out of balance at threshold 0.02" in r.output
    assert not pl.read_parquet(tmp_path / "r" / "findings.parquet")["flagged"].any()


def test_a_verdict_at_one_level_of_play_names_that_play_and_how_to_check_others():
    # issue #24: the heuristic's verdicts can reverse under stronger play, so a flagged verdict of a
    # run without a skill column says which play produced it and points at --skill
    table = fd.build({"seats": _seats([0.4169, 0.2915, 0.2916])})
    lines = fd.verdict_lines(table)
    note = [ln for ln in lines if "one level of play" in ln]
    assert len(note) == 1 and "one level of play: heuristic x3." in note[0] and "--skill" in note[0]
    # a command that is itself the comparison across levels (ladder) leaves it out
    assert not any("one level of play" in ln for ln in fd.verdict_lines(table, fd.Settings(skill_note=False)))
    # nothing flagged: no note
    quiet = fd.build({"seats": _seats([0.2510, 0.2490, 0.2505, 0.2495])})
    assert not any("one level of play" in ln for ln in fd.verdict_lines(quiet))
    # a run with a skill column already compares levels: no note
    skilled = fd.build({"seats": _seats([0.4169, 0.2915, 0.2916]).with_columns(pl.lit("heuristic").alias("skill"))})
    assert "skill" in skilled.columns
    assert not any("one level of play" in ln for ln in fd.verdict_lines(skilled))


def test_an_underflowed_p_value_is_not_followed_by_or_less():
    # three seats at z >= 41 (0.0833 / 0.002): every p underflows to 0, printed "<1e-300";
    # "<1e-300 or less" would say "less" twice
    table = fd.build({"seats": _seats([0.5, 0.25, 0.25])})
    assert table["p_holm"].max() == 0.0
    line = fd.verdict_lines(table)[1]
    assert "<1e-300)" in line and "or less" not in line
    # p-values that are numbers keep "or less" (the worst of several seats is shown)
    mid = fd.build({"seats": _seats([0.5 + 0.03, 0.5 - 0.03], se=0.03 / 2.5)})
    assert "or less)" in fd.verdict_lines(mid, fd.Settings(threshold=0.01))[1]
