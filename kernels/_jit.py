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

# ``jit_borrowing`` compiles a kernel without Numba's reference counting (``_nrt=False``, an
# njit flag Numba's own test suite uses). Only for a function that allocates no array (Numba
# refuses to compile one that does) and works on arrays its caller owns for the whole call:
# then the counting is pure cost. forecasts-bid's plain game function spent ~10% of random play
# on atomic increments and decrements of its array arguments, inside the phases inlined into it.
jit_borrowing = functools.partial(numba.njit, cache=True, nogil=True, _nrt=False)
