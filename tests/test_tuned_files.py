"""The committed ``tuned`` files of the four competitive games (issue #24).

What is checked, and why it is not the code checking itself:
- every player count of each game has a committed file that loads for that game and player
  count, holds every knob of the game, and records the game's current VERSION and the command
  that made it.
The start and pool files a [provenance] names (every game) are checked in
tests/test_tuned.py (``test_recorded_start_and_pool_files_are_committed``), and ``simcli train``
rebuilding committed files from their [provenance] there too
(``test_train_reproduces_a_committed_file``, slow; sudden-skies-2p and pgc-5p among them).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from kernels import forecasts_bid, forecasts_cubes, pgc, sudden_skies
from simcli.config import schema, tuned

ROOT = Path(__file__).resolve().parent.parent
TUNED = ROOT / "configs" / "tuned"


@pytest.mark.parametrize("game, mod", [("forecasts-bid", forecasts_bid), ("forecasts-cubes", forecasts_cubes),
                                       ("pgc", pgc), ("sudden-skies", sudden_skies)])
def test_committed_files_load_for_every_player_count(game, mod):
    for p in mod.PLAYER_COUNTS:
        f = TUNED / f"{game}-{p}p.toml"
        vals = tuned.load_file(mod, f, p)
        assert set(vals) == {k.name for k in mod.KNOBS}
        prov = schema.load(f, "tuned")["provenance"]
        assert prov["game"] == game and prov["players"] == p
        assert prov["game_version"] == mod.VERSION
        assert f"--players {p} " in prov["command"] and f"--seed {prov['seed']} " in prov["command"]
