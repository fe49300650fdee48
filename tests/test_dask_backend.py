"""The Dask backend (simcli/dask_backend.py) on a local cluster of worker processes.

Same seed and game count -> the same integer tallies as the local runner, whatever the
chunking; a worker killed mid-run changes nothing (its chunks are recomputed, each chunk is
merged once); unusable clusters are one-line SimErrors that say what to do.
"""
from __future__ import annotations

import os
from pathlib import Path
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

from simcli.config import jobs as cfg  # noqa: E402
from simcli.engine import dask_backend as db  # noqa: E402
from simcli.engine import runner  # noqa: E402
from simcli.errors import SimError  # noqa: E402


def _jobs_for(game: str) -> list[cfg.Job]:
    """Every variant x player count of ``game``; forecasts-cubes also with mixed seats."""
    _, variants = cfg.variants_of(game)
    jobs = [cfg.resolve(game, v, p) for v, d in variants.items() for p in d["players"]]
    if game == "forecasts-cubes":
        jobs.append(cfg.resolve(game, "base", 4, seats="heuristic,random,heuristic,random"))
    return jobs


def _assert_same(local: runner.Result, dask: runner.Result) -> None:
    assert dask.job is not None and dask.games == local.games and dask.seed == local.seed
    a, b = local.acc.arrays(), dask.acc.arrays()
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].dtype == b[k].dtype == np.int64, k
        assert np.array_equal(a[k], b[k]), f"{local.job.describe()}: {k} differs"
    lp, dp = getattr(local, "policy", None), getattr(dask, "policy", None)
    assert (lp is None) == (dp is None)
    if lp is not None:
        assert lp.games == dp.games
        for k in ("total", "total_sq", "pair", "pair_sq"):
            assert np.array_equal(getattr(lp, k), getattr(dp, k)), k


NT = db.local_numba_threads(2)  # Numba threads per task, as run_jobs_dask(workers=2) sets them


def _run(client, jobs, games, seed, **kw):
    return db.run_jobs_on(client, jobs, games, seed, progress=False, numba_threads=NT, **kw)


@pytest.fixture(scope="module")
def client():
    """A local cluster of 2 worker processes (1 thread each), as `--workers 2` starts it."""
    with db.dask_client(workers=2) as c:
        yield c


def test_identical_to_local_runner_for_every_game(client):
    jobs = [j for g in cfg.known_games() for j in _jobs_for(g)]
    games, seed = 600, 20261129
    local = runner.run_jobs(jobs, games, seed, progress=False)  # also warms the Numba cache
    merged = []
    dask = _run(client, jobs, games, seed, chunk=251,
                on_merge=lambda n, total: merged.append((n, total)))
    chunks = len(runner.plan_chunks(0, games, 251))
    assert [n for n, _ in merged] == list(range(1, chunks * len(jobs) + 1))
    assert len(dask) == len(jobs)
    for job, lr, dr in zip(jobs, local, dask):
        assert dr.job is job
        _assert_same(lr, dr)
        assert dr.extra["backend"] == "dask" and dr.extra["chunks"] == chunks
        assert dr.wall > 0
    workers = {w for r in dask for w in r.extra["workers"]}
    assert len(workers) == 2, "both workers played chunks"


def test_chunking_and_first_game_do_not_change_totals(client):
    job = cfg.resolve("forecasts-cubes", "advisory", 3, policy="heuristic")
    local = runner.run_jobs([job], 2000, 7, chunk=2000, progress=False, first_game=500)[0]
    for chunk in (1999, 64):
        _assert_same(local, _run(client, [job], 2000, 7, chunk=chunk, first_game=500)[0])


@pytest.mark.skipif(not hasattr(runner, "chunk_tally"), reason="runner has no seat rotation")
def test_rotation_and_until_ci_match_local_runner(client):
    jobs = [cfg.resolve("forecasts-cubes", "base", 4, seats="heuristic,random,random,random")]
    local = runner.run_jobs(jobs, 1200, 3, chunk=300, progress=False, rotate=True)
    _assert_same(local[0], _run(client, jobs, 1200, 3, chunk=300, rotate=True)[0])
    # stopping early happens at the same chunk boundary as locally, whatever finishes first
    local = runner.run_jobs(jobs, 100_000, 3, chunk=500, progress=False, until_ci=0.08)
    dask = _run(client, jobs, 100_000, 3, chunk=500, until_ci=0.08)
    assert local[0].games < 100_000
    _assert_same(local[0], dask[0])


def test_worker_without_the_package_is_named(client):
    with pytest.raises(SimError) as e:
        db.check_workers(client, [], modules=("simcli", "kernels", "numba", "simcli_no_such_module"))
    msg = str(e.value)
    assert "\n" not in msg
    assert "simcli_no_such_module" in msg and "pip install" in msg
    assert any(addr in msg for addr in client.scheduler_info()["workers"])
    info = db.check_workers(client, _jobs_for("forecasts-cubes"))
    assert len(info) == 2 and all(i["missing"] is None for i in info.values())


def test_worker_killed_mid_run_changes_nothing(client):
    """SIGKILL one worker process while chunks are in flight: the nanny starts a new one, the
    scheduler recomputes what the dead one held, and every chunk is merged exactly once."""
    job = cfg.resolve("forecasts-cubes", "base", 4)
    games, chunk, seed = 30_000, 500, 99
    local = runner.run_jobs([job], games, seed, progress=False)[0]
    pids = client.run(os.getpid)
    killed = {}

    def kill_one(n, total):
        if n == 1 and not killed:   # the first merge: most chunks are still in flight
            busy = {a: len(k) for a, k in client.processing().items() if k and a in pids}
            victim = max(busy, key=busy.get) if busy else sorted(pids)[0]
            killed["addr"], killed["busy"] = victim, busy.get(victim, 0)
            os.kill(pids[victim], signal.SIGKILL)
        seen.append(n)

    seen: list[int] = []
    dask = _run(client, [job], games, seed, chunk=chunk, on_merge=kill_one)[0]
    total = len(runner.plan_chunks(0, games, chunk))
    assert killed, "no worker was killed"
    assert seen == list(range(1, total + 1)), "every chunk merged exactly once"
    assert dask.extra["chunks"] == total
    _assert_same(local, dask)
    # the scheduler played again what the killed worker was playing (or held unfetched)
    prefix = f"simcli-chunk-{db._job_token(job, seed, False)}-"
    replayed = client.run_on_scheduler(_replayed_keys, prefix)
    assert killed["busy"] > 0 and replayed >= 1, (killed, replayed)
    # the cluster heals: the nanny replaces the killed process
    client.wait_for_workers(2, timeout=30)
    deadline = time.monotonic() + 30
    while killed["addr"] in client.scheduler_info()["workers"] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert killed["addr"] not in client.scheduler_info()["workers"]


def _replayed_keys(prefix, dask_scheduler=None) -> int:
    """Keys starting with ``prefix`` that the scheduler sent to a worker more than once."""
    from collections import Counter
    n = Counter(str(r[0]) for r in dask_scheduler.transition_log
                if r[2] == "processing" and str(r[0]).startswith(prefix))
    return sum(1 for v in n.values() if v > 1)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_scheduler_is_one_line_naming_address_and_timeout():
    addr = f"tcp://127.0.0.1:{_free_port()}"
    job = cfg.resolve("forecasts-cubes")
    t0 = time.monotonic()
    with pytest.raises(SimError) as e:
        db.run_jobs_dask([job], 10, 1, scheduler=addr, timeout=1.0, progress=False)
    assert time.monotonic() - t0 < 5
    msg = str(e.value)
    assert "\n" not in msg
    assert addr in msg and "1 s" in msg and "dask scheduler" in msg and f"dask worker {addr}" in msg


@pytest.fixture
def bare_scheduler():
    """A scheduler with no workers (in this process), for workers started by hand."""
    with distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp", host="127.0.0.1",
                                  dashboard_address=None,
                                  scheduler_kwargs={"dashboard": False,
                                                    "dashboard_address": "127.0.0.1:0"}) as cluster:
        yield cluster.scheduler_address


def test_scheduler_without_workers_is_reported(bare_scheduler):
    with pytest.raises(SimError, match="has no workers") as e:
        with db.dask_client(scheduler=bare_scheduler, timeout=0.5):
            pass
    assert bare_scheduler in str(e.value) and "\n" not in str(e.value)


STRIP = """
import sys
sys.path[:] = [p for p in sys.path if p not in ("", ".") and not (p.rstrip("/") == ROOT)]
for m in [m for m in sys.modules if m.split(".")[0] in ("simcli", "kernels")]:
    del sys.modules[m]
"""


def test_worker_lacking_the_package_is_named(bare_scheduler, tmp_path):
    """A real `dask worker` process that cannot import simcli: the run stops before any work,
    naming that worker and what to install."""
    root = str(Path(db.__file__).resolve().parents[2])   # the checkout: simcli/engine/dask_backend.py
    preload = tmp_path / "strip_simcli.py"
    preload.write_text(f"ROOT = {root!r}\n" + STRIP)
    log = open(tmp_path / "worker.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", bare_scheduler,
                             "--nthreads", "1", "--no-nanny", "--no-dashboard", "--preload", str(preload)],
                            cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT)
    try:
        with pytest.raises(SimError) as e:
            db.run_jobs_dask([cfg.resolve("forecasts-cubes")], 100, 1, scheduler=bare_scheduler,
                             timeout=30, progress=False)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith("Dask worker tcp://127.0.0.1:") and "cannot import" in msg
    assert "pip install" in msg and root in msg


@pytest.mark.parametrize("kw,match", [
    (dict(scheduler="nonsense://host:1"), "invalid Dask scheduler address"),
    (dict(scheduler="tcp://127.0.0.1:8786", workers=2), "not both"),
    (dict(), "needs --scheduler"),
    (dict(workers=0), "needs --scheduler"),
    (dict(workers=-1), "at least 1"),
])
def test_bad_backend_options(kw, match):
    with pytest.raises(SimError, match=match):
        with db.dask_client(timeout=0.5, **kw):
            pass


def test_dask_not_installed_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(SimError, match=r"pip install 'simcli\[dask\]'"):
        db.dask_client(workers=1).__enter__()
