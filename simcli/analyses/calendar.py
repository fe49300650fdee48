"""daily-weather over a calendar: one job per date of a year, and the success-rate heat-map.

``calendar_jobs(year, birthday)`` turns a year into rule overrides (month, day, weekday,
holiday) plus labels for each date; the CLI resolves one Job per date and policy with
``config.resolve("daily-weather", rules=job["rules"], labels=job["labels"], policy=...)``.
``summaries(dates)`` folds the per-date table by season and weekday; ``calendar_png`` draws
the heat-map. Card data is a STAND-IN set until the printed data is supplied, and every title
says so (``simcli.config.cards.CardData.standin``).
"""
from __future__ import annotations

import datetime as _dt
import os
from pathlib import Path

import polars as pl

from kernels import daily_weather as dw
from simcli.config import cards

WEEKDAY_NAMES = dw.WEEKDAYS          # mon .. sun, index = date.weekday()


def parse_birthday(text: str | None) -> tuple[int, int] | None:
    """``MM-DD`` -> (month, day); ValueError with one line otherwise."""
    if text is None or str(text).strip() == "":
        return None
    parts = str(text).strip().split("-")
    try:
        month, day = int(parts[0]), int(parts[1])
        if len(parts) != 2:
            raise ValueError
        _dt.date(2024, month, day)              # a leap year: 02-29 is a valid birthday
    except (ValueError, IndexError):
        raise ValueError(f"--birthday {text!r} is not a date written MM-DD (e.g. 07-04)") from None
    return month, day


def thanksgiving(year: int) -> _dt.date:
    """The fourth Thursday of November (US)."""
    first = _dt.date(year, 11, 1)
    return first + _dt.timedelta(days=(3 - first.weekday()) % 7 + 21)


def holiday_of(date: _dt.date, birthday: tuple[int, int] | None) -> str:
    """The holiday a date may use: the rulebook's four fixed holidays first, then the birthday
    (a 02-29 birthday is kept on 02-28 in common years)."""
    md = (date.month, date.day)
    if md == (2, 14):
        return "valentine"
    if md == (10, 31):
        return "halloween"
    if date == thanksgiving(date.year):
        return "thanksgiving"
    if md == (12, 25):
        return "christmas"
    if birthday is not None:
        bm, bd = birthday
        if (bm, bd) == (2, 29) and not _is_leap(date.year):
            bd = 28
        if md == (bm, bd):
            return "birthday"
    return "none"


def _is_leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def season_name(month: int, day: int, seasons: str = "meteorological") -> str:
    rule = dw.SEASONS_ASTRONOMICAL if seasons == "astronomical" else dw.SEASONS_METEOROLOGICAL
    return dw.SEASONS[dw.season_of(month, day, rule)]


def calendar_jobs(year: int, birthday: str | None = None,
                  seasons: str = "meteorological") -> list[dict]:
    """One entry per date of ``year``: ``{"rules": {...}, "labels": {...}}``.

    rules  = {"month", "day", "weekday" (0 = Monday), "holiday" (a word of the holiday rule)}
    labels = {"date" (YYYY-MM-DD), "month", "day", "season", "weekday" (mon..sun), "holiday"}
    """
    if not 1 <= int(year) <= 9999:
        raise ValueError(f"--year {year} is outside 1..9999")
    bday = parse_birthday(birthday)
    day = _dt.date(int(year), 1, 1)
    out = []
    while day.year == int(year):
        hol = holiday_of(day, bday)
        out.append({
            "rules": {"month": day.month, "day": day.day, "weekday": day.weekday(), "holiday": hol},
            "labels": {"date": day.isoformat(), "month": day.month, "day": day.day,
                       "season": season_name(day.month, day.day, seasons),
                       "weekday": WEEKDAY_NAMES[day.weekday()], "holiday": hol},
        })
        day += _dt.timedelta(days=1)
    return out


def summaries(dates: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """Per-season and per-weekday summaries of a ``dates`` table (columns date, policy, games,
    success_rate, score_mean, season, weekday): games-weighted success rate and mean score of
    successful maps (score_mean counts failed maps as 0, so it is divided back by the rate)."""
    lazy = dates.lazy().with_columns(
        # wins and total score per date, so sums over dates weigh dates by their games
        (pl.col("success_rate") * pl.col("games")).alias("_wins"),
        (pl.col("score_mean") * pl.col("games")).alias("_points"),
    )
    out = {}
    for key in ("season", "weekday"):
        out[key] = (
            lazy.group_by(["policy", key])
            .agg(pl.col("games").sum().alias("games"), pl.col("_wins").sum().alias("_wins"),
                 pl.col("_points").sum().alias("_points"), pl.len().alias("dates"))
            .with_columns((pl.col("_wins") / pl.col("games")).alias("success_rate"),
                          (pl.col("_points") / pl.col("games")).alias("score_mean"),
                          (pl.col("_points") / pl.col("_wins")).alias("win_score_mean"))
            .drop(["_wins", "_points"])
            .sort(["policy", key])
            .collect()
        )
    order = {"season": list(dw.SEASONS), "weekday": list(WEEKDAY_NAMES)}
    for key, names in order.items():
        out[key] = out[key].with_columns(
            pl.col(key).replace_strict(names, list(range(len(names))), default=len(names)).alias("_o")
        ).sort(["policy", "_o"]).drop("_o")
    return out


def calendar_png(dates: pl.DataFrame, standin: bool = True) -> bytes:
    """Heat-map of success rate by date (12 months x 31 days), one panel per policy."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    import numpy as np
    from simcli.report.plots import figure_bytes

    policies = sorted(dates["policy"].unique().to_list())
    fig = Figure(figsize=(11, 3.2 * max(len(policies), 1) + 0.6))
    FigureCanvasAgg(fig)
    fig.suptitle("daily-weather: success rate by date" + (" - STAND-IN card data" if standin else ""))
    axes = fig.subplots(max(len(policies), 1), 1, squeeze=False)[:, 0]
    image = None
    for ax, policy in zip(axes, policies):
        grid = np.full((12, 31), np.nan)
        sub = dates.filter(pl.col("policy") == policy)
        for d, rate in zip(sub["date"].to_list(), sub["success_rate"].to_list()):
            if isinstance(d, str):
                d = _dt.date.fromisoformat(d)
            grid[d.month - 1, d.day - 1] = rate
        image = ax.imshow(grid, vmin=0.0, vmax=1.0, cmap="viridis", aspect="auto",
                          interpolation="nearest")
        ax.set_title(policy, fontsize=10)
        ax.set_yticks(range(12), [m.title() for m in dw.MONTHS], fontsize=7)
        ax.set_xticks(range(0, 31, 2), [str(d) for d in range(1, 32, 2)], fontsize=7)
    if image is not None:
        fig.colorbar(image, ax=list(axes), label="success rate", shrink=0.9)
    return figure_bytes(fig, dpi=110)


POLICIES_BY_DEFAULT = ("random", "greedy", "solver")
DEFAULT_GAMES = 20   # per date and policy: a year of 3 policies finishes in minutes on 2 cores


def dates_table(tables: dict) -> pl.DataFrame:
    """One row per date and policy from a year run's ``seats`` table (seat 0 = the player)."""
    seats = tables["seats"]
    return (
        seats.lazy()
        .filter(pl.col("seat") == 0)
        .select("date", "month", "day", "season", "weekday", "holiday", "variant", "policy", "games",
                # the win share of the only seat is the success rate; score counts only for a win
                pl.col("win_share").alias("success_rate"), pl.col("win_ci_low").alias("success_ci_low"),
                pl.col("win_ci_high").alias("success_ci_high"), "score_mean")
        .sort("date", "policy")
        .collect()
    )


def calendar_run(variant, players, policy, seats, rules, games, year, date, birthday, cards_path):
    """`simcli run daily-weather` planned: every date of a year (or one date), each policy.

    Returns (jobs, games per job, extra meta, post) for ``runspec.RunSpec``; validates everything
    (card file, year, date, birthday, policies) before anything runs.
    """
    from simcli.config import jobs as cfg
    from simcli.errors import SimError

    card_data = cards.shipped()
    if cards_path is not None:
        try:
            os.stat(cards_path)
        except FileNotFoundError:
            raise SimError(f"--cards {cards_path}: no such file; give a card data file (TOML)") from None
        except OSError:
            pass  # the reader names the OS's reason in one line
        card_data = cards.load(cards_path)  # one line naming the file and the key, card or cell
    if year is not None and date is not None:
        raise SimError("give --year or --date, not both")
    if year is not None and not 1 <= int(year) <= 9999:
        raise SimError(f"--year {year} is outside 1..9999")
    base = cfg.resolve("daily-weather", variant, players, rules=rules)
    try:
        if date is not None:
            try:
                d = _dt.date.fromisoformat(date)
            except ValueError:
                raise SimError(f"--date {date!r} is not a date written YYYY-MM-DD") from None
            entries = [e for e in calendar_jobs(d.year, birthday, base.rules["seasons"])
                       if e["labels"]["date"] == d.isoformat()]
        else:
            entries = calendar_jobs(year or _dt.date.today().year, birthday, base.rules["seasons"])
    except ValueError as e:
        raise SimError(str(e)) from None
    if seats is not None and policy is not None:
        raise SimError("give either --policy or --seats, not both")
    names = [seats or policy] if (seats or policy) else list(POLICIES_BY_DEFAULT)
    jobs = []
    for e in entries:
        for p in names:
            job = cfg.resolve("daily-weather", base.variant, base.players, policy=p,
                              rules={**rules, **e["rules"]}, labels=e["labels"])
            jobs.append(cards.attach(job, card_data))  # the card data travels with the job (Dask too)
    n = games or DEFAULT_GAMES

    def post(tables, results=None):
        dates = dates_table(tables)
        summ = summaries(dates)
        png = calendar_png(dates, card_data.standin)
        lines = [f"daily-weather {variant or base.variant}: {len(entries)} date(s) x {len(names)} "
                 f"polic{'y' if len(names) == 1 else 'ies'} x {n} games"
                 + (" - STAND-IN card data" if card_data.standin else "")]
        from simcli.report.fmt import table_lines
        lines += table_lines(summ["season"], title="By season", n=n)
        lines += table_lines(summ["weekday"], title="By weekday", n=n)
        if dates.height <= 12:
            lines += table_lines(dates.select("date", "policy", "games", "success_rate", "score_mean"),
                                 title="By date", n=n)
        return ({"dates": dates, "by_season": summ["season"], "by_weekday": summ["weekday"]},
                {"calendar.png": png}, lines)

    extra = {"year": year, "date": date, "birthday": birthday,
             "cards": str(cards_path) if cards_path else "stand-in"}
    return jobs, n, extra, post


