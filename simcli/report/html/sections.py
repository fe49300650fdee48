"""The sections of the report page, and ``SECTIONS``: the one declared list, in page order,
that drives both the contents list and the body. Verdicts come first, provenance last."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Callable

import polars as pl

from simcli.report import findings as fd
from simcli.report.fmt import short_policies
from simcli.report.html import charts, plots
from simcli.report.html.load import Report
from simcli.report.html.markup import (BASE_KEYS, MAX_OVERVIEW_ROWS, esc, finite, fmt, frame_table,
                                           job_title, kv, table)

MAX_JOB_SECTIONS = 120    # per-job sections per page (the overview table still lists every job)
MAX_TOC_JOBS = 24         # jobs listed one by one in the contents
MAX_FINDINGS_ROWS = 60    # rows of the findings table on the page (the file has them all)
# metrics that compare seats which chose to use an option with seats that did not: correlations,
# not the option's value (a seat mostly uses it when behind); `simcli ablate` measures the value
CORRELATIONAL = ("advisory_effect", "advisory_user_win_share", "advisory_nonuser_win_share")


@dataclass(frozen=True)
class Section:
    id: str
    title: str
    applies: Callable[[Report], bool]
    render: Callable[[Report, "plots.Figures"], str]


def _is_solo(m: dict) -> bool:
    return m.get("seat_rows") == 1


# ---------------------------------------------------------------------------------- verdict

def findings_of(rep: Report) -> pl.DataFrame:
    """The folder's findings table, or (a folder written before findings existed) computed now."""
    t = rep.raw.get("findings")
    if t is not None:
        return t
    return fd.build({k: v for k, v in rep.raw.items()})


def verdict(rep: Report, figs) -> str:
    table_ = findings_of(rep)
    flagged = table_.filter(pl.col("flagged")) if table_.height else table_
    tests = table_.filter(pl.col("p_value").is_not_null()).height if table_.height else 0
    used = rep.meta.get("findings") if isinstance(rep.meta.get("findings"), dict) else {}
    thr = used.get("threshold", fd.DEFAULT_THRESHOLD)
    how = (f"Each row is one test; p_holm is Holm-adjusted over all {tests} tests of the run. "
           f"Flagged: significant after that adjustment at alpha {used.get('alpha', fd.DEFAULT_ALPHA)} and "
           f"at least the practical threshold of {thr} win share (see the glossary).")
    if not table_.height:
        out = ['<p class="ok"><b>Nothing to test.</b> No seats to compare (a solo game), no paired '
               "policies, no timeouts: the tables below describe the run.</p>"]
    elif not flagged.height:
        out = [f'<p class="ok"><b>Nothing out of balance.</b> {esc(how)}</p>']
    else:
        out = [f"<p>{flagged.height} finding(s), worst first (a job's seats on one line). {esc(how)}</p>"]
        out += [f'<p class="flag">{esc(fd.grouped_line(rows))}</p>'
                for rows in fd.by_job(flagged.head(MAX_FINDINGS_ROWS))]
        note = fd.one_level_note(table_, flagged) if rep.meta.get("analysis") != "ladder" else None
        if note:
            out.append(f"<p>{esc(note)}</p>")
    if table_.height:
        out.append("<h3>Every test</h3>" + frame_table(table_.drop("message"), cap=MAX_FINDINGS_ROWS, digits=3))
    return "".join(out)


# --------------------------------------------------------------------------------- overview

OVERVIEW_COLUMNS = (("seat0_win_share", "seat-0 win share"), ("seat0_advantage", "seat-0 adv."),
                    ("balance", "balance"), ("tie_rate", "tie rate"), ("timeout_rate", "timeout rate"),
                    ("length_mean", "length"))


def overview(rep: Report, figs) -> str:
    jobs, metrics, keys = rep.jobs, rep.metrics, rep.present_keys
    same = [k for k in keys if len({str(j.get(k)) for j in jobs}) == 1]
    shown = [k for k in keys if k not in same]
    solo = [_is_solo(m) for m in metrics]
    cols = [(c, lab) for c, lab in OVERVIEW_COLUMNS
            if any(finite(m.get(c)) for m, s in zip(metrics, solo) if not (s and c.startswith("seat0")))]
    if any(solo):   # a solo game has no seats to compare: its seat-0 win share is its success rate
        cols.insert(0, ("success_rate", "success rate"))
    rows = []
    for i, (j, m) in enumerate(zip(jobs, metrics)):
        vals = {**m, "success_rate": m.get("seat0_win_share") if solo[i] else None}
        rows.append([i + 1, *[j.get(k) for k in shown], m.get("games"),
                     *[None if solo[i] and c.startswith("seat0") else vals.get(c) for c, _ in cols]])
    head = (f'<p class="muted">Same for every job: {esc(", ".join(f"{k}={short_policies(str(jobs[0].get(k)))}" for k in same))}.</p>'
            if same else "")
    return head + table(["#", *shown, "games", *[lab for _, lab in cols]], rows, cap=MAX_OVERVIEW_ROWS, digits=3)


# --------------------------------------------------------------------- command-specific parts

SKILL_INTRO = (
    "<p>The same deals were played at each skill level, every seat at that level (levels weakest "
    "first; <code>--skill</code>, docs/balance.md \"Across skill\"). A verdict says whether a "
    "quantity holds at every level, appears only at some (<i>only at</i>), <b>reverses</b>, or "
    "<i>changes with skill</i>; <i>top two</i> is the strongest level minus the second strongest on "
    "the same deals (95% interval): <b>settled</b> when they agree, <b>still moving</b> when they "
    "differ, so a stronger level might move it again. Read a number as the game's only where it "
    "holds at the strongest level and is settled; a verdict that appears only at weak levels "
    "describes those players, not the rules.</p>")


def skill(rep: Report, figs) -> str:
    """`--skill`: one row per quantity and job (skill_verdicts), then every level's values."""
    v = rep.table("skill_verdicts")
    out = [SKILL_INTRO]
    if "quantity" in v.columns and "top_two_diff" in v.columns:   # run, sweep, ablate
        keys = [c for c in v.columns[:v.columns.index("kind")] if c != "quantity"]
        rows = []
        for r in v.iter_rows(named=True):
            rows.append([job_title(r, keys), r["quantity"], r["verdict"],
                         f"{r['weakest']} {fmt(r['value_weakest'])}",
                         f"{r['strongest']} {fmt(r['value_strongest'])}",
                         f"{r['top_two']}: {fmt(r['top_two_diff'])} "
                         f"[{fmt(r['top_two_ci_low'])}, {fmt(r['top_two_ci_high'])}]"])
        out.append(table(["job", "quantity", "verdict", "weakest level", "strongest level",
                          "top two"], rows))
    else:                                                           # tune: its own verdict row
        out.append(frame_table(v, digits=4))
    levels = rep.table("skill_levels")
    if levels is not None:
        out.append("<h3>Every level</h3><p class=\"muted\">value: the quantity at that level "
                   "(an effect: a seat's edge over the fair share, or a restriction's diff; a level: "
                   "the table's own value); strongest_minus_this: the strongest level's value minus "
                   "this level's on the same deals, with its interval and p.</p>"
                   + frame_table(levels, digits=4, cap=MAX_FINDINGS_ROWS))
    return "".join(out)


def ladder(rep: Report, figs) -> str:
    lad = rep.table("ladder")
    both = ""
    if "order" in lad.columns:   # --both-ways: each pair also played the other way round
        loose = [f"{esc(u)} / {esc(v)}" for u, v, o in zip(lad["rung"], lad["versus"], lad["order"])
                 if "no table-free order" in o]
        both = ("<p>Each pair was also played the other way round (one seat of the lower rung among "
                "the upper: <code>reverse_diff</code>, lower minus upper). "
                + (f"<strong>No table-free order</strong> between {', '.join(loose)}: each side gains "
                   "as the odd seat out (or each as the majority), so the rating step there describes "
                   "the table, not the players.</p>" if loose else
                   "Every pair keeps one order both ways round (95% intervals per pair).</p>"))
    return ("<p>Each rung plays the rung below it on the same deals, seat-rotated: its win share per "
            "seat held (dashed: equal skill, 1/P) and its paired difference.</p>" + both
            + plots.ladder_figure(figs, lad) + frame_table(lad, digits=3))


def tune(rep: Report, figs) -> str:
    """`simcli tune`: the verdict, tune.png (drawn by the command) and the candidate table."""
    t = rep.raw["tune"]
    info = rep.meta.get("tune") if isinstance(rep.meta.get("tune"), dict) else {}
    best = t.filter(pl.col("status") == "best") if "status" in t.columns else t.head(0)
    same = t.filter(pl.col("status") == "indistinguishable") if "status" in t.columns else t.head(0)
    rules = [c for c in t.columns if c not in ("games", "metric", "ci_low", "ci_high", "distance",
                                               "status", "p_value")]
    per_round = info.get("alpha_per_round")
    spend = (f"a best value is dropped with probability at most alpha = {esc(info.get('alpha', '?'))} over "
             f"the race ({fmt(per_round)} in each planned round, Holm within a round)" if per_round is not None
             else f"drops at family-wise alpha {esc(info.get('alpha', '?'))} per round (Holm)")  # older folders
    test = {"paired": "paired per-deal differences, normal test",
            "jackknife": "delete-a-group jackknife over 20 groups of deals, Student t (19 df)"}
    out = [f"<p>Target <b>{esc(info.get('target', '?'))}</b>; test: "
           f"{esc(test.get(info.get('metric_test'), info.get('metric_test', '?')))}; {spend}; "
           f"stopped: {esc(info.get('stop', '?'))}. Intervals: 95%, the deal as the unit (shares: "
           "Wilson with effective n; other means: normal; table metrics: jackknife t). A dropped "
           "candidate's <code>distance</code> is measured against the best of the round that dropped "
           "it (for =min / =max).</p>"]
    for row in best.iter_rows(named=True):
        label = ", ".join(f"{r}={fmt(row[r])}" for r in rules)
        out.append(f"<p>Best: <b>{esc(label)}</b>: {fmt(row['metric'])} "
                   f"[{fmt(row['ci_low'])}, {fmt(row['ci_high'])}] over {fmt(row['games'])} deals"
                   + (f"; {same.height} more cannot be told apart from it" if same.height else "") + ".</p>")
    used, grid = info.get("games_used"), info.get("full_grid_games")
    if finite(used, grid) and grid:
        out.append(f"<p>Games used {used:,} of {grid:,} for the full grid ({100 * used / grid:.1f}%); "
                   "each candidate's games are in the table (a candidate dropped early played fewer).</p>")
    png = rep.folder / "tune.png"
    if png.is_file():
        out.append(plots.img_tag(png.read_bytes(), "tune: metric against rule value"))
    out.append(frame_table(t, digits=4))
    return "".join(out)


def ablations(rep: Report, figs) -> str:
    abl = rep.table("ablations")
    kind = "success rate" if "success_rate_base" in abl.columns else "win share"
    intro = ('<p>Each row: one seat plays the base policy with one restriction against the base '
             f"policy, seat-rotated, on the same deals as the all-base game; <code>diff</code> is the "
             f"restricted seat's {kind} minus the base seat's. Negative: the forbidden option is worth "
             "that much to the base policy. <b>Positive: forbidding the option helps, so the base "
             "policy misplays it</b> (a verdict about the policy, not the rules). "
             "<code>forbidden_per_game</code> is how often the base policy took the forbidden option "
             "per seat and game (near 0: the option is hardly used, so its <code>diff</code> is near 0 "
             "whatever it is worth).</p>"
             "<p class=\"muted\">Deal d is game index d under the run's seed (the cards depend only on "
             "seed and game index; <code>simcli trace --game-index d</code> replays it). Each deal is "
             "played once per seat of the restricted seat (rotation r puts it at seat (P&minus;r) mod P) "
             "and once with every seat on the base policy: the base arm, whose share per seat is "
             "exactly 1/P when every game has a winner. Interval: 95% normal interval of the mean "
             "per-deal difference over deals (the deal is the unit: deals are independent, a deal's "
             "rotations share its cards); rough when the option is so rarely used that the "
             "difference is almost always 0.</p>")
    return intro + plots.ablation_figure(figs, abl, kind) + frame_table(abl, digits=4)


def _as_dates(df: pl.DataFrame) -> pl.DataFrame:
    col = df["date"]
    if col.dtype == pl.Utf8:
        d = col.str.strip_chars().str.to_date(strict=False)
    elif col.dtype == pl.Datetime:
        d = col.dt.date()
    elif col.dtype == pl.Date:
        d = col
    else:
        d = col.cast(pl.Utf8).str.to_date(strict=False)
    return df.with_columns(d.alias("_d")).filter(pl.col("_d").is_not_null())


def dates(rep: Report, figs) -> str:
    df0 = rep.table("dates")
    need = {"date", "policy", "success_rate"}
    if not need <= set(df0.columns):
        return (f'<p class="muted">dates table lacks column(s) {esc(", ".join(sorted(need - set(df0.columns))))}'
                "; no calendar drawn.</p>")
    df = _as_dates(df0).with_columns(pl.col("_d").dt.year().alias("_y"))
    if not df.height:
        return '<p class="muted">No readable dates in the dates table.</p>'
    group_cols = [c for c in ("game", "variant", "players") if c in df.columns and df[c].n_unique() > 1]
    group_cols += ["policy", "_y"]
    out, summary = [], []
    for key, part in df.sort("_d").group_by(group_cols, maintain_order=True):
        named = dict(zip(group_cols, key))
        title = " / ".join(str(named[c]) for c in group_cols if c not in ("policy", "_y"))
        title = (f"{title} — " if title else "") + f"policy {named['policy']}, {named['_y']}"
        ok = [(d, r) for d, r in zip(part["_d"].to_list(), part["success_rate"].cast(pl.Float64).to_list())
              if r is not None and math.isfinite(r)]
        best = max(ok, key=lambda t: t[1]) if ok else (None, None)
        worst = min(ok, key=lambda t: t[1]) if ok else (None, None)
        mean_score = (float(part["score_mean"].cast(pl.Float64).mean())
                      if "score_mean" in part.columns and part.height else None)
        summary.append([title, part.height, int(part["games"].sum()) if "games" in part.columns else None,
                        (sum(r for _, r in ok) / len(ok)) if ok else None,
                        f"{best[0]} ({fmt(best[1])})" if ok else None,
                        f"{worst[0]} ({fmt(worst[1])})" if ok else None, mean_score])
        if figs.room():
            out.append(plots.calendar_figure(figs, title, ok, int(named["_y"])))
    head = table(["calendar", "dates", "games", "mean success rate", "best date", "worst date",
                  "mean score"], summary)
    return head + "".join(out)


# ------------------------------------------------------------------------------------ sweep

def _sweep_axis(figs, axis: str, varying: list[str], jobs: list[dict], metrics: list[dict], present) -> str:
    others: list[str] = []        # axes that move in lockstep with this one are not "other keys"
    for a in varying:
        if a != axis and not any(charts.one_to_one(jobs, a, b) for b in [axis, *others]):
            others.append(a)
    xs_seen = list(dict.fromkeys(j.get(axis) for j in jobs if j.get(axis) is not None))
    numeric, nums = charts.axis_sort_key(xs_seen)
    pos = {v: n for v, n in zip(xs_seen, nums)} if numeric else {v: i for i, v in enumerate(xs_seen)}
    lines: dict[tuple, list] = {}
    for j, m in zip(jobs, metrics):
        if j.get(axis) is not None:
            lines.setdefault(tuple(j.get(a) for a in others), []).append((pos[j.get(axis)], m))
    crowd = len(lines) > plots.MAX_LINES
    out = [f"<h3>against {esc(axis)}</h3>"]
    if crowd:
        out.append(f'<p class="muted">{len(lines)} combinations of {esc(", ".join(others))}: too many '
                   "to label, so each is a thin grey line and the dark line is their mean; "
                   "the overview table has every job.</p>")
    if figs.room():
        out.append(charts.sweep_figure(figs, axis, others, lines, xs_seen, numeric, nums, present, crowd))
    return "".join(out)


def sweep(rep: Report, figs) -> str:
    jobs, metrics = rep.jobs, rep.metrics
    axes = [a for a in rep.axes if any(a in j for j in jobs)]
    if "skill" not in axes and any("skill" in j for j in jobs):
        axes.append("skill")      # --skill: each level its own line (a tune or sweep folder's axes omit it)
    intro = (f'<p class="muted">Axes: {esc(", ".join(axes))}. One line per combination of the '
             "other varying axes, with 95% error bars (seat-0 share and advantage: the seat's "
             "interval over deals; tie rate: Wilson; length: normal). Dashed: the fair share.</p>")
    varying = [a for a in axes if len({str(j.get(a)) for j in jobs}) > 1]
    if not varying:
        return intro + '<p class="muted">Every sweep axis has a single value: nothing to compare.</p>'
    present = [(k, lab) for k, lab in charts.SWEEP_METRICS
               if any(finite(m.get(k)) for m in metrics if not (_is_solo(m) and k.startswith("seat0")))]
    out, plotted = [intro], []
    for axis in varying:
        twin = next((p for p in plotted if charts.one_to_one(jobs, p, axis)), None)
        if twin is not None:
            out.append(f'<p class="muted">{esc(axis)} changes together with {esc(twin)}: '
                       f"see the plots against {esc(twin)}.</p>")
            continue
        plotted.append(axis)
        out.append(_sweep_axis(figs, axis, varying, jobs, metrics, present))
    return "".join(out)


# -------------------------------------------------------------------------------------- arc

ARC_METRICS = (("lead_changes", "lead changes"), ("comeback_rate", "comeback rate"),
               ("decided_at", "decided at (k/K)"), ("last_swing", "last swing"))


def arc(rep: Report, figs) -> str:
    keys = rep.present_keys
    out = ['<p class="muted">Checkpoints: every round (forecasts-cubes, forecasts-bid, pgc; '
           "fewest points lead in pgc), every full turn of the table (sudden-skies, standing = "
           "most cards of one suit). Over games with a winner (timeouts are not counted). One panel "
           "per game, every job drawn. See docs/balance.md.</p>"]
    out.append(charts.arc_small_multiples(figs, rep.table("arc"),
                                          lambda job: job_title(job, [k for k in keys if k in job])))
    rows = [[job_title(j, keys)] + [m.get(k) for k, _ in ARC_METRICS] + [m.get("arc_games"), m.get("arc_excluded")]
            for j, m in zip(rep.jobs, rep.metrics) if m.get("arc_games")]
    out.append(table(["job"] + [label for _, label in ARC_METRICS] + ["games", "timeouts not counted"], rows,
                     digits=3))
    return "".join(out)


# ------------------------------------------------------------------------------------- jobs

def _numbers(m: dict) -> str:
    solo = _is_solo(m)
    pairs = []
    for key, label in (("games", "games"), ("deals", "deals"), ("rotations", "rotations"),
                       ("seat0_win_share", "success rate" if solo else "win share of seat 0"),
                       ("seat0_advantage", "seat-0 advantage (share − 1/S)"),
                       ("balance", "balance (1 − max−min share)"), ("tie_rate", "tie rate"),
                       ("timeout_rate", "timeout rate"), ("leader_gap", "leader gap"),
                       ("decisions_per_game", "decisions per game"), ("wall_s", "wall time (s)")):
        if key in m and m[key] is not None and not (key == "rotations" and m[key] in (None, 1)):
            pairs.append((label, m[key]))
    if "length_mean" in m:
        unit = m.get("length_unit") or ""
        sd = m.get("length_sd")
        fixed = sd == 0
        pairs.append(("game length", f"{fmt(m['length_mean'])} {unit} (every game)".strip() if fixed
                      else f"{fmt(m['length_mean'])} ± {fmt(sd)} {unit}".strip()))
    return kv(pairs) if pairs else ""


def _counter_table(cnt: pl.DataFrame) -> str:
    if "kind" in cnt.columns:
        cnt = cnt.filter(pl.col("kind") == "metric")
    if not cnt.height or "metric" not in cnt.columns or "value" not in cnt.columns:
        return ""
    pairs = [list(r) for r in cnt.select("metric", "value").iter_rows()]
    corr = [m for m, _ in pairs if m in CORRELATIONAL]
    note = ""
    if corr:
        note = (f'<p class="note">{esc(", ".join(corr))}: correlations, not causes. They compare seats '
                "that chose to use the option with seats that did not, and a seat mostly uses it when "
                "it is behind. What the option is worth is measured by <code>simcli ablate</code> "
                "(restricted play on the same deals).</p>")
    ncol = 1 if len(pairs) <= 8 else 2 if len(pairs) <= 24 else 3
    per = math.ceil(len(pairs) / ncol)
    rows = []
    for i in range(per):
        row = []
        for c in range(ncol):
            k = c * per + i
            row += pairs[k] if k < len(pairs) else ["", ""]
        rows.append(row)
    return note + table(["metric", "value"] * ncol, rows)


def _job_section(rep: Report, figs, i: int, job: dict, m: dict) -> str:
    jt = job_title(job, rep.present_keys)
    seats = rep.part("seats", job)
    parts = [f'<section class="job" id="job-{i + 1}"><h2>{i + 1}. {esc(jt)}</h2>', _numbers(m),
             plots.job_figure(figs, jt, seats, rep.part("scores", job), rep.part("lengths", job),
                              m.get("length_unit"))]
    if seats is not None and seats.height:
        cols = [c for c in ("seat", "policy", "games", "win_share", "win_ci_low", "win_ci_high", "mean_place",
                            "score_mean", "score_sd", "score_min", "score_p50", "score_max") if c in seats.columns]
        parts.append("<h3>Seats</h3>" + frame_table(seats.sort("seat").select(cols), digits=3))
    pol = rep.part("policies", job)
    if pol is not None and pol.height:
        parts.append("<h3>Policies (seat-rotated deals)</h3>"
                     + plots.policy_figure(figs, jt, pol, seats.height if seats is not None else None)
                     + frame_table(pol, drop=rep.keys, digits=3))
        paired = rep.part("paired", job)
        if paired is not None and paired.height:
            parts.append("<h3>Paired differences (same deals)</h3>" + frame_table(paired, drop=rep.keys, digits=3))
    cnt = rep.part("counters", job)
    ct = _counter_table(cnt) if cnt is not None and cnt.height else ""
    if ct:
        parts.append("<h3>Game counters (derived metrics)</h3>" + ct)
    return "".join(parts) + "</section>"


def jobs(rep: Report, figs) -> str:
    out = []
    for i, (job, m) in enumerate(zip(rep.jobs, rep.metrics)):
        if i >= MAX_JOB_SECTIONS:
            out.append(f'<p class="cut">{len(rep.jobs) - MAX_JOB_SECTIONS} more jobs have no section of '
                       f"their own (at most {MAX_JOB_SECTIONS}); the overview table lists them.</p>")
            break
        out.append(_job_section(rep, figs, i, job, m))
    return "".join(out)


def job_toc(rep: Report) -> list[str]:
    if len(rep.jobs) <= MAX_TOC_JOBS:
        return [f'<li><a href="#job-{i + 1}">{i + 1}. {esc(job_title(j, rep.present_keys))}</a></li>'
                for i, j in enumerate(rep.jobs)]
    n = min(len(rep.jobs), MAX_JOB_SECTIONS)
    return [f'<li><a href="#job-1">Job sections 1–{n}</a> (numbered as in the overview)</li>']


# --------------------------------------------------------------------------------- glossary

GLOSSARY = (
    ("deal", "the cards and random events of one game index; every policy and every seat rotation "
             "replays the same deals, and the deal is the independent unit of every interval"),
    ("rotation", "with --rotate each deal is played once per rotation of the seat policies: "
                 "deals x rotations = games"),
    ("win share", "a seat's wins over games, a k-way shared win counting 1/k"),
    ("fair share", "1/S with S seats (the dashed line): what every seat wins when position does not matter"),
    ("seat-0 advantage", "seat 0's win share minus 1/S"),
    ("balance", "1 minus (highest minus lowest seat win share); 1 = every seat equal"),
    ("tie rate, timeout rate", "games with a shared win; games ended by the turn cap without a winner (stalemates)"),
    ("leader gap", "mean score margin of the winner over the runner-up"),
    ("lead changes, comeback rate, decided at, last swing", "the game arc (docs/balance.md): how often "
     "the leader changes between checkpoints, how often a player behind at the middle wins, the first "
     "checkpoint from which the final leader stays ahead (share of the game), and how often the "
     "last checkpoint changes the winner"),
    ("95% interval", "seat, policy and ladder win shares: Wilson score interval with effective n = "
                     "deals x p(1-p) / s^2, s^2 the variance of the per-deal shares (shared wins and "
                     "rotations included); if every deal gave the same share p, the point [p, p]. A difference "
                     "between two policies on the same deals, and ablate's restricted minus base: normal interval of the mean per-deal "
                     "difference (rough for a handful of deals). Game arc leader_wins: a ratio estimator over "
                     "deals, Wilson with its effective n; where a leader always or never won, Wilson over the "
                     "games reaching the checkpoint (with rotation, the deals that do); no interval is drawn "
                     "where there is none. Tune: the seat interval for shares, a normal interval for other "
                     "means, a 20-group jackknife t interval (19 df) for other metrics. See docs/balance.md, "
                     "'How the intervals are computed'"),
    ("p_value, p_holm", "a test's two-sided p-value (a seat against its fair share: z over the per-deal "
                        "standard error; two policies: the paired z test); p_holm: Holm's step-down "
                        "adjustment over every test of the run, so the chance of any false flag is at most alpha"),
    ("flagged", "p_holm at most alpha (0.05) and an effect of at least the threshold (0.02 of win "
                "share, --threshold); timeouts: significantly above the threshold; a variant whose "
                "numbers equal another's is always flagged (its rules change nothing here)"),
    ("restriction (ablate)", "POLICY+NAME plays POLICY without one option; a restricted seat that beats "
                             "its base on the same deals means the base policy misplays that option"),
    ("designed play", "the policy each game is meant to be judged with (configs/<game>.toml, "
                      "designed_play); run, sweep and tune use it unless --policy or --seats says otherwise"),
)


def glossary(rep: Report, figs) -> str:
    return '<dl class="gl">' + "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in GLOSSARY) + "</dl>"


# ------------------------------------------------------------------------------- provenance

def _notes(meta: dict, jobs: list) -> list[str]:
    notes = []
    top = meta.get("notes")
    for n in (top if isinstance(top, list) else [top] if top else []):
        if n not in notes:
            notes.append(n)
    for j in jobs:
        for n in (j.get("notes") or []):
            if n not in notes:
                notes.append(n)
    return notes


def _run_pairs(meta: dict, n_jobs: int) -> list[tuple]:
    cmd = meta.get("command")
    if isinstance(cmd, list) and cmd:
        cmd = " ".join(["simcli" if i == 0 else str(a) for i, a in enumerate(cmd)])
    games = meta.get("games")
    label = "deals per job (each x rotations)" if meta.get("rotate") else "games per job"
    if "tune" in meta:
        label = "most games a candidate may play"
    elif "ablate" in meta:
        label = "deals per restriction"
    pairs = [("command", cmd), ("created", meta.get("created")), ("seed", meta.get("seed")),
             (label, games), ("jobs", n_jobs or len(meta.get("jobs") or []) or None), ("threads", meta.get("threads")),
             ("chunk", meta.get("chunk")), ("wall time (s)", meta.get("wall_time_s"))]
    for k in ("rotate", "until_ci", "axes", "sweep", "play"):
        if meta.get(k) not in (None, False, [], ""):
            pairs.append((k, meta[k]))
    pkgs = meta.get("packages")
    if isinstance(pkgs, dict):
        pairs.append(("versions", ", ".join(f"{k} {v}" for k, v in pkgs.items() if v)))
    return [(k, v) for k, v in pairs if v is not None]


def _jobs_table(jobs: list[dict]) -> str:
    rules = [j.get("rules") if isinstance(j.get("rules"), dict) else {} for j in jobs]
    common = {}
    if len(jobs) > 1:
        common = {k: v for k, v in rules[0].items() if all(k in r and r[k] == v for r in rules[1:])}
    rows = []
    for i, (j, r) in enumerate(zip(jobs, rules)):
        pol = j.get("policies")
        rows.append([i + 1, j.get("game"), j.get("version"), j.get("variant"), j.get("players"),
                     ",".join(map(str, pol)) if isinstance(pol, list) else pol,
                     {k: v for k, v in r.items() if k not in common}, j.get("labels") or {},
                     j.get("wall_time_s")])
    out = ["<h3>Jobs and the rules in force</h3>"]
    if common:
        out.append(f"<p>Rules in force in every job: <b>{esc(fmt(common))}</b></p>")
    rules_head = "other rules" if common else "rules"
    if len(rows) <= MAX_TOC_JOBS:
        out.append(table(["#", "game", "version", "variant", "players", "policies", rules_head,
                          "labels", "wall (s)"], rows))
        return "".join(out)
    # many jobs (a year run, a big sweep): one row per setup; labels are in the overview
    setups: dict[str, dict] = {}
    for row, r in zip(rows, rules):
        key = json.dumps([fmt(v) for v in row[1:6]])
        st = setups.setdefault(key, {"row": row[1:6], "rules": [], "jobs": 0, "wall": 0.0})
        st["rules"].append({k: v for k, v in r.items() if k not in common})
        st["jobs"] += 1
        st["wall"] += row[8] if finite(row[8]) else 0.0
    grouped = []
    for st in setups.values():
        rs = st["rules"]
        same = {k: v for k, v in rs[0].items() if all(k in x and x[k] == v for x in rs[1:])}
        varying = sorted({k for x in rs for k in x} - set(same))
        grouped.append([*st["row"], same, ", ".join(varying), st["jobs"], st["wall"]])
    out.append(f'<p class="muted">{len(rows)} jobs, grouped by setup; each job\'s labels '
               "(dates, sweep values) are in the overview.</p>")
    out.append(table(["game", "version", "variant", "players", "policies", rules_head,
                      "rules that differ by job", "jobs", "wall (s)"], grouped))
    return "".join(out)


def provenance(rep: Report, figs) -> str:
    meta = rep.meta
    if not meta:
        return '<p class="note">No meta.json in this folder: what was run is not recorded.</p>'
    jobs_meta = [j for j in meta.get("jobs", []) if isinstance(j, dict)] if isinstance(meta.get("jobs"), list) else []
    out = [kv(_run_pairs(meta, len(rep.jobs)))]
    out += [f'<p class="note"><b>Note:</b> {esc(n)}</p>' for n in _notes(meta, jobs_meta)]
    if jobs_meta:
        out.append(_jobs_table(jobs_meta))
    return "".join(out)


def _has(name: str) -> Callable[[Report], bool]:
    return lambda rep: rep.table(name) is not None


# The page, in order: this one list makes both the contents and the body.
SECTIONS: tuple[Section, ...] = (
    Section("verdict", "Verdict", lambda rep: True, verdict),
    Section("skill", "Across skill levels", _has("skill_verdicts"), skill),
    Section("ladder", "Skill ladder", _has("ladder"), ladder),
    Section("tune", "Which rule value balances it? (tune)", _has("tune"), tune),
    Section("ablations", "What each option is worth", _has("ablations"), ablations),
    Section("dates", "Success rate by date", _has("dates"), dates),
    Section("sweep", "Sweep comparison", lambda rep: bool(rep.axes), sweep),
    Section("overview", "Overview of all jobs", lambda rep: len(rep.jobs) > 1, overview),
    Section("arc", "When is the game decided?", _has("arc"), arc),
    Section("jobs", "", lambda rep: bool(rep.jobs), jobs),   # one section per job, listed one by one
    Section("glossary", "Glossary", lambda rep: True, glossary),
    Section("run", "What was run", lambda rep: True, provenance),
)
