"""Runner-facing entry points that choose a compiled build: with or without the search player.

A game whose ``play_one`` takes a ``search`` argument (None, or any array when a seat plays
``mc``) is compiled once per build; Numba prunes every ``search is not None`` branch from the
build without it, so random and heuristic play carry no search code and a run compiles only the
build it uses (docs/architecture.md). ``entry_points`` wraps a module's three jitted drivers,
each taking ``search`` as its last argument, into the contract's ``play_games``,
``play_games_serial`` and ``trace_game``. Plain Python closures: nothing here is compiled.
"""
from __future__ import annotations

import numpy as np

_SEARCH = np.zeros(1, dtype=np.int64)


def has_seat(seats, code) -> bool:
    """Whether some seat row's policy code is ``code`` (e.g. a game's ``P_MC``), or one of the
    codes of a tuple (a game's search players: ``(P_MC, P_RACE)``)."""
    return bool(np.isin(np.asarray(seats)[:, 0], np.asarray(code)).any())


def search_arg(seats, mc_code):
    """``None`` unless some seat row's policy code is ``mc_code`` (an int or a tuple of codes)."""
    return _SEARCH if has_seat(seats, mc_code) else None


def entry_points(play_games, play_games_serial, trace_game, mc_code):
    def _play_games(params, seats, seed, first_game, out):
        """Play games ``first_game .. first_game + len(out) - 1``, one row each, in parallel."""
        play_games(params, seats, seed, first_game, out, search_arg(seats, mc_code))

    def _play_games_serial(params, seats, seed, first_game, out):
        """``play_games`` without prange (tests: serial == parallel)."""
        play_games_serial(params, seats, seed, first_game, out, search_arg(seats, mc_code))

    def _trace_game(params, seats, seed, game_index, out, ev, ev_n):
        """Play game ``game_index`` into ``out[0]``, recording events."""
        trace_game(params, seats, seed, game_index, out, ev, ev_n, search_arg(seats, mc_code))

    return _play_games, _play_games_serial, _trace_game
