"""Game kernels: one Numba module per game behind one declared interface.

Nothing here imports from ``simcli``. ``load(game_id)`` imports a game module lazily, so
``simcli list`` does not compile or import every kernel.
"""
from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

GAMES: dict[str, str] = {
    "forecasts-bid": "kernels.forecasts_bid",
    "forecasts-cubes": "kernels.forecasts_cubes",
    "pgc": "kernels.pgc",
    "sudden-skies": "kernels.sudden_skies",
    "daily-weather": "kernels.daily_weather",
}


def available() -> list[str]:
    """Game ids whose module is present in this checkout."""
    found = []
    for gid, mod in GAMES.items():
        if importlib.util.find_spec(mod) is not None:
            found.append(gid)
    return found


def load(game_id: str) -> ModuleType:
    if game_id not in GAMES:
        raise KeyError(game_id)
    return importlib.import_module(GAMES[game_id])
