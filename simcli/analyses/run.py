"""`simcli run`: the user's words -> the jobs to play (a game, the default suite, or a year of
daily-weather), shared by the command line and the Python API (``simcli.run``)."""
from __future__ import annotations

from typing import Optional

from simcli.config import jobs as cfg
from simcli.engine.runspec import DEFAULT_GAMES, DEFAULT_SEED, Analysis, PostAnalysis, check_games, check_seed
from simcli.errors import SimError


def resolve_run(game: Optional[str], *, variant=None, players=None, policy=None, seats=None,
                rules: Optional[dict] = None, games: Optional[int] = None, seed: Optional[int] = None,
                year=None, date=None, birthday=None, cards=None) -> tuple[list, list, int, dict, Analysis]:
    """The user's words for `run` -> (jobs, games per job, seed, extra meta, analysis).

    Shared by the CLI's `run` and the Python API, so both accept and refuse the same things.
    """
    if games is not None:
        check_games(games)
    if seed is not None:
        check_seed(seed)
    if game is None:
        if any(x is not None for x in (variant, players, policy, seats)) or rules:
            raise SimError("--variant/--players/--policy/--seats/--rule need a GAME; "
                           "without one, simcli run plays the default suite (configs/suite.toml)")
        if any(x is not None for x in (year, date, birthday, cards)):
            raise SimError("--year, --date, --birthday and --cards need GAME daily-weather")
        jobs, suite_games, suite_seed = cfg.suite_jobs()
        counts = [games] * len(jobs) if games else suite_games
        return jobs, counts, (suite_seed if seed is None else seed), {"play": {"suite": True}}, Analysis()
    if game == "daily-weather":
        from simcli.analyses import calendar as daily
        jobs, n, extra, post = daily.calendar_run(variant, players, policy, seats, rules or {}, games,
                                                  year, date, birthday, cards)
        return jobs, [n] * len(jobs), (DEFAULT_SEED if seed is None else seed), extra, PostAnalysis(post)
    if any(x is not None for x in (year, date, birthday, cards)):
        raise SimError("--year, --date, --birthday and --cards are for daily-weather only")
    policy, extra = designed_default(game, policy, seats)
    jobs = cfg.expand(game, variant, players, policy=policy, seats=seats, rules=rules or {})
    n = games or DEFAULT_GAMES
    return jobs, [n] * len(jobs), (DEFAULT_SEED if seed is None else seed), extra, Analysis()


def designed_default(game: str, policy: Optional[str], seats: Optional[str]) -> tuple[Optional[str], dict]:
    """(policy to use, meta): the game's designed play when neither --policy nor --seats is given."""
    if policy is not None or seats is not None:
        return policy, {"play": {"designed": False}}
    designed = cfg.designed_play(game)
    return designed, {"play": {"designed": True, "policy": designed}}

