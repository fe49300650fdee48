"""Issue #27: finished work survives an interruption, and --resume gives the uninterrupted tables.

The expectations come from the contract, not from the code's output: a resumed command's tables
must equal an uninterrupted run's (the same seed and options) column for column; a journal from
other options, or a damaged one, is refused with one line; a kill never mixes results.
"""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from helpers import invoke
from simcli.engine import journal as jr
from simcli.errors import SimError

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------ the journal on its own

class Counting:
    """A local executor that counts the tasks it really runs."""
    name, threads = "local", 1

    def __init__(self):
        self.ran = []

    def map(self, fn, tasks, key=None):
        for args in tasks:
            self.ran.append(args)
            yield fn(*args)


def square(x):
    return {"games": 10, "value": np.int64(x) * x}


def _journal(tmp_path, resume=False, force=False, **fp):
    return jr.Journal(tmp_path / "out", {"seed": 1, **fp}, resume=resume, force=force,
                      total_games=100).open()


def test_a_resumed_map_replays_the_journal_and_runs_only_the_rest(tmp_path, monkeypatch):
    monkeypatch.setattr(jr, "FLUSH_S", 0.0)
    monkeypatch.setattr(jr, "KEEP_MIN_S", 0.0)
    import gc
    gc.collect()   # other tests' half-read journaled maps close (and keep) their journals when collected
    monkeypatch.setattr(jr, "_ACTIVE", [])     # journals other tests left open are not this one's
    monkeypatch.setattr(jr, "_KEPT", [])
    j = _journal(tmp_path)
    ex = Counting()
    first = [r["value"] for _, r in zip(range(4), jr.journaled(ex, j).map(square, ((x,) for x in range(10))))]
    assert first == [0, 1, 4, 9]
    assert j.close(keep=True)                      # as an interruption does
    j2 = _journal(tmp_path, resume=True)
    assert j2.resuming_line() == "resuming: 40 games done, 60 to go"
    ex2 = Counting()
    again = [r["value"] for r in jr.journaled(ex2, j2).map(square, ((x,) for x in range(10)))]
    assert again == [x * x for x in range(10)]
    assert ex2.ran == [(x,) for x in range(4, 10)]  # the four kept tasks were not run again
    j2.close(keep=False)
    assert not jr.journal_path(tmp_path / "out").exists()


def _kept_journal(tmp_path, n=3):
    old = jr.FLUSH_S, jr.KEEP_MIN_S
    jr.FLUSH_S = jr.KEEP_MIN_S = 0.0
    try:
        j = _journal(tmp_path)
        list(jr.journaled(Counting(), j).map(square, ((x,) for x in range(n))))
        j.close(keep=True)
    finally:
        jr.FLUSH_S, jr.KEEP_MIN_S = old
    return jr.journal_path(tmp_path / "out")


def test_a_journal_of_other_options_is_refused_with_one_line_naming_them(tmp_path):
    _kept_journal(tmp_path)
    with pytest.raises(SimError) as e:
        jr.Journal(tmp_path / "out", {"seed": 2}, resume=True).open()
    msg = str(e.value)
    assert "--seed" in msg and "journal: 1" in msg and "this run: 2" in msg and "\n" not in msg


def test_a_journal_of_other_tasks_is_refused_at_replay(tmp_path):
    _kept_journal(tmp_path)
    j = _journal(tmp_path, resume=True)
    with pytest.raises(SimError, match="another task at position 0"):
        list(jr.journaled(Counting(), j).map(square, ((x + 1,) for x in range(3))))


@pytest.mark.parametrize("damage", ["flip", "truncate", "remove-first", "garbage-spec"])
def test_a_damaged_journal_is_refused(tmp_path, damage):
    folder = _kept_journal(tmp_path)
    recs = sorted(folder.glob("r*.rec"))
    assert len(recs) == 3
    if damage == "flip":
        data = bytearray(recs[1].read_bytes())
        data[len(data) // 2] ^= 0xFF
        recs[1].write_bytes(bytes(data))
    elif damage == "truncate":
        recs[2].write_bytes(recs[2].read_bytes()[:-7])
    elif damage == "remove-first":
        recs[0].unlink()
    else:
        (folder / "spec.json").write_text("{not json")
    with pytest.raises(SimError) as e:
        _journal(tmp_path, resume=True)
    assert "\n" not in str(e.value) and "--force" in str(e.value)


def test_an_existing_journal_without_resume_is_refused_or_discarded_with_force(tmp_path):
    folder = _kept_journal(tmp_path)
    with pytest.raises(SimError, match=r"30 games kept.*--resume.*--force"):
        _journal(tmp_path)
    j = _journal(tmp_path, force=True)
    assert not list(folder.glob("r*.rec"))
    j.close(keep=False)


def test_two_commands_cannot_write_one_journal_at_once(tmp_path):
    _kept_journal(tmp_path)
    j = _journal(tmp_path, resume=True)
    with pytest.raises(SimError, match="another simcli command"):
        _journal(tmp_path, resume=True)
    j.close(keep=True)


def test_a_command_stopped_early_keeps_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(jr, "FLUSH_S", 0.0)
    j = _journal(tmp_path)
    list(jr.journaled(Counting(), j).map(square, ((x,) for x in range(3))))
    assert not j.close(keep=True)              # well under KEEP_MIN_S: rerunning is as quick
    assert not jr.journal_path(tmp_path / "out").exists()


def test_a_result_that_arrives_after_close_leaves_no_journal(tmp_path, monkeypatch):
    # an interrupt closes the journal from the main thread while the command's thread (or a Dask
    # future) may still hand in a finished chunk: it must not bring the folder back
    monkeypatch.setattr(jr, "FLUSH_S", 0.0)
    j = _journal(tmp_path)
    j.record("d0", square(1))
    assert not j.close(keep=True)              # stopped early: nothing kept
    j.record("d1", square(2))
    j.flush()
    assert not jr.journal_path(tmp_path / "out").exists()


def test_an_interrupt_reports_a_journal_the_command_thread_kept_just_before(tmp_path, monkeypatch):
    # the command thread's error path keeps the journal (and leaves the active list); a Ctrl-C a
    # moment later must still say what was kept, not "nothing written"
    monkeypatch.setattr(jr, "FLUSH_S", 0.0)
    monkeypatch.setattr(jr, "KEEP_MIN_S", 0.0)
    monkeypatch.setattr(jr, "_ACTIVE", [])     # journals other tests left open are not this one's
    monkeypatch.setattr(jr, "_KEPT", [])
    # (other tests' half-read journaled maps may still close, and keep, theirs when collected)
    mine = lambda: [ln for ln in jr.interrupted_lines() if str(tmp_path) in ln]  # noqa: E731
    j = _journal(tmp_path)
    j.record("d0", square(1))
    assert jr.keep_journal(j, echo=False)
    lines = mine()
    assert len(lines) == 1 and "10 of 100 games kept" in lines[0], lines
    assert j.close(keep=True)                  # a second close reports what the first kept
    assert jr.journal_path(tmp_path / "out").is_dir()
    j2 = _journal(tmp_path / "other")          # the next command starts with nothing to report
    assert mine() == []
    j2.close(keep=False)


def test_digests_are_stable_and_see_every_argument():
    a = np.arange(6, dtype=np.int64)
    assert jr.digest((a, 1, "x")) == jr.digest((a.copy(), 1, "x"))
    assert jr.digest((a, 1, "x")) != jr.digest((a + 1, 1, "x"))
    assert jr.digest((1,)) != jr.digest((True,)) and jr.digest([1]) != jr.digest((1,))


# ------------------------------------------------------------------ through the CLI

TIMING = {"wall_s", "wall_time_s", "games_per_s", "decisions_per_s", "seconds"}  # differ run to run


def _tables(folder: Path) -> dict:
    out = {}
    for p in sorted(folder.glob("*.parquet")):
        t = pl.read_parquet(p)
        out[p.name] = t.drop([c for c in t.columns if c in TIMING])
    return out


def _same_tables(a: Path, b: Path) -> None:
    ta, tb = _tables(a), _tables(b)
    assert ta.keys() == tb.keys() and ta
    for name in ta:
        assert ta[name].equals(tb[name]), name


def test_an_error_mid_run_keeps_the_finished_chunks_and_resume_completes_them(tmp_path, monkeypatch):
    from simcli.engine import runner
    base = ["run", "forecasts-cubes", "--games", "6000", "--chunk", "1000", "--rotate", "--no-progress"]
    assert invoke(*base, "--out", tmp_path / "whole").exit_code == 0
    real, calls = runner.chunk_tally, []

    def failing(*a, **k):
        calls.append(a[2])
        if len(calls) == 4:
            raise OSError(28, "No space left on device")
        return real(*a, **k)

    monkeypatch.setattr(jr, "FLUSH_S", 0.0)
    monkeypatch.setattr(jr, "KEEP_MIN_S", 0.0)
    monkeypatch.setattr(runner, "chunk_tally", failing)
    r = invoke(*base, "--out", tmp_path / "cut")
    assert r.exit_code != 0 and "3,000 of 6,000 games kept" in r.stderr, r.output
    monkeypatch.setattr(runner, "chunk_tally", real)
    r = invoke(*base, "--out", tmp_path / "cut")
    assert r.exit_code == 2 and "--resume" in r.stderr       # not silently restarted
    r = invoke(*base, "--out", tmp_path / "cut", "--resume")
    assert r.exit_code == 0 and "resuming: 3,000 games done, 3,000 to go" in r.stderr, r.output
    _same_tables(tmp_path / "whole", tmp_path / "cut")
    assert not jr.journal_path(tmp_path / "cut").exists()


def test_a_resumed_run_with_other_options_is_refused_before_anything_runs(tmp_path, monkeypatch):
    from simcli.engine import runner
    base = ["run", "forecasts-cubes", "--games", "4000", "--chunk", "1000", "--no-progress"]
    real = runner.chunk_tally
    monkeypatch.setattr(jr, "FLUSH_S", 0.0)
    monkeypatch.setattr(jr, "KEEP_MIN_S", 0.0)
    monkeypatch.setattr(runner, "chunk_tally", lambda *a, **k: (_ for _ in ()).throw(OSError(5, "I/O error"))
                        if a[2] >= 2000 else real(*a, **k))
    assert invoke(*base, "--out", tmp_path / "o").exit_code != 0
    for extra, word in ((["--seed", "9"], "--seed"), (["--games", "5000"], "--games"),
                        (["--chunk", "500"], "--chunk"), (["--rule", "advisory=true"], "rules")):
        r = invoke(*base, *extra, "--out", tmp_path / "o", "--resume")
        assert r.exit_code == 2 and word in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.output


# ------------------------------------------------------------------ kills at random moments

def _cli(args, out: Path, resume: bool) -> subprocess.Popen:
    # keep even short runs, and a record every 0.2 s so that kills land between records
    env = dict(os.environ, PYTHONPATH=str(ROOT), SIMCLI_JOURNAL_KEEP_S="0", SIMCLI_JOURNAL_FLUSH_S="0.2")
    cmd = [sys.executable, "-m", "simcli.cli", *args, "--no-progress", "--out", str(out)]
    return subprocess.Popen(cmd + (["--resume"] if resume else []), cwd=out.parent, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _records(out: Path) -> int:
    return len(list(jr.journal_path(out).glob("r*.rec")))


def _killed_until_done(args, out: Path, kills: int, rng: random.Random, sig=signal.SIGKILL) -> int:
    """Run, kill at a random moment after some work is journaled, resume; ``kills`` times, then
    let it finish. Returns the kills that landed (a run may finish first)."""
    landed = 0
    for k in range(kills + 1):
        proc = _cli(args, out, resume=k > 0)
        if k < kills:
            before = _records(out)
            deadline = time.time() + 120
            while proc.poll() is None and _records(out) <= before and time.time() < deadline:
                time.sleep(0.01)
            # the first kill right after a record (a short command may finish within a pause:
            # under load the whole train or ladder can take less than a second once warm), later
            # ones at a random moment
            time.sleep(rng.uniform(0.0, 0.15) if k else 0.0)
            if proc.poll() is None:
                proc.send_signal(sig)
                landed += 1
        stdout, stderr = proc.communicate(timeout=300)
        assert "Traceback" not in stderr, stderr
        if proc.returncode == 0:
            break
        assert proc.returncode in (-signal.SIGKILL, 130, 143), stderr
        if out.exists():  # killed after the result was renamed into place, before the journal went
            import shutil
            shutil.rmtree(jr.journal_path(out), ignore_errors=True)
            break
    return landed


COMMANDS = {
    "run": ["run", "forecasts-cubes", "--games", "60000", "--chunk", "4000", "--rotate", "--threads", "1"],
    "per-game": ["run", "pgc", "--players", "4", "--games", "30000", "--chunk", "3000", "--per-game",
                 "--threads", "1"],
    "sweep": ["sweep", str(ROOT / "tests" / "data_resume_sweep.toml"), "--games", "20000", "--chunk", "2500",
              "--threads", "1"],
    "ablate": ["ablate", "forecasts-bid", "--players", "3", "--games", "8000", "--chunk", "500",
               "--restrictions", "bid-zero,no-invest", "--threads", "1"],
    "tune": ["tune", "forecasts-cubes", "--players", "4", "--rule", "tricks_per_round=9,10",
             "--target", "seat0_advantage=0", "--games", "100000", "--chunk", "4000", "--threads", "1"],
    "ladder": ["ladder", "sudden-skies", "--players", "2", "--budgets", "2,4", "--games", "60",
               "--threads", "1"],
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(COMMANDS))
def test_sigkill_at_random_moments_then_resume_gives_the_uninterrupted_tables(tmp_path, name):
    """Four SIGKILLs per command, each after at least one more record was kept: 22 or more land
    in all (a ladder has only one chunk per rung, so it may finish after two)."""
    args = COMMANDS[name]
    whole = tmp_path / "whole"
    p = _cli(args, whole, resume=False)
    _, err = p.communicate(timeout=600)
    assert p.returncode == 0, err
    rng = random.Random(f"resume-{name}")
    cut = tmp_path / "cut"
    landed = _killed_until_done(args, cut, kills=4, rng=rng)
    assert landed >= (2 if name == "ladder" else 4), f"only {landed} kills landed before {name} finished"
    _same_tables(whole, cut)
    if name == "per-game":
        assert pl.read_parquet(whole / "per_game.parquet").equals(pl.read_parquet(cut / "per_game.parquet"))
    assert not jr.journal_path(cut).exists()
    assert [q.name for q in tmp_path.iterdir() if q.name.startswith(".") and "journal" in q.name] == []


@pytest.mark.slow
@pytest.mark.parametrize("signum,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupt_says_what_was_kept_and_how_to_resume(tmp_path, signum, code):
    args = COMMANDS["run"]
    out = tmp_path / "x"
    proc = _cli(args, out, resume=False)
    deadline = time.time() + 120
    while proc.poll() is None and _records(out) == 0 and time.time() < deadline:
        time.sleep(0.05)
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == code, stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("interrupted: ") and "of 60,000 games kept" in last and "--resume" in last, stderr
    proc = _cli(args, out, resume=True)
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0 and "resuming: " in stderr and "to go" in stderr, stderr


@pytest.mark.slow
def test_train_resumes_generation_by_generation(tmp_path):
    # 4,000 games a generation: with 40 the ten warm generations took about 40 ms in all, so a
    # loaded CI machine could finish the whole train between two polls and no kill landed
    args = ["train", "sudden-skies", "--players", "2", "--generations", "10", "--candidates", "3",
            "--games", "4000", "--finalists", "1", "--final-games", "600", "--threads", "1"]
    whole, cut = tmp_path / "whole.toml", tmp_path / "cut.toml"
    p = _cli(args, whole, resume=False)
    _, err = p.communicate(timeout=600)
    assert p.returncode == 0, err
    landed = _killed_until_done(args, cut, kills=3, rng=random.Random("train"))
    assert landed >= 1
    strip = lambda t: [ln for ln in t.splitlines() if not ln.startswith(("date", "command"))]  # noqa: E731
    assert strip(whole.read_text()) == strip(cut.read_text())
    assert not jr.journal_path(cut).exists()


@pytest.mark.slow
def test_a_run_cut_locally_resumes_on_a_dask_cluster_with_the_same_tables(tmp_path):
    pytest.importorskip("distributed")
    args = COMMANDS["run"]
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    p = _cli(args, whole, resume=False)
    assert p.communicate(timeout=600) and p.returncode == 0
    _killed_until_done(args, cut, kills=1, rng=random.Random("dask"))
    if (cut / "meta.json").exists():
        pytest.skip("the run finished before the kill")
    p = _cli(args + ["--backend", "dask", "--workers", "2"], cut, resume=True)
    _, err = p.communicate(timeout=600)
    assert p.returncode == 0 and "resuming" in err, err
    _same_tables(whole, cut)


def _descendants(pid: int) -> list[int]:
    kids: dict[int, list[int]] = {}
    for st in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = st.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        kids.setdefault(int(fields[1]), []).append(int(st.parent.name))
    out, todo = [], [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.append(k)
            todo.append(k)
    return out


@pytest.mark.slow
def test_losing_every_dask_worker_leaves_a_journal_that_resumes_locally(tmp_path):
    """Every worker process of a local cluster is SIGKILLed mid-run; the stalled command is then
    stopped with Ctrl-C, keeps what it merged, and a local resume gives the local tables."""
    pytest.importorskip("distributed")
    args = ["run", "forecasts-cubes", "--games", "400000", "--chunk", "4000", "--rotate"]
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    p = _cli(args + ["--threads", "1"], whole, resume=False)
    assert p.communicate(timeout=600) and p.returncode == 0
    proc = _cli(args + ["--backend", "dask", "--workers", "2"], cut, resume=False)
    deadline = time.time() + 240
    while proc.poll() is None and _records(cut) == 0 and time.time() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, proc.communicate()
    workers = _descendants(proc.pid)
    assert workers
    for w in workers:
        with __import__("contextlib").suppress(ProcessLookupError):
            os.kill(w, signal.SIGKILL)
    time.sleep(3)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    if proc.returncode == 0:
        pytest.skip("the run finished before its workers were killed")
    assert proc.returncode in (1, 130), stderr
    assert "games kept" in stderr and "--resume" in stderr, stderr
    p = _cli(args + ["--threads", "1"], cut, resume=True)
    _, err = p.communicate(timeout=600)
    assert p.returncode == 0 and "resuming" in err, err
    _same_tables(whole, cut)
