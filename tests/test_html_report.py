"""The self-contained HTML report: sections, embedded PNGs, no outside resources, rendering."""
from __future__ import annotations

import base64
import datetime as dt
import json
import os
import re
import shutil
import subprocess

import polars as pl
import pytest

from simcli.config import jobs as config
from simcli.report import export
from simcli.report import html as html_report
from simcli.report.html import plots as html_plots
from simcli.report import tables as report
from simcli.engine import runner
from simcli.errors import SimError

from tests.helpers import invoke

GAME = "forecasts-cubes"
IMG = '<img src="data:image/png;base64,'
CHROMIUM = "/usr/bin/chromium"
FORBIDDEN = ("http://", "https://", "<script", "<link", "url(", "<iframe", "@import")


def run_folder(path, *extra, games="400"):
    r = invoke("run", GAME, "--games", games, "--out", str(path), "--no-progress", "--seed", "5", *extra)
    assert r.exit_code == 0, r.output
    return path


@pytest.fixture(scope="module")
def base_run(tmp_path_factory):
    return run_folder(tmp_path_factory.mktemp("html") / "base")


def images(text: str) -> list[bytes]:
    """Every embedded PNG, decoded; each must be a real PNG."""
    blobs = re.findall(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"', text)
    assert len(blobs) == text.count(IMG)
    out = []
    for b in blobs:
        data = base64.b64decode(b, validate=True)
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 2000
        out.append(data)
    return out


def assert_self_contained(text: str) -> None:
    low = text.lower()
    for bad in FORBIDDEN:
        assert bad not in low, bad
    assert low.startswith("<!doctype html>") and "<style>" in low and low.rstrip().endswith("</html>")
    # every src is an embedded image, every href an anchor in the page
    assert all(s.startswith("data:image/png;base64,") for s in re.findall(r'src="([^"]*)"', text))
    for href in re.findall(r'href="([^"]*)"', text):
        assert href.startswith("#") and f'id="{href[1:]}"' in text, href


def copy_run(src, dst):
    shutil.copytree(src, dst)
    return dst


def test_plain_run_has_every_section_and_one_figure_per_job(base_run, tmp_path):
    text = html_report.render_html(base_run)
    assert_self_contained(text)
    assert len(images(text)) == 2  # one job: win share | scores | lengths panels; the game arc
    for needle in ("What was run", "When is the game decided?", "Jobs and the rules in force", "tricks_per_round=10",
                   "1. forecasts-cubes / base / 4p", "win share of seat 0", "seat-0 advantage",
                   "balance", "tie rate", "timeout rate", "Seats", "Game counters (derived metrics)",
                   "correct_forecast_rate", "numba", "simcli run forecasts-cubes --games 400"):
        assert needle in text, needle
    # verdicts first, provenance last
    heads = re.findall(r'<h2 id="([a-z]+)"', text)
    assert heads[0] == "verdict" and heads[-1] == "run" and "glossary" in heads, heads
    for absent in ("Overview of all jobs", "Sweep comparison", "Policies (seat-rotated deals)",
                   "Paired differences", "Success rate by date", "left out"):
        assert absent not in text, absent
    out = html_report.write_html(base_run, tmp_path / "page.html")
    assert out == tmp_path / "page.html" and out.read_text() .count(IMG) == 2
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".")], "no temporary file left"


def test_csv_folder_and_three_players_render_the_same_sections(tmp_path):
    folder = run_folder(tmp_path / "csv", "--format", "csv", "--variant", "advisory", "--players", "3",
                        games="300")
    assert (folder / "seats.csv").is_file() and not (folder / "seats.parquet").exists()
    text = html_report.render_html(folder)
    assert_self_contained(text)
    assert len(images(text)) == 2  # the job's panels and the game arc
    assert "advisory / 3p" in text and "advisory_effect" in text and "advisory=true" in text


def test_optional_tables_policies_paired_sweep_and_dates(tmp_path):
    """Rotated-run, sweep and year-run tables, hand-built with Polars next to real runs."""
    jobs = [config.resolve(GAME, v, 3, policy="random", rules={"tricks_per_round": t},
                           labels={"tricks_per_round": str(t)}) for v in ("base", "advisory") for t in (6, 13)]
    results = runner.run_jobs(jobs, 200, 9, threads=1, progress=False)
    tables = {k: v for k, v in report.build_tables(results).items() if k in export.TABLES}
    keys = ["game", "variant", "players", "policies", "tricks_per_round"]
    jk = tables["variants"].select(keys)
    pols = pl.concat([jk.with_columns(policy=pl.lit(p), seats_held=pl.lit(n), deals=pl.lit(200), rotations=pl.lit(3),
                                      win_share=pl.lit(w), win_ci_low=pl.lit(w - .04), win_ci_high=pl.lit(w + .04))
                      for p, n, w in (("heuristic", 1, .45), ("random", 2, .27))])
    paired = jk.with_columns(policy_a=pl.lit("heuristic"), policy_b=pl.lit("random"), deals=pl.lit(200),
                             diff=pl.lit(.18), ci_low=pl.lit(.1), ci_high=pl.lit(.26), z=pl.lit(4.4),
                             p_value=pl.lit(1e-5))
    days = [dt.date(2026, 1, 1) + dt.timedelta(days=i) for i in range(365)]
    dates = pl.DataFrame({"game": "daily-weather", "date": days * 2,
                          "policy": ["greedy"] * 365 + ["solver"] * 365,
                          "games": [50] * 730,
                          "success_rate": [(i % 31) / 31 for i in range(730)],
                          "score_mean": [float(i % 7) for i in range(730)]})
    tables.update(policies=pols, paired=paired, dates=dates)
    meta = {"seed": 9, "games": 200, "axes": keys,
            "jobs": [{"game": GAME, "variant": j.variant, "players": 3, "policies": j.policies,
                      "rules": j.rules, "labels": j.labels,
                      "notes": ["STAND-IN data <b>& co</b>: see https://example.org/x"]} for j in jobs]}
    folder = tmp_path / "sweep"
    export.write_tables(tables, folder, "parquet", meta)
    text = html_report.render_html(folder)
    assert_self_contained(text)
    # 2 calendars + the game arc + 2 sweep figures (variant, tricks_per_round) + 4 jobs x (panels + policies)
    assert len(images(text)) == 2 + 1 + 2 + 4 * 2
    for needle in ("Overview of all jobs", "Sweep comparison", "against tricks_per_round", "against variant",
                   "Policies (seat-rotated deals)", "Paired differences (same deals)", "policy_a",
                   "Success rate by date", "policy greedy, 2026", "policy solver, 2026",
                   "tricks_per_round=13"):
        assert needle in text, needle
    # notes are shown once, escaped, and the web address is not written literally
    assert text.count("STAND-IN data") == 1
    assert "&lt;b&gt;&amp; co&lt;/b&gt;" in text and "<b>& co" not in text
    assert "example.org" in text


def test_figures_are_capped_with_a_note(base_run, tmp_path, monkeypatch):
    folder = copy_run(base_run, tmp_path / "capped")
    days = [dt.date(2025, 3, 1) + dt.timedelta(days=i) for i in range(40)]
    pl.DataFrame({"date": [d.isoformat() for d in days] * 3, "policy": ["a"] * 40 + ["b"] * 40 + ["c"] * 40,
                  "games": [10] * 120, "success_rate": [.5] * 120, "score_mean": [1.0] * 120}
                 ).write_csv(folder / "dates.csv")
    monkeypatch.setattr(html_plots, "MAX_FIGURES", 2)
    text = html_report.render_html(folder)
    assert len(images(text)) == 2
    assert "3 figures left out: this page draws at most 2" in text  # a calendar, the game arc, the job panels
    assert "policy c, 2025" in text  # the summary table still names every calendar


def test_html_escapes_meta_text(base_run, tmp_path):
    folder = copy_run(base_run, tmp_path / "esc")
    meta = json.loads((folder / "meta.json").read_text())
    meta["command"] = ["simcli", "run", "<script>alert(1)</script>", "url(x)"]
    (folder / "meta.json").write_text(json.dumps(meta))
    text = html_report.render_html(folder)
    assert_self_contained(text)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text


def test_not_a_report_folder(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(SimError, match="is not a simcli report folder \\(no seats/variants tables\\)"):
        html_report.render_html(tmp_path)
    with pytest.raises(SimError, match="does not exist"):
        html_report.render_html(tmp_path / "missing")
    with pytest.raises(SimError, match="is not a simcli report folder"):
        html_report.write_html(tmp_path, tmp_path / "x.html")
    assert not (tmp_path / "x.html").exists() and sorted(os.listdir(tmp_path)) == ["notes.txt"]


def test_write_html_refuses_a_folder_or_missing_parent(base_run, tmp_path):
    with pytest.raises(SimError, match="is a folder"):
        html_report.write_html(base_run, tmp_path)
    with pytest.raises(SimError, match="does not exist"):
        html_report.write_html(base_run, tmp_path / "no" / "page.html")


@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium at /usr/bin/chromium")
def test_renders_in_headless_chromium(base_run, tmp_path):
    page = html_report.write_html(base_run, tmp_path / "page.html")
    shot = tmp_path / "shot.png"
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}", "--window-size=1400,2000",
           page.resolve().as_uri()]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
    assert p.returncode == 0, p.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    # 1400 x 2000 as asked, and a real page (a blank one compresses to a few kB)
    assert int.from_bytes(data[16:20], "big") == 1400 and int.from_bytes(data[20:24], "big") == 2000
    assert len(data) > 50_000


def test_crowded_sweep_draws_every_combination_and_their_mean(tmp_path, monkeypatch):
    """Hand-built tables only (no run): 2 x 12 jobs, players moving in lockstep with policies."""
    jobs = [{"game": GAME, "variant": v, "players": 3 + (t % 2), "policies": "x" * (3 + t % 2), "tricks": str(t)}
            for v in ("base", "advisory") for t in range(12)]
    variants = pl.DataFrame([{**j, "games": 100, "tie_rate": .1 * (i % 5), "timeout_rate": 0.0,
                              "seat0_advantage": .01 * i, "balance": .9, "length_mean": 40.0}
                             for i, j in enumerate(jobs)])
    seats = pl.DataFrame([{**j, "seat": s, "policy": "random", "games": 100, "win_share": .25,
                           "win_ci_low": .2, "win_ci_high": .3} for j in jobs for s in range(3)])
    folder = tmp_path / "crowded"
    folder.mkdir()
    variants.write_parquet(folder / "variants.parquet")
    seats.write_csv(folder / "seats.csv")
    meta_jobs = [{"game": GAME, "version": 1, "variant": j["variant"], "players": j["players"],
                  "policies": ["random"] * j["players"], "labels": {"tricks": j["tricks"]},
                  "rules": {"rounds": 4, "tricks_per_round": int(j["tricks"]) + 1}} for j in jobs]
    meta_jobs += meta_jobs[:6]  # 30 jobs in meta: listed by setup, not one by one
    (folder / "meta.json").write_text(json.dumps({"axes": ["variant", "players", "policies", "tricks"],
                                                  "jobs": meta_jobs}))
    monkeypatch.setattr(html_plots, "MAX_FIGURES", 3)
    text = html_report.render_html(folder)
    assert_self_contained(text)
    # against variant (12 other combinations: crowded), players, tricks; policies = players
    assert len(images(text)) == 3 and "24 figures left out" in text
    assert "12 combinations of players, tricks: too many to label" in text
    assert "policies changes together with players" in text
    assert "against tricks" in text and "Same for every job: game=forecasts-cubes" in text
    assert "Rules in force in every job: <b>rounds=4</b>" in text and "30 jobs, grouped by setup" in text
    assert "rules that differ by job" in text and "<td>tricks_per_round</td>" in text


def test_a_ladder_played_both_ways_says_whether_each_pair_keeps_one_order(tmp_path):
    r = invoke("ladder", "forecasts-cubes", "--players", "4", "--rungs", "random,heuristic", "--both-ways",
               "--games", "60", "--seed", "3", "--out", tmp_path / "l", "--no-progress")
    assert r.exit_code == 0, r.output
    text = html_report.write_html(tmp_path / "l", tmp_path / "page.html").read_text()
    assert "Skill ladder" in text and "the other way round" in text and "reverse_diff" in text
    # random against the heuristic keeps one order (a random seat among heuristics loses)
    assert "Every pair keeps one order" in text and "No table-free order" not in text


def test_a_skill_run_shows_each_verdict_across_levels(base_run, tmp_path):
    """`--skill`: the page has an "Across skill levels" section after the verdict, one row per
    quantity with its verdict (as in skill_verdicts), and every level's values; a run without
    --skill has no such section."""
    r = invoke("run", GAME, "--skill", "random,heuristic", "--games", "200", "--seed", "3",
               "--out", tmp_path / "s", "--no-progress")
    assert r.exit_code == 0, r.output
    text = html_report.write_html(tmp_path / "s", tmp_path / "page.html").read_text()
    assert_self_contained(text)
    heads = re.findall(r'<h2 id="([a-z]+)"', text)
    assert heads[:2] == ["verdict", "skill"], heads
    verdicts = pl.read_parquet(tmp_path / "s" / "skill_verdicts.parquet")
    assert verdicts.height >= 4      # four seat edges, tie rate, length, timeouts
    for row in verdicts.iter_rows(named=True):
        cell = r'<td(?: class="w")?>'     # a long text cell is marked for wrapping
        assert re.search(f"<td>{re.escape(row['quantity'])}</td>{cell}{re.escape(row['verdict'])}</td>",
                         text), row["quantity"]
        assert re.search(f"{cell}{re.escape(row['top_two'])}: ", text), row["quantity"]
    assert "Every level" in text and "strongest_minus_this" in text
    assert "Across skill levels" not in html_report.render_html(base_run)


def test_a_tune_folder_with_skill_levels_draws_a_line_per_level(tmp_path):
    """`tune --skill`: its jobs share rule values across levels, so the sweep plot keeps each
    level its own line (skill is a line key and an axis of its own); it used to put both levels
    on one line and stop with a TypeError (two points at one x)."""
    r = invoke("tune", GAME, "--players", "3", "--rule", "tricks_per_round=8..10", "--target",
               "tie_rate=min", "--skill", "random,heuristic", "--games", "150", "--seed", "3",
               "--out", tmp_path / "t", "--no-progress")
    assert r.exit_code == 0, r.output
    text = html_report.write_html(tmp_path / "t", tmp_path / "page.html").read_text()
    assert_self_contained(text)
    assert "Across skill levels" in text and "<td>best value</td>" in text   # tune's own verdict row
    assert "<h3>against tricks_per_round</h3>" in text and "<h3>against skill</h3>" in text
    assert "Axes: tricks_per_round, skill." in text
