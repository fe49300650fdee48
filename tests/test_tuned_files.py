"""The committed pgc and sudden-skies ``tuned`` files (issue #24).

What is checked, and why it is not the code checking itself:
- every player count of pgc and sudden-skies has a committed file that loads for that game and
  player count, records the game's current VERSION and, when it was trained from a start file,
  that file is committed too (else its [provenance] command could not be rerun);
- ``simcli train`` rebuilds a committed file from the settings its [provenance] records: the
  knobs and the fitness written at training time come back (slow: a real training run).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from kernels import pgc, sudden_skies
from simcli.config import schema, tuned

ROOT = Path(__file__).resolve().parent.parent
TUNED = ROOT / "configs" / "tuned"


@pytest.mark.parametrize("game, mod", [("pgc", pgc), ("sudden-skies", sudden_skies)])
def test_committed_files_load_for_every_player_count(game, mod):
    for p in mod.PLAYER_COUNTS:
        f = TUNED / f"{game}-{p}p.toml"
        vals = tuned.load_file(mod, f, p)
        assert set(vals) == {k.name for k in mod.KNOBS}
        prov = schema.load(f, "tuned")["provenance"]
        assert prov["game"] == game and prov["players"] == p
        assert prov["game_version"] == mod.VERSION
        assert f"--players {p} " in prov["command"] and f"--seed {prov['seed']} " in prov["command"]
        if prov["start"] != "heuristic":
            tuned.load_file(mod, ROOT / prov["start"], p)


@pytest.mark.slow
def test_train_reproduces_the_committed_sudden_skies_2p_file(monkeypatch):
    """The recorded start file path is relative to the repository root, as the command is."""
    from simcli.analyses import train as tr
    monkeypatch.chdir(ROOT)
    f = TUNED / "sudden-skies-2p.toml"
    knobs, t = tr.train(tr.settings_from_file(f))
    assert knobs == tuned.load_file(sudden_skies, f, 2)
    assert round(t.fitness, 6) == schema.load(f, "tuned")["provenance"]["fitness"]
