"""Issue #26: what strong play costs, before and after racing the options (budget vs strength vs cost).

For each budget B it measures, on one thread:

* **cost**: games per CPU-second (``time.process_time`` around ``runner.run_jobs``, so the
  machine's load matters less than wall time would) of a whole table on the search player at
  budget B, the reference ``mc:B`` and the raced ``race:B`` interleaved trial by trial on the
  same deals; plus rollouts per game (the kernel's ``mc_rollouts`` counter, independent of load);
* **strength**: one ``race:B`` seat against ``mc:B`` seats on paired, seat-rotated deals: the
  race seat's win share minus an mc seat's, 95% interval with the deal as the unit
  (``simcli.stats.paired_difference``), the same as
  ``simcli run GAME --players P --seats race:B,mc:B,... --rotate --games DEALS``;
  optionally also each at budget B against heuristic seats (``--vs-heuristic``).

    nice -n 10 python3 -m benchmarks.search_cost forecasts-cubes --players 4 --budgets 4,16,64 \
        --cost-games 200 --deals 500 --seed 26

Prints one table row per budget and a JSON line with every figure.
"""
from __future__ import annotations

import argparse
import json
import os
import time

from simcli.config import jobs as cfg
from simcli.engine import runner
from simcli.stats import paired_difference


def table_cost(game: str, players: int, policy: str, games: int, seed: int) -> tuple[float, float, float]:
    """(CPU seconds, games, rollouts per game) for ``games`` games with every seat on ``policy``."""
    job = cfg.resolve(game, None, players, seats=",".join([policy] * players))
    t = time.process_time()
    (res,) = runner.run_jobs([job], games, seed, threads=1, progress=False)
    cpu = time.process_time() - t
    names = [c.name for c in job.module.COUNTERS]
    rollouts = (float(res.acc.counters[names.index("mc_rollouts")]) / games if "mc_rollouts" in names
                else float("nan"))
    return cpu, float(games), rollouts


def cost(game: str, players: int, policies: list[str], games: int, seed: int, trials: int) -> dict:
    """Median games per CPU-second of each policy, trials interleaved (A B A B ...), same deals."""
    rates = {p: [] for p in policies}
    rolls = {}
    for p in policies:  # compile (or load) the build, outside the timing
        table_cost(game, players, p, 1, seed)
    for _ in range(trials):
        for p in policies:
            cpu, n, r = table_cost(game, players, p, games, seed)
            rates[p].append(n / cpu)
            rolls[p] = r
    med = {p: sorted(v)[len(v) // 2] for p, v in rates.items()}
    return {"games_per_cpu_s": med, "rollouts_per_game": rolls}


def strength(game: str, players: int, seat: str, opponent: str, deals: int, seed: int) -> dict:
    """``seat`` (one seat) minus ``opponent`` win share on paired rotated deals, 95% interval."""
    job = cfg.resolve(game, None, players, seats=",".join([seat] + [opponent] * (players - 1)))
    (res,) = runner.run_jobs([job], deals, seed, threads=1, progress=False, rotate=True)
    d = paired_difference(res.policy, 0, 1)
    return {k: float(d[k]) for k in ("diff", "ci_low", "ci_high", "p_value")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("game")
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--budgets", default="4,16,64")
    ap.add_argument("--old", default="mc", help="the reference search (flat Monte Carlo)")
    ap.add_argument("--new", default="race", help="the raced search")
    ap.add_argument("--rollout", default="heuristic")
    ap.add_argument("--cost-games", type=int, default=200, help="games per cost trial")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--deals", type=int, default=500, help="paired deals (x players rotations)")
    ap.add_argument("--seed", type=int, default=26)
    ap.add_argument("--vs-heuristic", action="store_true", help="also each policy against heuristic seats")
    ap.add_argument("--skip-strength", action="store_true")
    a = ap.parse_args()
    rows = []
    print(f"{a.game} {a.players}p, seed {a.seed}, load {os.getloadavg()[0]:.2f}; cost: whole tables, "
          f"{a.cost_games} games x {a.trials} trials (median); strength: {a.deals} deals x {a.players} rotations")
    print(f"{'B':>5} {'old g/cpu-s':>11} {'new g/cpu-s':>11} {'speedup':>7} {'old roll/g':>10} {'new roll/g':>10}"
          f"  new - old win share [95%]")
    for b in (int(x) for x in a.budgets.split(",")):
        old, new = f"{a.old}:{b}:{a.rollout}", f"{a.new}:{b}:{a.rollout}"
        c = cost(a.game, a.players, [old, new], a.cost_games, a.seed, a.trials)
        row = {"game": a.game, "players": a.players, "budget": b, **c}
        g = c["games_per_cpu_s"]
        r = c["rollouts_per_game"]
        line = (f"{b:>5} {g[old]:>11.1f} {g[new]:>11.1f} {g[new] / g[old]:>6.2f}x {r[old]:>10.0f} {r[new]:>10.0f}")
        if not a.skip_strength:
            s = strength(a.game, a.players, new, old, a.deals, a.seed)
            row["new_minus_old"] = s
            line += f"  {s['diff']:+.4f} [{s['ci_low']:+.4f}, {s['ci_high']:+.4f}]"
        if a.vs_heuristic:
            for p in (old, new):
                s = strength(a.game, a.players, p, "heuristic", a.deals, a.seed)
                row[f"{p}_minus_heuristic"] = s
                line += f"  {p} vs heur {s['diff']:+.3f} [{s['ci_low']:+.3f}, {s['ci_high']:+.3f}]"
        print(line, flush=True)
        rows.append(row)
    print(json.dumps({"load": os.getloadavg(), "rows": rows}))


if __name__ == "__main__":
    main()
