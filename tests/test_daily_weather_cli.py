"""`simcli run daily-weather`: one date or a whole year, per policy, with its own tables."""
from __future__ import annotations

import polars as pl
import pytest

from tests.test_cli import invoke


def test_one_date_runs_every_policy_and_writes_the_dates_table(tmp_path):
    r = invoke("run", "daily-weather", "--date", "2026-12-23", "--games", "20", "--out", str(tmp_path),
               "--no-progress")
    assert r.exit_code == 0, r.output
    dates = pl.read_parquet(tmp_path / "dates.parquet")
    for c in ("date", "policy", "games", "success_rate", "score_mean", "season", "weekday"):
        assert c in dates.columns
    assert sorted(dates["policy"]) == ["greedy", "random", "solver"]
    assert dates["date"].unique().to_list() == ["2026-12-23"] and set(dates["weekday"]) == {"wed"}
    # the solver starts from greedy's own line, so it never does worse on the same deals
    rate = dict(zip(dates["policy"], dates["success_rate"]))
    assert rate["solver"] >= rate["greedy"]
    assert (tmp_path / "calendar.png").read_bytes()[:4] == b"\x89PNG"
    assert "STAND-IN" in r.output


def test_a_year_has_every_date_and_summaries(tmp_path):
    r = invoke("run", "daily-weather", "--year", "2028", "--policy", "greedy", "--games", "2",
               "--birthday", "02-29", "--out", str(tmp_path), "--no-progress")
    assert r.exit_code == 0, r.output
    dates = pl.read_parquet(tmp_path / "dates.parquet")
    assert dates.height == 366 and dates["date"].n_unique() == 366      # 2028 is a leap year
    assert dates.filter(pl.col("date") == "2028-02-29")["holiday"].to_list() == ["birthday"]
    assert dates.filter(pl.col("date") == "2028-11-23")["holiday"].to_list() == ["thanksgiving"]
    season = pl.read_parquet(tmp_path / "by_season.parquet")
    weekday = pl.read_parquet(tmp_path / "by_weekday.parquet")
    assert season["dates"].sum() == 366 and weekday["dates"].sum() == 366
    assert weekday.height == 7


@pytest.mark.parametrize("args,needle", [
    (["--birthday", "13-40"], "--birthday '13-40' is not a date"),
    (["--date", "2026-02-30"], "--date '2026-02-30' is not a date"),
    (["--year", "2026", "--date", "2026-01-01"], "--year or --date, not both"),
    (["--cards", "/nonexistent/cards.toml"], "--cards /nonexistent/cards.toml"),
    (["--policy", "smart"], "unknown policy 'smart'; valid policies: random, greedy, solver"),
])
def test_daily_weather_bad_input(tmp_path, args, needle):
    r = invoke("run", "daily-weather", "--games", "1", "--out", str(tmp_path / "o"), *args)
    assert r.exit_code == 2, r.output
    assert needle in r.output and len(r.output.strip().splitlines()) == 1


def test_custom_card_file_errors_name_the_card_and_cell(tmp_path):
    from simcli.config.jobs import configs_dir
    text = (configs_dir() / "daily-weather-cards.toml").read_text()
    bad = tmp_path / "cards.toml"
    # W1 face a, fourth cell (index 3) "sun/plain" -> an icon that does not exist
    old = 'a = ["cloud/striped", "cloud/striped", "rain/plain", "sun/plain",'
    assert old in text
    bad.write_text(text.replace(old, 'a = ["cloud/striped", "cloud/striped", "rain/plain", "sunny/plain",', 1))
    r = invoke("run", "daily-weather", "--cards", str(bad), "--games", "1", "--out", str(tmp_path / "o"))
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    assert "W1" in r.output and "sunny" in r.output and "cell" in r.output, r.output
