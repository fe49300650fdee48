"""Instructions per game of a game kernel (or of the anchor), counted by valgrind (issue #26).

Wall-clock rates on the shared 2-core VM move 20-35% between trials; instruction counts do not.
Each measurement is two ``valgrind --tool=callgrind`` runs of this same script in ``--child``
mode, one playing SMALL games and one BIG games through the runner's own path
(``simcli.engine.runner.play_chunk`` -> the module's ``play_games`` -> the jitted serial driver,
one thread); (Ir(BIG) - Ir(SMALL)) / (BIG - SMALL) cancels start-up, imports and Numba's cache
load. The kernel is warmed first in a plain run (so nothing is compiled under valgrind):

    python3 benchmarks/instr_per_game.py forecasts-bid:4:random            # 2,000 vs 500 games
    python3 benchmarks/instr_per_game.py forecasts-bid:4:heuristic forecasts-cubes:4:random anchor
    python3 benchmarks/instr_per_game.py --big 4000 --small 1000 forecasts-bid:4:random

With ``--run`` a game is what ``simcli run`` does with it: ``runner.chunk_tally`` (play the chunk,
then fold its rows into the accumulators: kernels/tally.py and the arc fold), not play alone.

``anchor`` counts the shared hand-tuned kernel (``anchor_rate.py``'s ``run_serial``, 16 chunks).
With ``--digest`` the child also prints a digest of the result rows (sha256 of ``out``), so a
kernel change can be checked for identical tables on the same seed. The count is deterministic
for a given build and machine (same instructions for the same seed); it is not a time.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ANCHOR_DIRS = (ROOT.parent / "shared" / "anchors", Path("/work/shared/anchors"))
SEED = 20261203


def anchor_dir() -> Path:
    for d in ANCHOR_DIRS:
        if (d / "trick_kernel.py").is_file():
            return d
    sys.exit("anchor not found (../shared/anchors)")


def player(spec: str, most: int, run: bool = False):
    """(play, digest): ``play(games)`` plays games 0 .. games - 1 of ``spec`` (warmed up, into a
    buffer made once, as the runner reuses its chunk buffer; with ``run`` also folded, as
    ``runner.chunk_tally``); ``digest()`` is a text digest of the last play's results (computed
    apart, so its cost is not counted)."""
    import numpy as np
    last = {}
    if spec == "anchor":
        sys.path.insert(0, str(anchor_dir()))
        import trick_kernel as tk

        def play(games):
            last["r"] = tk.run_serial(np.uint64(7), games, 16)

        def digest():
            acc, h = last["r"]
            return f"{int(h)} {acc.tolist()}"
    else:
        import numba
        numba.set_num_threads(1)
        from kernels import layout
        from simcli.config.jobs import resolve
        from simcli.engine import runner
        game, players, policy = spec.split(":", 2)   # a policy may have arguments: mc:8:heuristic
        job = resolve(game, players=int(players), policy=policy)
        buf = np.zeros((most, layout.out_width(job.seats.shape[0], len(job.module.COUNTERS))),
                       dtype=np.int64)

        def play(games):
            if run:
                ct = runner.chunk_tally(job, SEED, 0, games, False, buf)
                last["r"] = buf[:games]
                last["acc"] = ct.acc
            else:
                last["r"] = runner.play_chunk(job, SEED, 0, games, buf)

        def digest():
            h = hashlib.sha256(np.ascontiguousarray(last["r"]).tobytes())
            if run:
                for name, a in sorted(last["acc"].arrays().items()):
                    h.update(name.encode() + np.ascontiguousarray(a).tobytes())
            return h.hexdigest()
    play(16)
    return play, digest


def serve(spec: str, most: int, run: bool = False) -> None:
    """Under valgrind (instrumentation off): play the games each stdin line asks for; a line
    ``digest`` answers the last play's digest."""
    play, digest = player(spec, most, run)
    print("ready", flush=True)
    for line in sys.stdin:
        if not line.strip():
            break
        if line.strip() == "digest":
            print(digest(), flush=True)
        else:
            play(int(line))
            print("done", flush=True)


def child(spec: str, games: int, digest: bool, run: bool = False) -> None:
    play, dig = player(spec, games, run)
    play(games)
    if digest:
        print("digest", dig())


def callgrind_ir(spec: str, sizes: list[int], run: bool = False) -> list[int]:
    """Instructions of each of the given runs, counted by callgrind in one process: the child
    starts with instrumentation off (start-up at valgrind's plain speed), is switched on once
    the kernel is warm, and the counters are dumped after each run."""
    with tempfile.TemporaryDirectory() as d:
        out = f"{d}/cg.out"
        cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
               sys.executable, __file__, "--serve", spec, str(max(sizes))] + (["--run"] if run else [])
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                stderr=subprocess.DEVNULL, env=dict(os.environ, PYTHONPATH=str(ROOT)))
        assert proc.stdout.readline().strip() == "ready"
        ctl = ["callgrind_control"]
        subprocess.run(ctl + ["-i", "on", str(proc.pid)], check=True, capture_output=True)
        subprocess.run(ctl + ["-z", str(proc.pid)], check=True, capture_output=True)
        counts, digests = [], []
        for k, n in enumerate(sizes):
            proc.stdin.write(f"{n}\n")
            proc.stdin.flush()
            assert proc.stdout.readline().strip() == "done"
            subprocess.run(ctl + ["-d", str(proc.pid)], check=True, capture_output=True)
            proc.stdin.write("digest\n")
            proc.stdin.flush()
            digests.append(proc.stdout.readline().strip())
            # the digest (sha256 of the rows) is not a game's cost: zero the counters after it,
            # or the next dump counts it (session 14: ~2.6k of bid's 44k a game were the digest)
            subprocess.run(ctl + ["-z", str(proc.pid)], check=True, capture_output=True)
        proc.stdin.write("\n")
        proc.stdin.close()
        proc.wait()
        dumps = sorted((f for f in os.listdir(d) if f.startswith("cg.out.")),
                       key=lambda f: int(f.rsplit(".", 1)[1]))
        for f in dumps[-len(sizes):]:
            text = Path(d, f).read_text()
            m = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
            counts.append(int(m.group(1)))
        return counts, digests


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("specs", nargs="*", default=["forecasts-bid:4:random"],
                   help="GAME:PLAYERS:POLICY items, or 'anchor'")
    p.add_argument("--big", type=int, default=2000)
    p.add_argument("--small", type=int, default=500)
    p.add_argument("--child", nargs=2, metavar=("SPEC", "GAMES"), help=argparse.SUPPRESS)
    p.add_argument("--serve", nargs=2, metavar=("SPEC", "MOST"), help=argparse.SUPPRESS)
    p.add_argument("--digest", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--run", action="store_true",
                   help="count runner.chunk_tally (play and fold, as simcli run), not play alone")
    a = p.parse_args(argv)
    if a.child:
        child(a.child[0], int(a.child[1]), a.digest, a.run)
        return
    if a.serve:
        serve(a.serve[0], int(a.serve[1]), a.run)
        return
    for spec in a.specs:
        # warm the Numba cache outside valgrind (compiles on a first run)
        subprocess.run([sys.executable, __file__, "--child", spec, "16"] + (["--run"] if a.run else []),
                       check=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
        (small, big), (_, dig) = callgrind_ir(spec, [a.small, a.big], a.run)
        per = (big - small) / (a.big - a.small)
        print(f"{spec}{' (run: play + fold)' if a.run else ''}: {per:,.0f} instructions/game  (Ir {big:,} at {a.big} games, "
              f"{small:,} at {a.small}; digest of the {a.big}-game rows {dig[:16]})", flush=True)

if __name__ == "__main__":
    main()
