"""The Python API (issue 13): ``simcli.run`` returns the tables `simcli run` writes."""
from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import simcli
from tests.helpers import invoke

WALL = ("wall_s",)  # wall-time columns differ between any two runs


def _without_wall(df: pl.DataFrame) -> pl.DataFrame:
    return df.drop([c for c in WALL if c in df.columns])


def _cli_tables(out, *args) -> dict:
    r = invoke("run", *args, "--no-progress", "--out", out)
    assert r.exit_code == 0, r.output
    return {p.stem: pl.read_parquet(p) for p in out.glob("*.parquet")}


@pytest.mark.parametrize("rotate", [False, True])
def test_api_gives_the_cli_tables(tmp_path, rotate):
    args = ["forecasts-cubes", "--variant", "advisory", "--players", "3", "--games", "1500", "--seed", "7",
            "--seats", "heuristic,random,random", "--rule", "tricks_per_round=8"]
    cli = _cli_tables(tmp_path / "o", *args, *(["--rotate"] if rotate else []))
    api = simcli.run("forecasts-cubes", variant="advisory", players=3, games=1500, seed=7,
                     seats=["heuristic", "random", "random"], rules={"tricks_per_round": 8}, rotate=rotate)
    expected = {"findings", "seats", "variants", "scores", "lengths", "counters", "arc"} | (
        {"policies", "paired"} if rotate else set())
    assert set(api) == set(cli) == expected
    for name in expected:
        assert_frame_equal(_without_wall(api[name]), _without_wall(cli[name]))


def test_api_bad_arguments_raise_value_error_with_the_cli_message():
    cases = [
        (dict(game="nosuch"), "unknown game 'nosuch'; valid games:"),
        (dict(game="forecasts-cubes", players=9), "valid player counts"),
        (dict(game="forecasts-cubes", rules={"nosuch": 1}), "unknown rule 'nosuch'"),
        (dict(game="forecasts-cubes", games=0), "Invalid value for '--games'"),  # the CLI's words (#28)
        (dict(game="forecasts-cubes", policy="random", seats="random,random,random,random"), "not both"),
        (dict(game="forecasts-cubes", threads=0), "--threads"),
        (dict(game="forecasts-cubes", until_ci=2.0), "--until-ci"),
        (dict(game="forecasts-cubes", colour="red"), "unknown argument(s) colour"),
    ]
    for kwargs, text in cases:
        with pytest.raises(ValueError) as e:
            simcli.run(**kwargs)
        assert text in str(e.value), kwargs
        assert "\n" not in str(e.value)
    r = invoke("run", "nosuch")
    with pytest.raises(ValueError) as e:
        simcli.run("nosuch")
    assert r.stderr.strip() == f"error: {e.value}"


def test_api_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    simcli.run("forecasts-cubes", games=200)
    assert list(tmp_path.iterdir()) == []


def test_api_works_in_a_bare_interpreter():
    # `import simcli; simcli.run(...)` as a notebook would, in a fresh process where nothing else
    # has imported what the CLI path happens to import first (found by .ci/run's plain-install step)
    import subprocess
    import sys
    from pathlib import Path
    # a fresh venv's interpreter has not imported importlib.util at start-up (this one's .pth
    # files have): take it away again so the test sees what a newcomer's notebook sees
    code = ("import importlib, sys; sys.modules.pop('importlib.util', None); "
            "importlib.__dict__.pop('util', None); "
            "import simcli; t = simcli.run('forecasts-cubes', games=200, seed=2); "
            "print(sorted(t), t['seats'].height)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=Path(__file__).resolve().parents[1], timeout=600)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split("]")[-1].strip() == "4"  # four seats
