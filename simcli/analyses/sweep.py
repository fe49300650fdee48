"""Sweeps: a grid of games x variants x player counts x seat policies x rule values.

A sweep file (TOML) has optional ``games``, ``seed``, ``rotate`` and one or more ``[[grid]]``
tables (the declared schema: ``simcli/config/schema.py`` ``SWEEP``; every key, type and range is
checked before any job is made)::

    [[grid]]
    game = "forecasts-cubes"          # required
    variants = ["base", "advisory"]   # default: every variant of the game
    players = [3, 4]                  # default: every count of each variant
    policies = ["random", "heuristic,random,random,random"]  # a name = every seat; a list = per seat
                                      # (default: the game's designed play, configs/<game>.toml)
    rules = { tricks_per_round = [8, 10] }                    # each list is an axis (cartesian product)
    games = 2000                      # optional: this grid's games per point (default: the file's)

Every swept rule becomes a label column (its value as text) in every table, and ``meta.json``
lists the grid's columns under ``axes``. Player counts a variant does not have are skipped;
a seat list whose length does not fit a player count is skipped for that count.
"""
from __future__ import annotations

import itertools
from pathlib import Path

from simcli.config import jobs as cfg
from simcli.config import schema
from simcli.errors import SimError


def load_sweep(path: Path) -> tuple[list[cfg.Job], dict, list[str]]:
    """(jobs, settings {games, seed, rotate, counts}, axis column names).

    ``counts[i]`` is job i's own game count, or None to use the file's (or --games).
    """
    data = schema.load(Path(path), "sweep")
    jobs: list[cfg.Job] = []
    counts: list = []
    rule_axes: list[str] = []
    for gi, grid in enumerate(data["grid"]):
        try:
            _expand_grid(grid, jobs, counts, rule_axes)
        except SimError as e:  # a game-level problem (variant, policy, rule value): say where
            raise SimError(f"sweep file {path}: grid[{gi + 1}]: {e}") from None
    if not jobs:
        raise SimError(f"sweep file {path} expands to no jobs (check players and seat lists)")
    settings = {"games": data.get("games"), "seed": data.get("seed"), "rotate": data.get("rotate", False),
                "counts": counts}
    return jobs, settings, ["game", "variant", "players", "policies", *rule_axes]


def _expand_grid(grid: dict, jobs: list, counts: list, rule_axes: list) -> None:
    """Append one (schema-checked) [[grid]] table's jobs, game counts and rule axes."""
    game = grid["game"]
    cfg.game_module(game)
    _, variants = cfg.variants_of(game)
    vnames = grid.get("variants", list(variants))
    rules = grid.get("rules", {})
    names = list(rules)
    for n in names:
        if n not in rule_axes:
            rule_axes.append(n)
    value_lists = [v if isinstance(v, list) else [v] for v in rules.values()]
    for v in vnames:
        if v not in variants:
            raise SimError(f"unknown variant {v!r} for {game}; valid variants: {', '.join(variants)}")
        for p in grid.get("players", variants[v]["players"]):
            if p not in variants[v]["players"]:
                continue
            for pol in grid.get("policies", [cfg.designed_play(game)]):
                seat_list = "," in pol
                if seat_list and len(pol.split(",")) != p:
                    continue
                for combo in itertools.product(*value_lists):
                    overrides = dict(zip(names, combo))
                    labels = {n: str(val).lower() if isinstance(val, bool) else str(val)
                              for n, val in overrides.items()}
                    jobs.append(cfg.resolve(
                        game, v, p, policy=None if seat_list else pol,
                        seats=pol if seat_list else None, rules=overrides, labels=labels))
                    counts.append(grid.get("games"))
