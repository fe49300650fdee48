"""Which ``tuned`` knobs matter? One tuned seat against heuristic seats on paired, seat-rotated deals.

A private probe for issue #24 until ``simcli train`` exists; not a trainer. Each setting changes a
few knobs from their defaults (= the heuristic); the tuned seat's win share minus a heuristic
seat's on the same deals is printed with its 95% interval (simcli.stats.paired_difference, the
deal as the unit). With no settings given, every knob is tried alone at its lo and at its hi.

    python3 -m benchmarks.knob_probe pgc 4 4000 [w_end=0,strong_rank=13 ...] [--seed 7]
"""
from __future__ import annotations

import argparse
import time

from kernels.spec import SEAT_KNOBS

from simcli.config import jobs as cfg
from simcli.engine import runner
from simcli.stats import paired_difference


def parse_setting(text: str, knobs: dict) -> dict:
    out = {}
    for part in filter(None, text.split(",")):
        name, _, value = part.partition("=")
        k = knobs[name.strip()]
        v = int(value)
        if not k.lo <= v <= k.hi:
            raise SystemExit(f"knob {k.name}: {v} is outside {k.lo}..{k.hi}")
        out[k.name] = v
    return out


def default_settings(mod) -> list[dict]:
    return [{k.name: v} for k in mod.KNOBS for v in (k.lo, k.hi) if v != k.default]


def probe(game: str, players: int, deals: int, setting: dict, seed: int, variant: str | None = None,
          opponent: str = "heuristic", seat: str = "tuned", opponent_setting: dict | None = None):
    """Paired difference (``seat`` with these knobs) - ``opponent`` on rotated deals. ``seat`` is
    ``tuned`` or e.g. ``mc:16:tuned`` (an mc seat whose rollouts play the knobs); the other seats'
    knob columns get ``opponent_setting`` (for a ``tuned`` or ``mc:B:tuned`` opponent)."""
    job = cfg.resolve(game, variant, players, seats=",".join([seat] + [opponent] * (players - 1)))
    mod = job.module
    for k in mod.KNOBS:
        job.seats[0, SEAT_KNOBS + k.index] = setting.get(k.name, k.default)
        job.seats[1:players, SEAT_KNOBS + k.index] = (opponent_setting or {}).get(k.name, k.default)
    (res,) = runner.run_jobs([job], deals, seed, threads=1, progress=False, rotate=True)
    pt = res.policy
    return paired_difference(pt, 0, 1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("game")
    ap.add_argument("players", type=int)
    ap.add_argument("deals", type=int)
    ap.add_argument("settings", nargs="*", help="knob=value[,knob=value...] per setting")
    ap.add_argument("--seed", type=int, default=24)
    ap.add_argument("--variant", default=None)
    ap.add_argument("--opponent", default="heuristic")
    ap.add_argument("--seat", default="tuned", help="the probed seat: tuned, or mc:BUDGET:tuned")
    ap.add_argument("--opponent-knobs", default="", help="knob=value,... of tuned opponents")
    a = ap.parse_args()
    mod = cfg.game_module(a.game)
    knobs = {k.name: k for k in mod.KNOBS}
    settings = [parse_setting(s, knobs) for s in a.settings] or default_settings(mod)
    print(f"{a.game} {a.players}p, {a.deals} deals x {a.players} rotations, seed {a.seed}: "
          f"{a.seat} (1 seat) minus {a.opponent} {a.opponent_knobs} win share, 95% interval")
    for s in settings:
        t = time.perf_counter()
        d = probe(a.game, a.players, a.deals, s, a.seed, a.variant, a.opponent, a.seat,
                  parse_setting(a.opponent_knobs, knobs))
        label = ",".join(f"{k}={v}" for k, v in s.items()) or "(defaults)"
        print(f"  {label:48} {d['diff']:+.4f} [{d['ci_low']:+.4f}, {d['ci_high']:+.4f}]"
              f"  ({time.perf_counter() - t:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
