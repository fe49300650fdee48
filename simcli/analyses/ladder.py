"""The skill ladder: random, heuristic, then the search player at doubling budgets.

Each rung plays the rung below it on paired, seat-rotated deals: one seat holds the new rung,
every other seat the previous one, and every deal is replayed once per rotation. The ladder
table reports, per rung, its win share per seat held (95% interval over deals) and its paired
win-share difference against the previous rung; with equal skill both seats' shares would be
1/P, so a curve flattening toward 1/P says more search no longer buys wins.

``--rungs`` names the rungs instead (any policies, weakest first). ``--both-ways`` also plays
each pair the other way round on the same deals (one seat of the lower rung among P-1 seats of
the upper) and says whether the pair has a table-free order (``order``): in a game where the
odd seat out gains whichever it is (forecasts-cubes' forecasts, docs/search.md), "stronger"
means nothing without the table, and a rating that assumes one order (Bradley-Terry) misleads.
"""
from __future__ import annotations

from pathlib import Path

import polars as pl

from simcli.analyses import rating
from simcli.config import jobs as cfg
from simcli.errors import SimError
from simcli.stats import paired_difference, policy_share
from simcli.engine.runspec import Analysis


def rungs(game: str, budgets: list[int], rollout: str, variant: str | None = None,
          players: int | None = None, tuned: bool = True) -> list[str]:
    """random, heuristic, tuned (a game with a tuned policy and a trained file for this variant
    and player count), then mc at each budget."""
    mod = cfg.game_module(game)
    if not rollout.strip():
        raise SimError(f"--rollout is empty; give the mc rollout policy, one of "
                       f"{', '.join(p for p in mod.POLICIES if p != 'mc')}")
    names = ["random", "heuristic"]
    if tuned and "tuned" in mod.POLICIES and players is not None:
        from simcli.config.tuned import default_file
        if default_file(game, variant, players).is_file():
            names.append("tuned")
    if "mc" in mod.POLICIES:
        names += [f"mc:{b}:{rollout}" for b in budgets]
    return names


def parse_rungs(game: str, text: str) -> list[str]:
    """``--rungs``: comma-separated policies, weakest first, at least two, each once (compared
    with every argument filled in: ``mc:64`` and ``mc:64:heuristic`` are one policy)."""
    names = [w.strip() for w in text.split(",") if w.strip()]
    if len(names) < 2:
        raise SimError(f"--rungs {text!r}: give at least two policies, weakest first "
                       f"(e.g. heuristic,tuned,mc:64)")
    mod = cfg.game_module(game)
    full = [cfg.parse_policy(w, mod.POLICIES, getattr(mod, "POLICY_ARGS", {}),
                             getattr(mod, "RESTRICTIONS", ()))[0] for w in names]
    if len(set(full)) < len(full):
        raise SimError(f"--rungs {text!r} names a policy twice ({', '.join(full)}); each rung plays "
                       f"the one below it")
    return names


def ladder_jobs(game: str, players: int | None, variant: str | None, budgets: list[int], rollout: str,
                tuned: bool = True, names: list[str] | None = None, both_ways: bool = False):
    """(upper, lower, job) per rung: the upper rung in seat 0 against P-1 lower seats; with
    ``both_ways`` each followed by its reverse seating (one lower seat among upper seats, label
    ``seating`` = ``reverse``). ``names`` (``--rungs``) replaces the default rungs."""
    base = cfg.resolve(game, variant, players)
    P = base.players
    out = []
    if names is None:
        names = rungs(game, budgets, rollout, base.variant, P, tuned)
    for lower, upper in zip(names, names[1:]):
        labels = {"rung": upper, "seating": "one up"} if both_ways else {"rung": upper}
        seats = ",".join([upper] + [lower] * (P - 1))
        out.append((upper, lower, cfg.resolve(game, base.variant, P, seats=seats, labels=labels)))
        if both_ways:
            seats = ",".join([lower] + [upper] * (P - 1))
            out.append((upper, lower, cfg.resolve(game, base.variant, P, seats=seats,
                                                  labels={"rung": upper, "seating": "reverse"})))
    return out


def order_verdict(f: dict, r: dict) -> str:
    """Does a rung pair have a table-free order? ``f``: the upper seat among lower seats, upper
    minus lower; ``r``: the lower seat among upper seats, lower minus upper (paired differences
    with 95% intervals). Evidence for the upper rung: f above 0 or r below 0; for the lower: f
    below 0 or r above 0 (each interval clear of 0)."""
    up = f["ci_low"] > 0 or r["ci_high"] < 0
    down = f["ci_high"] < 0 or r["ci_low"] > 0
    if up and down:
        if f["diff"] > 0:
            return "odd seat out wins: no table-free order"
        return "the majority wins: no table-free order"
    if up:
        return "upper stronger"
    if down:
        return "lower stronger"
    return "level"


def ladder_table(results) -> pl.DataFrame:
    """One row per rung against the rung below; with reverse seatings (``--both-ways``) also the
    lower seat's paired difference among upper seats and the pair's ``order``."""
    rows = []
    for r in results:
        pt = r.policy
        job = r.job
        if (getattr(job, "labels", None) or {}).get("seating") == "reverse":
            # the lower rung holds seat 0 here: its one seat minus an upper seat
            d = paired_difference(pt, pt.names.index(job.policies[0]),
                                  1 - pt.names.index(job.policies[0]))
            row = rows[-1]
            row.update({"reverse_diff": d["diff"], "reverse_ci_low": d["ci_low"],
                        "reverse_ci_high": d["ci_high"], "reverse_p_value": d["p_value"]})
            row["order"] = order_verdict({"diff": row["diff_vs_previous"], "ci_low": row["diff_ci_low"],
                                          "ci_high": row["diff_ci_high"]}, d)
            continue
        iu = pt.names.index(r.job.policies[0])  # the new rung holds seat 0 before rotation
        il = 1 - iu
        m, lo, hi = policy_share(pt, iu)
        d = paired_difference(pt, iu, il)
        rows.append({"game": r.job.game, "variant": r.job.variant, "players": r.job.players,
                     "rung": pt.names[iu], "versus": pt.names[il], "deals": pt.games,
                     "win_share": m, "win_ci_low": lo, "win_ci_high": hi, "equal_skill_share": 1 / r.job.players,
                     "diff_vs_previous": d["diff"], "diff_ci_low": d["ci_low"], "diff_ci_high": d["ci_high"],
                     "p_value": d["p_value"]})
    return pl.DataFrame(rows)


def ladder_png(table: pl.DataFrame) -> bytes:
    from simcli.report.plots import figure_bytes, pyplot
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
    x = list(range(table.height))
    y = table["win_share"].to_list()
    lo = [a - b for a, b in zip(y, table["win_ci_low"].to_list())]
    hi = [b - a for a, b in zip(y, table["win_ci_high"].to_list())]
    ax.errorbar(x, y, yerr=[lo, hi], marker="o", capsize=4, label="win share per seat vs previous rung")
    ax.axhline(table["equal_skill_share"][0], color="grey", ls="--", lw=1, label="equal skill (1/P)")
    ax.set_xticks(x, table["rung"].to_list(), rotation=20, ha="right")
    ax.set_ylabel("win share per seat held")
    g = table.row(0, named=True)
    ax.set_title(f"Skill ladder: {g['game']} {g['variant']} {g['players']}p ({g['deals']} deals x rotations)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return figure_bytes(fig)


def parse_budgets(text: str) -> list[int]:
    try:
        b = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise SimError(f"--budgets {text!r} is not a comma-separated list of whole numbers") from None
    if not b or any(x < 1 or x > 4096 for x in b):
        raise SimError(f"--budgets {text!r}: each budget must be in 1..4096")
    if any(b2 <= b1 for b1, b2 in zip(b, b[1:])):
        # each rung plays the rung below it: a ladder only reads as a skill curve if it climbs
        raise SimError(f"--budgets {text!r} must increase from rung to rung (e.g. 4,8,16,32,64)")
    return b


class LadderAnalysis(Analysis):
    """`simcli ladder` on the run pipeline: every rung a rotated job; prints and writes the ladder."""
    name = "ladder"
    has_skill = False   # the ladder is itself the comparison across levels

    def __init__(self, budgets: str, rollout: str, names: list[str] | None = None,
                 both_ways: bool = False):
        self.budgets, self.rollout = budgets, rollout
        self.names, self.both_ways = names, both_ways

    def tables(self, spec, results) -> dict:
        tables = super().tables(spec, results)
        tables["ladder"] = ladder_table(results)
        tables["ladder_ratings"] = rating.ratings(tables["ladder"])
        return tables

    def lines(self, spec, tables, results) -> list[str]:
        from simcli.report import tables as report
        from simcli.report.fmt import table_lines
        lad = tables["ladder"]
        text = table_lines(lad.select(
            "rung", "versus", "deals", "win_share", "win_ci_low", "win_ci_high",
            "diff_vs_previous", "diff_ci_low", "diff_ci_high"),
            title="Skill ladder (each rung against the rung below, same deals)", wide=spec.wide)
        if "order" in lad.columns:
            text = list(text) + list(table_lines(lad.select(
                "rung", "versus", "reverse_diff", "reverse_ci_low", "reverse_ci_high", "order"),
                title="The other way round (one seat of the lower rung among the upper; same deals)",
                wide=spec.wide))
        ratings = table_lines(tables["ladder_ratings"].select("rung", "rating", "rating_ci_low", "rating_ci_high"),
                              title="Ratings", wide=spec.wide)
        note = (f"rating: Bradley-Terry (Plackett-Luce winner) from the paired games, Elo points, "
                f"{tables['ladder_ratings']['anchor'][0]} = 0 (simcli/analyses/rating.py)")
        lines = list(text) + list(ratings) + [note]
        if "order" in lad.columns:
            loose = [f"{u} / {v}" for u, v, o in zip(lad["rung"], lad["versus"], lad["order"])
                     if "no table-free order" in o]
            if loose:
                lines.append(f"  ! no table-free order between {', '.join(loose)}: the ratings assume one "
                             f"(Bradley-Terry); read those steps as the table's, not the players' "
                             f"(each seat's gain depends on who else sits at the table)")
            else:
                lines.append("  every pair played both ways keeps one order (95% intervals per pair)")
        return lines + report.skill_gaps(tables)

    def files(self, spec, tables) -> dict:
        return {"ladder.png": ladder_png(tables["ladder"])}

    def meta(self, spec, results) -> dict:
        m = {"budgets": self.budgets, "rollout": self.rollout}
        if self.names is not None:
            m = {"rungs": ",".join(self.names)}
        if self.both_ways:
            m["both_ways"] = True
        return {"ladder": m}
