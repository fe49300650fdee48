"""The command line through Typer's CliRunner: tables, files, traces, and every bad input."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import polars as pl
import pytest


from simcli.config import jobs as cfg
from tests.helpers import invoke

GAME = "forecasts-cubes"


def test_list_shows_games_variants_rules_policies():
    r = invoke("list")
    assert r.exit_code == 0
    assert GAME in r.output and "advisory" in r.output and "tricks_per_round" in r.output
    data = json.loads(invoke("list", "--json").output)
    cubes = next(g for g in data if g["game"] == GAME)
    assert set(cubes["variants"]) == {"base", "advisory"}
    assert cubes["variants"]["base"]["players"] == [4, 3]
    assert cubes["policies"] == ["random", "heuristic", "mc", "tuned", "race", "ismcts", "sift"]


def test_run_writes_every_table_with_the_documented_columns(tmp_path):
    out = tmp_path / "r"
    r = invoke("run", GAME, "--games", "500", "--out", str(out), "--no-progress", "--seed", "3")
    assert r.exit_code == 0, r.output
    for name in ("seats", "variants", "scores", "lengths", "counters"):
        assert (out / f"{name}.parquet").is_file()
    seats = pl.read_parquet(out / "seats.parquet")
    for c in ("game", "variant", "players", "seat", "policy", "games", "win_share", "win_ci_low",
              "win_ci_high", "score_mean", "score_sd", "mean_place", "score_min", "score_p05",
              "score_p25", "score_p50", "score_p75", "score_p95", "score_max"):
        assert c in seats.columns, c
    assert seats.height == 4
    # shares over seats sum to one (no timeouts in this game) and sit inside their intervals
    assert abs(seats["win_share"].sum() - 1) < 1e-9
    assert ((seats["win_ci_low"] <= seats["win_share"]) & (seats["win_share"] <= seats["win_ci_high"])).all()
    variants = pl.read_parquet(out / "variants.parquet")
    for c in ("game", "variant", "players", "games", "tie_rate", "timeout_rate", "seat0_advantage",
              "balance", "length_mean", "length_sd", "leader_gap"):
        assert c in variants.columns, c
    scores = pl.read_parquet(out / "scores.parquet")
    assert scores.columns[:3] == ["game", "variant", "players"]
    assert scores.group_by("seat").agg(pl.col("count").sum())["count"].to_list() == [500] * 4
    lengths = pl.read_parquet(out / "lengths.parquet")
    assert lengths["length"].to_list() == [40] and lengths["count"].to_list() == [500]
    meta = json.loads((out / "meta.json").read_text())
    assert meta["seed"] == 3 and meta["games"] == 500
    job = meta["jobs"][0]
    assert job["rules"] == {"advisory": False, "tricks_per_round": 10, "rounds": 4}
    assert job["version"] == cfg.game_module(GAME).VERSION and meta["packages"]["numba"]
    assert not [p for p in os.listdir(out) if p.startswith(".")], "no temporary files left"


def test_csv_and_per_game_rows_match_the_trace(tmp_path):
    out = tmp_path / "c"
    r = invoke("run", GAME, "--games", "300", "--out", str(out), "--format", "csv", "--per-game",
               "--no-progress", "--seats", "heuristic,random,random,random", "--chunk", "64")
    assert r.exit_code == 0, r.output
    rows = pl.read_csv(out / "per_game.csv")
    assert rows.height == 300 and rows["game_index"].to_list() == list(range(300))
    t = invoke("trace", GAME, "--game-index", "17", "--count", "2", "--seats", "heuristic,random,random,random")
    assert t.exit_code == 0, t.output
    events = [json.loads(line) for line in t.output.splitlines()]
    results = [e for e in events if e["event"] == "result"]
    assert [e["game_index"] for e in results] == [17, 18]
    for res in results:
        row = rows.row(res["game_index"], named=True)
        assert res["scores"] == [row[f"score_{s}"] for s in range(4)]
    assert any(e["event"] == "play" and isinstance(e["card"], str) for e in events)
    deal = next(e for e in events if e["event"] == "deal")
    assert len(deal["hand"]) == 10 and all(c[-1] in "SHDC" for c in deal["hand"])


def test_results_identical_for_threads_and_chunks(tmp_path):
    outs = []
    for i, extra in enumerate((["--threads", "1", "--chunk", "1000"], ["--threads", "2", "--chunk", "97"])):
        out = tmp_path / str(i)
        r = invoke("run", GAME, "--games", "1000", "--out", str(out), "--no-progress", *extra)
        assert r.exit_code == 0, r.output
        outs.append(out)
    for name in ("seats", "scores", "lengths", "counters"):
        a = pl.read_parquet(outs[0] / f"{name}.parquet")
        b = pl.read_parquet(outs[1] / f"{name}.parquet")
        assert a.equals(b), name


@pytest.mark.parametrize("args,needle", [
    (["run", "nosuchgame"], "unknown game 'nosuchgame'; valid games:"),
    (["run", GAME, "--variant", "nope"], "unknown variant 'nope' for forecasts-cubes; valid variants: base, advisory"),
    (["run", GAME, "--players", "5"], "valid player counts: 4, 3"),
    (["run", GAME, "--rule", "colour=red"], "unknown rule 'colour'"),
    (["run", GAME, "--rule", "tricks_per_round=99"], "outside 1..13"),
    (["run", GAME, "--rule", "tricks_per_round=abc"], "not a whole number"),
    (["run", GAME, "--rule", "advisory=maybe"], "not one of true | false"),
    (["run", GAME, "--rule", "tricks_per_round"], "is not NAME=VALUE"),
    (["run", GAME, "--players", "4", "--rule", "tricks_per_round=12"], "more than the 10-card hand"),
    (["run", GAME, "--policy", "genius"], "unknown policy 'genius'; valid policies: random, heuristic"),
    (["run", GAME, "--seats", "random,random"], "--seats lists 2 policies"),
    (["run", GAME, "--games", "0"], "--games"),
    (["run", GAME, "--games", "lots"], "--games"),
    (["run", GAME, "--format", "xlsx"], "valid formats: parquet, csv"),
    (["trace", GAME, "--variant", "nope"], "valid variants"),
    (["bench", "nosuchgame"], "unknown game"),
])
def test_bad_input_is_one_line_exit_2_no_traceback(tmp_path, args, needle):
    out = tmp_path / "o"
    full = args + (["--out", str(out)] if args[0] == "run" else [])
    r = invoke(*full)
    assert r.exit_code == 2, (r.exit_code, r.output)
    lines = [l for l in r.output.splitlines() if l.strip()]
    assert len(lines) == 1, r.output
    assert lines[0].startswith("error: ") and needle in lines[0], lines[0]
    assert "Traceback" not in r.output
    assert not out.exists() or not any(out.iterdir()), "no partial output"


def test_unwritable_out_is_refused_before_running(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = invoke("run", GAME, "--games", "10", "--out", str(blocker / "sub"))
    assert r.exit_code == 2 and r.output.startswith("error: ") and "--out" in r.output
    r = invoke("run", GAME, "--games", "10", "--out", str(blocker))
    assert r.exit_code == 2 and "not a folder" in r.output


def test_console_script_reports_errors_in_one_line():
    p = subprocess.run([sys.executable, "-m", "simcli.cli", "run", "nosuchgame"], capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stderr.strip().startswith("error: unknown game") and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_report_command_and_html_flag_write_one_self_contained_page(tmp_path):
    out = tmp_path / "r"
    r = invoke("run", GAME, "--games", "300", "--out", str(out), "--html", "--no-progress")
    assert r.exit_code == 0, r.output
    page = (out / "report.html").read_text()
    assert "data:image/png;base64," in page and "<script src" not in page
    r = invoke("report", str(out), "--out", str(tmp_path / "again.html"))
    assert r.exit_code == 0 and (tmp_path / "again.html").is_file()
    r = invoke("report", str(tmp_path / "missing"))
    assert r.exit_code == 2 and "does not exist" in r.output


def test_dask_backend_from_the_command_line_matches_local(tmp_path):
    outs = {}
    for name, extra in (("local", []), ("dask", ["--backend", "dask", "--workers", "2"])):
        outs[name] = tmp_path / name
        r = invoke("run", GAME, "--games", "3000", "--chunk", "700", "--out", str(outs[name]), "--no-progress", *extra)
        assert r.exit_code == 0, r.output
    for t in ("seats", "variants", "scores", "lengths", "counters"):
        a = pl.read_parquet(outs["local"] / f"{t}.parquet").drop("wall_s", strict=False)
        b = pl.read_parquet(outs["dask"] / f"{t}.parquet").drop("wall_s", strict=False)
        assert a.equals(b), t
    assert json.loads((outs["dask"] / "meta.json").read_text())["backend"] == "dask"


@pytest.mark.parametrize("args,needle", [
    (["--workers", "2"], "need --backend dask"),
    (["--backend", "spark"], "valid backends: local, dask"),
    (["--backend", "dask", "--workers", "2", "--per-game"], "--per-game is not available"),
])
def test_backend_option_errors(tmp_path, args, needle):
    r = invoke("run", GAME, "--games", "10", "--out", str(tmp_path / "o"), *args)
    assert r.exit_code == 2 and needle in r.output and len(r.output.strip().splitlines()) == 1


def test_bench_measures_every_policy_at_one_and_all_threads():
    from simcli.analyses.bench import bench
    import numba
    rows = bench("forecasts-cubes", seconds=0.05, repeats=1, players=3)
    threads = sorted({1, numba.config.NUMBA_NUM_THREADS})
    assert {(r["policy"], r["threads"]) for r in rows} == {
        (p, t) for p in ("random", "heuristic", "mc", "tuned", "race", "ismcts", "sift") for t in threads}
    for r in rows:
        assert r["players"] == 3 and r["games_per_s"] > 0
        # forecasts-cubes at 3 players with the default 10 tricks: 4 rounds x (3 forecasts +
        # 30 card plays + at most 10 cube moves) decisions per game (a ratio of two rates: allow
        # for float rounding)
        ratio = r["decisions_per_s"] / r["games_per_s"]
        assert 4 * 33 * (1 - 1e-9) <= ratio <= 4 * 43 * (1 + 1e-9)
