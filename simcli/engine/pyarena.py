"""CPython's arena allocator on the C library's malloc, for processes that compile kernels.

CPython (3.11 and later) keeps each thread's Python frames in 16 KiB "data stack chunks" that
it takes from its arena allocator, by default one ``mmap`` per chunk and one ``munmap`` when the
chunk's first frame returns. Numba's compiler recurses deeply, and its call depth swings across a
chunk boundary again and again: one cold compile of a game (sudden-skies 4p) made 190,000
``mmap``/``munmap`` pairs of 16 KiB, each a system call, a page-table change and four freshly
zeroed pages on the next touch (13 s of the README run's ~105 s of CPU were system time;
benchmarks/RESULTS.md). ``install()`` points the arena allocator at malloc/free instead, which
keep freed chunks for reuse: the same compile takes 18-23% less wall time.

The two functions are ``numba.cfunc``s (C callbacks; nothing runs in Python, so the allocator
never re-enters the interpreter). A block made by the default allocator before the switch is
page-aligned (``mmap``); a block from here never is: it starts 16 bytes into a malloc'd block
(32 when 16 would land on a page boundary), with malloc's pointer stored in the 8 bytes before
it, so ``free`` tells the two apart and unmaps the old ones.
Only on Linux builds with the GIL, where the default allocator is ``mmap``/``munmap``;
``SIMCLI_PYARENA=0`` leaves CPython's allocator alone.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
import sysconfig

PAGE = 4096
OFFSET = 16          # keeps 16-byte alignment; never 0 mod PAGE (see module doc)
ENV = "SIMCLI_PYARENA"

_installed = None    # the allocator struct, kept alive for the life of the process


class _ArenaAllocator(ctypes.Structure):
    _fields_ = [("ctx", ctypes.c_void_p), ("alloc", ctypes.c_void_p), ("free", ctypes.c_void_p)]


def supported() -> bool:
    """Whether this interpreter's arena allocator is the ``mmap`` one ``install`` expects."""
    return (sys.platform.startswith("linux") and sys.implementation.name == "cpython"
            and not sysconfig.get_config_var("Py_GIL_DISABLED")
            and ctypes.util.find_library("c") is not None)


def _callbacks():
    import numba
    from numba import types
    from numba.core.extending import intrinsic

    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    c_malloc, c_free, c_munmap = libc.malloc, libc.free, libc.munmap
    c_malloc.argtypes, c_malloc.restype = [ctypes.c_size_t], ctypes.c_size_t
    c_free.argtypes, c_free.restype = [ctypes.c_size_t], None
    c_munmap.argtypes, c_munmap.restype = [ctypes.c_size_t, ctypes.c_size_t], ctypes.c_int

    @intrinsic
    def word_at(typingctx, addr):
        """The address as a pointer to one uintp (to store or load malloc's pointer)."""
        sig = types.CPointer(types.uintp)(addr)

        def codegen(context, builder, signature, args):
            return builder.inttoptr(args[0], context.get_value_type(signature.return_type))
        return sig, codegen

    @numba.cfunc(types.uintp(types.uintp, types.uintp))
    def arena_alloc(ctx, size):
        base = c_malloc(size + 2 * OFFSET)
        if base == 0:
            return 0
        ptr = base + OFFSET
        if ptr % PAGE == 0:        # never hand out a page-aligned block (see arena_free)
            ptr += OFFSET
        numba.carray(word_at(ptr - 8), 1)[0] = base
        return ptr

    @numba.cfunc(types.void(types.uintp, types.uintp, types.uintp))
    def arena_free(ctx, ptr, size):
        if ptr % PAGE == 0:        # the default allocator's block (mmap), from before install()
            c_munmap(ptr, size)
        else:
            c_free(numba.carray(word_at(ptr - 8), 1)[0])

    return arena_alloc, arena_free


def install() -> bool:
    """Point CPython's arena allocator at malloc/free (once per process); False when not
    supported here or switched off with ``SIMCLI_PYARENA=0``."""
    global _installed
    if _installed is not None:
        return True
    if os.environ.get(ENV, "1") == "0" or not supported():
        return False
    alloc, free = _callbacks()
    _installed = (_ArenaAllocator(None, alloc.address, free.address), alloc, free)
    ctypes.pythonapi.PyObject_SetArenaAllocator(ctypes.byref(_installed[0]))
    return True


def current() -> tuple[int, int]:
    """The addresses of the arena allocator's alloc and free functions in use now."""
    a = _ArenaAllocator()
    ctypes.pythonapi.PyObject_GetArenaAllocator(ctypes.byref(a))
    return a.alloc or 0, a.free or 0
