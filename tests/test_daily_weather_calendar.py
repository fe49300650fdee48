"""simcli/daily.py: the dates of a year as daily-weather jobs, summaries and the heat-map."""
from __future__ import annotations

import polars as pl
import pytest

from kernels import daily_weather as dw
from simcli.analyses import calendar as daily


def test_a_year_has_every_date_once():
    assert len(daily.calendar_jobs(2026)) == 365
    jobs = daily.calendar_jobs(2028)
    assert len(jobs) == 366 and len({j["labels"]["date"] for j in jobs}) == 366
    assert jobs[0]["labels"]["date"] == "2028-01-01" and jobs[-1]["labels"]["date"] == "2028-12-31"


def test_weekdays_match_the_rulebook_examples():
    by_date = {j["labels"]["date"]: j for j in daily.calendar_jobs(2026)}
    # rulebook: Saturday February 14 2026; Wednesday December 23 2026 (Winter)
    assert by_date["2026-02-14"]["rules"]["weekday"] == 5
    assert by_date["2026-02-14"]["labels"]["weekday"] == "sat"
    assert by_date["2026-12-23"]["rules"] == {"month": 12, "day": 23, "weekday": 2, "holiday": "none"}
    assert by_date["2026-12-23"]["labels"]["season"] == "winter"
    assert by_date["2026-06-01"]["labels"]["season"] == "summer"
    astro = {j["labels"]["date"]: j for j in daily.calendar_jobs(2026, seasons="astronomical")}
    assert astro["2026-06-01"]["labels"]["season"] == "spring"


def test_holidays_and_birthday():
    jobs = daily.calendar_jobs(2026, "07-04")
    hol = {j["labels"]["date"]: j["rules"]["holiday"] for j in jobs if j["rules"]["holiday"] != "none"}
    # Thanksgiving 2026: November 1 is a Sunday, so the Thursdays are 5, 12, 19, 26
    assert hol == {"2026-02-14": "valentine", "2026-07-04": "birthday", "2026-10-31": "halloween",
                   "2026-11-26": "thanksgiving", "2026-12-25": "christmas"}
    leap = {j["labels"]["date"]: j["rules"]["holiday"] for j in daily.calendar_jobs(2026, "02-29")}
    assert leap["2026-02-28"] == "birthday"
    leap = {j["labels"]["date"]: j["rules"]["holiday"] for j in daily.calendar_jobs(2028, "02-29")}
    assert leap["2028-02-29"] == "birthday" and leap["2028-02-28"] == "none"


@pytest.mark.parametrize("bad", ["7/4", "13-01", "02-30", "xx", "07-04-01"])
def test_bad_birthday_is_one_clear_error(bad):
    with pytest.raises(ValueError, match="MM-DD"):
        daily.calendar_jobs(2026, bad)


def test_every_date_is_a_valid_rule_set():
    by_name = {r.name: r for r in dw.RULES}
    for job in daily.calendar_jobs(2027, "11-25"):
        p = dw.default_params()
        for name, value in job["rules"].items():
            p[by_name[name].index] = by_name[name].encode(value)
        dw.check(1, p)


def dates_table():
    return pl.DataFrame({
        "date": ["2026-01-05", "2026-01-06", "2026-07-06", "2026-01-05", "2026-01-06", "2026-07-06"],
        "policy": ["greedy"] * 3 + ["solver"] * 3,
        "games": [10, 30, 20, 10, 10, 10],
        "success_rate": [0.5, 0.1, 1.0, 1.0, 1.0, 0.0],
        "score_mean": [2.0, 0.4, 6.0, 4.0, 2.0, 0.0],
        "season": ["winter", "winter", "summer"] * 2,
        "weekday": ["mon", "tue", "mon"] * 2,
    })


def test_summaries_weigh_dates_by_games():
    s = daily.summaries(dates_table())
    greedy_winter = s["season"].filter((pl.col("policy") == "greedy") & (pl.col("season") == "winter"))
    # wins 5 + 3 of 40 games; points 20 + 12 = 32 -> 0.8 per game, 4.0 per win
    assert greedy_winter["games"].item() == 40
    assert greedy_winter["success_rate"].item() == pytest.approx(8 / 40)
    assert greedy_winter["score_mean"].item() == pytest.approx(32 / 40)
    assert greedy_winter["win_score_mean"].item() == pytest.approx(4.0)
    assert s["season"].filter(pl.col("policy") == "greedy")["season"].to_list() == ["winter", "summer"]
    mon = s["weekday"].filter((pl.col("policy") == "solver") & (pl.col("weekday") == "mon"))
    assert mon["success_rate"].item() == pytest.approx(0.5) and mon["dates"].item() == 2


def test_calendar_png_is_drawn():
    data = daily.calendar_png(dates_table())
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def test_calendar_entries_resolve_as_jobs():
    from simcli.config import jobs as cfg

    entry = next(j for j in daily.calendar_jobs(2026, "03-02") if j["labels"]["date"] == "2026-03-02")
    job = cfg.resolve("daily-weather", rules=entry["rules"], labels=entry["labels"], policy="solver:300")
    assert job.rules["holiday"] == "birthday" and job.rules["weekday"] == 0 and job.labels["season"] == "spring"
    assert job.seats[0, 0] == dw.POLICIES["solver"] and job.seats[0, 1] == 300
