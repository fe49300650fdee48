"""The output contract (issue 14): results are never lost, mixed or half-written; every bad input
is one line with a documented exit code and leaves the file system as it was."""
from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from simcli.errors import SimError, WriteError
from simcli.report.output import OutputFile, OutputFolder
from tests.helpers import invoke

GAME = ["forecasts-cubes", "--players", "3", "--games", "300", "--no-progress"]


def listing(folder: Path) -> list[str]:
    """Every path below ``folder`` (hidden ones included), relative, sorted."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def one_line_error(r) -> str:
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "Traceback" not in r.output
    return lines[0]


def test_a_used_folder_is_refused_and_force_replaces_it_whole(tmp_path):
    out = tmp_path / "prev"
    r = invoke("run", *GAME, "--per-game", "--html", "--out", out)
    assert r.exit_code == 0, r.output
    before = listing(out)
    assert "per_game.parquet" in before and "report.html" in before
    r = invoke("run", "forecasts-bid", "--games", "200", "--no-progress", "--out", out)
    assert r.exit_code == 2
    assert "--force" in one_line_error(r) and str(out) in r.stderr
    assert listing(out) == before
    r = invoke("run", "forecasts-bid", "--games", "200", "--no-progress", "--out", out, "--force")
    assert r.exit_code == 0, r.output
    after = listing(out)
    assert "per_game.parquet" not in after and "report.html" not in after  # no stale files
    assert pl.read_parquet(out / "variants.parquet")["game"].to_list() == ["forecasts-bid"]
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".")]  # no staging left


def test_a_users_own_files_are_never_replaced(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "seats.parquet").write_bytes(b"my own data")
    r = invoke("run", *GAME, "--out", out)
    assert r.exit_code == 2
    one_line_error(r)
    assert (out / "seats.parquet").read_bytes() == b"my own data"


def test_an_empty_out_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = invoke("run", *GAME, "--out", "")
    assert r.exit_code == 2 and "--out" in one_line_error(r)
    assert listing(tmp_path) == []


def test_default_folders_are_unique_within_one_second(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(time, "strftime", lambda fmt, *a: fmt.replace("%Y%m%d-%H%M%S", "20260101-120000"))
    a, b = OutputFolder(None), OutputFolder(None)
    for o, text in ((a, "first"), (b, "second")):
        (o.stage() / "x.txt").write_text(text)
    pa, pb = a.commit(), b.commit()
    assert pa != pb
    assert {pa.name, pb.name} == {"run-20260101-120000", "run-20260101-120000-2"}
    assert sorted((p / "x.txt").read_text() for p in (pa, pb)) == ["first", "second"]


def test_a_failed_run_leaves_no_folder_behind(tmp_path):
    # options that fail only after the simulation was planned: each is one line, nothing created
    out = tmp_path / "new" / "deeper"
    cases = [
        ["run", *GAME, "--backend", "dask", "--scheduler", "tcp://127.0.0.1:1"],
        ["ladder", "forecasts-cubes", "--games", "10", "--format", "xlsx"],
        ["run", "daily-weather", "--year", "0", "--games", "1"],
        ["run", "daily-weather", "--year", "-5", "--games", "1"],
        ["run", *GAME, "--per-game", "--rotate"],
        ["run", *GAME, "--games", str(10**30)],
        ["run", *GAME, "--chunk", str(10**9)],
        ["run", *GAME, "--rule", "rounds=3", "--rule", "rounds=4"],
        ["ladder", "forecasts-cubes", "--games", "10", "--budgets", "8,4"],
    ]
    for args in cases:
        r = invoke(*args, "--out", out)
        assert r.exit_code == 2, (args, r.output)
        one_line_error(r)
        assert not (tmp_path / "new").exists(), args


def test_unbounded_requests_are_refused(tmp_path):
    for args in (["trace", "forecasts-cubes", "--game-index", str(2**64)],
                 ["trace", "forecasts-cubes", "--count", str(10**12)],
                 ["trace", "forecasts-cubes", "--game-index", str(2**63 - 1), "--count", "2"],
                 ["bench", "forecasts-cubes", "--seconds", "inf"],
                 ["bench", "forecasts-cubes", "--seconds", "nan"]):
        r = invoke(*args)
        assert r.exit_code == 2, (args, r.output)
        one_line_error(r)


def test_a_disk_error_while_writing_is_one_line_exit_1_and_nothing_is_left(tmp_path, monkeypatch):
    def full(self, *a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(pl.DataFrame, "write_parquet", full)
    out = tmp_path / "res"
    r = invoke("run", *GAME, "--out", out)
    assert r.exit_code == 1
    line = one_line_error(r)
    assert "No space left on device" in line and str(out) in line
    assert listing(tmp_path) == []


def test_a_disk_error_in_a_per_game_stream_is_one_line_exit_1_and_nothing_is_left(tmp_path, monkeypatch):
    from simcli.engine import runner

    def full(self, *a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(runner.PerGameWriter, "write", full)
    r = invoke("run", *GAME, "--per-game", "--out", tmp_path / "res")
    assert r.exit_code == 1
    assert "No space left on device" in one_line_error(r)
    assert listing(tmp_path) == []


def test_a_config_folder_or_unreadable_file_is_one_line(tmp_path):
    r = invoke("sweep", tmp_path)
    assert r.exit_code == 2 and "is a folder" in one_line_error(r)
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b"\xff\xfe not text")
    r = invoke("sweep", bad)
    assert r.exit_code == 2 and "UTF-8" in one_line_error(r)


def test_trace_and_report_files_are_refused_when_they_exist_and_replaced_with_force(tmp_path):
    f = tmp_path / "t.jsonl"
    f.write_text("mine\n")
    r = invoke("trace", "forecasts-cubes", "--out", f)
    assert r.exit_code == 2 and "--force" in one_line_error(r)
    assert f.read_text() == "mine\n"
    r = invoke("trace", "forecasts-cubes", "--out", f, "--force")
    assert r.exit_code == 0 and f.read_text().startswith("{")
    r = invoke("report", f)
    assert r.exit_code == 2 and "is a file" in one_line_error(r)
    assert sorted(os.listdir(tmp_path)) == ["t.jsonl"]


def test_output_folder_refuses_a_file_and_replaces_nothing_on_abandon(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(SimError, match="not a folder"):
        OutputFolder(tmp_path / "f").validate()
    o = OutputFolder(tmp_path / "a" / "b" / "c")
    (o.stage() / "t").write_text("half")
    o.abandon()
    assert listing(tmp_path) == ["f"]


def test_an_unwritable_place_is_refused_before_anything_runs(tmp_path):
    if os.geteuid() == 0:
        # root ignores permission bits; a file where a folder must go fails the same check
        (tmp_path / "file").write_text("x")
        with pytest.raises(SimError, match="is a file, not a folder"):
            OutputFolder(tmp_path / "file" / "out").validate()
        with pytest.raises(SimError):
            OutputFile(tmp_path / "file" / "t.jsonl").validate()
        return
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o500)
    with pytest.raises(SimError, match="not writable"):
        OutputFolder(ro / "out").validate()


def test_write_error_type_is_distinct_from_bad_input():
    assert not issubclass(WriteError, SimError)
    assert issubclass(SimError, ValueError)


@pytest.mark.parametrize("signum,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupted_run_stops_quickly_and_leaves_nothing(tmp_path, signum, code):
    out = tmp_path / "x"
    # a command stopped before it has run SIMCLI_JOURNAL_KEEP_S seconds keeps no journal
    # (tests/test_resume.py covers the journal an interrupt keeps)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]),
               SIMCLI_JOURNAL_KEEP_S="1000")
    proc = subprocess.Popen(
        [sys.executable, "-m", "simcli.cli", "run", "forecasts-cubes", "--games", "300000000",
         "--per-game", "--no-progress", "--threads", "1", "--chunk", "20000", "--out", str(out)],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # wait until the per-game stream has staged a part, so the run is really under way
    deadline = time.time() + 240
    while time.time() < deadline and proc.poll() is None:
        if any(tmp_path.glob(".x.journal/per_game-*/part-*")):
            break
        time.sleep(0.2)
    assert proc.poll() is None, proc.communicate()
    t0 = time.time()
    proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=30)
    assert time.time() - t0 < 5
    assert proc.returncode == code, stderr
    assert stderr.strip().splitlines()[-1].startswith("interrupted"), stderr
    assert "nothing written" in stderr and "Traceback" not in stderr
    assert listing(tmp_path) == []
