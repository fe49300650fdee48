"""Scale-out backend: the same chunks of game indices, played on a Dask distributed cluster.

The work is split exactly as the local runner splits it (``runner.plan_chunks``, with the
same ``--until-ci`` checkpoints). Each task
plays one chunk of one job on a worker and folds it there into a fresh ``Accumulators``; only
those small integer arrays travel back. The client adds them up, so totals are bit-identical
to ``runner.run_jobs`` for the same seed and game count, whatever the number of workers,
threads or the chunk size.

Tasks are pure (their key names the job, seed and game range): when a worker dies, the
scheduler recomputes the chunks it held or was playing, and the client merges each
(job, chunk) exactly once, in chunk order (a chunk that finishes early waits in a small
buffer), which it checks before returning.

Entry points:

* ``run_jobs_dask(jobs, games, seed, chunk, scheduler=..., workers=..., ...)`` starts or connects
  a cluster, runs, and closes what it opened; returns ``runner.Result`` objects.
* ``dask_client(scheduler=..., workers=...)`` the context manager behind it (a ``Client``).
* ``run_jobs_on(client, jobs, games, seed, ...)`` runs on a client you already hold.

Every failure a user can fix (dask missing, scheduler unreachable, a worker without simcli)
is a one-line ``SimError``.
"""
from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
from typing import Callable, Iterator

import numpy as np

from simcli import __version__
from simcli.engine import runner
from simcli.config.jobs import Job
from simcli.errors import SimError

DEFAULT_TIMEOUT = 10.0        # seconds to reach a scheduler, and to wait for its first worker
WORKER_MODULES = ("simcli", "kernels", "numba")
INSTALL_HINT = ("install the same simcli on every worker: `pip install -e <project path>` of the "
                "same commit, or `pip install simcli` from the same wheel")
DASK_HINT = "the dask backend needs dask[distributed]: pip install 'simcli[dask]'"


# --------------------------------------------------------------------------- imports


def _distributed():
    """The ``distributed`` module, or a SimError that says what to install."""
    try:
        import distributed
    except ImportError:
        raise SimError(DASK_HINT) from None
    return distributed


# --------------------------------------------------------------------------- worker side

_LAYER: str | None = None
_LAYER_LOCK = threading.Lock()
_KERNEL_LOCK = threading.Lock()


def _serialise_kernels() -> bool:
    """True when Numba's threading layer is ``workqueue``: it aborts if two threads of one
    process launch parallel kernels at once, so chunks on a multi-threaded worker take turns.
    (``omp`` and ``tbb`` are thread-safe; the usual setup is one Dask thread per worker.)"""
    global _LAYER
    if _LAYER is None:
        with _LAYER_LOCK:
            if _LAYER is None:
                import numba
                try:
                    from numba.np.ufunc import parallel
                    parallel._launch_threads()
                    _LAYER = numba.threading_layer()
                except Exception:  # pragma: no cover - unknown Numba internals: be safe
                    _LAYER = "workqueue"
    return _LAYER == "workqueue"


def _numba_threads_here(numba_threads: int | None) -> int:
    """Numba threads for a task on this worker: as asked, else the cores divided among the
    worker's Dask threads."""
    import numba
    maxt = numba.config.NUMBA_NUM_THREADS
    if numba_threads:
        return max(1, min(int(numba_threads), maxt))
    nthreads = 1
    try:
        from distributed import get_worker
        nthreads = max(1, int(get_worker().state.nthreads))
    except Exception:
        pass
    return max(1, maxt // nthreads)


def tally_chunk(job: Job, seed: int, start: int, stop: int, rotate: bool = False) -> dict:
    """One task: play games [start, stop) of ``job`` and fold them (``runner.chunk_tally``).

    A pure function of its arguments (the executor sets the worker's Numba threads and
    serialises kernels where needed). Returns only integer tallies (never per-game rows)
    plus the seconds it took and where it ran.
    """
    t0 = time.perf_counter()
    ct = runner.chunk_tally(job, seed, start, stop, rotate)
    return {"start": start, "stop": stop, "games": ct.games, "tally": ct,
            "seconds": time.perf_counter() - t0, "worker": _worker_address()}


def _worker_address() -> str:
    try:
        from distributed import get_worker
        return get_worker().address
    except Exception:
        return "local"


def _make_probe():
    """A self-contained function for ``client.run``: defined locally, so cloudpickle ships it
    by value and it runs on a worker even when that worker cannot import simcli."""
    def probe(modules, games):
        import importlib
        import os as _os
        import sys as _sys
        info = {"python": _sys.version.split()[0], "executable": _sys.executable,
                "missing": None, "simcli": None, "kernels": {}, "path": None}
        for m in modules:
            try:
                importlib.import_module(m)
            except Exception as e:  # noqa: BLE001 - report whatever the import said
                info["missing"] = f"{m} ({type(e).__name__}: {e})"
                return info
        try:
            import kernels
            import simcli
            info["simcli"] = getattr(simcli, "__version__", "?")
            info["path"] = _os.path.dirname(_os.path.dirname(_os.path.abspath(simcli.__file__)))
            for g in games:
                try:
                    info["kernels"][g] = int(kernels.load(g).VERSION)
                except Exception as e:  # noqa: BLE001
                    info["missing"] = f"the {g} kernel ({type(e).__name__}: {e})"
                    return info
        except Exception as e:  # noqa: BLE001
            info["missing"] = f"simcli ({type(e).__name__}: {e})"
        return info
    return probe


# --------------------------------------------------------------------------- client side


def check_workers(client, jobs: list[Job] = (), modules: tuple[str, ...] = WORKER_MODULES) -> dict:
    """Check that every worker imports ``modules`` and has this simcli and these kernels.

    Returns {worker address: probe info}; raises a one-line SimError naming the first bad
    worker and what to install.
    """
    import kernels
    games = sorted({j.game for j in jobs})
    want = {g: int(kernels.load(g).VERSION) for g in games}
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        infos = client.run(_make_probe(), list(modules), games)
    except Exception as e:  # noqa: BLE001 - a worker vanished while being asked
        raise SimError(f"could not check the Dask workers: {type(e).__name__}: {e}") from None
    for addr, info in sorted(infos.items()):
        if info["missing"]:
            raise SimError(f"Dask worker {addr} cannot import {info['missing']}; {INSTALL_HINT} "
                           f"(here: {here}) into its Python ({info['executable']})")
        if info["simcli"] != __version__ or info["kernels"] != want:
            theirs = ", ".join(f"{g} v{v}" for g, v in info["kernels"].items())
            ours = ", ".join(f"{g} v{v}" for g, v in want.items())
            raise SimError(f"Dask worker {addr} has simcli {info['simcli']} ({theirs}) but this "
                           f"client has simcli {__version__} ({ours}); {INSTALL_HINT} (here: {here})")
    return infos


def _silence_distributed(level: int = logging.CRITICAL) -> None:
    """Lost workers and reconnects are expected (and handled): keep them off the terminal."""
    for name in ("distributed", "distributed.client", "distributed.scheduler",
                 "distributed.nanny", "distributed.worker", "distributed.core",
                 "distributed.comm", "distributed.deploy"):
        lg = logging.getLogger(name)
        if lg.level < level:
            lg.setLevel(level)


@contextlib.contextmanager
def dask_client(scheduler: str | None = None, workers: int | None = None,
                threads_per_worker: int | None = None, timeout: float = DEFAULT_TIMEOUT,
                quiet: bool = True) -> Iterator:
    """A ``distributed.Client``: connected to ``scheduler`` (an existing cluster), or to a
    ``LocalCluster`` of ``workers`` processes started here and closed on exit.

    Waits up to ``timeout`` seconds for the scheduler; failures are one-line SimErrors.
    """
    if scheduler and workers:
        raise SimError("give either --scheduler tcp://HOST:PORT or --workers N, not both")
    if not scheduler and not workers:
        raise SimError("--backend dask needs --scheduler tcp://HOST:PORT (an existing cluster) "
                       "or --workers N (a local cluster)")
    if workers is not None and int(workers) < 1:
        raise SimError(f"--workers must be at least 1, not {workers}")
    if threads_per_worker is not None and int(threads_per_worker) < 1:
        raise SimError(f"--threads-per-worker must be at least 1, not {threads_per_worker}")
    distributed = _distributed()
    if quiet:
        _silence_distributed()
    if workers:
        with _local_cluster(distributed, int(workers), threads_per_worker, quiet) as cluster:
            client = distributed.Client(cluster, set_as_default=False)
            try:
                try:
                    client.wait_for_workers(int(workers), timeout=max(timeout, 60.0))
                except (TimeoutError, OSError):
                    raise SimError(f"the local Dask cluster did not start {workers} workers within "
                                   f"{max(timeout, 60.0):g} s") from None
                yield client
            finally:
                client.close()
        return
    client = _connect(distributed, scheduler, timeout)
    try:
        try:
            client.wait_for_workers(1, timeout=timeout)
        except (TimeoutError, OSError):
            raise SimError(f"the Dask scheduler at {scheduler} has no workers (waited {timeout:g} s); "
                           f"start some with `dask worker {scheduler}`") from None
        yield client
    finally:
        client.close()


@contextlib.contextmanager
def _local_cluster(distributed, workers: int, threads_per_worker: int | None, quiet: bool):
    from simcli.report.output import ScratchFolder
    import dask
    scratch = ScratchFolder("simcli-dask-")  # scheduler's and workers' files: removed on every path out
    try:
        with dask.config.set({"temporary-directory": str(scratch.path)}):
            cluster = distributed.LocalCluster(
                local_directory=str(scratch.path),
                n_workers=workers, threads_per_worker=threads_per_worker or 1, processes=True,
                host="127.0.0.1", dashboard_address=None,
                # the scheduler serves /health etc. even without a dashboard: any free port
                scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
                silence_logs=logging.ERROR if quiet else logging.WARNING)
    except Exception as e:  # noqa: BLE001
        scratch.remove()
        raise SimError(f"could not start a local Dask cluster of {workers} workers: "
                       f"{type(e).__name__}: {' '.join(str(e).split())}") from None
    from simcli.engine.interrupt import on_interrupt
    forget = on_interrupt(cluster.close)  # Ctrl-C / SIGTERM close the cluster this command started
    try:
        yield cluster
    finally:
        forget()
        try:
            cluster.close()
        finally:
            scratch.remove()


def _unreachable(scheduler: str, timeout: float, why: str) -> SimError:
    return SimError(f"cannot reach the Dask scheduler at {scheduler} within {timeout:g} s ({why}); "
                    f"start one with `dask scheduler` and workers with `dask worker {scheduler}`, "
                    f"or use --workers N for a local cluster")


def _wait_reachable(scheduler: str, timeout: float) -> None:
    """Open (and close) a plain TCP connection to the scheduler's port, retrying until
    ``timeout``: a Client that fails half-way through connecting cannot be closed cleanly."""
    import socket
    from distributed.comm import parse_address
    from distributed.comm.addressing import get_address_host_port
    try:
        scheme, _ = parse_address(scheduler, strict=True)
        if scheme == "inproc":
            return
        host, port = get_address_host_port(scheduler)
    except (ValueError, TypeError) as e:
        raise SimError(f"invalid Dask scheduler address {scheduler!r} ({' '.join(str(e).split())}); "
                       f"expected tcp://HOST:PORT") from None
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        try:
            with socket.create_connection((host, port), timeout=max(0.1, min(left, 2.0))):
                return
        except OSError as e:
            if time.monotonic() + 0.25 >= deadline:
                raise _unreachable(scheduler, timeout, e.strerror or type(e).__name__) from None
            time.sleep(0.25)


def _connect(distributed, scheduler: str, timeout: float):
    _wait_reachable(scheduler, timeout)
    try:
        return distributed.Client(scheduler, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as e:
        raise _unreachable(scheduler, timeout, " ".join(str(e).split())[:160] or type(e).__name__) from None
    except (ValueError, TypeError) as e:
        raise SimError(f"invalid Dask scheduler address {scheduler!r} ({' '.join(str(e).split())}); "
                       f"expected tcp://HOST:PORT") from None
    except Exception as e:  # noqa: BLE001 - something answered, but not a Dask scheduler
        raise SimError(f"{scheduler} answered but is not a Dask scheduler of this version "
                       f"({type(e).__name__}: {' '.join(str(e).split())[:120]}); check the address "
                       f"and that dask/distributed versions match") from None


def _cluster_threads(client) -> int:
    try:
        return sum(int(w.get("nthreads", 1)) for w in client.scheduler_info()["workers"].values()) or 1
    except Exception:  # noqa: BLE001
        return 1


def _job_token(job: Job, seed: int, rotate: bool) -> str:
    from dask.base import tokenize
    return tokenize(__version__, job.game, int(job.module.VERSION), job.variant, job.players,
                    np.asarray(job.params), np.asarray(job.seats), int(seed), bool(rotate))


def run_jobs_on(client, jobs: list[Job], games: int, seed: int, chunk: int = runner.DEFAULT_CHUNK,
                progress: bool = True, first_game: int = 0, rotate: bool = False,
                until_ci: float | None = None, numba_threads: int | None = None,
                check: bool = True, window: int | None = None,
                on_merge: Callable[[int, int], None] | None = None, journal=None) -> list:
    """Play ``games`` games of each job (indices first_game ..) on ``client``'s cluster.

    Same arguments and same ``runner.Result`` objects as ``runner.run_jobs`` (per-game rows
    are not available here). The chunks are tasks of an ordered ``DaskExecutor``: at most
    ``window`` in flight, merged in chunk order, so ``--until-ci`` stops each job at the same
    checkpoint as the local runner. ``on_merge(merged, total)`` is called after each merged chunk.
    """
    from tqdm import tqdm
    from simcli.engine.executor import DaskExecutor
    from simcli.engine.journal import JournaledExecutor
    if check:
        check_workers(client, jobs)
    reps = [(job.players if rotate else 1) for job in jobs]
    segment = runner.UNTIL_CI_STEP if until_ci is not None else None
    plans = [runner.plan_chunks(first_game, games, chunk, segment) for _ in jobs]
    total = sum(len(p) for p in plans)
    runs = [_JobRun(job, seed, rotate, r) for job, r in zip(jobs, reps)]
    keys: list[tuple[int, int]] = []

    def tasks():
        for j, plan in enumerate(plans):
            for i, (start, stop) in enumerate(plan):
                if runs[j].stopped:
                    break  # the plan is lazy: never walk the rest of a stopped job's chunks
                keys.append((j, i))
                yield (jobs[j], seed, start, stop, rotate)

    ex = DaskExecutor(client, numba_threads, window)
    chunks = ex.map(tally_chunk, tasks(), key=_chunk_key) if journal is None else \
        JournaledExecutor(ex, journal).map(tally_chunk, tasks(), key=_chunk_key, name=runner.CHUNK_TASK,
                                           store=lambda r: r["tally"], load=_from_journal)
    bar = tqdm(total=sum(games * r for r in reps), unit="game", unit_scale=True, disable=not progress,
               file=sys.stderr, dynamic_ncols=True, leave=False,
               desc=f"dask: {len(jobs)} job{'s' * (len(jobs) != 1)}")
    t0, merged = time.perf_counter(), 0
    try:
        for n, res in enumerate(chunks):
            j, i = keys[n]
            run = runs[j]
            if run.stopped:
                continue  # a chunk already in flight when until_ci stopped this job
            run.merge(plans[j][i], res)
            merged += 1
            bar.update(res["games"] * reps[j])
            if on_merge is not None:
                on_merge(merged, total)
            last = i == len(plans[j]) - 1
            if (not last and until_ci is not None and plans[j].at_checkpoint(i)
                    and runner.widest_interval(run.acc, run.policy) < until_ci):
                run.stopped = True
                bar.update((games - run.played) * reps[j])
            if last or run.stopped:
                run.wall = time.perf_counter() - t0
    finally:
        bar.close()
    return [run.result(len(plans[j])) for j, run in enumerate(runs)]


def _from_journal(ct, args: tuple) -> dict:
    """A chunk answered from the journal, in ``tally_chunk``'s shape."""
    _, _, start, stop, _ = args
    return {"start": start, "stop": stop, "games": ct.games, "tally": ct, "seconds": 0.0,
            "worker": "journal"}


def _chunk_key(n: int, args: tuple) -> str:
    """The scheduler's name of chunk task n: the job's token, then n and the game range."""
    job, seed, start, stop, rotate = args
    return f"simcli-chunk-{_job_token(job, seed, rotate)}-{n}-{start}-{stop}"


class _JobRun:
    """One job's integer tallies on the cluster, merged chunk by chunk in chunk order."""

    def __init__(self, job: Job, seed: int, rotate: bool, reps: int):
        self.job, self.seed, self.reps = job, seed, reps
        self.acc = runner.accumulators_for(job)
        self.policy = runner.policy_tally_for(job, reps) if rotate else None
        self.played = self.chunks = 0
        self.task_s, self.wall = 0.0, 0.0
        self.where: set = set()
        self.stopped = False

    def merge(self, planned: tuple[int, int], res: dict) -> None:
        start, stop = planned
        if res["start"] != start or res["stop"] != stop or res["games"] != stop - start:
            raise AssertionError(f"{self.job.describe()}: chunk [{start}, {stop}) came back as "
                                 f"[{res['start']}, {res['stop']})")
        self.acc.merge(res["tally"].acc)
        if self.policy is not None:
            self.policy.merge(res["tally"].policy)
        self.played += res["games"]
        self.chunks += 1
        self.task_s += res["seconds"]
        self.where.add(res["worker"])

    def result(self, planned_chunks: int):
        if not self.stopped:
            assert self.chunks == planned_chunks, f"{self.job.describe()}: {self.chunks} of {planned_chunks} chunks merged"
        assert int(self.acc.misc[0]) == self.played * self.reps, f"{self.job.describe()}: game count mismatch"
        extra = {"backend": "dask", "chunks": self.chunks, "task_seconds": round(self.task_s, 6),
                 "workers": sorted(self.where)}
        kw = {"rotations": self.reps, "policy": self.policy} if self.policy is not None else {}
        return runner.Result(self.job, self.acc, self.played, self.seed, self.wall, extra=extra, **kw)


def local_numba_threads(workers: int, threads_per_worker: int | None = None) -> int:
    """Numba threads per task on a local cluster: this machine's cores shared by every
    Dask thread of every worker process."""
    return max(1, (os.cpu_count() or 1) // (workers * (threads_per_worker or 1)))


def run_jobs_dask(jobs: list[Job], games: int, seed: int, chunk: int = runner.DEFAULT_CHUNK,
                  scheduler: str | None = None, workers: int | None = None,
                  threads_per_worker: int | None = None, progress: bool = True,
                  first_game: int = 0, rotate: bool = False, until_ci: float | None = None,
                  timeout: float = DEFAULT_TIMEOUT) -> list:
    """``runner.run_jobs`` on a Dask cluster: ``scheduler`` = tcp://HOST:PORT of an existing
    one, or ``workers`` = N processes of a local one started and stopped here.

    Bit-identical results to the local backend for the same seed and game count.
    """
    numba_threads = None
    if workers:  # the local cores are shared among the worker processes' threads
        numba_threads = local_numba_threads(int(workers), threads_per_worker)
    with dask_client(scheduler, workers, threads_per_worker, timeout) as client:
        return run_jobs_on(client, jobs, games, seed, chunk, progress, first_game, rotate,
                           until_ci, numba_threads)
