"""Issue #26: the same player on two checkouts of the code, strength on the same deals (old vs new).

A change that keeps a search player's distribution but not its random draws (session 24: the
forecasts-cubes re-deal with no void shown deals the shuffle out in order) gives other decisions,
so the search digest cannot show it is the same player. This measures it: one seat of ``SEAT``
against ``FIELD`` seats in the others, every deal in every seat rotation, once on each checkout
(one process each, in parallel); per deal the seat's win share averaged over the rotations; the
new checkout's minus the old one's, paired by deal (the deals do not depend on any decision, so
both checkouts play the same ones), mean and 95% interval with the deal as the unit.

    python3 -m benchmarks.old_new_strength forecasts-cubes --old-tree /work/wt/start \\
        --seat mc:64:heuristic --field heuristic --deals 2000 --seed 41

A developer's tool, not a test.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def shares(game: str, players: int, seat: str, field: str, deals: int, seed: int) -> list[float]:
    """Per deal: ``seat``'s win share (0..1) averaged over the ``players`` rotations."""
    import numba
    import numpy as np
    numba.set_num_threads(1)
    from kernels import layout
    from simcli.config import jobs as cfg
    per = np.zeros(deals)
    for r in range(players):
        names = [field] * players
        names[r] = seat
        job = cfg.resolve(game, None, players, seats=",".join(names))
        out = np.zeros((deals, layout.out_width(players, job.module.N_COUNTERS)), dtype=np.int64)
        job.module.play_games_serial(job.params, job.seats, seed, 0, out)
        per += _seat_share(out[:, layout.col_winners(players)], players, r)
    return list(per / players)


def _seat_share(w, players, r):
    """Seat ``r``'s win share per game from the winners' bit masks ``w``: 1 / (number of
    winners) if it is among them (0 in a game with no winner)."""
    import numpy as np
    n = np.zeros(len(w))
    for s in range(players):
        n += (w >> s) & 1
    mine = (w >> r) & 1
    return np.where(n > 0, mine / np.maximum(n, 1), 0.0)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("game")
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--old-tree", required=True, help="checkout of the old code")
    ap.add_argument("--new-tree", default=str(ROOT), help="checkout of the new code (default: this one)")
    ap.add_argument("--seat", default="mc:64:heuristic")
    ap.add_argument("--field", default="heuristic")
    ap.add_argument("--deals", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=41)
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.serve:
        print(json.dumps(shares(a.game, a.players, a.seat, a.field, a.deals, a.seed)), flush=True)
        return
    procs = {}
    for name, tree in (("old", a.old_tree), ("new", a.new_tree)):
        procs[name] = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), a.game, "--players", str(a.players),
             "--old-tree", a.old_tree, "--seat", a.seat, "--field", a.field, "--deals", str(a.deals),
             "--seed", str(a.seed), "--serve"],
            cwd=tree, stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=tree))
    got = {}
    for name, p in procs.items():
        out, _ = p.communicate()
        if p.returncode != 0:
            sys.exit(f"{name} checkout failed (exit {p.returncode})")
        got[name] = json.loads(out.strip().splitlines()[-1])
    old, new = got["old"], got["new"]
    n = len(old)
    d = [y - x for x, y in zip(old, new)]
    m = sum(d) / n
    var = sum((x - m) ** 2 for x in d) / (n - 1)
    se = math.sqrt(var / n)
    mo, mn = sum(old) / n, sum(new) / n
    print(f"{a.game} {a.players}p, one {a.seat} seat vs {a.players - 1} {a.field}, {n} deals x "
          f"{a.players} rotations, seed {a.seed}")
    print(f"old {a.old_tree}: {mo:.4f}   new {a.new_tree}: {mn:.4f}   new - old {m:+.4f} "
          f"[{m - 1.96 * se:+.4f}, {m + 1.96 * se:+.4f}]")
    print(json.dumps({"game": a.game, "players": a.players, "seat": a.seat, "field": a.field,
                      "deals": n, "seed": a.seed, "old": mo, "new": mn, "diff": m,
                      "ci": [m - 1.96 * se, m + 1.96 * se]}))


if __name__ == "__main__":
    main()
