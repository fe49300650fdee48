"""simcli/engine/pyarena.py: CPython's arena allocator on malloc/free in compiling processes.

Checked independently of the code's own reasoning:
- a block from the installed allocator is writable end to end, 16-byte aligned and never
  page-aligned (the mark that tells its blocks from the default allocator's), also when malloc's
  pointer lies just before a page boundary (20,000 blocks; the allocator once looped forever
  there);
- a page-aligned block made by ``mmap`` (as the default allocator makes them before the switch)
  handed to the installed ``free`` is unmapped: its range leaves /proc/self/maps;
- what the change is for: a Python call depth that swings across a frame-chunk boundary costs
  fresh pages on every swing with the default allocator and almost none after ``install`` (minor
  page faults of two child processes, ``SIMCLI_PYARENA=0`` and on);
- a compile child (``_compile_in_child``) installs it.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import subprocess
import sys
import textwrap

import pytest

from simcli.engine import pyarena

pytestmark = pytest.mark.skipif(not pyarena.supported(), reason="the mmap arena allocator is Linux CPython's")

ALLOC = ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_size_t, ctypes.c_size_t)
FREE = ctypes.CFUNCTYPE(None, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_size_t)


def _functions():
    assert pyarena.install()
    a, f = pyarena.current()
    assert (a, f) == (pyarena._installed[1].address, pyarena._installed[2].address)
    assert pyarena.install()            # once per process: the same functions stay
    assert pyarena.current() == (a, f)
    return ALLOC(a), FREE(f)


def test_installed_blocks_are_writable_aligned_and_never_page_aligned():
    alloc, free = _functions()
    blocks = []
    for size in (16384, 1 << 20, 100, 16384 * 3, 4096) * 40:
        p = alloc(0, size)
        assert p and p % 16 == 0 and p % pyarena.PAGE != 0
        ctypes.memset(p, 0xAB, size)
        assert ctypes.string_at(p + size - 4, 4) == b"\xab" * 4
        blocks.append((p, size))
    for p, size in blocks:
        free(0, p, size)


def test_blocks_that_would_start_on_a_page_boundary_move_16_bytes_on():
    # 20,000 blocks held at once, sizes 16..4096: about one malloc pointer in 256 lies 16 bytes
    # before a page boundary; those blocks start 32 bytes in (malloc's pointer is stored just
    # before the block), every block is distinct, writable and freed
    import random
    alloc, free = _functions()
    rng = random.Random(5)
    blocks, moved = [], 0
    for _ in range(20000):
        size = rng.randrange(16, 4097, 16)
        p = alloc(0, size)
        assert p % pyarena.PAGE != 0 and p % 16 == 0
        base = ctypes.c_size_t.from_address(p - 8).value
        assert p - base in (16, 32)
        moved += p - base == 32
        ctypes.memset(p, 0x5A, size)
        blocks.append((p, size))
    assert len({p for p, _ in blocks}) == len(blocks)
    assert moved > 0
    for p, size in blocks:
        free(0, p, size)


def _mapped(addr):
    with open("/proc/self/maps") as fh:
        for line in fh:
            lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
            if lo <= addr < hi:
                return True
    return False


def test_free_unmaps_a_block_of_the_default_allocator():
    _, free = _functions()
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.mmap.restype = ctypes.c_size_t
    libc.mmap.argtypes = [ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_size_t]
    PROT_RW, MAP_PRIVATE_ANON = 0x1 | 0x2, 0x02 | 0x20
    size = 16384
    p = libc.mmap(0, size, PROT_RW, MAP_PRIVATE_ANON, -1, 0)
    assert p % pyarena.PAGE == 0 and _mapped(p)
    ctypes.memset(p, 1, size)
    free(0, p, size)
    assert not _mapped(p)


SWING = textwrap.dedent("""
    import os, resource, sys
    if os.environ.get("SIMCLI_PYARENA") != "0":
        from simcli.engine import pyarena
        assert pyarena.install()
    def down(n):
        return 0 if n == 0 else 1 + down(n - 1)
    for d in range(20, 400):      # find where one more frame needs a new chunk: the swings below cross it
        down(d)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(3000):
        for d in (150, 250, 350):
            down(d)
    print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
""")


def _faults(env_value):
    env = dict(os.environ, SIMCLI_PYARENA=env_value)
    out = subprocess.run([sys.executable, "-c", SWING], env=env, capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1])


def test_swinging_across_frame_chunks_stops_costing_fresh_pages():
    default, installed = _faults("0"), _faults("1")
    # 9,000 swings down to 150-350 frames cross at least one 16 KiB chunk boundary each: four
    # fresh pages apiece with mmap/munmap chunks
    assert default > 9000
    assert installed < default / 20


def test_a_compile_child_installs_it():
    code = textwrap.dedent("""
        from simcli.config import jobs as cfg
        from simcli.engine import compile, pyarena
        before = pyarena.current()
        compile._compile_in_child([cfg.resolve("forecasts-cubes", None, 3, policy="random")], fold=False)
        assert pyarena.current() != before
        assert pyarena.current() == (pyarena._installed[1].address, pyarena._installed[2].address)
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
