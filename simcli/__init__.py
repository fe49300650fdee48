"""simcli: rules-balance simulation for the Forecasts family of card games.

From Python (a notebook or a script)::

    import simcli
    tables = simcli.run("forecasts-cubes", variant="advisory", players=3, games=100_000, seed=1)
    tables["seats"]          # the same Polars tables `simcli run` writes, by name

Bad arguments raise ``ValueError`` with the command line's one-line message.
"""
from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["run"]


def run(game: str | None = None, *, variant: str | None = None, players: int | None = None,
        games: int | None = None, seed: int | None = None, seats: str | list[str] | None = None,
        policy: str | None = None, rules: dict | None = None, rotate: bool = False,
        until_ci: float | None = None, threads: int | None = None, chunk: int | None = None,
        progress: bool = False, skill: str | list[str] | None = None, **daily) -> dict:
    """Simulate like ``simcli run`` and return its tables as a dict of Polars DataFrames.

    Same names and columns as the files `simcli run` writes: ``seats``, ``variants``, ``scores``,
    ``lengths``, ``counters``, ``arc`` (games with opponents), plus ``policies`` and ``paired`` with
    ``rotate=True`` (and the
    daily-weather year tables for that game). ``game=None`` plays the default suite. ``seats``
    may be a comma-separated string or a list of policy names; ``rules`` maps rule names to
    values. ``skill`` (e.g. ``"heuristic,tuned,mc:16"`` or a list) plays the same deals at each
    level, every seat at that level, as ``simcli run --skill``: every table gains a ``skill``
    column, plus ``skill_levels`` and ``skill_verdicts``. daily-weather also takes ``year``,
    ``date``, ``birthday`` and ``cards``. Nothing is written to disk. Raises ``ValueError`` (a ``simcli.errors.SimError``) for bad arguments.
    """
    from simcli.errors import SimError
    from simcli.analyses.run import resolve_run
    from simcli.engine.runspec import DEFAULT_CHUNK, RunSpec, execute
    from simcli.cli.validation import api_arguments, check_environment
    check_environment()
    unknown = set(daily) - {"year", "date", "birthday", "cards"}
    if unknown:
        raise SimError(f"unknown argument(s) {', '.join(sorted(unknown))}; simcli.run takes game, variant, "
                       f"players, games, seed, seats, policy, rules, rotate, until_ci, threads, chunk, "
                       f"progress, skill (daily-weather also year, date, birthday, cards)")
    api_arguments(game=game, variant=variant, players=players, games=games, seed=seed, seats=seats,
                  policy=policy, rules=rules, rotate=rotate, until_ci=until_ci, threads=threads,
                  chunk=chunk, progress=progress, skill=skill, **daily)
    if isinstance(seats, (list, tuple)):
        seats = ",".join(map(str, seats))
    if isinstance(skill, (list, tuple)):
        skill = ",".join(map(str, skill))
    if rules is not None and not isinstance(rules, dict):
        raise SimError(f"rules must be a dict of rule name -> value, not {type(rules).__name__}")
    jobs, counts, seed, extra, analysis = resolve_run(
        game, variant=variant, players=players, policy=policy, seats=seats,
        rules={k: _rule_text(v) for k, v in (rules or {}).items()}, games=games, seed=seed, **daily)
    from simcli.analyses.skill import with_skill
    jobs, counts, analysis = with_skill(jobs, counts, analysis, skill, until_ci, False, policy, seats)
    spec = RunSpec(jobs=jobs, games=counts, seed=seed, threads=threads, chunk=DEFAULT_CHUNK if chunk is None else chunk,
                   rotate=rotate, until_ci=until_ci, progress=progress, extra_meta=extra,
                   echo=lambda *_: None)
    tables, _ = execute(spec, analysis)
    return tables


def _rule_text(value) -> str:
    """A rule value as the command line would spell it (``True`` -> ``true``)."""
    return str(value).lower() if isinstance(value, bool) else str(value)
