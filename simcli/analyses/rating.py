"""One number per ladder rung: a Bradley-Terry rating from the ladder's paired games.

Each rung plays P-1 seats of the rung below on seat-rotated deals. Under the Bradley-Terry
model in its multi-player (Plackett-Luce winner) form, a seat of strength g_u against P-1 seats
of strength g_l wins with probability g_u / (g_u + (P-1) g_l), so the rung's win share per seat
w gives log(g_u / g_l) = log((P-1) w / (1-w)). The ladder's comparisons form a chain, where the
maximum-likelihood ratings are exactly these steps added up. Ratings are in Elo points
(400 log10 g) with **heuristic anchored at 0** (random below it). Each step's interval is the
rung's win-share interval (Wilson, deals as the unit) carried through the same formula; a
rating's interval adds the steps' standard errors in quadrature from the anchor (the rungs are
separate jobs; they share deal indices but not players, and this treats them as independent).
"""
from __future__ import annotations

import math

import polars as pl

from simcli.stats import Z95

ANCHOR = "heuristic"
ELO = 400 / math.log(10)


def _step(w: float, P: int) -> float:
    """Elo points of a rung over the rung below from its win share per seat held."""
    if not 0 < w < 1:
        return math.copysign(math.inf, w - 0.5)
    return ELO * math.log((P - 1) * w / (1 - w))


def ratings(ladder: pl.DataFrame) -> pl.DataFrame:
    """Pure: the ``ladder`` table -> ``ladder_ratings``: one row per rung (the first ``versus``
    too): rating, 95% interval, the step over the rung below, anchor."""
    rows = ladder.to_dicts()
    if not rows:
        return pl.DataFrame()
    P = rows[0]["players"]
    names = [rows[0]["versus"]] + [r["rung"] for r in rows]
    steps = [0.0] + [_step(r["win_share"], P) for r in rows]
    ses = [0.0] + [(_step(r["win_ci_high"], P) - _step(r["win_ci_low"], P)) / (2 * Z95) for r in rows]
    anchor = names.index(ANCHOR) if ANCHOR in names else 0
    out = []
    for i, name in enumerate(names):
        if i >= anchor:
            rating = sum(steps[anchor + 1:i + 1])
            var = sum(s * s for s in ses[anchor + 1:i + 1])
        else:
            rating = -sum(steps[i + 1:anchor + 1])
            var = sum(s * s for s in ses[i + 1:anchor + 1])
        se = math.sqrt(var)
        out.append({"rung": name, "rating": rating, "rating_ci_low": rating - Z95 * se,
                    "rating_ci_high": rating + Z95 * se, "step": steps[i], "step_se": ses[i],
                    "anchor": names[anchor]})
    return pl.DataFrame(out)
