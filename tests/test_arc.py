"""Game arcs (issue #16): checkpoint standings, lead changes, comebacks, decisiveness.

The kernel keeps a compact block per game (kernels/arc.py: counters, packed leader masks, per
seat the latest checkpoint it did not lead). The expectations here come from a plain reference
that keeps every checkpoint's full standings and applies the issue's definitions directly, and
from a few sequences worked out by hand.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import polars as pl
import pytest

from kernels import arc, layout
from kernels.tally import D_N, Accumulators
from simcli.config import jobs as cfg
from simcli.report import tables as report
from simcli.engine import runner
from simcli.analyses.trace import trace_events

NO_EV = np.zeros((0, layout.EVENT_WIDTH), dtype=np.int64)


# ------------------------------------------------------------------ the reference
def leaders_of(st, lower):
    best = min(st) if lower else max(st)
    return {s for s, v in enumerate(st) if v == best}


def strictly_last_of(st, lower):
    worst = max(st) if lower else min(st)
    seats = [s for s, v in enumerate(st) if v == worst]
    return set(seats) if len(seats) == 1 and len(st) > 1 else set()


def reference(seq, winners, lower=False):
    """The issue's definitions on a whole standings sequence (list of per-seat lists)."""
    K = len(seq)
    lead = [leaders_of(st, lower) for st in seq]
    last = [strictly_last_of(st, lower) for st in seq]
    k = K
    for j in range(K, 0, -1):   # the earliest j from which one winner leads at every checkpoint
        if any(all(w in lead[i] for i in range(j - 1, K)) for w in winners):
            k = j
    return {
        "K": K,
        "lead_changes": sum(lead[i] != lead[i - 1] for i in range(1, K)),
        "comeback": any(w in last[i] for i in range(K - 1) for w in winners),
        "decided_at": Fraction(k, K),
        "last_swing": K >= 2 and not (lead[K - 2] & winners),
        "start": [(bool(lead[c] & winners), c >= 1 and lead[c] != lead[c - 1])
                  for c in range(min(K, arc.DEPTH))],
        "end": [(bool(lead[K - 1 - j] & winners), K - 1 - j >= 1 and lead[K - 1 - j] != lead[K - 2 - j])
                for j in range(min(K, arc.DEPTH))],
    }


def kernel_rows(games, S, lower=False):
    """Result rows (only the winners column and the arc block filled) for hand-built games."""
    C = 0
    base = layout.col_arc(S, C)
    out = np.zeros((len(games), layout.out_width(S, C)), dtype=np.int64)
    for i, (seq, winners) in enumerate(games):
        for st in seq:
            arc.checkpoint(out, i, base, S, np.array(st, dtype=np.int64), 0, lower, NO_EV,
                           np.zeros(1, dtype=np.int64), 0)
        out[i, layout.col_winners(S)] = sum(1 << w for w in winners)
    return out


def fold(out, S):
    acc = Accumulators(S, 0, -1000, 1000, 0, 0)
    acc.fold(out, False)
    return acc


def expected_sums(games, lower=False):
    refs = [reference(seq, set(w), lower) for seq, w in games]
    u = arc.DECIDED_UNIT
    # decided_at in units of 1/u rounded half up, as the kernel sums it
    q = [int(Fraction(r["decided_at"] * u) + Fraction(1, 2)) for r in refs]
    misc = np.zeros(arc.N_X, dtype=np.int64)
    misc[arc.X_GAMES] = len(refs)
    misc[arc.X_CHECKPOINTS] = sum(r["K"] for r in refs)
    misc[arc.X_CHANGES] = sum(r["lead_changes"] for r in refs)
    misc[arc.X_CHANGES_SQ] = sum(r["lead_changes"] ** 2 for r in refs)
    misc[arc.X_COMEBACKS] = sum(r["comeback"] for r in refs)
    misc[arc.X_DECIDED] = sum(q)
    misc[arc.X_DECIDED_SQ] = sum(x * x for x in q)
    misc[arc.X_SWINGS] = sum(r["last_swing"] for r in refs)
    tables = {}
    for name in ("start", "end"):
        t = np.zeros((arc.DEPTH, arc.N_T), dtype=np.int64)
        for r in refs:
            for i, (wins, changed) in enumerate(r[name]):
                t[i, arc.T_GAMES] += 1
                t[i, arc.T_LEADER_WINS] += wins
                has_prev = (i >= 1) if name == "start" else (r["K"] - i >= 2)
                t[i, arc.T_CHANGE_GAMES] += has_prev
                t[i, arc.T_CHANGES] += changed
        tables[name] = t
    return misc, tables["start"], tables["end"]


# ------------------------------------------------------------------ hand-built games
def test_a_comeback_decided_at_the_end_by_hand():
    # seat 2 wins. Leaders {0}, {1}, {0}, {2}: 3 lead changes. Seat 2 is strictly last after
    # checkpoints 2 and 3 (after 1 it shares last place with seat 1): a comeback. It leads only
    # at the final checkpoint: decided at 4/4. The leader before the end (seat 0) did not win.
    seq = [[1, 0, 0], [1, 2, 0], [3, 2, 1], [3, 4, 5]]
    acc = fold(kernel_rows([(seq, [2])], 3), 3)
    x = acc.arc_misc
    assert x[arc.X_GAMES] == 1 and x[arc.X_CHECKPOINTS] == 4
    assert x[arc.X_CHANGES] == 3
    assert x[arc.X_COMEBACKS] == 1
    assert x[arc.X_DECIDED] == arc.DECIDED_UNIT
    assert x[arc.X_SWINGS] == 1
    assert acc.arc_end[0, arc.T_LEADER_WINS] == 1
    assert acc.arc_start[:, arc.T_LEADER_WINS].tolist()[:4] == [0, 0, 0, 1]


def test_a_wire_to_wire_win_by_hand():
    # seat 0 leads at every checkpoint (shares the lead at 1): decided at 1/5; the leader sets
    # are {0,1}, {0}, {0}, {0}, {0}: one change; the winner is never strictly last (seat 2 is).
    seq = [[2, 2, 0], [4, 2, 1], [5, 3, 1], [7, 3, 2], [9, 4, 3]]
    acc = fold(kernel_rows([(seq, [0])], 3), 3)
    x = acc.arc_misc
    assert x[arc.X_CHANGES] == 1
    assert x[arc.X_COMEBACKS] == 0
    assert Fraction(int(x[arc.X_DECIDED]), arc.DECIDED_UNIT) == Fraction(1, 5)
    assert x[arc.X_SWINGS] == 0


def test_fewest_points_best_and_a_shared_victory():
    # pgc-style: lowest is best. Leaders {1}, {0}, {0, 2}; seats 0 and 2 share the win.
    # Seat 2 was strictly last at checkpoint 1 (9 points): a comeback. Seat 0 leads from 2 on.
    seq = [[5, 1, 9], [6, 8, 10], [12, 15, 12]]
    acc = fold(kernel_rows([(seq, [0, 2])], 3, lower=True), 3)
    x = acc.arc_misc
    assert x[arc.X_CHANGES] == 2
    assert x[arc.X_COMEBACKS] == 1
    assert Fraction(int(x[arc.X_DECIDED]), arc.DECIDED_UNIT) == Fraction(2, 3)
    assert x[arc.X_SWINGS] == 0


def test_a_game_with_one_checkpoint():
    acc = fold(kernel_rows([([[3, 1, 2, 0]], [0])], 4), 4)
    x = acc.arc_misc
    assert (x[arc.X_CHANGES], x[arc.X_COMEBACKS], x[arc.X_SWINGS]) == (0, 0, 0)
    assert x[arc.X_DECIDED] == arc.DECIDED_UNIT


def test_timeouts_and_games_without_checkpoints_are_excluded_and_counted():
    out = kernel_rows([([[1, 0]], [0]), ([[1, 0], [1, 2]], [1]), ([], [0])], 2)
    out[1, 2 * 2] = 0                       # game 1: no winner
    out[1, 2 * 2 + 2] = layout.FLAG_TIMEOUT
    acc = fold(out, 2)
    assert acc.arc_misc[arc.X_GAMES] == 1 and acc.arc_misc[arc.X_EXCLUDED] == 1


def test_random_standings_match_the_reference_beyond_the_stored_window():
    """Many games of 1..40 checkpoints (past the 18 masks kept per end), ties included."""
    gen = np.random.default_rng(16)
    for S, lower in ((2, False), (3, True), (5, False), (6, True)):
        games = []
        for _ in range(150):
            K = int(gen.integers(1, 41))
            steps = gen.integers(0, 3, size=(K, S))     # small steps: many ties and changes
            seq = np.cumsum(steps, axis=0).tolist()
            final = seq[-1]
            w = sorted(leaders_of(final, lower)) if gen.random() < 0.8 else [int(gen.integers(S))]
            games.append((seq, w))
        acc = fold(kernel_rows(games, S, lower), S)
        misc, start, end = expected_sums(games, lower)
        assert acc.arc_misc.tolist() == misc.tolist()
        assert acc.arc_start.tolist() == start.tolist()
        assert acc.arc_end.tolist() == end.tolist()


def test_arc_block_words_stay_non_negative_with_seven_seats():
    seq = [[k % 7 == s for s in range(7)] for k in range(30)]
    out = kernel_rows([([[int(v) for v in st] for st in seq], [0])], 7)
    assert (out >= 0).all()


# ------------------------------------------------------------------ the games
def _run(game, players, rules=None, games=400, policy="heuristic", threads=None, chunk=runner.DEFAULT_CHUNK):
    job = cfg.resolve(game, players=players, policy=policy, rules=rules or {})
    (r,) = runner.run_jobs([job], games, 3, threads=threads, chunk=chunk, progress=False)
    return r


def test_one_round_cubes_has_no_lead_change_and_is_decided_at_the_end():
    r = _run("forecasts-cubes", 4, {"rounds": 1})
    v = report.variant_rows([r])[0]
    assert v["arc_games"] == 400
    assert v["lead_changes"] == 0 and v["decided_at"] == 1
    assert v["comeback_rate"] == 0 and v["last_swing"] == 0


GAMES = [("forecasts-cubes", 4), ("pgc", 4), ("sudden-skies", 4), ("forecasts-bid", 4), ("forecasts-bid", 2)]


@pytest.mark.parametrize("game,players", GAMES)
def test_the_final_standing_decides_the_winner(game, players):
    """leader_wins at counted=end, checkpoint=0 is 1: a winner always leads at the end.

    forecasts-bid: except after a sudden death, where only the tied may win (another seat, or
    the Rival, may finish above them): every game without one has a leader among its winners.
    """
    r = _run(game, players, policy="random")
    tables = report.build_tables([r])
    a = tables["arc"]
    final = a.filter((a["counted"] == "end") & (a["checkpoint"] == 0)).row(0, named=True)
    n = int(r.acc.arc_misc[arc.X_GAMES])
    assert final["games"] == n > 0
    if game == "forecasts-bid":
        sudden = int(r.acc.counters[[c.name for c in r.job.module.COUNTERS].index("sudden_death")])
        assert final["leader_wins"] * n >= n - sudden
    else:
        assert final["leader_wins"] == 1
    v = tables["variants"].row(0, named=True)
    assert v["arc_games"] + v["arc_excluded"] == r.games
    assert 0 < v["decided_at"] <= 1 and 0 <= v["comeback_rate"] <= 1 and 0 <= v["last_swing"] <= 1


@pytest.mark.parametrize("game,players", [("forecasts-cubes", 3), ("pgc", 5)])
def test_arc_sums_identical_for_threads_and_chunks(game, players):
    a = _run(game, players, threads=1, games=300)
    b = _run(game, players, threads=2, games=300, chunk=37)
    for name in ("arc_misc", "arc_start", "arc_end", "arc_deal"):
        assert getattr(a.acc, name).tolist() == getattr(b.acc, name).tolist()


@pytest.mark.parametrize("game,players,lower", [("forecasts-cubes", 4, False), ("pgc", 3, True),
                                                ("sudden-skies", 3, False), ("forecasts-bid", 4, False)])
def test_the_trace_shows_checkpoint_standings_a_reader_can_recount(game, players, lower):
    """Recount one game's metrics from its trace's checkpoint events (standings only) and
    compare them with what the run folds for the same game."""
    job = cfg.resolve(game, players=players, policy="random")
    for gi in range(3):
        events = trace_events(job, 3, gi)
        cps = [e for e in events if e["event"] == "checkpoint"]
        result = events[-1]
        S = job.seats.shape[0]
        K = max(e["checkpoint"] for e in cps)
        seq = [[None] * S for _ in range(K)]
        for e in cps:
            seq[e["checkpoint"] - 1][e["seat"]] = e["standing"]
        for i, st in enumerate(seq):   # the recorded flags follow from the standings
            lead = leaders_of(st, lower)
            last = strictly_last_of(st, lower)
            for e in cps:
                if e["checkpoint"] == i + 1:
                    assert e["leader"] == (e["seat"] in lead) and e["strictly_last"] == (e["seat"] in last)
        winners = result["winners"]
        rows = runner.play_chunk(job, 3, gi, gi + 1)
        acc = runner.accumulators_for(job)
        acc.fold(rows, bool(job.module.LOWER_IS_BETTER))
        if result["timeout"]:
            assert acc.arc_misc[arc.X_EXCLUDED] == 1
            continue
        misc, start, end = expected_sums([(seq, winners)], lower)
        assert acc.arc_misc.tolist() == misc.tolist()
        assert acc.arc_end.tolist() == end.tolist()


# ------------------------------------------------------------------ check, export, html
def _tables(rules=None, seed=3, games=300):
    job = cfg.resolve("forecasts-cubes", players=3, policy="heuristic", rules=rules or {})
    return report.build_tables(runner.run_jobs([job], games, seed, progress=False))


def _arc_metrics(cmp):
    return set(cmp.filter(cmp["metric"].is_in(["lead_changes", "decided_at", "comeback_rate",
                                                "last_swing"]))["metric"].to_list())


def test_check_tests_the_arc_metrics_and_skips_them_for_an_older_baseline():
    from simcli.analyses import check
    four, one = _tables(), _tables({"rounds": 1}, seed=4)
    cmp = check.compare(four, one, 0.01)
    assert _arc_metrics(cmp) == {"lead_changes", "decided_at", "comeback_rate", "last_swing"}
    moved = dict(zip(cmp["metric"].to_list(), cmp["moved"].to_list()))
    # one round against four: no lead changes, decided only at the end
    assert moved["lead_changes"] and moved["decided_at"]
    same = check.compare(four, four, 0.01)
    assert not same.filter(same["metric"] == "lead_changes")["moved"].any()
    old = {**four, "variants": four["variants"].drop(list(report.ARC_COLUMNS))}
    cmp = check.compare(old, one, 0.01)
    assert _arc_metrics(cmp) == set() and cmp.height > 0


def test_export_prints_one_arc_line_per_job_and_writes_arc_png(tmp_path):
    from simcli.report import export
    tables = _tables()
    lines = []
    export.print_tables(tables, lines.append)
    # the game arc is one table with one row per job with checkpoints
    head = lines.index("Game arc (games with checkpoints and a winner; docs/balance.md)")
    assert "decided_at" in lines[head + 1]
    block = lines[head + 3:]
    block = block[:block.index("")] if "" in block else block    # the first column block
    block = block[:next((i for i, x in enumerate(block) if not x.startswith("forecasts-cubes ")), len(block))]
    assert len(block) == 1
    paths = export.write_tables(tables, tmp_path, "parquet", {})
    names = {p.name for p in paths}
    assert {"arc.parquet", "arc.png"} <= names
    assert (tmp_path / "arc.png").read_bytes()[:4] == b"\x89PNG"
    from simcli.report.html import render_html
    page = render_html(tmp_path)
    assert "When is the game decided?" in page


def test_arc_png_is_left_out_beside_the_tables_of_a_run_of_many_jobs(tmp_path):
    # the figure draws one line per job, at most ARC_PNG_MAX_JOBS; a larger run (the default
    # suite) gets it only in its HTML report, and skips matplotlib's start-up
    from simcli.report import export
    rows = [{"game": "g", "variant": "v", "players": 4, "policies": f"p{j}", "counted": c,
             "checkpoint": k, "games": 10, "leader_wins": 0.5, "ci_low": 0.2, "ci_high": 0.8,
             "lead_change_rate": None}
            for j in range(export.ARC_PNG_MAX_JOBS + 1) for c in ("start", "end") for k in (0, 1)]
    many = pl.DataFrame(rows)
    assert export.arc_jobs(many) == export.ARC_PNG_MAX_JOBS + 1
    export.write_tables({"arc": many}, tmp_path / "many", "parquet", {})
    assert not (tmp_path / "many" / "arc.png").exists()
    few = many.filter(pl.col("policies").is_in(["p0", "p1"]))
    export.write_tables({"arc": few}, tmp_path / "few", "parquet", {})
    assert (tmp_path / "few" / "arc.png").read_bytes()[:4] == b"\x89PNG"


Z2 = 1.959963984540054 ** 2


@pytest.mark.parametrize("game, counted, checkpoint, games", [
    ("pgc", "start", 7, 8),            # issue 23: was [0.99808, 1], Wilson over 8 games [0.676, 1]
    ("sudden-skies", "end", 0, 200),   # 1,800 of 2,000 random games time out: was [0.99808, 1]
])
def test_a_point_the_leader_always_wins_gets_wilson_over_the_games_reaching_it(game, counted, checkpoint, games):
    # the reproductions (`simcli run GAME --players 4 --games 2000 --seed 5`): a leader
    # there always won, so the interval is Wilson's at p = 1 over the games that got there,
    # [n / (n + z^2), 1], not over the 2,000 deals of the job
    job = cfg.resolve(game, None, 4)
    (res,) = runner.run_jobs([job], 2000, 5, progress=False)
    t = report.build_tables([res])["arc"]
    row = t.filter((pl.col("counted") == counted) & (pl.col("checkpoint") == checkpoint)).row(0, named=True)
    assert (row["games"], row["leader_wins"], row["ci_high"]) == (games, 1.0, 1.0)
    assert row["ci_low"] == pytest.approx(games / (games + Z2), abs=1e-12)
    # with --rotate every deal is played 4 times: the unit is the deal that reaches the point
    (rot,) = runner.run_jobs([job], 500, 5, progress=False, rotate=True)
    t = report.build_tables([rot])["arc"].filter(pl.col("leader_wins") == 1.0)
    assert t.height >= 1   # at least the final standing
    for r in t.iter_rows(named=True):
        slot = (r["checkpoint"] - 1) if r["counted"] == "start" else arc.DEPTH + r["checkpoint"]
        deals = int(rot.acc.arc_deal[slot, D_N])
        assert deals <= r["games"] <= 4 * deals
        assert r["ci_low"] == pytest.approx(deals / (deals + Z2), abs=1e-12)


def test_the_arc_chart_draws_a_null_interval_as_a_gap_not_a_plunge():
    # a point whose interval is null (e.g. one deal with spread: no variance to estimate) must
    # leave a gap in the band, not pull it down to 0
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from simcli.report.html import arc_figure
    t = pl.DataFrame({"game": ["pgc"] * 3, "counted": ["end"] * 3, "checkpoint": [0, 1, 2],
                      "games": [100, 60, 1], "leader_wins": [1.0, 0.7, 0.5],
                      "ci_low": [0.96, 0.57, None], "ci_high": [1.0, 0.8, None],
                      "lead_change_rate": [0.1, 0.2, None]})
    fig, ax = plt.subplots()
    assert arc_figure(t, lambda job: "pgc", ax) == 1
    band = np.concatenate([p.vertices for p in ax.collections[0].get_paths()])
    plt.close(fig)
    assert band[:, 0].max() <= 1 and band[:, 1].min() >= 0.57   # nothing drawn at the null point


def test_a_long_arc_legend_label_wraps_inside_the_panel():
    """A policy label with a knob file's path (``mc:16:tuned:1@configs/...``, session 26) ran off
    the right edge of the arc panel; it now wraps into lines of at most ARC_LABEL_WIDTH
    characters, every word kept."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from simcli.report.html import arc_figure
    from simcli.report.html.charts import ARC_LABEL_WIDTH
    t = pl.DataFrame({"game": ["pgc"] * 2, "counted": ["end"] * 2, "checkpoint": [0, 1],
                      "games": [100, 60], "leader_wins": [1.0, 0.7], "ci_low": [0.96, 0.57],
                      "ci_high": [1.0, 0.8], "lead_change_rate": [0.1, 0.2]})
    long = ("pgc / base / 2p [mc:16:tuned:1@configs/tuned/starts/pgc-2p-session25.toml x2] - "
            "skill=mc:16:tuned:1@configs/tuned/starts/pgc-2p-session25.toml")
    fig, ax = plt.subplots()
    arc_figure(t, lambda job: long, ax)
    label = ax.get_legend().get_texts()[0].get_text()
    plt.close(fig)
    assert len(long) > ARC_LABEL_WIDTH and "\n" in label
    assert max(len(x) for x in label.split("\n")) <= ARC_LABEL_WIDTH
    assert label.split() == long.split()
    fig, ax = plt.subplots()
    arc_figure(t, lambda job: "pgc / base / 4p [tuned x4]", ax)
    assert ax.get_legend().get_texts()[0].get_text() == "pgc / base / 4p [tuned x4]"
    plt.close(fig)
