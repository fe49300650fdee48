"""One run pipeline (issue #22): every simulating command goes RunSpec -> execute(spec, analysis)
-> the output contract, and the analyses that were local-only (tune, ablate) give the same
tables on Dask as here (chunk tasks run wherever; results are folded in task order)."""
from __future__ import annotations

import json

import polars as pl
import pytest

from tests.helpers import invoke

distributed = pytest.importorskip("distributed")

CUBES = "forecasts-cubes"


def _tables(folder) -> dict:
    return {p.stem: pl.read_parquet(p) for p in sorted(folder.glob("*.parquet"))}


def _same_tables(a, b, ignore=("wall_s",)) -> None:
    ta, tb = _tables(a), _tables(b)
    assert ta.keys() == tb.keys() and ta
    for name in ta:
        x, y = ta[name], tb[name]
        drop = [c for c in x.columns if c in ignore]
        assert x.drop(drop).equals(y.drop(drop), null_equal=True), name


TUNE = ["tune", CUBES, "--players", "3", "--rule", "tricks_per_round=8..10", "--target", "tie_rate=min",
        "--games", "4000", "--chunk", "700", "--no-progress"]
ABLATE = ["ablate", CUBES, "--variant", "advisory", "--games", "300", "--chunk", "128", "--no-progress"]


@pytest.mark.parametrize("argv", [TUNE, ABLATE], ids=["tune", "ablate"])
def test_dask_gives_the_local_tables(tmp_path, argv):
    local, dask = tmp_path / "local", tmp_path / "dask"
    r = invoke(*argv, "--out", str(local))
    assert r.exit_code == 0, r.output
    r = invoke(*argv, "--out", str(dask), "--backend", "dask", "--workers", "2")
    assert r.exit_code == 0, r.output
    _same_tables(local, dask)
    meta = json.loads((dask / "meta.json").read_text())
    assert meta["backend"] == "dask" and meta["analysis"] == argv[0]


def test_every_command_writes_one_meta_shape(tmp_path):
    """run, tune, ablate and ladder write meta.json with the same shared keys."""
    shared = {"command", "analysis", "seed", "games", "threads", "chunk", "wall_time_s", "created",
              "packages", "rotate", "until_ci", "backend", "jobs"}
    runs = {"run": ["run", CUBES, "--games", "500", "--no-progress"],
            "tune": TUNE[:-3] + ["--games", "1000", "--no-progress"],
            "ablate": ABLATE,
            "ladder": ["ladder", CUBES, "--games", "4", "--budgets", "2", "--no-progress"]}
    for name, argv in runs.items():
        out = tmp_path / name
        r = invoke(*argv, "--out", str(out))
        assert r.exit_code == 0, r.output
        meta = json.loads((out / "meta.json").read_text())
        assert shared <= meta.keys(), (name, shared - meta.keys())
        assert meta["analysis"] == name
        assert {"game", "version", "variant", "players", "policies", "rules"} <= meta["jobs"][0].keys()
        assert r.output.strip().splitlines()[-1].startswith("wrote ")
