"""Config-file schemas (simcli/schema.py) and corrupt inputs: issue #14's "config files",
"silently accepted" and "corrupt inputs" reproductions, each one line and exit code 2.

Every case but the last two is refused before any kernel is compiled or any folder is made.
"""
from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from simcli.analyses import check
from simcli.config import schema
from simcli.config import jobs as cfg
from simcli.errors import SimError
from simcli.analyses.sweep import load_sweep
from tests.helpers import invoke

GRID = '[[grid]]\ngame = "forecasts-cubes"\nplayers = [4]\npolicies = ["random"]\n'
JOB = '[[job]]\ngame = "forecasts-cubes"\npolicy = "random"\nplayers = [4]\n'


def _write(tmp_path: Path, text: str, name: str = "f.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def _one_line_exit_2(r, *needles):
    """The CLI refused with one line on stderr naming every needle, and no traceback."""
    assert r.exit_code == 2, (r.exit_code, r.output)
    err = r.stderr.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error: "), err
    assert "Traceback" not in r.output
    for n in needles:
        assert n in err, (n, err)
    return err


# ------------------------------------------------------------------ every shipped file is valid
@pytest.mark.parametrize("kind,path", [
    ("check", "check.toml"), ("suite", "suite.toml"), ("expectations", "expectations.toml"),
    ("cards", "daily-weather-cards.toml"), ("sweep", "sweeps/all-variants.toml"),
    ("sweep", "sweeps/cubes-tricks.toml"), ("sweep", "sweeps/pgc-points.toml")])
def test_every_shipped_config_file_satisfies_its_schema(kind, path):
    schema.load(cfg.configs_dir() / path, kind)


# ------------------------------------------------------------------ "config files" (tracebacks)
@pytest.mark.parametrize("text,key,allowed", [
    ('games = "many"\n' + GRID, "games", "whole number in 1..1000000000000"),
    ('seed = "x"\n' + GRID, "seed", "whole number in 0..9223372036854775807"),
    (GRID.replace("players = [4]", "players = 3"), "grid[1].players", "a list of values"),
    (GRID + 'rules = "rounds=3"\n', "grid[1].rules", "must be a table"),
])
def test_sweep_wrong_types_are_one_line_naming_file_key_and_allowed(tmp_path, text, key, allowed):
    p = _write(tmp_path, text)
    err = _one_line_exit_2(invoke("sweep", str(p), "--out", str(tmp_path / "o")), str(p), key, allowed)
    assert "not " in err  # says what it got
    assert not (tmp_path / "o").exists()


def test_sweep_given_a_folder_says_it_is_a_folder(tmp_path):
    _one_line_exit_2(invoke("sweep", str(tmp_path)), str(tmp_path), "is a folder")


def test_sweep_given_a_missing_file_or_binary_junk(tmp_path):
    _one_line_exit_2(invoke("sweep", str(tmp_path / "nope.toml")), "not found")
    junk = tmp_path / "junk.toml"
    junk.write_bytes(b"\xff\xfe\x00\x01games = 3")
    _one_line_exit_2(invoke("sweep", str(junk)), str(junk))


@pytest.mark.parametrize("line,key,allowed", [
    ('alpha = "lots"', "alpha", "a number in (0, 0.5]"),
    ("games = -4", "games", "whole number in 1.."),
    ("alpha = 7", "alpha", "a number in (0, 0.5]"),
    ("alpha = 0.0", "alpha", "(0, 0.5]"),
    ("alpha = nan", "alpha", "(0, 0.5]"),
    ("baseline_seed = -1", "baseline_seed", "0..9223372036854775807"),
    ("check_seed = true", "check_seed", "not a boolean"),
    ("gamez = 4", "gamez", "unknown key(s) gamez at the top level; valid keys: alpha, baseline_seed, check_seed, games, job"),
])
def test_check_config_bad_values_are_one_line(tmp_path, line, key, allowed):
    p = _write(tmp_path, line + "\n" + JOB)
    _one_line_exit_2(invoke("check", "--config", str(p), "--baseline", str(tmp_path)), str(p), key, allowed)


def test_check_config_key_paths_count_tables_from_one(tmp_path):
    p = _write(tmp_path, JOB + JOB.replace("players = [4]", 'games = "x"'))
    with pytest.raises(SimError, match=r"job\[2\]\.games must be a whole number in 1\.\.1000000000000, "
                                       r"not a string 'x'"):
        check.load_check_config(p)
    p = _write(tmp_path, JOB + '[[job]]\npolicy = "random"\n')
    with pytest.raises(SimError, match=r"job\[2\]\.game is missing \(required\)"):
        check.load_check_config(p)
    p = _write(tmp_path, JOB.replace("players = [4]", "players = [4, 4.5]"))
    with pytest.raises(SimError, match=r"job\[1\]\.players\[2\] must be a whole number"):
        check.load_check_config(p)
    p = _write(tmp_path, JOB.replace("forecasts-cubes", "forcasts-cubes"))
    with pytest.raises(SimError, match=r"job\[1\]\.game: unknown game 'forcasts-cubes'; valid games: .*forecasts-cubes"):
        check.load_check_config(p)


def test_check_config_problems_found_when_resolving_still_name_the_file(tmp_path):
    p = _write(tmp_path, JOB.replace('policy = "random"', 'policy = "randomm"'))
    with pytest.raises(SimError, match=rf"check config {p}: unknown policy 'randomm'"):
        check.load_check_config(p)


# --------------------------------------------------------------------------- "silently accepted"
@pytest.mark.parametrize("text,needle", [
    ("games = -3\n" + GRID, "games must be a whole number in 1..1000000000000, not -3"),
    ("games = 0\n" + GRID, "games must be a whole number in 1..1000000000000, not 0"),
    ("gmaes = 100\n" + GRID, "unknown key(s) gmaes at the top level; valid keys: games, grid, rotate, seed"),
    (GRID.replace('["random"]', '"random"'), "grid[1].policies must be a list"),
    (GRID + "games = true\n", "grid[1].games must be a whole number in 1..1000000000000, not a boolean"),
    ("rotate = 1\n" + GRID, "rotate must be true or false, not an integer 1"),
    (GRID + "rules = { tricks_per_round = [] }\n", "grid[1].rules.tricks_per_round"),
    (GRID + "rules = { tricks_per_round = 1.5 }\n", "grid[1].rules.tricks_per_round"),
    (GRID + "colour = 1\n", "grid[1]: unknown key(s) colour; valid keys: game, games, players"),
    ("games = 10\n", "has no [[grid]] tables (at least one is required)"),
    ("grid = 3\n", "grid must be written as [[grid]] tables"),
])
def test_sweep_values_once_accepted_silently_are_refused(tmp_path, text, needle):
    p = _write(tmp_path, text)
    with pytest.raises(SimError, match="^sweep file " + str(p).replace(".", r"\.")) as e:
        load_sweep(p)
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_sweep_problem_found_by_the_game_names_the_grid(tmp_path):
    p = _write(tmp_path, GRID + GRID.replace('["random"]', '["random", "clever"]'))
    with pytest.raises(SimError, match=r"grid\[2\]: unknown policy 'clever'; valid policies"):
        load_sweep(p)


def test_a_valid_sweep_still_expands_as_documented(tmp_path):
    # 1 variant x 4 players x 1 policy x 2 rule values; counts: the grid's own games
    p = _write(tmp_path, "games = 7\nseed = 3\n" + GRID + 'variants = ["base"]\nrules = { tricks_per_round = [6, 8] }\ngames = 5\n')
    jobs, settings, axes = load_sweep(p)
    assert [j.rules["tricks_per_round"] for j in jobs] == [6, 8]
    assert settings == {"games": 7, "seed": 3, "rotate": False, "counts": [5, 5]}
    assert axes[-1] == "tricks_per_round"


def test_unknown_top_level_key_in_check_config_is_refused(tmp_path):
    p = _write(tmp_path, "alpah = 0.05\n" + JOB)
    with pytest.raises(SimError, match=r"unknown key\(s\) alpah at the top level"):
        check.load_check_config(p)


def test_missing_expectations_file_is_refused_not_ignored(tmp_path):
    with pytest.raises(SimError, match="expectations file .*nope.toml not found"):
        check.load_expectations(tmp_path / "nope.toml")
    with pytest.raises(SimError, match="is a folder"):
        check.load_expectations(tmp_path)
    assert check.load_expectations(None), "the shipped file holds expectations"


@pytest.mark.parametrize("text,needle", [
    ('[[expect]]\nmetric = "seat0_advantage"\n', "expect[1] needs at least one of within, below, above"),
    ('[[expect]]\nmetric = "x"\nwithin = "0.03"\n', "expect[1].within must be a number > 0"),
    ('[[expect]]\nmetric = "x"\nwithin = -1\n', "expect[1].within must be a number > 0, not -1"),
    ('[[expect]]\nmetric = "x"\nbelow = 1\nplayers = "4"\n', "expect[1].players must be a whole number"),
    ('[[expect]]\nmetric = "x"\nbelow = 1\nmetirc = "y"\n', "expect[1]: unknown key(s) metirc"),
    ('[[expect]]\nbelow = 1\n', "expect[1].metric is missing (required)"),
])
def test_expectations_schema(tmp_path, text, needle):
    p = _write(tmp_path, text)
    with pytest.raises(SimError, match="^expectations file ") as e:
        check.load_expectations(p)
    assert needle in str(e.value)


# ----------------------------------------------------------------------- daily-weather card data
def _cards_text(old: str, new: str) -> str:
    text = (cfg.configs_dir() / "daily-weather-cards.toml").read_text()
    assert old in text
    return text.replace(old, new, 1)


@pytest.mark.parametrize("old,new,needle", [
    ("standin = true", 'standin = "yes"', "standin must be true or false, not a string"),
    ("standin = true", "standin = true\ncolour = 1", "unknown key(s) colour at the top level"),
    ('a = ["cloud/striped", "cloud/striped", "rain/plain", "sun/plain", "rain/striped", "cloud/plain"]',
     'a = ["cloud/striped", "cloud/striped", "rain/plain", "sun/plain", "rain/striped"]',
     "weather[1].a must be a list of 6 values"),
    ("dates = [1, 7]", 'dates = ["1", 7]', "week[1].dates[1] must be a whole number in 1..31"),
    ("arrow = 0", "arrow = -1", "day[1].arrow must be a whole number >= 0"),
    ('score = { kind = "row", symbol = "snow", points = 1 }',
     'score = { kind = "row", symbol = "snow", points = 11 }', "day[1].score.points must be a whole number in 1..10"),
])
def test_card_data_schema_names_card_key(tmp_path, old, new, needle):
    p = _write(tmp_path, _cards_text(old, new))
    with pytest.raises(SimError, match="^card data file ") as e:
        schema.load(p, "cards")
    assert needle in str(e.value)


def test_run_daily_weather_with_bad_cards_is_one_line_before_anything_runs(tmp_path):
    p = _write(tmp_path, _cards_text("standin = true", "standin = 1"))
    out = tmp_path / "o"
    _one_line_exit_2(invoke("run", "daily-weather", "--cards", str(p), "--out", str(out), "--no-progress"),
                     str(p), "standin must be true or false")
    _one_line_exit_2(invoke("run", "daily-weather", "--cards", str(tmp_path), "--no-progress"), "is a folder")
    assert not out.exists()


# ----------------------------------------------------------------------------- "corrupt inputs"
def _baseline(tmp_path: Path) -> Path:
    """A copy of the committed baseline (the real shape) to damage."""
    src = Path(__file__).resolve().parent.parent / "reports" / "baseline"
    dst = tmp_path / "base"
    dst.mkdir()
    for f in src.iterdir():
        (dst / f.name).write_bytes(f.read_bytes())
    return dst


def test_intact_baseline_reads(tmp_path):
    tables = check.read_tables(_baseline(tmp_path))
    assert set(tables) == {"seats", "variants", "scores", "lengths"}


def test_truncated_baseline_parquet_is_one_line_not_exit_1(tmp_path):
    base = _baseline(tmp_path)
    data = (base / "seats.parquet").read_bytes()
    (base / "seats.parquet").write_bytes(data[: len(data) // 2])
    with pytest.raises(SimError, match=r"baseline table .*seats\.parquet cannot be read"):
        check.read_tables(base)


def test_baseline_of_another_shape_is_one_line(tmp_path):
    base = _baseline(tmp_path)
    pl.DataFrame({"a": [1, 2]}).write_parquet(base / "lengths.parquet")
    with pytest.raises(SimError, match=r"lengths\.parquet is not a simcli lengths table \(no column length, count\)"):
        check.read_tables(base)
    pl.DataFrame({"length": ["x"], "count": [1]}).write_parquet(base / "lengths.parquet")
    with pytest.raises(SimError, match="column length is not numeric"):
        check.read_tables(base)
    (base / "variants.parquet").write_text('{"a": 1}')  # JSON where Parquet belongs
    with pytest.raises(SimError, match=r"variants\.parquet cannot be read"):
        check.read_tables(base)


def test_report_on_a_file_or_a_folder_without_tables(tmp_path):
    f = _write(tmp_path, "x")
    _one_line_exit_2(invoke("report", str(f)), str(f), "is a file")
    empty = tmp_path / "empty"
    empty.mkdir()
    _one_line_exit_2(invoke("report", str(empty)), "not a simcli report folder")
    assert not (empty / "report.html").exists()


def test_report_on_damaged_tables_or_meta(tmp_path):
    base = _baseline(tmp_path)
    (base / "meta.json").write_text("{not json")
    _one_line_exit_2(invoke("report", str(base)), "meta.json")
    base2 = tmp_path / "b2"
    base2.mkdir()
    (base2 / "variants.parquet").write_bytes(b"PAR1 broken")
    _one_line_exit_2(invoke("report", str(base2)), "cannot read")


def test_check_cli_with_a_truncated_baseline_exits_2(tmp_path):
    """The whole command: a one-job check config of 50 games (one small compile)."""
    base = _baseline(tmp_path)
    data = (base / "variants.parquet").read_bytes()
    (base / "variants.parquet").write_bytes(data[:100])
    conf = _write(tmp_path, "games = 50\n" + JOB, "check.toml")
    r = invoke("check", "--config", str(conf), "--baseline", str(base), "--no-progress")
    _one_line_exit_2(r, "variants.parquet cannot be read")
