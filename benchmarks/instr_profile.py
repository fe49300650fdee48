"""Where a kernel's instructions go, per machine instruction of the JIT code (issue #26).

    PYTHONPATH=$PWD python3 benchmarks/instr_profile.py forecasts-bid:4:random 400 /tmp/prof

plays games 0..GAMES-1 (instr_per_game.py's player: the runner's path, warm, one thread) under
``valgrind --tool=callgrind --dump-instr=yes``, reads the hot JIT code back from the live process
(it has no symbols), disassembles it with objdump and writes OUTDIR/annot.txt: every instruction
with its count per game (a count of 5.04 in forecasts-bid is once a round, 20 once a seat and
round, 45-50 once a trick, ~136-200 once a card), and OUTDIR/functions.txt: the count per game
of each compiled function (session 23: the JIT code has no symbols, so the served process saves
the cached object code of every compiled kernel, each hot code region is placed in one of them by
matching its bytes, and that object's symbol table names the addresses; functions Numba or LLVM
inlined count in their caller). ``--annot OUTDIR GAMES`` redoes both listings.
Written in session 14 (branch ``bidloop``); a developer's tool, not a test.
"""
import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))


def serve(spec, games):
    import ctypes
    sys.path.insert(0, HERE)
    import instr_per_game as ipg
    play, dig = ipg.player(spec, games)
    print("ready", flush=True)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            break
        if line.startswith("mem "):
            _, outdir, lo, hi = line.split()
            lo, hi = int(lo), int(hi)
            data = ctypes.string_at(lo, hi - lo)
            with open(f"{outdir}/mem_{lo:x}.bin", "wb") as f:
                f.write(data)
            print("done", flush=True)
        elif line.startswith("syms "):
            write_symbols(line.split()[1])
            print("done", flush=True)
        else:
            play(int(line))
            print("done", flush=True)


def write_symbols(outdir):
    """OUTDIR/obj_N.o: the cached object code of every compiled overload of every Numba
    dispatcher in the kernels' modules. A kernel loaded from Numba's disk cache keeps no LLVM
    module and its JIT addresses need not match the engine's symbol table, so ``name_functions``
    places each hot code region by matching its bytes against these objects' code sections and
    names its addresses from their symbol tables."""
    from numba.core.dispatcher import Dispatcher

    def find_object(x):
        if isinstance(x, tuple) and len(x) == 3 and x[1] == "object":
            return x
        if isinstance(x, (tuple, list, dict)):
            for y in (x.values() if isinstance(x, dict) else x):
                r = find_object(y)
                if r:
                    return r
        return None

    n = 0
    for mod in list(sys.modules.values()):
        if not (getattr(mod, "__name__", "") or "").startswith("kernels"):
            continue
        for obj in list(vars(mod).values()):
            if not isinstance(obj, Dispatcher) or not obj.overloads:
                continue
            cf = obj._cache._cache_file
            index = cf._load_index()
            for sig in list(obj.overloads):
                fname = index.get(obj._cache._index_key(sig, obj.targetctx.codegen()))
                state = find_object(cf._load_data(fname)) if fname else None
                if state:
                    with open(f"{outdir}/obj_{n}.o", "wb") as f:
                        f.write(state[2][0])
                    n += 1


def name_functions(outdir, mems, cost):
    """{address: function name} boundaries for the dumped regions ``mems`` (see write_symbols):
    a sorted list of (start address, name)."""
    objs = []
    for f in sorted(os.listdir(outdir)):
        if not (f.startswith("obj_") and f.endswith(".o")):
            continue
        path = f"{outdir}/{f}"
        data = open(path, "rb").read()
        secs = {}
        hdr = subprocess.run(["objdump", "-h", path], capture_output=True, text=True).stdout
        for m in re.finditer(r"^\s*\d+\s+(\S+)\s+([0-9a-f]+)\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)",
                             hdr, re.M):
            secs[m.group(1)] = (int(m.group(3), 16), int(m.group(2), 16))
        syms = []
        out = subprocess.run(["objdump", "-t", path], capture_output=True, text=True).stdout
        for sl in out.splitlines():
            parts = sl.split()
            if len(parts) >= 6 and "F" in parts[2:-3] and parts[-3] in secs:
                syms.append((parts[-3], int(parts[0], 16), parts[-1]))
        objs.append((data, secs, syms))
    starts = []
    for lo, hi, fn in mems:
        dump = open(fn, "rb").read()
        hot = sorted((a for a in cost if lo <= a < hi - 32), key=lambda a: -cost[a])[:24]
        votes = defaultdict(int)     # (object, section, load address): hot addresses it explains
        for a in hot:
            chunk = dump[a - lo:a - lo + 32]
            for o, (data, secs, syms) in enumerate(objs):
                for sec, (off, size) in secs.items():
                    i = data.find(chunk, off, off + size)
                    if i >= 0 and data.count(chunk, off, off + size) == 1:
                        votes[(o, sec, a - (i - off))] += 1
        if not votes:
            continue
        (o, sec, base), n = max(votes.items(), key=lambda kv: kv[1])
        if n < min(3, len(hot)):
            continue
        starts.extend((base + v, nm) for s2, v, nm in objs[o][2]
                      if s2 == sec and lo <= base + v < hi)
    return sorted(set(starts))


def parse_callgrind(path):
    """{address: Ir} self cost per instruction, for objects '???' (JIT code)."""
    cost = defaultdict(int)
    names = {}
    ob = None
    pos = 0
    skip_next = False
    obj_ok = False
    for line in open(path):
        line = line.rstrip("\n")
        if not line:
            continue
        if line.startswith(("ob=", "fl=", "fi=", "fe=", "fn=", "cob=", "cfi=", "cfl=", "cfn=")):
            key, val = line.split("=", 1)
            m = re.match(r"\((\d+)\)(?: (.*))?", val)
            if m:
                if m.group(2) is not None:
                    names[(key.lstrip("c"), m.group(1))] = m.group(2)
                    val = m.group(2)
                else:
                    val = names.get((key.lstrip("c"), m.group(1)), "?")
            if key == "ob":
                obj_ok = "/" not in val
            continue
        if line.startswith("calls="):
            skip_next = True
            continue
        if line[0] in "0123456789+-*":
            tok = line.split()
            p = tok[0]
            if p.startswith("0x"):
                pos = int(p, 16)
            elif p.startswith("+"):
                pos += int(p[1:], 16) if p[1:].startswith("0x") else int(p[1:])
            elif p.startswith("-"):
                pos -= int(p[1:], 16) if p[1:].startswith("0x") else int(p[1:])
            if skip_next:
                skip_next = False
                continue
            if len(tok) > 2 and obj_ok:
                cost[pos] += int(tok[2])
            continue
    return cost


def main():
    if sys.argv[1] == "--annot":
        return annotate(sys.argv[2], int(sys.argv[3]))
    spec = sys.argv[1]
    games = int(sys.argv[2]) if len(sys.argv) > 2 else 400
    outdir = sys.argv[3] if len(sys.argv) > 3 else tempfile.mkdtemp()
    os.makedirs(outdir, exist_ok=True)
    cg = f"{outdir}/cg.out"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(HERE)
    subprocess.run([sys.executable, os.path.join(HERE, "instr_per_game.py"),
                    "--child", spec, "16"], check=True, env=env)
    cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--dump-instr=yes", "--compress-strings=no", "--compress-pos=no",
           f"--callgrind-out-file={cg}", sys.executable, __file__, "--serve", spec, str(games)]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            stderr=subprocess.DEVNULL, env=env)
    assert proc.stdout.readline().strip() == "ready"
    ctl = ["callgrind_control"]
    subprocess.run(ctl + ["-i", "on", str(proc.pid)], check=True, capture_output=True)
    subprocess.run(ctl + ["-z", str(proc.pid)], check=True, capture_output=True)
    proc.stdin.write(f"{games}\n"); proc.stdin.flush()
    assert proc.stdout.readline().strip() == "done"
    subprocess.run(ctl + ["-d", str(proc.pid)], check=True, capture_output=True)
    subprocess.run(ctl + ["-i", "off", str(proc.pid)], check=True, capture_output=True)
    dumps = sorted(f for f in os.listdir(outdir) if f.startswith("cg.out."))
    cost = parse_callgrind(f"{outdir}/{dumps[-1]}")
    # JIT code: addresses in no file-backed object; find them as clusters of hot addresses outside
    # the mapped files (below 0x4000_0000 here), read them from the live process
    addrs = sorted(a for a in cost if cost[a] > 0)
    clusters = []
    for a in addrs:
        if clusters and a - clusters[-1][1] < 8192:
            clusters[-1][1] = a
        else:
            clusters.append([a, a])
    for f in os.listdir(outdir):
        if f.startswith("mem_"):
            os.remove(f"{outdir}/{f}")
    proc.stdin.write(f"syms {outdir}\n"); proc.stdin.flush()
    assert proc.stdout.readline().strip() == "done"
    for lo, hi in clusters:
        lo = lo & ~0xfff
        hi = (hi + 64 + 0xfff) & ~0xfff
        proc.stdin.write(f"mem {outdir} {lo} {hi}\n"); proc.stdin.flush()
        r = proc.stdout.readline().strip()
        if r != "done":
            print("mem read failed", hex(lo), r)
            break
    try:
        proc.stdin.write("\n"); proc.stdin.close()
    except BrokenPipeError:
        pass
    proc.wait()
    annotate(outdir, games)


def annotate(outdir, games):
    dumps = sorted(f for f in os.listdir(outdir) if f.startswith("cg.out."))
    cost = parse_callgrind(f"{outdir}/{dumps[-1]}" if dumps else cg)
    total_all = None
    for f in [f"{outdir}/{dumps[-1]}"]:
        m = re.search(r"^(?:summary|totals): (\d+)", open(f).read(), re.M)
        total_all = int(m.group(1))
    mems = []
    for f in os.listdir(outdir):
        if f.startswith("mem_"):
            lo = int(f[4:-4], 16)
            mems.append((lo, lo + os.path.getsize(f"{outdir}/{f}"), f"{outdir}/{f}"))
    cost = {a: c for a, c in cost.items() if any(lo <= a < hi for lo, hi, _ in mems)}
    jit_total = sum(cost.values())
    print(f"total Ir {total_all:,} ({total_all / games:,.0f}/game); '???' Ir {jit_total:,} "
          f"({jit_total / games:,.0f}/game)")
    # disassemble the regions that have costs
    out = open(f"{outdir}/annot.txt", "w")
    for lo, hi, fn in sorted(mems):
        hits = [a for a in cost if lo <= a < hi]
        if not hits:
            continue
        a0, a1 = min(hits), max(hits)
        start = max(lo, a0 - 4096)
        stop = min(hi, a1 + 4096)
        dis = subprocess.run(["objdump", "-D", "-b", "binary", "-m", "i386:x86-64",
                              f"--adjust-vma={lo:#x}", f"--start-address={start:#x}",
                              f"--stop-address={stop:#x}", fn], capture_output=True, text=True).stdout
        for dl in dis.splitlines():
            m = re.match(r"\s*([0-9a-f]+):\s", dl)
            if m:
                a = int(m.group(1), 16)
                c = cost.get(a, 0)
                out.write(f"{c / games:10.2f} {dl}\n")
    out.close()
    starts = name_functions(outdir, mems, cost)
    if starts:
        import bisect
        keys = [a for a, _ in starts]
        per = defaultdict(int)
        for a, c in cost.items():
            k = bisect.bisect_right(keys, a) - 1
            per[starts[k][1] if k >= 0 and a - keys[k] < 1 << 20 else "?"] += c
        with open(f"{outdir}/functions.txt", "w") as f:
            for n, c in sorted(per.items(), key=lambda x: -x[1]):
                f.write(f"{c / games:14,.0f} {100 * c / max(jit_total, 1):5.1f}% {n}\n")
        print("functions:", f"{outdir}/functions.txt")
    unmapped = sum(c for a, c in cost.items() if not any(lo <= a < hi for lo, hi, _ in mems))
    print("unmapped Ir/game", unmapped / games, "annot:", f"{outdir}/annot.txt")


if __name__ == "__main__":
    if sys.argv[1] == "--serve":
        serve(sys.argv[2], int(sys.argv[3]))
    else:
        main()
