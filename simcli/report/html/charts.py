"""Figures over many jobs: the game arc (small multiples, every job drawn) and the sweep
comparison (one panel per metric, 95% error bars, legends that name every line in full)."""
from __future__ import annotations

import math
import textwrap

import polars as pl

from simcli import stats
from simcli.report.fmt import short_policies
from simcli.report.html.markup import fmt, finite
from simcli.report.html.plots import DPI, MAX_LINES, MIN_SHARE_SPAN, Figures, png_bytes, share_axis

ARC_VALUES = ("counted", "checkpoint", "games", "leader_wins", "ci_low", "ci_high", "lead_change_rate")
ARC_LABEL_WIDTH = 90   # characters of a legend line: at fontsize 7 about 5 in, inside a 6.6 in panel
SWEEP_METRICS = (("seat0_win_share", "win share of seat 0"), ("seat0_advantage", "seat-0 advantage"),
                 ("balance", "balance"), ("tie_rate", "tie rate"), ("length_mean", "mean game length"))


def arc_parts(arc: pl.DataFrame) -> tuple[list[str], list[tuple[dict, pl.DataFrame]]]:
    """(key columns, [(job keys, its end-counted rows)]) of an ``arc`` table."""
    end = arc.filter(pl.col("counted") == "end")
    keys = [c for c in end.columns if c not in ARC_VALUES]
    parts = end.partition_by(keys, as_dict=True, maintain_order=True) if keys else {(): end}
    return keys, [(dict(zip(keys, k)), p.sort("checkpoint")) for k, p in parts.items()]


def _nan_for_null(values: list) -> list[float]:
    return [float("nan") if v is None else float(v) for v in values]


def arc_lines(ax, parts: list[tuple[dict, pl.DataFrame]], label_of) -> None:
    for job, part in parts:
        x = part["checkpoint"].to_list()
        # a null (no estimate, or no interval) is a gap in the line or the band, never a 0
        y, lo, hi = (_nan_for_null(part[c].to_list()) for c in ("leader_wins", "ci_low", "ci_high"))
        # a long label (a knob file's path in a policy) wraps rather than running off the figure
        label = "\n".join(textwrap.wrap(label_of(job), ARC_LABEL_WIDTH, break_on_hyphens=False))
        line, = ax.plot(x, y, marker="o", markersize=3, linewidth=1.4, label=label)
        ax.fill_between(x, lo, hi, color=line.get_color(), alpha=.15)
    from matplotlib.ticker import MaxNLocator
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("checkpoints before the end (0 = final standing)", fontsize=8)
    ax.set_ylabel("a leader there wins", fontsize=8)
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=.3)
    ax.legend(fontsize=7, frameon=False)


def arc_figure(arc: pl.DataFrame, title_of, ax) -> int:
    """leader_wins (95% intervals) against checkpoints from the end, one line per job (at most
    MAX_LINES, for arc.png beside the tables); returns the number of lines drawn."""
    _, parts = arc_parts(arc)
    arc_lines(ax, parts[:MAX_LINES], title_of)
    return min(len(parts), MAX_LINES)


def arc_png(arc: pl.DataFrame) -> bytes:
    """arc.png: ``arc_figure`` as a PNG file (written beside the tables by export)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4), dpi=DPI)
    try:
        arc_figure(arc, lambda job: " ".join(short_policies(str(v)) for v in job.values()), ax)
        ax.set_title("When is the game decided?")
        fig.tight_layout()
        return png_bytes(fig)
    finally:
        plt.close(fig)


def arc_panels(parts: list[tuple[dict, pl.DataFrame]]) -> list[tuple[str, list]]:
    """Small multiples: one panel per game, split so no panel has more than MAX_LINES lines."""
    by_game: dict[str, list] = {}
    for job, part in parts:
        by_game.setdefault(str(job.get("game", "")), []).append((job, part))
    panels = []
    for game, items in by_game.items():
        n = math.ceil(len(items) / MAX_LINES)
        for i in range(n):
            chunk = items[i * MAX_LINES:(i + 1) * MAX_LINES]
            panels.append((game + (f" ({i + 1} of {n})" if n > 1 else ""), chunk))
    return panels


def arc_small_multiples(figs: Figures, arc: pl.DataFrame, label_of) -> str:
    """Every job of the ``arc`` table, one panel per game (two panels a row)."""
    _, parts = arc_parts(arc)
    panels = arc_panels(parts)
    if not panels or not figs.room():
        return ""
    ncols = min(2, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig, grid = figs.new(6.6 * ncols, 3.9 * nrows, nrows, ncols, left=0.6, bottom=0.55, top=0.4,
                         hspace=0.45, wspace=0.22)
    flat = [ax for row in grid for ax in row]
    for ax, (title, items) in zip(flat, panels):
        arc_lines(ax, items, label_of)
        ax.set_title(title, fontsize=10)
    for ax in flat[len(panels):]:
        ax.axis("off")
    return figs.img(fig, f"leader win rate against checkpoints from the end, {len(parts)} jobs")


# ------------------------------------------------------------------------------------- sweep

def axis_sort_key(values: list) -> tuple[bool, list]:
    """Numeric axes plot against their value; others as categories in first-seen order."""
    nums = []
    for v in values:
        try:
            nums.append(float(v))
        except (TypeError, ValueError):
            return False, values
    return True, nums


def one_to_one(jobs: list[dict], a: str, b: str) -> bool:
    """True when axes a and b group the jobs the same way (e.g. players and per-seat policies)."""
    ab, ba = {}, {}
    for j in jobs:
        x, y = str(j.get(a)), str(j.get(b))
        if ab.setdefault(x, y) != y or ba.setdefault(y, x) != x:
            return False
    return True


def interval_of(key: str, m: dict) -> tuple[float, float] | None:
    """A 95% interval for a sweep metric of one job, where the tables allow one."""
    v, n = m.get(key), m.get("deals") or m.get("games")
    if not finite(v):
        return None
    lo, hi = m.get("seat0_win_ci_low"), m.get("seat0_win_ci_high")
    if key == "seat0_win_share" and finite(lo, hi):
        return lo, hi
    if key == "seat0_advantage" and finite(lo, hi, m.get("seat0_win_share")):
        return v + lo - m["seat0_win_share"], v + hi - m["seat0_win_share"]
    if key == "tie_rate" and finite(n) and n:
        return stats.wilson(v, int(n))
    if key == "length_mean" and finite(m.get("length_sd"), m.get("games")) and m["games"]:
        h = stats.Z95 * m["length_sd"] / math.sqrt(m["games"])
        return v - h, v + h
    return None


def _line_label(name: tuple, others: list[str]) -> str:
    text = ", ".join(f"{a}={short_policies(str(v))}" for a, v in zip(others, name)) if others else "all jobs"
    return "\n".join(textwrap.wrap(text, 38)) or text


def _metric_panel(ax, key: str, label: str, lines: dict, others: list[str], crowd: bool) -> list:
    handles, by_x, ys = [], {}, []
    for li, name in enumerate(lines):
        pts = sorted(((x, m) for x, m in lines[name] if finite(m.get(key))), key=lambda p: p[0])
        if not pts:
            continue
        xs = [p[0] for p in pts]
        y = [p[1][key] for p in pts]
        for x, v in zip(xs, y):
            by_x.setdefault(x, []).append(v)
        ys += y
        if crowd:
            (h,) = ax.plot(xs, y, color="#b9c0cc", linewidth=0.8, marker="o", markersize=2, label="each combination")
            handles = handles or [h]
            continue
        ci = [interval_of(key, p[1]) for p in pts]
        err = ([[max(v - c[0], 0) if c else 0 for v, c in zip(y, ci)],
                [max(c[1] - v, 0) if c else 0 for v, c in zip(y, ci)]] if any(ci) else None)
        h = ax.errorbar(xs, y, yerr=err, marker="o", linewidth=1.5, markersize=4, capsize=3,
                        color=f"C{li % 10}", label=_line_label(name, others))
        ys += [c[0] for c in ci if c] + [c[1] for c in ci if c]
        handles.append(h)
    if crowd and by_x:
        xs = sorted(by_x)
        (h,) = ax.plot(xs, [sum(by_x[x]) / len(by_x[x]) for x in xs], color="#1f3b73", linewidth=2.2,
                       marker="o", markersize=4, label="mean over combinations")
        handles.append(h)
    _reference(ax, key, ys, lines)
    ax.set_title(label, fontsize=10)
    ax.grid(alpha=.3)
    return handles


def _reference(ax, key: str, ys: list, lines: dict) -> None:
    """Fair-share lines and axes that do not exaggerate."""
    if key == "seat0_win_share":
        seats = {m.get("seat_rows") for pts in lines.values() for _, m in pts}
        fair = 1 / seats.pop() if len(seats) == 1 and None not in seats else None
        share_axis(ax, ys, fair)
    elif key == "seat0_advantage" and ys:
        ax.axhline(0, color="#999", linewidth=1, linestyle="--")
        lo, hi = min(ys + [0.0]), max(ys + [0.0])
        if hi - lo < MIN_SHARE_SPAN:
            mid = (hi + lo) / 2
            lo, hi = mid - MIN_SHARE_SPAN / 2, mid + MIN_SHARE_SPAN / 2
        ax.set_ylim(lo, hi)
    elif key in ("balance", "tie_rate") and ys:
        share_axis(ax, ys)


def sweep_figure(figs: Figures, axis: str, others: list[str], lines: dict, xs_seen: list,
                 numeric: bool, nums: list, present: list, crowd: bool) -> str:
    ncols = 3
    nrows = math.ceil((len(present) + 1) / ncols)
    fig, grid = figs.new(13.0, 3.2 * nrows, nrows, ncols, left=0.7, bottom=0.7, top=0.4)
    flat = [ax for row in grid for ax in row]
    handles = []
    for ax, (key, label) in zip(flat, present):
        h = _metric_panel(ax, key, label, lines, others, crowd)
        handles = handles or h
        ax.set_xlabel(axis, fontsize=9)
        if numeric and len(xs_seen) <= 12:
            ax.set_xticks(sorted(set(nums)))
            ax.set_xticklabels([fmt(int(v) if v == int(v) else v) for v in sorted(set(nums))], fontsize=8)
        elif not numeric:
            ax.set_xticks(list(range(len(xs_seen))))
            ax.set_xticklabels([short_policies(str(v)) for v in xs_seen], fontsize=8,
                               rotation=20 if len(xs_seen) > 4 else 0)
    for ax in flat[len(present):]:
        ax.axis("off")
    if handles:
        flat[-1].legend(handles=handles, loc="center", fontsize=8, frameon=False,
                        title="lines (95% error bars)" if not crowd else None, title_fontsize=8)
    return figs.img(fig, f"sweep metrics against {axis}")
