"""The report page's figures: matplotlib PNGs embedded as data URIs (``Figures``), drawn with
honest axes: every win-share axis shows the fair share and spans at least ``MIN_SHARE_SPAN``, so
a wobble of a point does not look like a cliff."""
from __future__ import annotations

import base64
import calendar
import io
import math

import polars as pl

from simcli.report.fmt import short_policies
from simcli.report.html.markup import esc, finite

MAX_FIGURES = 60          # images per page
MAX_LINES = 10            # lines per panel
MIN_SHARE_SPAN = 0.2      # a win-share axis spans at least this much
DPI = 90
PALETTE = 96              # colours of an embedded PNG (palette PNGs are 3-4x smaller)


def png_bytes(fig, dpi: int = DPI) -> bytes:
    """The figure as a PNG: a palette image when Pillow (a matplotlib requirement) is there."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    try:
        from PIL import Image
    except ImportError:
        return buf.getvalue()
    img = Image.open(io.BytesIO(buf.getvalue())).convert("RGB")
    out = io.BytesIO()
    img.quantize(colors=PALETTE, dither=Image.Dither.NONE).save(out, format="PNG", optimize=True)
    return out.getvalue()


def img_tag(data: bytes, alt: str) -> str:
    return f'<img src="data:image/png;base64,{base64.b64encode(data).decode("ascii")}" alt="{esc(alt)}">'


class Figures:
    """Draws matplotlib figures into PNG data URIs, at most ``limit`` of them."""

    def __init__(self, limit: int | None = None, tick=None):
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        self.plt = plt
        self.limit = MAX_FIGURES if limit is None else limit
        self.drawn = 0
        self.skipped = 0
        self.tick = tick or (lambda: None)

    def room(self) -> bool:
        if self.drawn < self.limit:
            return True
        self.skipped += 1
        return False

    def new(self, w: float, h: float, nrows: int = 1, ncols: int = 1, left: float = 0.75,
            right: float = 0.2, top: float = 0.45, bottom: float = 0.6, wspace: float = 0.35,
            hspace: float = 0.6):
        """Figure and a grid of axes; margins in inches (fixed margins: no layout engine, fast)."""
        fig, axes = self.plt.subplots(nrows, ncols, figsize=(w, h), dpi=DPI, squeeze=False)
        fig.subplots_adjust(left=left / w, right=1 - right / w, top=1 - top / h, bottom=bottom / h,
                            wspace=wspace, hspace=hspace)
        return fig, axes

    def img(self, fig, alt: str) -> str:
        try:
            data = png_bytes(fig)
        finally:
            self.plt.close(fig)
        self.drawn += 1
        self.tick()
        return img_tag(data, alt)


def share_axis(ax, values, fair=None) -> None:
    """y limits for win shares: the data, its intervals and the fair share, at least
    ``MIN_SHARE_SPAN`` wide, inside [0, 1]; the fair share as a dashed line."""
    vals = [v for v in values if finite(v)] + ([fair] if finite(fair) else [])
    if not vals:
        return
    lo, hi = min(vals), max(vals)
    if hi - lo < MIN_SHARE_SPAN:
        mid = (hi + lo) / 2
        lo, hi = mid - MIN_SHARE_SPAN / 2, mid + MIN_SHARE_SPAN / 2
    pad = 0.05 * (hi - lo)
    lo, hi = max(0.0, lo - pad), min(1.0, hi + pad)
    if hi - lo < MIN_SHARE_SPAN:
        lo, hi = (0.0, MIN_SHARE_SPAN) if lo == 0 else (1 - MIN_SHARE_SPAN, 1.0)
    ax.set_ylim(lo, hi)
    if finite(fair):
        ax.axhline(fair, color="#999", linestyle="--", linewidth=1)


def interval_panel(ax, labels, shares, lows, highs, fair=None, colour="#2b5797"):
    xs = list(range(len(labels)))
    for x, m, lo, hi in zip(xs, shares, lows, highs):
        if not finite(m):
            continue
        err = [[max(m - lo, 0.0)], [max(hi - m, 0.0)]] if finite(lo, hi) else None
        ax.errorbar([x], [m], yerr=err, fmt="o", color=colour, ecolor=colour, capsize=6,
                    markersize=6, elinewidth=1.6)
        ax.annotate(f"{m:.3f}", (x, m), textcoords="offset points", xytext=(10, -3), fontsize=8)
    share_axis(ax, [*shares, *lows, *highs], fair)
    ax.set_xticks(xs)
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_xlim(-0.6, len(labels) - 0.05)     # room right of the last point for its value label
    ax.grid(axis="y", alpha=.3)


def bin_width(lo: int, hi: int, max_bins: int = 45) -> int:
    """Whole-number bin width so that [lo, hi] makes at most ``max_bins`` bins."""
    return max(1, math.ceil((hi - lo + 1) / max_bins))


def histogram(values: list, counts: list, lo: int, hi: int, width: int) -> tuple[list, list]:
    """(edges, share of the total per bin) of integer values binned by ``width`` from ``lo``."""
    nbins = (hi - lo) // width + 1
    sums = [0] * nbins
    for v, c in zip(values, counts):
        sums[(int(v) - lo) // width] += c
    n = sum(sums) or 1
    edges = [lo - 0.5 + k * width for k in range(nbins + 1)]
    return edges, [c / n for c in sums]


def job_panels(seats, scores, lengths) -> list[str]:
    """The panels a job gets: seats only with opponents, lengths only when they vary."""
    panels = []
    if seats is not None and seats.height > 1:
        panels.append("win")
    if scores is not None and scores.height:
        panels.append("scores")
    if lengths is not None and lengths.height > 1:
        panels.append("lengths")
    return panels


def _win_panel(ax, seats) -> None:
    rows = seats.sort("seat").to_dicts()
    labels = [f"seat {r['seat']}\n{r.get('policy') or ''}" for r in rows]
    interval_panel(ax, labels, [r.get("win_share") for r in rows], [r.get("win_ci_low") for r in rows],
                   [r.get("win_ci_high") for r in rows], fair=1 / len(rows))
    ax.set_title("win share per seat (95% interval)\ndashed: fair share 1/S", fontsize=10)
    ax.set_ylabel("win share")


def _scores_panel(ax, scores) -> None:
    lo, hi = int(scores["score"].min()), int(scores["score"].max())
    width = bin_width(lo, hi)
    for seat, part in scores.sort("seat", "score").group_by("seat", maintain_order=True):
        edges, shares = histogram(part["score"].to_list(), part["count"].to_list(), lo, hi, width)
        ax.stairs(shares, edges, label=f"seat {seat[0]}", linewidth=1.4)
    ax.set_title("score distribution per seat", fontsize=10)
    ax.set_xlabel("final score" + (f" (bins of {width})" if width > 1 else ""))
    ax.set_ylabel("share of games")
    ax.legend(fontsize=8, frameon=False)
    ax.grid(alpha=.3)


def _length_panel(ax, lengths, unit) -> None:
    from matplotlib.ticker import MaxNLocator
    x = lengths["length"].to_list()
    lo, hi = int(min(x)), int(max(x))
    width = bin_width(lo, hi)
    edges, shares = histogram(x, lengths["count"].to_list(), lo, hi, width)
    ax.bar(edges[:-1], shares, width=width * 0.9, align="edge", color="#5b8bd0")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title("game length", fontsize=10)
    ax.set_xlabel((unit or "length") + (f" (bins of {width})" if width > 1 else ""))
    ax.set_ylabel("share of games")
    ax.grid(axis="y", alpha=.3)


def job_figure(figs: Figures, title: str, seats, scores, lengths, unit: str | None) -> str:
    panels = job_panels(seats, scores, lengths)
    if not panels or not figs.room():
        return ""
    fig, axes = figs.new(3.9 * len(panels), 3.2, 1, len(panels), top=0.6, bottom=0.75)
    for ax, panel in zip(axes[0], panels):
        if panel == "win":
            _win_panel(ax, seats)
        elif panel == "scores":
            _scores_panel(ax, scores)
        else:
            _length_panel(ax, lengths, unit)
    return figs.img(fig, f"{', '.join(panels)}: {title}")


def policy_figure(figs: Figures, title: str, pol: pl.DataFrame, seats: int | None) -> str:
    if not figs.room():
        return ""
    rows = pol.to_dicts()
    fig, axes = figs.new(max(4.0, 1.3 * len(rows) + 2), 3.2, bottom=0.45, top=0.6)
    ax = axes[0][0]
    interval_panel(ax, [short_policies(str(r.get("policy"))) for r in rows], [r.get("win_share") for r in rows],
                   [r.get("win_ci_low") for r in rows], [r.get("win_ci_high") for r in rows],
                   fair=1 / seats if seats else None, colour="#b5651d")
    ax.set_title("win share per policy, per seat held (95% interval)"
                 + ("\ndashed: fair share 1/S" if seats else ""), fontsize=10)
    ax.set_ylabel("win share")
    return figs.img(fig, f"win share per policy: {title}")


def ablation_figure(figs: Figures, abl: pl.DataFrame, kind: str) -> str:
    if not figs.room():
        return ""
    labels = [f"+{r['restriction']}" + ("" if abl["game"].n_unique() == 1 else f" ({r['game']})")
              for r in abl.iter_rows(named=True)]
    h = 0.9 + 0.32 * max(len(labels), 1)
    fig, axes = figs.new(7.5, h, left=2.2, bottom=0.55, top=0.3)
    ax = axes[0][0]
    ys = list(range(len(labels)))
    for y, r in zip(ys, abl.iter_rows(named=True)):
        m, lo, hi = r["diff"], r["ci_low"], r["ci_high"]
        if not finite(m):
            continue
        err = [[max(m - lo, 0.0)], [max(hi - m, 0.0)]] if finite(lo, hi) else None
        ax.errorbar([m], [y], xerr=err, fmt="o", color="#2b5797", capsize=4, markersize=5)
    ax.axvline(0.0, color="#999", linestyle="--", linewidth=1)
    ax.set_yticks(ys)
    ax.set_yticklabels(labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(f"{kind}: restricted minus base (95% interval)", fontsize=8)
    ax.grid(axis="x", alpha=.3)
    return figs.img(fig, f"ablations: {kind} difference per restriction")


def calendar_figure(figs: Figures, title: str, ok: list, year: int) -> str:
    import numpy as np
    import matplotlib
    grid = np.full((12, 31), np.nan)
    for d, r in ok:
        grid[d.month - 1, d.day - 1] = r
    fig, axes = figs.new(11.5, 4.2, left=0.6, right=0.9, bottom=0.6, top=0.4)
    ax = axes[0][0]
    cmap = matplotlib.colormaps["viridis"].with_extremes(bad="#e9ecf2")
    im = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=0.0, vmax=1.0, aspect="auto",
                   interpolation="nearest")
    ax.set_yticks(range(12))
    ax.set_yticklabels([calendar.month_abbr[m] for m in range(1, 13)], fontsize=8)
    ax.set_xticks(range(31))
    ax.set_xticklabels([str(d) for d in range(1, 32)], fontsize=7)
    ax.set_xlabel("day of month")
    ax.set_title(f"success rate by date — {title}", fontsize=10)
    # days that do not exist in this year (30 Feb ...) are blanked out
    for m in range(12):
        for day in range(calendar.monthrange(year, m + 1)[1], 31):
            ax.add_patch(figs.plt.Rectangle((day - 0.5, m - 0.5), 1, 1, color="#ffffff", zorder=2))
    fig.colorbar(im, ax=ax, label="success rate", fraction=0.025, pad=0.01)
    return figs.img(fig, f"success rate calendar: {title}")


def ladder_figure(figs: Figures, lad: pl.DataFrame) -> str:
    if not figs.room():
        return ""
    rows = lad.to_dicts()
    fig, axes = figs.new(max(5.0, 1.1 * len(rows) + 2), 3.4, bottom=0.8, top=0.5)
    ax = axes[0][0]
    fair = rows[0].get("equal_skill_share")
    interval_panel(ax, [f"{r['rung']}\nvs {r['versus']}" for r in rows], [r["win_share"] for r in rows],
                   [r["win_ci_low"] for r in rows], [r["win_ci_high"] for r in rows], fair=fair)
    ax.set_title("skill ladder: win share per seat against the rung below\ndashed: equal skill (1/P)",
                 fontsize=10)
    ax.set_ylabel("win share")
    return figs.img(fig, "skill ladder")
