"""Findings: what a run's numbers mean, worst first (issue #25).

Pure functions: a run's tables (the dict of Polars frames ``execute`` builds, plus a command's
own tables: ``ablations``, ``tune``, ``ladder``, a check's comparison) and ``Settings`` -> the
``findings`` table and the printed verdict lines.

Every finding is one row with the columns of ``COLUMNS``. Its test's p-value is adjusted with
Holm's step-down over every test of the run (``stats.holm_adjusted``), and a row is *flagged*
when that adjusted p is at most ``alpha`` and the effect is at least the practical
``threshold`` (default 0.02 of win share): tiny but significant effects stay out of the
headline, and stay in the table. Kinds (each command adds its own):

  seat         a seat's win share against the fair share 1/S (every player seat on one policy,
               or seats rotated); z test with the per-deal standard error (``win_se``)
  policy       two policies on the same deals (``paired``, rotated runs): the paired difference
  timeouts     games ended by the turn cap (stalemates): one-sided test that the rate exceeds
               the threshold; flagged when it does (effect = the rate)
  identical    a variant whose every number equals another variant's with the same players and
               policies: its rule changes nothing here (no test; always flagged)
  restriction  ablate: a restricted seat that beats its unrestricted base on the same deals
               (flagged only for a gain: the base policy misplays that option)
  ladder       ladder: a rung against the rung below (flagged when the stronger rung loses); with
               --both-ways also the other way round (effect: the upper rung's seats minus the one
               lower seat among them; flagged when the upper rung loses there too)
  tune         tune: the best candidate's metric against the target (flagged when it misses)
  check        check: a metric that moved against the baseline (flagged = the check fails)
  expectation  check: a designer expectation that does not hold (no test; always flagged)

The key columns are ``KEYS`` plus ``setting`` (sweep axes, dates, as ``name=value`` text). A
future ``skill`` column (issue #24) is carried when the source tables have one.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import polars as pl

from simcli import stats

DEFAULT_THRESHOLD = 0.02     # win share: effects smaller than this are not headlines
DEFAULT_ALPHA = 0.05         # family-wise error rate over every test of one run (Holm)
KEYS = ("game", "variant", "players", "policies")
OPTIONAL_KEYS = ("skill",)   # carried when present (issue #24's skill levels)
COLUMNS = ("game", "variant", "players", "policies", "setting", "kind", "subject", "effect",
           "ci_low", "ci_high", "p_value", "p_holm", "flagged", "message")
SCHEMA = {"game": pl.String, "variant": pl.String, "players": pl.Int64, "policies": pl.String,
          "setting": pl.String, "kind": pl.String, "subject": pl.String, "effect": pl.Float64,
          "ci_low": pl.Float64, "ci_high": pl.Float64, "p_value": pl.Float64, "p_holm": pl.Float64,
          "flagged": pl.Boolean, "message": pl.String}
# columns of a job's rows that are neither keys nor measurements: the rest are its setting
NOT_SETTING = {"seat", "policy", "games", "deals", "rotations", "length_unit", "counted", "kind",
               "metric", "note", "moved", "score", "length", "count", "value"}


@dataclass
class Settings:
    threshold: float = DEFAULT_THRESHOLD
    alpha: float = DEFAULT_ALPHA
    target: dict = field(default_factory=dict)   # tune: {"metric", "goal", "value"}
    skill_note: bool = True      # a one-level verdict says how to check it at others (--skill)


# ------------------------------------------------------------------ rows of each kind

def _num(v) -> float | None:
    return None if v is None or (isinstance(v, float) and v != v) else float(v)


# the first measurement column of each table: the columns before it are the job's keys
FIRST_MEASURED = ("seat", "games", "deals", "policy_a", "restriction", "rung", "kind", "metric", "counted")


def _job_items(row: dict):
    """The (column, value) pairs that name a row's job: those before its first measurement."""
    for k, v in row.items():
        if k in FIRST_MEASURED:
            return
        yield k, v


def _setting(row: dict, extra_keys: set) -> str:
    """The job's labels beyond KEYS (sweep axes, dates, tune values): the key columns that
    precede the table's first measurement column."""
    parts = []
    for k, v in row.items():
        if k in FIRST_MEASURED:
            break
        if k not in KEYS and k not in extra_keys and k not in OPTIONAL_KEYS and v is not None:
            parts.append(f"{k}={str(v).lower() if isinstance(v, bool) else v}")
    return ", ".join(parts)


def _keys(row: dict, measured: set) -> dict:
    d = {k: row.get(k) for k in KEYS}
    if d["players"] is not None:
        d["players"] = int(d["players"])
    d["setting"] = _setting(row, measured) or None
    for k in OPTIONAL_KEYS:
        if k in row:
            d[k] = row[k]
    return d


def finding(keys: dict, kind: str, subject: str, effect=None, lo=None, hi=None, p=None,
            message: str = "", always: bool = False) -> dict:
    """One finding row (``p_holm`` and ``flagged`` are filled by ``finalize``)."""
    return {**keys, "kind": kind, "subject": subject, "effect": _num(effect), "ci_low": _num(lo),
            "ci_high": _num(hi), "p_value": _num(p), "p_holm": None, "flagged": always,
            "message": message}


def _job_label(k: dict) -> str:
    from simcli.report.fmt import short_policies
    s = f"{k['game']}/{k['variant']}/{k['players']}p"
    if k.get("policies"):
        s += f" [{short_policies(k['policies'])}]"
    return s + (f" ({k['setting']})" if k.get("setting") else "")


def seat_rows(tables: dict) -> list[dict]:
    """Each seat against the fair share, where seats differ only by position."""
    seats = tables.get("seats")
    if seats is None or not seats.height or "win_se" not in seats.columns:
        return []
    measured = {"win_share", "win_ci_low", "win_ci_high", "win_se", "mean_place"}
    jobs: dict[tuple, list[dict]] = {}
    for r in seats.iter_rows(named=True):
        key = tuple(_job_items(r))
        jobs.setdefault(key, []).append(r)
    out = []
    for rows in jobs.values():
        S = len(rows)
        players = rows[0]["players"]
        player_policies = {r["policy"] for r in rows if r["seat"] < players}
        if S < 2 or len(player_policies) != 1:
            continue   # a solo game, or seats that differ by policy, not by position
        # fair share: 1/S of the games that have a winner (all of them unless games time out;
        # then the test ignores the small sampling error of the timeout rate)
        won = sum(r["win_share"] or 0.0 for r in rows)
        fair = won / S
        note = "" if won > 0.999999 else f" (1/S of the {won:.1%} of games with a winner)"
        for r in rows:
            share, se = r["win_share"], r.get("win_se")
            if share is None or se is None:
                continue
            _, p = stats.mean_vs_value(share, se, fair)
            k = _keys(r, measured)
            who = f"seat {r['seat']}" + (f" ({r['policy']})" if r["seat"] >= players else "")
            out.append(finding(
                k, "seat", who, share - fair, r["win_ci_low"] - fair, r["win_ci_high"] - fair, p,
                f"{_job_label(k)}: {who} wins {share:.3f} [{r['win_ci_low']:.3f}, {r['win_ci_high']:.3f}] "
                f"against a fair {fair:.3f}{note} ({share - fair:+.3f})"))
    return out


def policy_rows(tables: dict) -> list[dict]:
    """Policy against policy on the same deals (rotated runs; the ladder has its own kind)."""
    paired = tables.get("paired")
    if paired is None or not paired.height or "ladder" in tables:
        return []
    out = []
    measured = {"policy_a", "policy_b", "diff", "ci_low", "ci_high", "z", "p_value"}
    for r in paired.iter_rows(named=True):
        k = _keys(r, measured)
        a, b, d = r["policy_a"], r["policy_b"], r["diff"]
        if d is not None and d < 0:   # say it as the winner's gain
            a, b, d, lo, hi = b, a, -d, -r["ci_high"], -r["ci_low"]
        else:
            lo, hi = r["ci_low"], r["ci_high"]
        out.append(finding(
            k, "policy", f"{a} - {b}", d, lo, hi, r["p_value"],
            f"{_job_label(k)}: {a} wins {d:+.3f} [{lo:+.3f}, {hi:+.3f}] more per seat than {b} "
            f"on the same {r['deals']:,} deals"))
    return out


def timeout_rows(tables: dict, settings: Settings) -> list[dict]:
    """Games ended by the turn cap, tested against the threshold (n = deals)."""
    variants = tables.get("variants")
    if variants is None or not variants.height or "timeout_rate" not in variants.columns:
        return []
    out = []
    for r in variants.iter_rows(named=True):
        rate, n = r.get("timeout_rate"), r.get("deals") or r.get("games")
        if rate is None or rate != rate or not rate or not n:
            continue
        lo, hi = stats.wilson(rate, n)
        p = stats.rate_above(rate * n, n, settings.threshold)
        k = _keys(r, set())
        out.append(finding(k, "timeouts", "timeout_rate", rate, lo, hi, p,
                           f"{_job_label(k)}: {rate:.1%} of games end at the turn cap without a "
                           f"winner (stalemate) [{lo:.1%}, {hi:.1%}]"))
    return out


def _numbers_of(row: dict) -> tuple:
    """A row's numbers (NaN as None, so two NaNs compare equal)."""
    return tuple((k, None if isinstance(v, float) and v != v else v) for k, v in row.items()
                 if k not in ("variant", "wall_s") and not isinstance(v, str))


def identical_rows(tables: dict) -> list[dict]:
    """A variant whose every number equals an earlier variant's (same players, policies, labels)."""
    variants = tables.get("variants")
    if variants is None or variants.height < 2:
        return []
    seen: dict[tuple, str] = {}
    out = []
    for r in variants.iter_rows(named=True):
        same = tuple((k, v) for k, v in r.items() if isinstance(v, str) and k not in ("variant", "length_unit"))
        sig = (same, _numbers_of(r), r["players"])
        if sig in seen and seen[sig] != r["variant"]:
            k = _keys(r, set())
            out.append(finding(k, "identical", f"variant {r['variant']} = {seen[sig]}",
                               message=f"{_job_label(k)}: every number equals variant {seen[sig]}'s "
                                       f"on the same deals: its rules change nothing for "
                                       f"{r['policies']}", always=True))
        else:
            seen.setdefault(sig, r["variant"])
    return out


def restriction_rows(tables: dict) -> list[dict]:
    """ablate: each restricted seat against its base on the same deals."""
    abl = tables.get("ablations")
    if abl is None or not abl.height:
        return []
    out = []
    for r in abl.iter_rows(named=True):
        k = _keys({**r, "policies": r["policy"]}, {"restriction", "policy"})
        d = r["diff"]
        name = f"{r['policy']}+{r['restriction']}"
        if d is not None and d > 0:
            msg = (f"{_job_label(k)}: {name} wins {d:+.3f} [{r['ci_low']:+.3f}, {r['ci_high']:+.3f}] more "
                   f"than {r['policy']} on the same deals: forbidding the option helps, so "
                   f"{r['policy']} misplays it")
        else:
            msg = (f"{_job_label(k)}: the option forbidden by {r['restriction']} is worth "
                   f"{-d:+.3f} [{-r['ci_high']:+.3f}, {-r['ci_low']:+.3f}] of win share to {r['policy']}")
        out.append(finding(k, "restriction", name, d, r["ci_low"], r["ci_high"], r["p_value"], msg))
    return out


def ladder_rows(tables: dict) -> list[dict]:
    """ladder: each rung against the rung below it."""
    lad = tables.get("ladder")
    if lad is None or not lad.height:
        return []
    out = []
    for r in lad.iter_rows(named=True):
        k = _keys({**r, "policies": f"{r['rung']} vs {r['versus']}"}, {"rung", "versus"})
        d = r["diff_vs_previous"]
        word = "beats" if d > 0 else "loses to"
        out.append(finding(
            k, "ladder", f"{r['rung']} - {r['versus']}", d, r["diff_ci_low"], r["diff_ci_high"],
            r["p_value"], f"{_job_label(k)}: {r['rung']} {word} {r['versus']} by {d:+.3f} "
                          f"[{r['diff_ci_low']:+.3f}, {r['diff_ci_high']:+.3f}] per seat, same deals"))
        if r.get("reverse_diff") is not None:     # --both-ways: upper seats minus the lower odd seat
            e, lo, hi = -r["reverse_diff"], -r["reverse_ci_high"], -r["reverse_ci_low"]
            word = "beats" if e > 0 else "loses to"
            out.append(finding(
                k, "ladder", f"{r['rung']} - {r['versus']} (other way round)", e, lo, hi,
                r["reverse_p_value"],
                f"{_job_label(k)}: the other way round, {r['rung']} {word} one {r['versus']} seat "
                f"among it by {e:+.3f} [{lo:+.3f}, {hi:+.3f}] per seat, same deals ({r['order']})"))
    return out


def tune_rows(tables: dict, settings: Settings) -> list[dict]:
    """tune: the best candidate against the target (a value target only)."""
    tune, t = tables.get("tune"), settings.target
    if tune is None or not tune.height or t.get("goal") != "value":
        return []
    best = tune.filter(pl.col("status") == "best")
    out = []
    for r in best.iter_rows(named=True):
        m, lo, hi = r["metric"], r["ci_low"], r["ci_high"]
        if m is None or lo is None or hi is None or not math.isfinite(lo):
            continue
        se = (hi - lo) / (2 * stats.Z95)
        _, p = stats.mean_vs_value(m, se, t["value"])
        values = ", ".join(f"{c}={r[c]}" for c in tune.columns if c not in TUNE_MEASURED)
        variants = tables.get("variants")
        k = {**_keys(variants.row(0, named=True), set()), "setting": values} if variants is not None \
            and variants.height else {"game": None, "variant": None, "players": None, "policies": None,
                                      "setting": values}
        out.append(finding(k, "tune", f"{t['metric']} = {t['value']:g}", m - t["value"], lo - t["value"],
                           hi - t["value"], p,
                           f"best {values}: {t['metric']} {m:.4g} [{lo:.4g}, {hi:.4g}] against the "
                           f"target {t['value']:g}"))
    return out


TUNE_MEASURED = {"games", "metric", "ci_low", "ci_high", "distance", "status", "p_value"}


def check_rows(compare: pl.DataFrame, failed: list[dict]) -> list[dict]:
    """check: every comparison with the baseline, and every expectation that does not hold."""
    out = []
    for r in (compare.iter_rows(named=True) if compare is not None and compare.height else ()):
        k = _keys(r, {"metric", "baseline", "current", "effect", "effect_size", "p_value", "note"})
        seat = "" if r.get("seat") is None else f" seat {r['seat']}"
        base, cur = r.get("baseline"), r.get("current")
        shown = f"{base:.4g} -> {cur:.4g}" if base is not None and cur is not None else r.get("note", "")
        out.append(finding(k, "check", f"{r['metric']}{seat}", r.get("effect"), None, None, r["p_value"],
                           f"{_job_label(k)}: {r['metric']}{seat} moved: {shown}"))
    for f in failed:
        k = _keys(f, {"metric", "value", "expectation", "ok"})
        out.append(finding(k, "expectation", f["metric"], f["value"],
                           message=f"{_job_label(k)}: {f['metric']} = {f['value']:.4g}, "
                                   f"expected {f['expectation']}", always=True))
    return out


def run_rows(tables: dict, settings: Settings) -> list[dict]:
    """Every kind a run's tables support (run, sweep, ladder, year runs, tune, ablate)."""
    return (seat_rows(tables) + policy_rows(tables) + timeout_rows(tables, settings)
            + identical_rows(tables) + restriction_rows(tables) + ladder_rows(tables)
            + tune_rows(tables, settings))


# ------------------------------------------------------------------ Holm, flags, verdicts

def _flag(row: dict, s: Settings) -> bool:
    if row["flagged"]:           # identical variants, failed expectations
        return True
    p, e = row["p_holm"], row["effect"]
    if p is None or p > s.alpha or e is None:
        return False
    kind = row["kind"]
    if kind == "check":
        return True              # the check's own gate: every Holm-significant move fails it
    if kind == "timeouts":
        return True              # significantly above the threshold
    if kind == "restriction":
        return e >= s.threshold
    if kind == "ladder":
        return e <= -s.threshold
    return abs(e) >= s.threshold


def finalize(rows: list[dict], settings: Settings) -> pl.DataFrame:
    """Holm over every row with a test, flags, worst first -> the ``findings`` table."""
    tested = [i for i, r in enumerate(rows) if r["p_value"] is not None]
    for i, p in zip(tested, stats.holm_adjusted([rows[i]["p_value"] for i in tested])):
        rows[i]["p_holm"] = p
    for r in rows:
        r["flagged"] = _flag(r, settings)
    rows.sort(key=lambda r: (not r["flagged"], -abs(r["effect"]) if r["effect"] is not None else 0.0))
    extra = [k for k in OPTIONAL_KEYS if any(k in r for r in rows)]
    cols = [*COLUMNS[:4], *extra, *COLUMNS[4:]]
    schema = {c: SCHEMA.get(c, pl.String) for c in cols}
    return pl.DataFrame([{c: r.get(c) for c in cols} for r in rows], schema=schema, orient="row")


def build(tables: dict, settings: Settings | None = None) -> pl.DataFrame:
    """The ``findings`` table of a run's tables."""
    settings = settings or Settings()
    return finalize(run_rows(tables, settings), settings)


def verdict_lines(findings: pl.DataFrame, settings: Settings | None = None) -> list[str]:
    """The printed verdict: each flagged finding, worst first, or one 'nothing out of balance'."""
    s = settings or Settings()
    tests = findings.filter(pl.col("p_value").is_not_null()).height if findings.height else 0
    how = f"threshold {s.threshold:g} of win share, Holm over {tests} tests at alpha {s.alpha:g}"
    flagged = findings.filter(pl.col("flagged")) if findings.height else findings
    if not findings.height:
        return ["Verdict: nothing to test (no seats to compare, no paired policies, no timeouts)"]
    if not flagged.height:
        quiet = findings.filter(pl.col("p_holm") <= s.alpha).height if findings.height else 0
        tail = (f"; {quiet} significant effect(s) not flagged (under the threshold, or not an imbalance "
                f"such as a stronger rung winning), in the findings table") if quiet else ""
        return [f"Verdict: nothing out of balance at {how}{tail}"]
    lines = [f"Verdict: {flagged.height} finding(s), worst first ({how}):"]
    for rows in by_job(flagged):
        lines.append("  ! " + grouped_line(rows))
    note = one_level_note(findings, flagged) if s.skill_note else None
    return lines + ([f"  ({note})"] if note else [])


# kinds that claim something about the game (not about a command's own search, rung or baseline)
GAME_KINDS = ("seat", "policy", "timeouts", "restriction")


def one_level_note(findings: pl.DataFrame, flagged: pl.DataFrame) -> str | None:
    """The note under a verdict measured at one level of play: which play produced it, and how to
    check it at others (issue #24: stronger players reverse several of the heuristic's verdicts).
    None when the run already has a ``skill`` column or no flagged row is about the game."""
    if "skill" in findings.columns:
        return None
    from simcli.report.fmt import short_policies
    plays = sorted({short_policies(r["policies"]) for r in flagged.iter_rows(named=True)
                    if r["kind"] in GAME_KINDS and r["policies"]})
    if not plays:
        return None
    return (f"one level of play: {'; '.join(plays)}. A verdict can change with the players' "
            f"strength (docs/search.md, \"Verdicts across skill\"): rerun with --skill heuristic,tuned,mc:16 "
            f"to play the same deals at each level.")


def by_job(flagged: pl.DataFrame) -> list[list[dict]]:
    """Flagged rows, worst first, a job's seat findings together (in the order of the worst)."""
    groups: dict[tuple, list[dict]] = {}
    for i, r in enumerate(flagged.iter_rows(named=True)):
        key = ((r["game"], r["variant"], r["players"], r["policies"], r["setting"]) if r["kind"] == "seat"
               else ("row", i))
        groups.setdefault(key, []).append(r)
    return list(groups.values())


def grouped_line(rows: list[dict]) -> str:
    """The worst row's message; further seats of the same job by their effects."""
    from simcli.report.fmt import fmt_p
    first = rows[0]
    text = first["message"]
    if len(rows) > 1:
        text += "; also " + ", ".join(f"{r['subject']} {r['effect']:+.3f}" for r in rows[1:])
    ps = [r["p_holm"] for r in rows if r["p_holm"] is not None]
    if ps:
        worst = fmt_p(max(ps))
        text += f" (p_holm {worst}" + (" or less)" if len(ps) > 1 and not worst.startswith("<") else ")")
    return text


def add_to(tables: dict, settings: Settings, echo, rows: list[dict] | None = None) -> pl.DataFrame:
    """Build a run's findings (its tables' kinds, plus ``rows`` a command adds), store them as
    ``tables["findings"]`` and print the verdict: the small call at the end of every command."""
    table = finalize(run_rows(tables, settings) + list(rows or ()), settings)
    tables["findings"] = table
    from simcli.report.fmt import fit
    for line in verdict_lines(table, settings):
        for part in fit(line):
            echo(part)
    return table
