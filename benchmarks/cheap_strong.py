"""Issue #26: cheaper search players at the reference's strength (budget vs strength vs cost ladder).

The reference is the project's strong player ``mc:64:heuristic`` (``mc``). For each candidate
policy (e.g. ``mc:16:tuned``: a quarter of the samples, rollouts on the game's trained knobs)
it measures, on one thread and the same deals:

* **cost**: games per CPU-second (``time.process_time`` around ``runner.run_jobs``) of a whole
  table with every seat on the policy, the reference and every candidate interleaved trial by
  trial (median of ``--trials``), and rollouts per game (the kernels' ``mc_rollouts`` counter);
  ``cheaper`` = candidate games/CPU-s / reference games/CPU-s;
* **strength**: one candidate seat against reference seats in the others, every deal played in
  every seat rotation, the candidate's win share minus a reference seat's, 95% interval with the
  deal as the unit (``simcli.stats.paired_difference``); the same as
  ``simcli run GAME --players P --seats CAND,REF,REF,REF --rotate --games DEALS --seed SEED``.
  "No significant loss" = the interval's upper end is >= 0; its lower end says how large a loss
  the run can rule out.

    nice -n 10 python3 -m benchmarks.cheap_strong pgc --players 4 \\
        --candidates mc:16:heuristic,mc:16:tuned --cost-games 40 --trials 3 --deals 200 --seed 26

Prints one row per candidate and a JSON line with every figure.
"""
from __future__ import annotations

import argparse
import json
import os

from benchmarks.search_cost import cost, strength


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("game")
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--ref", default="mc:64:heuristic", help="the reference strong player")
    ap.add_argument("--candidates", default="mc:16:heuristic,mc:16:tuned",
                    help="comma-separated policies measured against --ref")
    ap.add_argument("--cost-games", type=int, default=40, help="games per cost trial")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--deals", type=int, default=200, help="paired deals (x players rotations)")
    ap.add_argument("--seed", type=int, default=26)
    ap.add_argument("--skip-cost", action="store_true")
    ap.add_argument("--skip-strength", action="store_true")
    a = ap.parse_args()
    cands = [c for c in a.candidates.split(",") if c]
    print(f"{a.game} {a.players}p, ref {a.ref}, seed {a.seed}, load {os.getloadavg()[0]:.2f}; cost: whole tables, "
          f"{a.cost_games} games x {a.trials} trials (median); strength: 1 candidate seat vs {a.players - 1} ref seats, "
          f"{a.deals} deals x {a.players} rotations", flush=True)
    c = None
    if not a.skip_cost:
        c = cost(a.game, a.players, [a.ref] + cands, a.cost_games, a.seed, a.trials)
        g, r = c["games_per_cpu_s"], c["rollouts_per_game"]
        print(f"{'policy':>18} {'games/cpu-s':>11} {'cheaper':>7} {'roll/game':>10}", flush=True)
        for p in [a.ref] + cands:
            print(f"{p:>18} {g[p]:>11.2f} {g[p] / g[a.ref]:>6.2f}x {r[p]:>10.0f}", flush=True)
    rows = []
    for p in cands:
        row = {"policy": p}
        if c is not None:
            row.update(games_per_cpu_s=c["games_per_cpu_s"][p], rollouts_per_game=c["rollouts_per_game"][p],
                       cheaper=c["games_per_cpu_s"][p] / c["games_per_cpu_s"][a.ref])
        if not a.skip_strength:
            s = strength(a.game, a.players, p, a.ref, a.deals, a.seed)
            row["minus_ref"] = s
            verdict = "significant LOSS" if s["ci_high"] < 0 else ("significant gain" if s["ci_low"] > 0 else "no sig. diff")
            print(f"{p:>18} - {a.ref}: {s['diff']:+.4f} [{s['ci_low']:+.4f}, {s['ci_high']:+.4f}] p={s['p_value']:.3f}"
                  f"  {verdict}", flush=True)
        rows.append(row)
    out = {"game": a.game, "players": a.players, "ref": a.ref, "seed": a.seed, "deals": a.deals,
           "cost_games": a.cost_games, "trials": a.trials, "load": os.getloadavg(), "rows": rows}
    if c is not None:
        out["ref_games_per_cpu_s"] = c["games_per_cpu_s"][a.ref]
        out["ref_rollouts_per_game"] = c["rollouts_per_game"][a.ref]
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
