"""Issue #26: the same search players on two checkouts of the code, cost interleaved (old vs new).

A kernel change that leaves every decision as it was (bit-identical tables) changes only what
a search player costs, so its gain is measured as games per CPU-second of whole tables on the
old and the new code in one run: one server process per checkout (``PYTHONPATH`` = that tree,
so each loads its own kernels and Numba cache), each timing ``benchmarks.search_cost.table_cost``
(``time.process_time`` around ``runner.run_jobs``, one thread, every seat on the policy, the
same deals), the items interleaved trial by trial (A B C A B C ...), medians of ``--trials``:

    git worktree add /work/wt/base main      # the old code
    nice -n 10 python3 -m benchmarks.old_new_cost forecasts-bid --old-tree /work/wt/base \\
        --items old:mc:64:heuristic,new:mc:32:heuristic,new:mc:16:heuristic --cost-games 30 --trials 5

``cheaper`` is each item's median games/CPU-s over the first item's. Also prints rollouts per
game (the kernels' ``mc_rollouts`` counter), which is the same on both trees when the decisions
are. The new tree is this file's checkout unless ``--new-tree`` says otherwise.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def serve(game: str, players: int) -> None:
    """Answer ``POLICY GAMES SEED`` lines with ``CPU_SECONDS ROLLOUTS_PER_GAME``."""
    import numba
    numba.set_num_threads(1)
    from benchmarks.search_cost import table_cost
    print("ready", flush=True)
    for line in sys.stdin:
        if not line.strip():
            break
        policy, games, seed = line.split()
        cpu, _, rolls = table_cost(game, players, policy, int(games), int(seed))
        print(f"{cpu} {rolls}", flush=True)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("game")
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--old-tree", required=True, help="checkout of the old code")
    ap.add_argument("--new-tree", default=str(ROOT), help="checkout of the new code (default: this one)")
    ap.add_argument("--items", default="old:mc:64:heuristic,new:mc:32:heuristic,new:mc:16:heuristic",
                    help="TREE:POLICY items (TREE = old or new); the first is the reference")
    ap.add_argument("--cost-games", type=int, default=30, help="games per trial")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--seed", type=int, default=26)
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.serve:
        serve(a.game, a.players)
        return
    items = [tuple(x.split(":", 1)) for x in a.items.split(",")]
    trees = {"old": a.old_tree, "new": a.new_tree}
    procs = {}
    for name, tree in trees.items():
        if any(t == name for t, _ in items):
            procs[name] = subprocess.Popen(
                [sys.executable, str(Path(__file__).resolve()), a.game, "--players", str(a.players),
                 "--old-tree", a.old_tree, "--serve"],
                cwd=tree, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                env=dict(os.environ, PYTHONPATH=tree))
            assert procs[name].stdout.readline().strip() == "ready"

    def ask(tree: str, policy: str, games: int) -> tuple[float, float]:
        p = procs[tree]
        p.stdin.write(f"{policy} {games} {a.seed}\n")
        p.stdin.flush()
        cpu, rolls = p.stdout.readline().split()
        return float(cpu), float(rolls)

    print(f"{a.game} {a.players}p, seed {a.seed}, load {os.getloadavg()[0]:.2f}; old {trees['old']}, "
          f"new {trees['new']}; whole tables, {a.cost_games} games x {a.trials} trials (median), one thread",
          flush=True)
    for t, pol in items:            # compile or load each build outside the timing
        ask(t, pol, 1)
    rates = {it: [] for it in items}
    rolls = {}
    for _ in range(a.trials):
        for it in items:
            cpu, r = ask(it[0], it[1], a.cost_games)
            rates[it].append(a.cost_games / cpu)
            rolls[it] = r
    for p in procs.values():
        p.stdin.write("\n")
        p.stdin.close()
        p.wait()
    med = {it: sorted(v)[len(v) // 2] for it, v in rates.items()}
    ref = med[items[0]]
    print(f"{'item':>26} {'games/cpu-s':>11} {'cheaper':>7} {'roll/game':>10}  trials")
    for it in items:
        print(f"{it[0] + ':' + it[1]:>26} {med[it]:11.2f} {med[it] / ref:6.2f}x {rolls[it]:10.0f}  "
              + " ".join(f"{x:.2f}" for x in rates[it]), flush=True)
    print(json.dumps({"game": a.game, "players": a.players, "seed": a.seed, "cost_games": a.cost_games,
                      "trials": a.trials, "items": [f"{t}:{p}" for t, p in items],
                      "games_per_cpu_s": [med[it] for it in items],
                      "all": [rates[it] for it in items], "rollouts_per_game": [rolls[it] for it in items]}))


if __name__ == "__main__":
    main()
