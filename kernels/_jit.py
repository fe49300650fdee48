"""The one place where Numba options are set.

``jit`` compiles a serial kernel, ``pjit`` a ``prange`` kernel. Both cache to disk so a
second process starts warm; ``nogil`` lets a thread pool (or a Dask worker) run chunks
without the GIL. fastmath stays off: every tally is an integer and must be bit-exact.
"""
from __future__ import annotations

import functools
import hashlib
import os

import numba
from numba.core import caching as _caching

# ---- the disk cache: a kernel's machine code depends on the shared modules too ----------------
# Numba keys a function's cached code on its own source file only. A game module compiles in the
# constants of the shared modules it imports (spec.MAX_KNOBS sizes sudden-skies' state; layout's
# column offsets, rng's keys, ...), so after a change to one of those, a game whose own file did not
# change loaded stale code from the cache: measured when MAX_KNOBS went from 16 to 20 (session
# 9), sudden-skies' counters were read from the wrong offsets. The stamp of a function defined in
# kernels/ is therefore its own file's stamp plus a digest of every shared module (each kernels/*.py
# that is not a game module: the game modules import only shared ones, never each other), so a
# change to a shared module recompiles every game and a change to a game module only that game.
_KERNELS_DIR = os.path.dirname(os.path.abspath(__file__))


@functools.lru_cache(maxsize=None)
def shared_digest(directory: str = _KERNELS_DIR) -> bytes:
    """sha256 over the names and contents of the shared modules in ``directory`` (every ``*.py``
    that does not declare a ``GAME_ID``)."""
    h = hashlib.sha256()
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".py"):
            continue
        with open(os.path.join(directory, name), "rb") as f:
            data = f.read()
        if b"\nGAME_ID = " in data:
            continue
        h.update(name.encode() + b"\0" + data + b"\0")
    return h.digest()


def _with_shared_stamp(base):
    class Locator(base):
        def get_source_stamp(self):
            own = super().get_source_stamp()
            if os.path.dirname(os.path.abspath(self._py_file)) == _KERNELS_DIR:
                return (own, shared_digest())
            return own
    Locator.__name__ = Locator.__qualname__ = "Kernels" + base.__name__
    return Locator


# Numba 0.68 names the class CacheImpl (older releases _CacheImpl); tests/test_compile.py checks
# that a kernel's cache carries the shared digest, so a Numba that moves this fails a test.
_CACHE_IMPL = getattr(_caching, "CacheImpl", None) or getattr(_caching, "_CacheImpl", None)
if _CACHE_IMPL is not None:
    _CACHE_IMPL._locator_classes = [
        _with_shared_stamp(c) if c in (_caching.UserProvidedCacheLocator,
                                       _caching.InTreeCacheLocator,
                                       _caching.UserWideCacheLocator) else c
        for c in _CACHE_IMPL._locator_classes]

_njit = functools.partial(numba.njit, cache=True, nogil=True)
pjit = functools.partial(numba.njit, cache=True, nogil=True, parallel=True)

# ``jit_borrowing`` compiles a kernel without Numba's reference counting (``_nrt=False``, an
# njit flag Numba's own test suite uses). Only for a function that allocates no array (Numba
# refuses to compile one that does) and works on arrays its caller owns for the whole call:
# then the counting is pure cost. forecasts-bid's plain game function spent ~10% of random play
# on atomic increments and decrements of its array arguments, inside the phases inlined into it.
_njit_borrowing = functools.partial(numba.njit, cache=True, nogil=True, _nrt=False)


# ---- compile time: one compile per argument type, not per constant ------------------------------
# Called from another jitted function with a constant (``record_event(ev, ev_n, E_PLAY, ...)``,
# ``col_counter(P, 3)``, ``below(keys, ctrs, s, 6)``), a Numba function is compiled once per
# *value* (the argument typed ``Literal[int](3)``), and once per number of arguments given when
# it has defaults (``types.Omitted``): layout.record_event was compiled 8-18 times per game,
# col_counter 17-18 times. ``per_type`` makes such calls compile the function once per argument
# *type*: the constants typed as their ordinary type (int64, bool), an omitted default as the
# type of its value (the caller passes the default, as Numba does for any omitted argument). No
# kernel branches on an argument's literal value at compile time (None, the ``search`` argument
# of the plain build, is not a literal and still prunes), so the machine code computes the same;
# the golden tables are bit-identical (tests/test_golden.py). ``SIMCLI_NUMBA_LITERAL=numba``
# turns it off (every constant its own compile, as Numba ships).
LITERAL_ENV = "SIMCLI_NUMBA_LITERAL"


def _per_type_arg(t):
    from numba.core import types
    if isinstance(t, types.Omitted):
        v = t.value
        if isinstance(v, (bool, int, float)):   # a number default: passed as a typed value
            return types.unliteral(numba.typeof(v))
        return t
    return types.unliteral(t)


def per_type(dispatcher):
    """``dispatcher`` with calls from jitted code typed per argument type, not per constant."""
    if os.environ.get(LITERAL_ENV, "") == "numba":
        return dispatcher
    stock = dispatcher.get_call_template

    def get_call_template(args, kws):
        pysig, folded = dispatcher._compiler.fold_argument_types(args, kws)
        template, _, typed, _ = stock(tuple(_per_type_arg(a) for a in folded), {})
        return template, pysig, typed, {}

    dispatcher.get_call_template = get_call_template
    return dispatcher


def _decorating(njit):
    def decorate(*args, **kw):
        if len(args) == 1 and callable(args[0]) and not kw:     # @jit
            return per_type(njit(args[0]))
        inner = njit(*args, **kw)                               # @jit(inline=...), @jit(_nrt=True)
        return lambda fn: per_type(inner(fn))
    return decorate


jit = _decorating(_njit)
jit_borrowing = _decorating(_njit_borrowing)



# ---- compile time: copy an inlined function's IR once, not once per block ---------------------
# Numba inlines an ``inline='always'`` function by deep-copying its IR into the caller
# (``InlineWorker.inline_ir``), one ``copy.deepcopy`` per block. Every variable refers to the
# function's scope, which holds every variable, so each block's copy copies the whole scope
# again: blocks x variables, and a phase function with its helpers inlined has hundreds of
# each (sudden-skies: a quarter of its compile CPU was this copy, cProfile). The patch gives the
# blocks of one copy one ``deepcopy`` memo, so the scope is copied once and the copy has the
# sharing of the IR it copies (the form Numba compiles a function that is not inlined in).
# Nothing else changes: the IR inlined is the same, so is the machine code (test: golden tables
# bit-identical with and without, tests/test_compile_cost.py). It edits Numba's own source of
# ``inline_ir`` at that one loop: installed only if the loop reads exactly as in Numba 0.68,
# else Numba runs as shipped. ``SIMCLI_NUMBA_INLINE_COPY=numba`` turns it off.
INLINE_COPY_ENV = "SIMCLI_NUMBA_INLINE_COPY"
_STOCK_COPY = """\
        def copy_ir(the_ir):
            kernel_copy = the_ir.copy()
            kernel_copy.blocks = {}
            for block_label, block in the_ir.blocks.items():
                new_block = copy.deepcopy(the_ir.blocks[block_label])
                kernel_copy.blocks[block_label] = new_block
            return kernel_copy
"""
_SHARED_COPY = """\
        def copy_ir(the_ir):
            kernel_copy = the_ir.copy()
            kernel_copy.blocks = {}
            memo = {}   # simcli (kernels/_jit.py): one memo for every block of this copy
            for block_label, block in the_ir.blocks.items():
                new_block = copy.deepcopy(the_ir.blocks[block_label], memo)
                kernel_copy.blocks[block_label] = new_block
            return kernel_copy
"""
inline_copy_patched = False


def _patch_inline_copy() -> bool:
    """Install the one-memo copy in Numba's inliner; False (Numba as shipped) when turned off or
    when ``InlineWorker.inline_ir`` is not the code the patch was written against."""
    global inline_copy_patched
    if os.environ.get(INLINE_COPY_ENV, "") == "numba":
        return False
    try:
        import inspect

        from numba.core import inline_closurecall as icc
        stock = icc.InlineWorker.inline_ir
        if getattr(stock, "_simcli_shared_copy", False):
            inline_copy_patched = True
            return True
        lines, first = inspect.getsourcelines(stock)
        src = "".join(lines)
        if src.count(_STOCK_COPY) != 1 or not src.startswith("    def inline_ir(self,"):
            return False
        src = "\n" * (first - 1) + "\n".join(   # dedented, at its own line numbers
            line[4:] for line in src.replace(_STOCK_COPY, _SHARED_COPY).splitlines())
        scope: dict = {}
        exec(compile(src, icc.__file__, "exec"), icc.__dict__, scope)
        patched = scope["inline_ir"]
    except Exception:   # source not readable, not as expected, any surprise: Numba as shipped
        return False
    patched._simcli_shared_copy = True
    patched.__wrapped__ = stock
    icc.InlineWorker.inline_ir = patched
    inline_copy_patched = True
    return True


_patch_inline_copy()
