"""The one place where Numba options are set.

``jit`` compiles a serial kernel, ``pjit`` a ``prange`` kernel. Both cache to disk so a
second process starts warm; ``nogil`` lets a thread pool (or a Dask worker) run chunks
without the GIL. fastmath stays off: every tally is an integer and must be bit-exact.
"""
from __future__ import annotations

import functools

import numba

jit = functools.partial(numba.njit, cache=True, nogil=True)
pjit = functools.partial(numba.njit, cache=True, nogil=True, parallel=True)
