"""Where chunk tasks run: in this process or on a Dask cluster, behind one interface.

An analysis describes its work as tasks: a pure function and its arguments (one range of game
indices of one job), whose result is small integer arrays. ``Executor.map(fn, tasks)`` runs them
and yields the results **in task order**, so every fold happens in the same order on every
backend and a run's tables do not depend on where its chunks ran. Local tasks run one at a time
(each chunk is already parallel inside the kernel, ``prange``); Dask keeps a window of tasks in
flight and still hands results back in order.
"""
from __future__ import annotations

import contextlib
from collections import deque
from typing import Callable, Iterable, Iterator


class LocalExecutor:
    """Tasks run here, in order; Numba's threads parallelise inside each chunk."""
    name = "local"

    def __init__(self, threads: int | None = None):
        from simcli.engine import runner
        self.threads = runner.set_threads(threads)

    def map(self, fn: Callable, tasks: Iterable[tuple], key: Callable | None = None) -> Iterator:
        for args in tasks:
            yield fn(*args)


def _on_worker(fn: Callable, args: tuple, numba_threads: int | None):
    """Run one task on a Dask worker: its share of the cores, kernels serialised if needed."""
    import numba
    from simcli.engine import dask_backend as db
    numba.set_num_threads(db._numba_threads_here(numba_threads))
    lock = db._KERNEL_LOCK if db._serialise_kernels() else contextlib.nullcontext()
    with lock:
        return fn(*args)


class DaskExecutor:
    """Tasks run on a Dask cluster, at most ``window`` in flight, results yielded in task order."""
    name = "dask"

    def __init__(self, client, numba_threads: int | None = None, window: int | None = None):
        from simcli.engine import dask_backend as db
        self.client = client
        self.numba_threads = numba_threads
        self.window = window or max(64, 8 * db._cluster_threads(client))
        self.threads = db._cluster_threads(client)

    def map(self, fn: Callable, tasks: Iterable[tuple], key: Callable | None = None) -> Iterator:
        """``key(n, args)``, when given, names task n on the scheduler (e.g. a job's token)."""
        from simcli.engine import dask_backend as db
        distributed = db._distributed()
        pending = iter(tasks)
        self.submitted = 0
        inflight: deque = deque()

        def fill():
            for args in pending:
                name = {"key": key(self.submitted, args)} if key is not None else {}
                self.submitted += 1
                inflight.append(self.client.submit(_on_worker, fn, args, self.numba_threads,
                                                   pure=False, retries=0, **name))
                if len(inflight) >= self.window:
                    return

        fill()
        try:
            while inflight:
                fut = inflight.popleft()
                try:
                    res = fut.result()
                except distributed.client.FutureCancelledError:
                    raise db.SimError("the Dask run was cancelled (the scheduler or client shut down)") from None
                except Exception as e:
                    if type(e).__name__ == "KilledWorker":
                        raise db.SimError(f"a chunk killed every Dask worker that tried it "
                                          f"({' '.join(str(e).split())[:200]}); check the workers' "
                                          f"memory and logs") from None
                    raise
                fut.release()
                fill()
                yield res
        finally:
            for fut in inflight:
                fut.cancel()
            inflight.clear()
