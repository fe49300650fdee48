"""2 threads against 1, measured in interleaved pairs (issue #26), for simcli's games and the anchor.

Each pair times one thread, then two threads, then one thread again on the same kernel entry point
the runner uses (``runner.play_chunk`` on 65,536-game chunks, random seats, 4 players; daily-weather
1) and takes (2-thread rate) / (mean of the two 1-thread rates). Slow drift of a shared VM cancels
within a pair; the median and quartiles over pairs are printed. ``--anchor`` does the same for the
hand-tuned kernel in ``../shared/anchors/`` (its own ``run_serial`` against ``run_parallel``, 256
chunks), the ceiling to compare against: a benchmark may read the anchor, nothing else may.

    python3 benchmarks/thread_pairs.py forecasts-cubes --chunks 12 --pairs 8
    python3 benchmarks/thread_pairs.py --anchor --games 1e6 --pairs 8
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numba
import numpy as np

CHUNK = 65536


def _quartiles(v):
    return f"median {np.median(v):.3f} IQR [{np.percentile(v, 25):.3f}, {np.percentile(v, 75):.3f}]"


def _pairs(one, two, n_pairs):
    one(); two()   # warm-up (compile, first-touch)
    base, ratio = [], []
    for _ in range(n_pairs):
        a = one(); b = two(); a2 = one()
        base.append((a + a2) / 2)
        ratio.append(b / base[-1])
    return base, ratio


def game_pairs(game: str, chunks: int, n_pairs: int, policy: str):
    from simcli.analyses.run import resolve_run
    from simcli.engine import runner
    players = 1 if game == "daily-weather" else 4
    jobs, *_ = resolve_run(game, variant=None, players=players, policy=policy, seats=None,
                           rules={}, games=1000, seed=1)
    job = jobs[0]
    buf = runner.play_chunk(job, 1, 0, CHUNK)
    nxt = [0]

    def rate(threads):
        numba.set_num_threads(threads)
        t0 = time.perf_counter()
        for _ in range(chunks):
            g = nxt[0]
            runner.play_chunk(job, 1, g * CHUNK, (g + 1) * CHUNK, buf)
            nxt[0] += 1
        return chunks * CHUNK / (time.perf_counter() - t0)

    return _pairs(lambda: rate(1), lambda: rate(2), n_pairs)


def anchor_pairs(games: int, n_pairs: int):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "shared" / "anchors"))
    import trick_kernel as tk

    def r1():
        t0 = time.perf_counter(); tk.run_serial(np.uint64(7), games, 256)
        return games / (time.perf_counter() - t0)

    def r2():
        numba.set_num_threads(2)
        t0 = time.perf_counter(); tk.run_parallel(np.uint64(7), games, 256)
        return games / (time.perf_counter() - t0)

    return _pairs(r1, r2, n_pairs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("game", nargs="?", default="forecasts-cubes")
    ap.add_argument("--anchor", action="store_true", help="measure the anchor kernel instead")
    ap.add_argument("--chunks", type=int, default=12, help="65,536-game chunks per timing")
    ap.add_argument("--games", type=float, default=1e6, help="anchor games per timing")
    ap.add_argument("--pairs", type=int, default=8)
    ap.add_argument("--policy", default="random")
    a = ap.parse_args()
    if a.anchor:
        base, ratio = anchor_pairs(int(a.games), a.pairs)
        name = "anchor"
    else:
        base, ratio = game_pairs(a.game, a.chunks, a.pairs, a.policy)
        name = f"{a.game} ({a.policy})"
    print(f"{name}: 1 thread median {np.median(base):,.0f} games/s; 2 / 1 {_quartiles(ratio)} "
          f"({a.pairs} pairs)")


if __name__ == "__main__":
    main()
