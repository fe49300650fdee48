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
  "No significant loss" = the interval's upper end is >= 0; its lower end is the largest loss
  the run leaves possible.

    nice -n 10 python3 -m benchmarks.cheap_strong pgc --players 4 \\
        --candidates mc:16:heuristic,mc:16:tuned --cost-games 40 --trials 3 --deals 200 --seed 26

``GAME = all`` runs the recorded table (``ALL``, benchmarks/RESULTS.md), roughly 20-40 CPU-minutes:

    nice -n 10 python3 -m benchmarks.cheap_strong all --trials 3 --seed 26

Prints one row per candidate and a JSON line with every figure, per game.
"""
from __future__ import annotations

import argparse
import json
import os

from benchmarks.search_cost import cost, strength


# ``GAME = all``: the table in benchmarks/RESULTS.md ("strong play cheaper with tuned rollouts"),
# one game after the other: (game, candidates, deals, cost games per trial). forecasts-cubes has
# no tuned-rollout row (its knobs were being retrained when the table was made).
ALL = (
    ("pgc", "mc:16:heuristic,mc:16:tuned,mc:8:tuned,mc:4:tuned", 200, 24),
    ("sudden-skies", "mc:16:heuristic,mc:16:tuned,mc:4:tuned,mc:2:tuned,tuned", 300, 30),
    ("forecasts-bid", "mc:32:heuristic,race:32:heuristic,mc:16:heuristic,mc:16:tuned,race:16:heuristic,"
                      "race:16:tuned", 200, 30),
    ("forecasts-cubes", "mc:16:heuristic,race:16:heuristic,race:32:heuristic", 200, 30),
)


def run_one(game: str, players: int, ref: str, cands: list[str], cost_games: int, trials: int, deals: int,
            seed: int, skip_cost: bool, skip_strength: bool) -> dict:
    """Cost of ``ref`` and every candidate (interleaved), then each candidate's strength against ``ref``."""
    cost_txt = "no cost" if skip_cost else f"cost: whole tables, {cost_games} games x {trials} trials (median)"
    strength_txt = ("no strength" if skip_strength else
                    f"strength: 1 candidate seat vs {players - 1} ref seats, {deals} deals x {players} rotations")
    print(f"{game} {players}p, ref {ref}, seed {seed}, load {os.getloadavg()[0]:.2f}; {cost_txt}; {strength_txt}",
          flush=True)
    c = None
    if not skip_cost:
        c = cost(game, players, [ref] + cands, cost_games, seed, trials)
        g, r = c["games_per_cpu_s"], c["rollouts_per_game"]
        print(f"{'policy':>18} {'games/cpu-s':>11} {'cheaper':>7} {'roll/game':>10}", flush=True)
        for p in [ref] + cands:
            print(f"{p:>18} {g[p]:>11.2f} {g[p] / g[ref]:>6.2f}x {r[p]:>10.0f}", flush=True)
    rows = []
    for p in cands:
        row = {"policy": p}
        if c is not None:
            row.update(games_per_cpu_s=c["games_per_cpu_s"][p], rollouts_per_game=c["rollouts_per_game"][p],
                       cheaper=c["games_per_cpu_s"][p] / c["games_per_cpu_s"][ref])
        if not skip_strength:
            s = strength(game, players, p, ref, deals, seed)
            row["minus_ref"] = s
            verdict = "significant LOSS" if s["ci_high"] < 0 else ("significant gain" if s["ci_low"] > 0 else "no sig. diff")
            print(f"{p:>18} - {ref}: {s['diff']:+.4f} [{s['ci_low']:+.4f}, {s['ci_high']:+.4f}] p={s['p_value']:.3f}"
                  f"  {verdict}", flush=True)
        rows.append(row)
    out = {"game": game, "players": players, "ref": ref, "seed": seed, "deals": deals,
           "cost_games": cost_games, "trials": trials, "load": os.getloadavg(), "rows": rows}
    if c is not None:
        out["ref_games_per_cpu_s"] = c["games_per_cpu_s"][ref]
        out["ref_rollouts_per_game"] = c["rollouts_per_game"][ref]
    print(json.dumps(out), flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("game", help="a game, or 'all' for the recorded table (ALL: its candidates, deals, cost games)")
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--ref", default="mc:64:heuristic", help="the reference strong player")
    ap.add_argument("--candidates", default="mc:16:heuristic,mc:16:tuned",
                    help="comma-separated policies measured against --ref")
    ap.add_argument("--cost-games", type=int, default=None, help="games per cost trial (default 40; all: ALL's)")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--deals", type=int, default=None,
                    help="paired deals (x players rotations; default 200; all: ALL's)")
    ap.add_argument("--seed", type=int, default=26)
    ap.add_argument("--skip-cost", action="store_true")
    ap.add_argument("--skip-strength", action="store_true")
    a = ap.parse_args()
    todo = ([(g, c, a.deals or d, a.cost_games or n) for g, c, d, n in ALL] if a.game == "all"
            else [(a.game, a.candidates, a.deals or 200, a.cost_games or 40)])
    for game, cands, deals, cost_games in todo:
        run_one(game, a.players, a.ref, [c for c in cands.split(",") if c], cost_games, a.trials, deals,
                a.seed, a.skip_cost, a.skip_strength)


if __name__ == "__main__":
    main()
