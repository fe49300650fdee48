"""Integer tallies -> Polars tables. Floats appear here for the first time.

Tables (schema in docs/reports.md):
  seats     one row per job and seat: win share with a 95% interval over deals, mean place, score stats
  variants  one row per job: tie/timeout rates, seat-0 advantage, balance, length, leader gap
  scores    score histogram per seat (non-zero bins)
  lengths   game-length histogram (non-zero bins)
  counters  the game's own counters: raw integer sums (kind = "sum") and derived metrics
  policies  rotated runs only: win share per policy (per seat it holds) with a paired interval
  paired    rotated runs only: win-share difference between two policies on the same deals
  arc       one row per job and checkpoint (from the start and from the end): how often a leader
            there goes on to win, and how often the lead changes there (games with opponents)
"""
from __future__ import annotations

import math

import polars as pl

from kernels import arc
from kernels.layout import SHARE_UNIT
from kernels.tally import M_DEALS, M_DECISIONS, M_GAMES, M_GAP_GAMES, M_GAP_SUM, M_TIES, M_TIMEOUTS
from simcli.engine.runner import Result
from simcli.stats import paired_difference, policy_share, ratio_interval, seat_share

# the method and unit behind every interval column, for docs and the HTML footnote
SHARE_CI_METHOD = "Wilson score interval with effective n = deals x p(1-p) / s^2 (s^2: variance of per-deal shares); unit: the deal"
DIFF_CI_METHOD = "normal interval of the mean per-deal difference; unit: the deal"

QUANTILES = (("score_p05", 0.05), ("score_p25", 0.25), ("score_p50", 0.50), ("score_p75", 0.75),
             ("score_p95", 0.95))


def key_columns(r: Result) -> dict:
    j = r.job
    d = {"game": j.game, "variant": j.variant, "players": j.players, "policies": j.policy_label}
    d.update(j.labels)
    return d


def _frame(rows: list[dict]) -> pl.DataFrame:
    return pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame()


def histogram_tables(results: list[Result]) -> tuple[pl.DataFrame, pl.DataFrame]:
    score_rows, length_rows = [], []
    for r in results:
        k = key_columns(r)
        acc = r.acc
        for s in range(acc.n_seats):
            for b in acc.score_hist[s].nonzero()[0]:
                score_rows.append({**k, "seat": s, "score": int(b) + acc.score_lo,
                                   "count": int(acc.score_hist[s, b])})
        for b in acc.len_hist.nonzero()[0]:
            length_rows.append({**k, "length": int(b) + acc.len_lo, "count": int(acc.len_hist[b])})
    return _frame(score_rows), _frame(length_rows)


def score_stats(scores: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Mean, sd, min, quantiles, max per seat from the (score, count) histogram.

    Quantile q is the smallest score whose cumulative count reaches q * n (inverse CDF).
    """
    by = keys + ["seat"]
    n = pl.col("count").sum()
    mean = (pl.col("score") * pl.col("count")).sum() / n
    return (
        scores.lazy()
        # histogram bins in score order within each seat
        .sort(by + ["score"])
        .group_by(by, maintain_order=True)
        .agg(
            mean.alias("score_mean"),
            # sample sd from the weighted second moment
            (((pl.col("score") - mean) ** 2 * pl.col("count")).sum() / (n - 1).clip(lower_bound=1))
            .sqrt().alias("score_sd"),
            pl.col("score").min().alias("score_min"),
            *[pl.col("score").filter(pl.col("count").cum_sum() >= q * n).first().alias(name)
              for name, q in QUANTILES],
            pl.col("score").max().alias("score_max"),
        )
        .collect()
    )


def seat_rows(results: list[Result]) -> list[dict]:
    rows = []
    for r in results:
        k = key_columns(r)
        acc = r.acc
        games = int(acc.misc[M_GAMES])
        deals = int(acc.misc[M_DEALS])
        for s in range(acc.n_seats):
            share = acc.win_units[s] / SHARE_UNIT / games if games else float("nan")
            ci = seat_share(acc, s, r.rotations)
            places = acc.place_counts[s]
            placed = places.sum()
            mean_place = float((places * range(len(places))).sum() / placed) if placed else float("nan")
            policy = r.job.policies[s]
            if r.rotations > 1 and s < r.job.players:
                policy = "rotated"
            rows.append({**k, "seat": s, "policy": policy, "games": games, "deals": deals,
                         "win_share": share, "win_ci_low": ci["low"], "win_ci_high": ci["high"],
                         "win_se": ci["se"], "mean_place": mean_place})
    return rows


def variant_rows(results: list[Result]) -> list[dict]:
    rows = []
    for r in results:
        acc = r.acc
        games = int(acc.misc[M_GAMES])
        S = acc.n_seats
        shares = [acc.win_units[s] / SHARE_UNIT / games for s in range(S)] if games else [0.0] * S
        lengths = range(acc.len_lo, acc.len_lo + len(acc.len_hist))
        n = acc.len_hist.sum()
        lmean = float(sum(l * c for l, c in zip(lengths, acc.len_hist)) / n) if n else float("nan")
        lvar = float(sum(c * (l - lmean) ** 2 for l, c in zip(lengths, acc.len_hist)) / max(n - 1, 1))
        gap_games = int(acc.misc[M_GAP_GAMES])
        rows.append({
            **key_columns(r), "games": games, "deals": r.games, "rotations": r.rotations,
            "tie_rate": acc.misc[M_TIES] / games if games else float("nan"),
            "timeout_rate": acc.misc[M_TIMEOUTS] / games if games else float("nan"),
            # a solo game has no seats to compare: its win share is the success rate
            "seat0_advantage": shares[0] - 1 / S if S > 1 else None,
            "balance": 1 - (max(shares) - min(shares)) if S > 1 else None,
            "length_mean": lmean, "length_sd": math.sqrt(lvar),
            "leader_gap": acc.misc[M_GAP_SUM] / gap_games if gap_games else float("nan"),
            "decisions_per_game": acc.misc[M_DECISIONS] / games if games else float("nan"),
            "length_unit": r.job.module.LENGTH_UNIT,
            **arc_metrics(acc),
            "wall_s": r.wall,
        })
    return rows


ARC_COLUMNS = ("arc_games", "arc_excluded", "checkpoints_mean", "lead_changes", "lead_changes_sd",
               "comeback_rate", "decided_at", "decided_at_sd", "last_swing")


def arc_metrics(acc) -> dict:
    """The game-arc columns of ``variants`` from the integer arc sums (kernels/arc.py).

    Over games with checkpoints and a winner (``arc_games``; timeouts are ``arc_excluded``):
    lead_changes (mean and sd per game), comeback_rate, decided_at (mean and sd of k/K),
    last_swing. All None for a game without checkpoints (solo).
    """
    x = acc.arc_misc
    n = int(x[arc.X_GAMES])
    if n == 0:
        cols = dict.fromkeys(ARC_COLUMNS)
        if x[arc.X_EXCLUDED]:   # every game with checkpoints timed out
            cols.update(arc_games=0, arc_excluded=int(x[arc.X_EXCLUDED]))
        return cols

    def sd(total, total_sq, unit=1):
        m = total / n / unit
        return math.sqrt(max(total_sq / unit / unit / n - m * m, 0.0) * n / max(n - 1, 1))

    u = arc.DECIDED_UNIT
    return {
        "arc_games": n, "arc_excluded": int(x[arc.X_EXCLUDED]),
        "checkpoints_mean": x[arc.X_CHECKPOINTS] / n,
        "lead_changes": x[arc.X_CHANGES] / n,
        "lead_changes_sd": sd(int(x[arc.X_CHANGES]), int(x[arc.X_CHANGES_SQ])),
        "comeback_rate": x[arc.X_COMEBACKS] / n,
        "decided_at": x[arc.X_DECIDED] / u / n,
        "decided_at_sd": sd(int(x[arc.X_DECIDED]), int(x[arc.X_DECIDED_SQ]), u),
        "last_swing": x[arc.X_SWINGS] / n,
    }


def arc_rows(results: list[Result]) -> list[dict]:
    """The ``arc`` table: per job, checkpoints 1..DEPTH from the start and 0..DEPTH-1 from the
    end (0 = the final checkpoint), over games with a winner that reach them."""
    rows = []
    for r in results:
        k = key_columns(r)
        acc = r.acc
        deals = int(acc.misc[M_DEALS])
        for counted, table, first, slot0 in (("start", acc.arc_start, 1, 0),
                                             ("end", acc.arc_end, 0, arc.DEPTH)):
            for i in range(table.shape[0]):
                games = int(table[i, arc.T_GAMES])
                if not games:
                    continue
                share = table[i, arc.T_LEADER_WINS] / games
                # the deal is the unit: a ratio estimator over deals (a deal's rotations together)
                d = [int(x) for x in acc.arc_deal[slot0 + i]]
                _, lo, hi = ratio_interval(*d, deals)
                lo, hi = (lo, hi) if lo == lo else (None, None)   # no interval: null
                cg = int(table[i, arc.T_CHANGE_GAMES])
                rows.append({**k, "counted": counted, "checkpoint": first + i, "games": games,
                             "leader_wins": share, "ci_low": lo, "ci_high": hi,
                             "lead_change_rate": table[i, arc.T_CHANGES] / cg if cg else None})
    return rows


def counter_rows(results: list[Result]) -> list[dict]:
    rows = []
    for r in results:
        k = key_columns(r)
        mod = r.job.module
        sums = {c.name: int(v) for c, v in zip(mod.COUNTERS, r.acc.counters)}
        for name, v in sums.items():
            rows.append({**k, "kind": "sum", "metric": name, "value": float(v)})
        games = int(r.acc.misc[M_GAMES])
        for name, v in mod.derived_metrics(sums, games, r.job.players, r.job.params).items():
            rows.append({**k, "kind": "metric", "metric": name, "value": float(v)})
    return rows


def policy_rows(results: list[Result]) -> tuple[list[dict], list[dict]]:
    """Rotated runs: win share per policy, and paired differences between policies."""
    pol, paired = [], []
    for r in results:
        pt = r.policy
        if pt is None:
            continue
        k = key_columns(r)
        for qi, name in enumerate(pt.names):
            m, lo, hi = policy_share(pt, qi)
            pol.append({**k, "policy": name, "seats_held": int(pt.seats_held[qi]), "deals": pt.games,
                        "rotations": pt.rotations, "win_share": m, "win_ci_low": lo, "win_ci_high": hi})
        for a in range(len(pt.names)):
            for b in range(a + 1, len(pt.names)):
                d = paired_difference(pt, a, b)
                paired.append({**k, "policy_a": pt.names[a], "policy_b": pt.names[b], "deals": pt.games,
                               **d})
    return pol, paired


def skill_gaps(tables: dict[str, pl.DataFrame]) -> list[str]:
    """One line per job with a heuristic-vs-random paired comparison."""
    paired = tables.get("paired")
    lines = []
    if paired is None or not paired.height:
        return lines
    for row in paired.iter_rows(named=True):
        pair = {row["policy_a"], row["policy_b"]}
        if pair == {"heuristic", "random"}:
            sign = 1 if row["policy_a"] == "heuristic" else -1
            lo, hi = sorted((sign * row["ci_low"], sign * row["ci_high"]))
            lines.append(f"skill gap {row['game']}/{row['variant']}/{row['players']}p: heuristic - random "
                         f"win share {sign * row['diff']:+.4f} [{lo:+.4f}, {hi:+.4f}] "
                         f"over {row['deals']} paired deals")
    return lines


def build_tables(results: list[Result]) -> dict[str, pl.DataFrame]:
    """All report tables for a list of job results."""
    key_names = list(dict.fromkeys(c for r in results for c in key_columns(r)))
    scores, lengths = histogram_tables(results)
    seats = _frame(seat_rows(results))
    if scores.height:
        seats = seats.join(score_stats(scores, key_names), on=key_names + ["seat"], how="left",
                           nulls_equal=True)
    tables = {
        "seats": seats,
        "variants": _frame(variant_rows(results)),
        "scores": scores,
        "lengths": lengths,
        "counters": _frame(counter_rows(results)),
    }
    arcs = arc_rows(results)
    if arcs:
        tables["arc"] = _frame(arcs)
    pol, paired = policy_rows(results)
    if pol:
        tables["policies"] = _frame(pol)
        tables["paired"] = _frame(paired)
    return tables
