"""One self-contained HTML page for a report folder (``simcli report DIR``, ``--html``).

``render_html(report_dir)`` reads whatever report tables the folder holds (Parquet or CSV:
seats, variants, scores, lengths, counters, meta.json; optional policies, paired, dates, tune;
sweeps are recognised by ``meta.json["axes"]``) and returns the page as text. ``write_html`` writes it
atomically. The page needs nothing else: CSS is inline, every plot is a matplotlib PNG embedded
as a ``data:`` URI, there are no scripts, links, fonts or web addresses (a ``://`` in any text,
e.g. a note quoting a web page, is written as an HTML entity so no address appears literally).

Layout: header (what was run, from meta.json, and any stand-in data notes), an overview table
when there are several jobs, the tune verdict with ``tune.png`` and its table (``tune``), the
calendar heat-maps (``dates``), the sweep comparison plots
(``axes``), then one section per job: its numbers, a three-panel figure (win share per seat
with 95% intervals, score distribution per seat, game-length distribution), the seat table,
the policy comparison (rotated runs) and the game's derived counter metrics. A section "When is
the game decided?" (table ``arc``) plots, per job, how often a leader at each checkpoint counted
from the end goes on to win, with the four arc metrics of each job. At most
``MAX_FIGURES`` images are drawn; the page says how many were left out.
"""
from __future__ import annotations

import base64
import calendar
import html
import io
import json
import math
import os
import tempfile
from pathlib import Path

import polars as pl

from simcli.errors import SimError

TABLES = ("seats", "variants", "scores", "lengths", "counters", "policies", "paired", "dates", "tune", "ablations", "arc")
# metrics that compare seats which chose to use an option with seats that did not: correlations,
# not the option's value (a seat mostly uses it when behind); `simcli ablate` measures the value
CORRELATIONAL = ("advisory_effect", "advisory_user_win_share", "advisory_nonuser_win_share")
BASE_KEYS = ("game", "variant", "players", "policies")
SWEEP_METRICS = (("seat0_win_share", "win share of seat 0"), ("seat0_advantage", "seat-0 advantage"),
                 ("balance", "balance"), ("tie_rate", "tie rate"), ("length_mean", "mean game length"))
MAX_FIGURES = 60          # images per page
MAX_JOB_SECTIONS = 120    # per-job sections per page (the overview table still lists every job)
MAX_TABLE_ROWS = 400      # rows in any one HTML table ...
MAX_OVERVIEW_ROWS = 1500  # ... except the list of jobs and the overview (a year run has 365 x policies)
MAX_TOC_JOBS = 24         # jobs listed one by one in the contents
MAX_LINES = 10            # lines per sweep plot
DPI = 100

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
 margin:0 auto;max-width:1180px;padding:16px 24px 48px;color:#1d2330;background:#fff;line-height:1.4}
h1{font-size:1.6em;margin:.2em 0 .4em;border-bottom:3px solid #2b5797;padding-bottom:.2em}
h2{font-size:1.3em;margin:1.6em 0 .5em;color:#2b5797;border-bottom:1px solid #c9d3e6;padding-bottom:.15em}
h3{font-size:1.05em;margin:1.1em 0 .4em}
table{border-collapse:collapse;margin:.4em 0 .9em;font-size:.86em}
th,td{border:1px solid #d5dbe6;padding:3px 8px;text-align:left;vertical-align:top}
td{white-space:nowrap}
td.w{white-space:normal;min-width:16em}
.tw{overflow-x:auto;max-width:100%}
th{background:#eef2f8;font-weight:600}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr:nth-child(even) td{background:#f8f9fc}
img{max-width:100%;height:auto;display:block;margin:.3em 0 .8em}
.note{background:#fff6df;border-left:4px solid #e0a800;padding:6px 12px;margin:.6em 0}
.cut{background:#fdecec;border-left:4px solid #c0392b;padding:6px 12px;margin:.6em 0}
.job{border-top:2px solid #2b5797;margin-top:2em}
.kv td{white-space:normal}
.kv td:first-child{font-weight:600;background:#f3f5fa;white-space:nowrap}
.toc{columns:2;font-size:.9em}
.muted{color:#667;font-size:.9em}
code{background:#f1f3f7;padding:0 3px;border-radius:3px}
"""


# ----------------------------------------------------------------------------------- reading

def _read(path: Path) -> pl.DataFrame:
    try:
        if path.stat().st_size == 0:
            return pl.DataFrame()
        if path.suffix == ".csv":
            return pl.read_csv(path, infer_schema_length=None)
        return pl.read_parquet(path)
    except pl.exceptions.NoDataError:  # a table with no columns is written as an empty CSV
        return pl.DataFrame()
    except Exception as e:  # a damaged or foreign file: one line, no traceback
        raise SimError(f"cannot read {path}: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None


# columns that tell the standard tables apart (a file holding another table is refused)
SHAPES = {"seats": ("seat", "win_share"), "variants": ("games",), "scores": ("seat", "score", "count"),
          "lengths": ("length", "count"), "counters": ("metric", "value")}
NOT_IN = {"variants": ("seat", "score", "length", "metric")}


def _shaped(path: Path, name: str, df: pl.DataFrame) -> pl.DataFrame:
    """``df`` if it has the shape of the ``name`` table (or is empty), else one line."""
    if not df.width:
        return df
    missing = [c for c in SHAPES.get(name, ()) if c not in df.columns]
    foreign = [c for c in NOT_IN.get(name, ()) if c in df.columns]
    if missing or foreign:
        what = f"no column {', '.join(missing)}" if missing else f"it has column {', '.join(foreign)}"
        raise SimError(f"{path} is not a simcli {name} table ({what}); give a folder written by "
                       "run, sweep or ladder")
    return df


def read_report(report_dir: Path) -> tuple[dict[str, pl.DataFrame], dict]:
    """(tables by name, meta) from a report folder; Parquet preferred over CSV."""
    d = Path(report_dir)
    if not d.is_dir():
        raise SimError(f"{d} is not a simcli report folder (no seats/variants tables)"
                       if d.exists() else f"report folder {d} does not exist")
    tables = {}
    for name in TABLES:
        for ext in ("parquet", "csv"):
            p = d / f"{name}.{ext}"
            if p.is_file():
                tables[name] = _shaped(p, name, _read(p))
                break
    if "seats" not in tables and "variants" not in tables and "ablations" not in tables:
        raise SimError(f"{d} is not a simcli report folder (no seats/variants tables)")
    meta = {}
    mp = d / "meta.json"
    if mp.is_file():
        try:
            meta = json.loads(mp.read_text())
        except (OSError, ValueError) as e:
            raise SimError(f"cannot read {mp}: {e}") from None
        if not isinstance(meta, dict):
            meta = {}
    return tables, meta


def _key_columns(tables: dict[str, pl.DataFrame]) -> list[str]:
    """Job key columns: those every table starts with (before `games` / `seat`)."""
    keys: list[str] = []
    for name, stop in (("variants", "games"), ("seats", "seat")):
        df = tables.get(name)
        if df is None or stop not in df.columns:
            continue
        for c in df.columns[: df.columns.index(stop)]:
            if c not in keys:
                keys.append(c)
    return keys


def _normalise(tables: dict[str, pl.DataFrame], keys: list[str]) -> dict[str, pl.DataFrame]:
    """Same key dtypes in every table: players an integer, label columns text (CSV infers types)."""
    out = {}
    for name, df in tables.items():
        casts = []
        for k in keys:
            if k not in df.columns:
                continue
            if k == "players":
                casts.append(pl.col(k).cast(pl.Int64, strict=False))
            elif name != "dates" or k != "date":
                casts.append(pl.col(k).cast(pl.Utf8))
        out[name] = df.with_columns(casts) if casts else df
    return out


def _groups(df: pl.DataFrame | None, keys: list[str]) -> tuple[list[str], dict]:
    """Partition a table by the job keys it has: (keys used, {key tuple: frame})."""
    if df is None or df.height == 0:
        return [], {}
    present = [k for k in keys if k in df.columns]
    if not present:
        return present, {(): df}
    return present, df.partition_by(present, as_dict=True, maintain_order=True)


def _part(groups: tuple[list[str], dict], job: dict) -> pl.DataFrame | None:
    present, parts = groups
    return parts.get(tuple(job.get(k) for k in present))


# -------------------------------------------------------------------------------- formatting

def esc(text) -> str:
    """HTML-escaped text; '://' and 'url(' are written as entities so no address appears."""
    s = html.escape("" if text is None else str(text), quote=True)
    return s.replace("://", ":&#47;&#47;").replace("url(", "url&#40;")


def _isnum(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def fmt(v, digits: int = 4) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return f"{v:,}" if abs(v) >= 10_000 else str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "–"
        if math.isinf(v):
            return "∞" if v > 0 else "-∞"
        if v != 0 and (abs(v) >= 1e6 or abs(v) < 10 ** -digits):
            return f"{v:.3g}"
        if v == int(v) and abs(v) < 1e6:
            return str(int(v))
        return f"{v:.{digits}f}"
    if isinstance(v, (list, tuple)):
        return ", ".join(fmt(x, digits) for x in v)
    if isinstance(v, dict):
        return ", ".join(f"{k}={fmt(x, digits)}" for k, x in v.items())
    return str(v)


def _table(headers: list[str], rows: list[list], cls: str = "", cap: int | None = None) -> str:
    cap = MAX_TABLE_ROWS if cap is None else cap
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = []
    for row in rows[:cap]:
        cells = []
        for v in row:
            klass = ' class="n"' if _isnum(v) else ' class="w"' if len(fmt(v)) > 40 else ""
            cells.append(f"<td{klass}>{esc(fmt(v))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    more = (f'<p class="muted">{len(rows) - cap} more rows not shown (see the table files).</p>'
            if len(rows) > cap else "")
    c = f' class="{cls}"' if cls else ""
    return f'<div class="tw"><table{c}><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>{more}'


def _kv(pairs: list[tuple[str, object]]) -> str:
    rows = "".join(f"<tr><td>{esc(k)}</td><td>{esc(fmt(v))}</td></tr>" for k, v in pairs)
    return f'<table class="kv"><tbody>{rows}</tbody></table>'


def _job_title(job: dict, keys: list[str]) -> str:
    parts = [str(job.get("game", "?")), str(job.get("variant", "?")), f"{job.get('players', '?')}p"]
    if job.get("policies") is not None:
        parts.append(f"[{job['policies']}]")
    labels = [f"{k}={job[k]}" for k in keys if k not in BASE_KEYS and job.get(k) is not None]
    return " / ".join(parts[:3]) + " " + " ".join(parts[3:]) + (" — " + ", ".join(labels) if labels else "")


# ----------------------------------------------------------------------------------- figures

class _Figures:
    """Draws matplotlib figures into PNG data URIs, at most ``limit`` of them."""

    def __init__(self, limit: int | None = None):
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        self.plt = plt
        self.limit = MAX_FIGURES if limit is None else limit
        self.drawn = 0
        self.skipped = 0

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
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
        finally:
            self.plt.close(fig)
        self.drawn += 1
        data = base64.b64encode(buf.getvalue()).decode("ascii")
        return f'<img src="data:image/png;base64,{data}" alt="{esc(alt)}">'


def _finite(*vals) -> bool:
    return all(v is not None and isinstance(v, (int, float)) and math.isfinite(v) for v in vals)


def _interval_panel(ax, labels, shares, lows, highs, fair=None, colour="#2b5797"):
    xs = list(range(len(labels)))
    for x, m, lo, hi in zip(xs, shares, lows, highs):
        if not _finite(m):
            continue
        err = None
        if _finite(lo, hi):
            err = [[max(m - lo, 0.0)], [max(hi - m, 0.0)]]
        ax.errorbar([x], [m], yerr=err, fmt="o", color=colour, ecolor=colour, capsize=6,
                    markersize=6, elinewidth=1.6)
        ax.annotate(f"{m:.3f}", (x, m), textcoords="offset points", xytext=(10, -3), fontsize=8)
    if fair is not None and math.isfinite(fair):
        ax.axhline(fair, color="#999", linestyle="--", linewidth=1)
    ax.set_xticks(xs)
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_xlim(-0.6, len(labels) - 0.4)
    ax.grid(axis="y", alpha=.3)


def _bin_width(lo: int, hi: int, max_bins: int = 45) -> int:
    """Whole-number bin width so that [lo, hi] makes at most ``max_bins`` bins."""
    return max(1, math.ceil((hi - lo + 1) / max_bins))


def _histogram(values: list, counts: list, lo: int, hi: int, width: int) -> tuple[list, list]:
    """(edges, share of the total per bin) of integer values binned by ``width`` from ``lo``."""
    nbins = (hi - lo) // width + 1
    sums = [0] * nbins
    for v, c in zip(values, counts):
        sums[(int(v) - lo) // width] += c
    n = sum(sums) or 1
    edges = [lo - 0.5 + k * width for k in range(nbins + 1)]
    return edges, [c / n for c in sums]


def _job_figure(figs: _Figures, job_title: str, seats: pl.DataFrame | None, scores: pl.DataFrame | None,
                lengths: pl.DataFrame | None, length_unit: str | None) -> str:
    panels = [p for p, df in (("win", seats), ("scores", scores), ("lengths", lengths))
              if df is not None and df.height]
    if not panels or not figs.room():
        return ""
    from matplotlib.ticker import MaxNLocator
    fig, axes = figs.new(3.9 * len(panels), 3.4, 1, len(panels), top=0.6, bottom=0.75)
    for ax, panel in zip(axes[0], panels):
        if panel == "win":
            rows = seats.sort("seat").to_dicts()
            labels = [f"seat {r['seat']}\n{r.get('policy') or ''}" for r in rows]
            S = len(rows)
            _interval_panel(ax, labels, [r.get("win_share") for r in rows],
                            [r.get("win_ci_low") for r in rows], [r.get("win_ci_high") for r in rows],
                            fair=1 / S if S else None)
            ax.set_title("win share per seat (95% interval)\ndashed: fair share 1/S", fontsize=10)
            ax.set_ylabel("win share")
        elif panel == "scores":
            lo, hi = int(scores["score"].min()), int(scores["score"].max())
            width = _bin_width(lo, hi)
            for seat, part in scores.sort("seat", "score").group_by("seat", maintain_order=True):
                edges, shares = _histogram(part["score"].to_list(), part["count"].to_list(), lo, hi, width)
                ax.stairs(shares, edges, label=f"seat {seat[0]}", linewidth=1.4)
            ax.set_title("score distribution per seat", fontsize=10)
            ax.set_xlabel("final score" + (f" (bins of {width})" if width > 1 else ""))
            ax.set_ylabel("share of games")
            ax.legend(fontsize=8, frameon=False)
            ax.grid(alpha=.3)
        else:
            x = lengths["length"].to_list()
            lo, hi = int(min(x)), int(max(x))
            width = _bin_width(lo, hi)
            edges, shares = _histogram(x, lengths["count"].to_list(), lo, hi, width)
            ax.bar(edges[:-1], shares, width=width * 0.9, align="edge", color="#5b8bd0")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            if lo == hi:
                ax.set_xlim(lo - 3, lo + 3)
            every = f"{lo} {length_unit or ''}".strip()
            ax.set_title("game length" + (f" (every game: {every})" if lo == hi else ""), fontsize=10)
            ax.set_xlabel((length_unit or "length") + (f" (bins of {width})" if width > 1 else ""))
            ax.set_ylabel("share of games")
            ax.grid(axis="y", alpha=.3)
    return figs.img(fig, f"win share, scores and game length: {job_title}")


def _policy_figure(figs: _Figures, job_title: str, pol: pl.DataFrame, seats: int | None) -> str:
    if not figs.room():
        return ""
    rows = pol.to_dicts()
    fig, axes = figs.new(max(4.0, 1.3 * len(rows) + 2), 3.2, bottom=0.45, top=0.6)
    ax = axes[0][0]
    _interval_panel(ax, [str(r.get("policy")) for r in rows], [r.get("win_share") for r in rows],
                    [r.get("win_ci_low") for r in rows], [r.get("win_ci_high") for r in rows],
                    fair=1 / seats if seats else None, colour="#b5651d")
    ax.set_title("win share per policy, per seat held (95% interval)"
                 + ("\ndashed: fair share 1/S" if seats else ""), fontsize=10)
    ax.set_ylabel("win share")
    return figs.img(fig, f"win share per policy: {job_title}")


# ------------------------------------------------------------------------------------ header

def _header(meta: dict, report_dir: Path, n_jobs: int) -> str:
    out = []
    if not meta:
        out.append('<p class="note">No meta.json in this folder: what was run is not recorded.</p>')
        return "".join(out)
    cmd = meta.get("command")
    if isinstance(cmd, list) and cmd:
        cmd = " ".join(["simcli" if i == 0 else str(a) for i, a in enumerate(cmd)])
    pairs = [("command", cmd), ("created", meta.get("created")), ("seed", meta.get("seed")),
             ("games per job", meta.get("games")), ("jobs", n_jobs), ("threads", meta.get("threads")),
             ("chunk", meta.get("chunk")), ("wall time (s)", meta.get("wall_time_s"))]
    for k in ("rotate", "until_ci", "axes", "sweep"):
        if meta.get(k) not in (None, False, [], ""):
            pairs.append((k, meta[k]))
    pkgs = meta.get("packages")
    if isinstance(pkgs, dict):
        pairs.append(("versions", ", ".join(f"{k} {v}" for k, v in pkgs.items() if v)))
    out.append(_kv([(k, v) for k, v in pairs if v is not None]))
    jobs = meta.get("jobs") if isinstance(meta.get("jobs"), list) else []
    notes = []
    top = meta.get("notes")
    for n in (top if isinstance(top, list) else [top] if top else []):
        if n not in notes:
            notes.append(n)
    for j in jobs:
        for n in (j.get("notes") or []) if isinstance(j, dict) else []:
            if n not in notes:
                notes.append(n)
    for n in notes:
        out.append(f'<p class="note"><b>Note:</b> {esc(n)}</p>')
    jobs = [j for j in jobs if isinstance(j, dict)]
    if jobs:
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
        out.append("<h3>Jobs and the rules in force</h3>")
        if common:
            out.append(f"<p>Rules in force in every job: <b>{esc(fmt(common))}</b></p>")
        rules_head = "other rules" if common else "rules"
        if len(rows) <= MAX_TOC_JOBS:
            out.append(_table(["#", "game", "version", "variant", "players", "policies", rules_head,
                               "labels", "wall (s)"], rows))
        else:
            # many jobs (a year run, a big sweep): one row per setup; labels are in the overview
            setups: dict[str, dict] = {}
            for row, r in zip(rows, rules):
                key = json.dumps([fmt(v) for v in row[1:6]])
                st = setups.setdefault(key, {"row": row[1:6], "rules": [], "jobs": 0, "wall": 0.0})
                st["rules"].append({k: v for k, v in r.items() if k not in common})
                st["jobs"] += 1
                st["wall"] += row[8] if _finite(row[8]) else 0.0
            grouped = []
            for st in setups.values():
                rs = st["rules"]
                same = {k: v for k, v in rs[0].items() if all(k in x and x[k] == v for x in rs[1:])}
                varying = sorted({k for x in rs for k in x} - set(same))
                grouped.append([*st["row"], same, ", ".join(varying), st["jobs"], st["wall"]])
            out.append(f'<p class="muted">{len(rows)} jobs, grouped by setup; each job\'s labels '
                       "(dates, sweep values) are in the overview.</p>")
            out.append(_table(["game", "version", "variant", "players", "policies", rules_head,
                               "rules that differ by job", "jobs", "wall (s)"], grouped))
    return "".join(out)


# ---------------------------------------------------------------------------------- sections

def _job_metrics(job: dict, var: pl.DataFrame | None, seats: pl.DataFrame | None) -> dict:
    m = dict(var.row(0, named=True)) if var is not None and var.height else {}
    if seats is not None and seats.height and "seat" in seats.columns:
        s0 = seats.filter(pl.col("seat") == 0)
        if s0.height and "win_share" in s0.columns:
            m["seat0_win_share"] = s0["win_share"][0]
    return m


def _numbers(m: dict) -> str:
    pairs = []
    for key, label in (("games", "games"), ("deals", "deals"), ("rotations", "rotations"),
                       ("seat0_win_share", "win share of seat 0"),
                       ("seat0_advantage", "seat-0 advantage (share − 1/S)"),
                       ("balance", "balance (1 − max−min share)"), ("tie_rate", "tie rate"),
                       ("timeout_rate", "timeout rate"), ("leader_gap", "leader gap"),
                       ("decisions_per_game", "decisions per game"), ("wall_s", "wall time (s)")):
        if key in m and not (key == "rotations" and m[key] in (None, 1)):
            pairs.append((label, m[key]))
    if "length_mean" in m:
        unit = m.get("length_unit") or ""
        sd = m.get("length_sd")
        pairs.append(("game length", f"{fmt(m['length_mean'])} ± {fmt(sd)} {unit}".strip()
                      if sd is not None else f"{fmt(m['length_mean'])} {unit}"))
    return _kv(pairs) if pairs else ""


def _seat_table(seats: pl.DataFrame) -> str:
    cols = [c for c in ("seat", "policy", "games", "win_share", "win_ci_low", "win_ci_high", "mean_place",
                        "score_mean", "score_sd", "score_min", "score_p50", "score_max") if c in seats.columns]
    return _table(cols, [list(r) for r in seats.sort("seat").select(cols).iter_rows()])


def _rest_table(df: pl.DataFrame, keys: list[str]) -> str:
    cols = [c for c in df.columns if c not in keys]
    return _table(cols, [list(r) for r in df.select(cols).iter_rows()])


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
    return note + _table(["metric", "value"] * ncol, rows)


def _ablations_section(figs: _Figures, abl: pl.DataFrame) -> str:
    """What each option is worth: the ablations table and its differences with intervals."""
    kind = "success rate" if "success_rate_base" in abl.columns else "win share"
    intro = ('<p>Each row: one seat plays the base policy with one restriction against the base '
             f"policy; <code>diff</code> is the restricted seat's {kind} minus the base seat's "
             "(negative: the forbidden option is worth that much to the base policy). "
             "<code>p_holm</code> is Holm-corrected across the restrictions; "
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
    img = ""
    if figs.room():
        labels = [f"+{r['restriction']}" + ("" if abl["game"].n_unique() == 1 else f" ({r['game']})")
                  for r in abl.iter_rows(named=True)]
        h = 0.9 + 0.32 * max(len(labels), 1)
        fig, axes = figs.new(7.5, h, left=2.2, bottom=0.55, top=0.3)
        ax = axes[0][0]
        ys = list(range(len(labels)))
        for y, r in zip(ys, abl.iter_rows(named=True)):
            m, lo, hi = r["diff"], r["ci_low"], r["ci_high"]
            if not _finite(m):
                continue
            err = [[max(m - lo, 0.0)], [max(hi - m, 0.0)]] if _finite(lo, hi) else None
            ax.errorbar([m], [y], xerr=err, fmt="o", color="#2b5797", capsize=4, markersize=5)
        ax.axvline(0.0, color="#999", linestyle="--", linewidth=1)
        ax.set_yticks(ys)
        ax.set_yticklabels(labels, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel(f"{kind}: restricted minus base (95% interval)", fontsize=8)
        ax.grid(axis="x", alpha=.3)
        img = figs.img(fig, f"ablations: {kind} difference per restriction")
    return intro + img + _table(abl.columns, [list(r) for r in abl.iter_rows()])


def _overview(jobs: list[dict], metrics: list[dict], keys: list[str]) -> str:
    cols = [("seat0_win_share", "seat-0 win share"), ("seat0_advantage", "seat-0 adv."),
            ("balance", "balance"), ("tie_rate", "tie rate"), ("timeout_rate", "timeout rate"),
            ("length_mean", "length")]
    same = [k for k in keys if len({str(j.get(k)) for j in jobs}) == 1]
    shown = [k for k in keys if k not in same]
    rows = []
    for i, (j, m) in enumerate(zip(jobs, metrics)):
        rows.append([i + 1, *[j.get(k) for k in shown], m.get("games"), *[m.get(c) for c, _ in cols]])
    head = (f'<p class="muted">Same for every job: {esc(", ".join(f"{k}={jobs[0].get(k)}" for k in same))}.</p>'
            if same else "")
    return head + _table(["#", *shown, "games", *[lab for _, lab in cols]], rows, cap=MAX_OVERVIEW_ROWS)


def _axis_sort_key(values: list) -> tuple[bool, list]:
    """Numeric axes plot against their value; others as categories in first-seen order."""
    nums = []
    for v in values:
        try:
            nums.append(float(v))
        except (TypeError, ValueError):
            return False, values
    return True, nums


def _one_to_one(jobs: list[dict], a: str, b: str) -> bool:
    """True when axes a and b group the jobs the same way (e.g. players and per-seat policies)."""
    ab, ba = {}, {}
    for j in jobs:
        x, y = str(j.get(a)), str(j.get(b))
        if ab.setdefault(x, y) != y or ba.setdefault(y, x) != x:
            return False
    return True


def _short(text: str, n: int = 42) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _sweep_section(figs: _Figures, axes: list[str], jobs: list[dict], metrics: list[dict]) -> str:
    out = []
    axes = [a for a in axes if any(a in j for j in jobs)]
    varying = [a for a in axes if len({str(j.get(a)) for j in jobs}) > 1]
    if not varying:
        return '<p class="muted">Every sweep axis has a single value: nothing to compare.</p>'
    present = [(k, lab) for k, lab in SWEEP_METRICS if any(_finite(m.get(k)) for m in metrics)]
    if not present:
        return ""
    plotted: list[str] = []
    for axis in varying:
        twin = next((p for p in plotted if _one_to_one(jobs, p, axis)), None)
        if twin is not None:
            out.append(f'<p class="muted">{esc(axis)} changes together with {esc(twin)}: '
                       f"see the plots against {esc(twin)}.</p>")
            continue
        plotted.append(axis)
        # axes that move in lockstep with this one are not "other keys"
        others: list[str] = []
        for a in varying:
            if a != axis and not any(_one_to_one(jobs, a, b) for b in [axis, *others]):
                others.append(a)
        xs_seen = list(dict.fromkeys(j.get(axis) for j in jobs if j.get(axis) is not None))
        numeric, nums = _axis_sort_key(xs_seen)
        pos = ({v: n for v, n in zip(xs_seen, nums)} if numeric else {v: i for i, v in enumerate(xs_seen)})
        lines: dict[tuple, list] = {}
        for j, m in zip(jobs, metrics):
            if j.get(axis) is None:
                continue
            lines.setdefault(tuple(j.get(a) for a in others), []).append((pos[j.get(axis)], m))
        names = list(lines)
        crowd = len(names) > MAX_LINES
        out.append(f"<h3>against {esc(axis)}</h3>")
        if crowd:
            out.append(f'<p class="muted">{len(names)} combinations of {esc(", ".join(others))}: too many '
                       f"to label, so each is a thin grey line and the dark line is their mean; "
                       f"the overview table has every job.</p>")
        if not figs.room():
            continue
        ncols = 3
        nrows = math.ceil((len(present) + 1) / ncols)
        fig, grid = figs.new(11.5, 3.0 * nrows, nrows, ncols, left=0.7, bottom=0.7, top=0.4)
        flat = [ax for row in grid for ax in row]
        handles = []
        for ax, (key, label) in zip(flat, present):
            by_x: dict[float, list] = {}
            for li, name in enumerate(names):
                pts = sorted((x, m.get(key)) for x, m in lines[name] if _finite(m.get(key)))
                if not pts:
                    continue
                for x, y in pts:
                    by_x.setdefault(x, []).append(y)
                if crowd:
                    (h,) = ax.plot([p[0] for p in pts], [p[1] for p in pts], color="#b9c0cc",
                                   linewidth=0.8, marker="o", markersize=2, label="each combination")
                    if ax is flat[0] and not handles:
                        handles.append(h)
                    continue
                lab = _short(" · ".join(str(v) for v in name)) if others else "all jobs"
                (h,) = ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", linewidth=1.5,
                               markersize=4, color=f"C{li % 10}", label=lab)
                if ax is flat[0]:
                    handles.append(h)
            if crowd and by_x:
                xs = sorted(by_x)
                (h,) = ax.plot(xs, [sum(by_x[x]) / len(by_x[x]) for x in xs], color="#1f3b73",
                               linewidth=2.2, marker="o", markersize=4, label="mean over combinations")
                if ax is flat[0]:
                    handles.append(h)
            ax.set_title(label, fontsize=10)
            ax.set_xlabel(axis, fontsize=9)
            ax.grid(alpha=.3)
            if key == "seat0_advantage":
                ax.axhline(0, color="#999", linewidth=.8, linestyle="--")
            if numeric and len(xs_seen) <= 12:
                ax.set_xticks(sorted(set(nums)))
                ax.set_xticklabels([fmt(int(v) if v == int(v) else v) for v in sorted(set(nums))], fontsize=8)
            elif not numeric:
                ax.set_xticks(list(range(len(xs_seen))))
                ax.set_xticklabels([_short(str(v), 18) for v in xs_seen], fontsize=8,
                                   rotation=20 if len(xs_seen) > 4 else 0)
        for ax in flat[len(present):]:
            ax.axis("off")
        if handles:
            title = _short(" · ".join(others), 48) if others and not crowd else None
            flat[-1].legend(handles=handles, loc="center", fontsize=8, frameon=False, title=title,
                            title_fontsize=8)
        out.append(figs.img(fig, f"sweep metrics against {axis}"))
    return "".join(out)


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


def _dates_section(figs: _Figures, dates: pl.DataFrame) -> str:
    need = {"date", "policy", "success_rate"}
    if not need <= set(dates.columns):
        return (f'<p class="muted">dates table lacks column(s) {esc(", ".join(sorted(need - set(dates.columns))))}'
                "; no calendar drawn.</p>")
    df = _as_dates(dates).with_columns(pl.col("_d").dt.year().alias("_y"))
    if not df.height:
        return '<p class="muted">No readable dates in the dates table.</p>'
    group_cols = [c for c in ("game", "variant", "players") if c in df.columns and df[c].n_unique() > 1]
    group_cols += ["policy", "_y"]
    out = []
    summary = []
    import numpy as np
    for key, part in df.sort("_d").group_by(group_cols, maintain_order=True):
        named = dict(zip(group_cols, key))
        title = " / ".join(str(named[c]) for c in group_cols if c not in ("policy", "_y"))
        title = (f"{title} — " if title else "") + f"policy {named['policy']}, {named['_y']}"
        rates = part["success_rate"].cast(pl.Float64).to_list()
        ds = part["_d"].to_list()
        ok = [(d, r) for d, r in zip(ds, rates) if r is not None and math.isfinite(r)]
        best = max(ok, key=lambda t: t[1]) if ok else (None, None)
        worst = min(ok, key=lambda t: t[1]) if ok else (None, None)
        games = int(part["games"].sum()) if "games" in part.columns else None
        mean_score = (float(part["score_mean"].cast(pl.Float64).mean())
                      if "score_mean" in part.columns and part.height else None)
        summary.append([title, len(ds), games, (sum(r for _, r in ok) / len(ok)) if ok else None,
                        f"{best[0]} ({fmt(best[1])})" if ok else None,
                        f"{worst[0]} ({fmt(worst[1])})" if ok else None, mean_score])
        if not figs.room():
            continue
        grid = np.full((12, 31), np.nan)
        for d, r in ok:
            grid[d.month - 1, d.day - 1] = r
        fig, axes = figs.new(11.5, 4.2, left=0.6, right=0.9, bottom=0.6, top=0.4)
        ax = axes[0][0]
        import matplotlib
        cmap = matplotlib.colormaps["viridis"].with_extremes(bad="#e9ecf2")
        im = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=0.0, vmax=1.0, aspect="auto",
                       interpolation="nearest")
        ax.set_yticks(range(12))
        ax.set_yticklabels([calendar.month_abbr[m] for m in range(1, 13)], fontsize=8)
        ax.set_xticks(range(31))
        ax.set_xticklabels([str(d) for d in range(1, 32)], fontsize=7)
        ax.set_xlabel("day of month")
        ax.set_title(f"success rate by date — {title}", fontsize=10)
        # days that do not exist in this year (30 Feb ...) are hatched out in grey
        year = int(named["_y"])
        for m in range(12):
            for day in range(calendar.monthrange(year, m + 1)[1], 31):
                ax.add_patch(figs.plt.Rectangle((day - 0.5, m - 0.5), 1, 1, color="#ffffff", zorder=2))
        fig.colorbar(im, ax=ax, label="success rate", fraction=0.025, pad=0.01)
        out.append(figs.img(fig, f"success rate calendar: {title}"))
    head = _table(["calendar", "dates", "games", "mean success rate", "best date", "worst date",
                   "mean score"], summary)
    return head + "".join(out)


# -------------------------------------------------------------------------------------- tune

def _tune_section(tune: pl.DataFrame, meta: dict, report_dir: Path) -> str:
    """`simcli tune`: the verdict, tune.png (drawn by the command) and the candidate table."""
    info = meta.get("tune") if isinstance(meta.get("tune"), dict) else {}
    best = tune.filter(pl.col("status") == "best") if "status" in tune.columns else tune.head(0)
    same = tune.filter(pl.col("status") == "indistinguishable") if "status" in tune.columns else tune.head(0)
    rules = [c for c in tune.columns if c not in ("games", "metric", "ci_low", "ci_high", "distance",
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
    if _finite(used, grid) and grid:
        out.append(f"<p>Games used {used:,} of {grid:,} for the full grid ({100 * used / grid:.1f}%).</p>")
    png = report_dir / "tune.png"
    if png.is_file():
        data = base64.b64encode(png.read_bytes()).decode("ascii")
        out.append(f'<img src="data:image/png;base64,{data}" alt="tune: metric against rule value">')
    out.append(_table(list(tune.columns), [list(r) for r in tune.iter_rows()], cap=MAX_TABLE_ROWS))
    return "".join(out)


# -------------------------------------------------------------------------------------- page

ARC_METRICS = (("lead_changes", "lead changes"), ("comeback_rate", "comeback rate"),
               ("decided_at", "decided at (k/K)"), ("last_swing", "last swing"))


def _nan_for_null(values: list) -> list[float]:
    return [float("nan") if v is None else float(v) for v in values]


def arc_figure(arc: pl.DataFrame, title_of, ax) -> int:
    """leader_wins (with 95% intervals) against checkpoints counted from the end, one line per
    job (at most MAX_LINES); returns the number of lines drawn."""
    end = arc.filter(pl.col("counted") == "end")
    keys = [c for c in end.columns if c not in ("counted", "checkpoint", "games", "leader_wins", "ci_low",
                                                 "ci_high", "lead_change_rate")]
    parts = end.partition_by(keys, as_dict=True, maintain_order=True) if keys else {(): end}
    n = 0
    for key, part in parts.items():
        if n >= MAX_LINES:
            break
        part = part.sort("checkpoint")
        x = part["checkpoint"].to_list()
        # a null (no estimate, or no interval) is a gap in the line or the band, never a 0
        y, lo, hi = (_nan_for_null(part[c].to_list()) for c in ("leader_wins", "ci_low", "ci_high"))
        line, = ax.plot(x, y, marker="o", markersize=3, linewidth=1.4, label=_short(title_of(dict(zip(keys, key)))))
        ax.fill_between(x, lo, hi, color=line.get_color(), alpha=.15)
        n += 1
    ax.set_xlabel("checkpoints before the end (0 = final standing)")
    ax.set_ylabel("a leader there wins")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=.3)
    ax.legend(fontsize=7)
    return n


def arc_png(arc: pl.DataFrame) -> bytes:
    """arc.png: ``arc_figure`` as a PNG file (written beside the tables by export)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4), dpi=DPI)
    try:
        arc_figure(arc, lambda job: " ".join(str(v) for v in job.values()), ax)
        ax.set_title("When is the game decided?")
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png", metadata={"Software": None})
    finally:
        plt.close(fig)
    return buf.getvalue()


def _arc_section(figs: _Figures, arc: pl.DataFrame, jobs: list[dict], metrics: list[dict],
                 keys: list[str]) -> str:
    html_parts = ['<p class="muted">Checkpoints: every round (forecasts-cubes, forecasts-bid, pgc; '
                  "fewest points lead in pgc), every full turn of the table (sudden-skies, standing = "
                  "most cards of one suit). Over games with a winner (timeouts are not counted). See "
                  "docs/balance.md.</p>"]
    if figs.room():
        fig, axes = figs.new(8.5, 4.2, right=0.3)
        arc_figure(arc, lambda job: _job_title(job, [k for k in keys if k in job]), axes[0][0])
        html_parts.append(figs.img(fig, "leader win rate against checkpoints from the end"))
    rows = [[_job_title(j, keys)] + [m.get(k) for k, _ in ARC_METRICS] + [m.get("arc_games"), m.get("arc_excluded")]
            for j, m in zip(jobs, metrics) if m.get("arc_games")]
    html_parts.append(_table(["job"] + [label for _, label in ARC_METRICS] + ["games", "timeouts not counted"], rows))
    return "".join(html_parts)


def render_html(report_dir: Path, shown_as: Path | None = None) -> str:
    """The whole report page for the folder's tables, as one self-contained HTML string."""
    report_dir = Path(report_dir)
    raw, meta = read_report(report_dir)
    keys = _key_columns(raw)
    tables = _normalise(raw, keys)
    figs = _Figures()

    source = next((tables[n] for n in ("variants", "seats") if n in tables and tables[n].height), None)
    present_keys = [k for k in keys if source is not None and k in source.columns]
    if source is None:
        jobs = []
    elif present_keys:
        jobs = [dict(zip(present_keys, r)) for r in source.select(present_keys).unique(maintain_order=True).iter_rows()]
    else:
        jobs = [{}]
    g = {name: _groups(tables.get(name), keys) for name in ("seats", "variants", "scores", "lengths",
                                                              "counters", "policies", "paired")}
    metrics = [_job_metrics(j, _part(g["variants"], j), _part(g["seats"], j)) for j in jobs]
    axes = meta.get("axes") if isinstance(meta.get("axes"), list) else None

    title = "simcli report"
    if jobs and len({j.get("game") for j in jobs}) == 1 and jobs[0].get("game"):
        title += f" — {jobs[0]['game']}"
    body = [f"<h1>{esc(title)}</h1>",
            f'<p class="muted">Report folder <code>{esc((Path(shown_as) if shown_as else report_dir.resolve()).name)}</code>; '
            f"{len(jobs)} job{'s' if len(jobs) != 1 else ''}; tables: "
            f"{esc(', '.join(n for n in TABLES if n in tables))}.</p>"]
    sections: list[str] = []

    sections.append("<h2 id=\"run\">What was run</h2>" + _header(meta, report_dir, len(jobs)))
    if len(jobs) > 1:
        sections.append("<h2 id=\"overview\">Overview of all jobs</h2>" + _overview(jobs, metrics, present_keys))
    tune = raw.get("tune")
    if tune is not None and tune.height:
        sections.append("<h2 id=\"tune\">Which rule value balances it? (tune)</h2>"
                        + _tune_section(tune, meta, report_dir))
    abl = tables.get("ablations")
    if abl is not None and abl.height:
        sections.append("<h2 id=\"ablations\">What each option is worth</h2>" + _ablations_section(figs, abl))
    dates = tables.get("dates")
    if dates is not None and dates.height:
        sections.append("<h2 id=\"dates\">Success rate by date</h2>" + _dates_section(figs, dates))
    arc = tables.get("arc")
    if arc is not None and arc.height:
        sections.append("<h2 id=\"arc\">When is the game decided?</h2>"
                        + _arc_section(figs, arc, jobs, metrics, present_keys))
    if axes:
        sections.append("<h2 id=\"sweep\">Sweep comparison</h2>"
                        f'<p class="muted">Axes: {esc(", ".join(map(str, axes)))}. One line per '
                        "combination of the other varying axes.</p>"
                        + _sweep_section(figs, [str(a) for a in axes], jobs, metrics))

    job_html = []
    for i, (job, m) in enumerate(zip(jobs, metrics)):
        if i >= MAX_JOB_SECTIONS:
            job_html.append(f'<p class="cut">{len(jobs) - MAX_JOB_SECTIONS} more jobs have no section of '
                            f"their own (at most {MAX_JOB_SECTIONS}); the overview table lists them.</p>")
            break
        jt = _job_title(job, present_keys)
        seats, scores, lengths = _part(g["seats"], job), _part(g["scores"], job), _part(g["lengths"], job)
        parts = [f'<section class="job" id="job-{i + 1}"><h2>{i + 1}. {esc(jt)}</h2>', _numbers(m)]
        parts.append(_job_figure(figs, jt, seats, scores, lengths, m.get("length_unit")))
        if seats is not None and seats.height:
            parts.append("<h3>Seats</h3>" + _seat_table(seats))
        pol = _part(g["policies"], job)
        if pol is not None and pol.height:
            parts.append("<h3>Policies (seat-rotated deals)</h3>" + _policy_figure(figs, jt, pol, seats.height if seats is not None else None)
                         + _rest_table(pol, keys))
            paired = _part(g["paired"], job)
            if paired is not None and paired.height:
                parts.append("<h3>Paired differences (same deals)</h3>" + _rest_table(paired, keys))
        cnt = _part(g["counters"], job)
        if cnt is not None and cnt.height:
            ct = _counter_table(cnt)
            if ct:
                parts.append("<h3>Game counters (derived metrics)</h3>" + ct)
        parts.append("</section>")
        job_html.append("".join(parts))

    toc = ['<ul class="toc">', '<li><a href="#run">What was run</a></li>']
    if abl is not None and abl.height:
        toc.append('<li><a href="#ablations">What each option is worth</a></li>')
    if len(jobs) > 1:
        toc.append('<li><a href="#overview">Overview of all jobs</a></li>')
    if tune is not None and tune.height:
        toc.append('<li><a href="#tune">Which rule value balances it? (tune)</a></li>')
    if dates is not None and dates.height:
        toc.append('<li><a href="#dates">Success rate by date</a></li>')
    if arc is not None and arc.height:
        toc.append('<li><a href="#arc">When is the game decided?</a></li>')
    if axes:
        toc.append('<li><a href="#sweep">Sweep comparison</a></li>')
    if len(jobs) <= MAX_TOC_JOBS:
        for i, job in enumerate(jobs):
            toc.append(f'<li><a href="#job-{i + 1}">{i + 1}. {esc(_job_title(job, present_keys))}</a></li>')
    else:
        n = min(len(jobs), MAX_JOB_SECTIONS)
        toc.append(f'<li><a href="#job-1">Job sections 1–{n}</a> (numbered as in the overview)</li>')
    toc.append("</ul>")

    if figs.skipped:
        body.append(f'<p class="cut">{figs.skipped} figure{"s" if figs.skipped != 1 else ""} left out: '
                    f"this page draws at most {figs.limit}. Every number is still in the tables.</p>")
    body.append("".join(toc))
    body.extend(sections)
    body.extend(job_html)
    body.append('<p class="muted">Intervals are 95% and treat the deal as the independent unit '
                "(a deal's rotations are one unit). Seat, policy and ladder win shares: Wilson score "
                "interval with effective n = deals &times; p(1&minus;p) / s&sup2;, s&sup2; the variance of "
                "the per-deal shares (shared wins and rotations included); if every deal gave the same "
                "share p, the point [p, p]. Differences between two policies on the same deals, and "
                "ablate's restricted minus base: normal interval of the mean per-deal difference "
                "(rough for a handful of deals). Game arc <code>leader_wins</code>: a ratio estimator "
                "over deals, Wilson with its effective n; where a leader always or never won, Wilson "
                "over the games reaching the checkpoint (with rotation, the deals that do), so a "
                "checkpoint few games reach has a wide interval; no interval is drawn where there is "
                "none. Tune: the seat interval for shares, a normal interval for other means, a "
                "20-group jackknife t interval (19 df) for other metrics. See docs/balance.md, "
                "\"How the intervals are computed\".</p>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{esc(title)}</title><style>{CSS}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def default_html_path(report_dir: Path) -> Path:
    """Where ``simcli report DIR`` and ``--html`` put the page when no file is named."""
    return Path(report_dir) / "report.html"


def write_html(report_dir: Path, out_file: Path, shown_as: Path | None = None) -> Path:
    """Render ``report_dir`` and write the page to ``out_file`` atomically; returns the path.
    ``shown_as``: the folder's name to print (a staging folder is renamed after writing)."""
    out_file = Path(out_file)
    if not Path(report_dir).is_dir():
        raise SimError(f"{report_dir} is a file; give a folder written by run, sweep or ladder"
                       if Path(report_dir).exists() else f"report folder {report_dir} does not exist")
    if out_file.is_dir():
        raise SimError(f"--out {out_file} is a folder; give a file path such as {out_file / 'report.html'}")
    parent = out_file.parent if str(out_file.parent) else Path(".")
    if not parent.is_dir():
        raise SimError(f"--out {out_file}: folder {parent} does not exist")
    text = render_html(report_dir, shown_as)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".simcli-html-", suffix=".tmp", dir=parent)
    except OSError as e:
        raise SimError(f"--out {out_file} is not writable ({e.strerror or e})") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, out_file)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return out_file
