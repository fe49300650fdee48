"""HTML building blocks of the report page: the style sheet, escaping, number formatting,
tables and key-value lists. Nothing here reads a table or draws a figure."""
from __future__ import annotations

import html
import math

import polars as pl

from simcli.report.fmt import fmt_p, short_policies

BASE_KEYS = ("game", "variant", "players", "policies")
MAX_TABLE_ROWS = 400      # rows in any one HTML table ...
MAX_OVERVIEW_ROWS = 1500  # ... except the overview (a year run has 365 x policies)
P_COLUMNS = ("p_value", "p_holm", "p")
POLICY_COLUMNS = ("policies", "policy", "versus", "rung", "policy_a", "policy_b")

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
 margin:0 auto;max-width:1340px;padding:16px 24px 48px;color:#1d2330;background:#fff;line-height:1.4}
h1{font-size:1.6em;margin:.2em 0 .4em;border-bottom:3px solid #2b5797;padding-bottom:.2em}
h2{font-size:1.3em;margin:1.6em 0 .5em;color:#2b5797;border-bottom:1px solid #c9d3e6;padding-bottom:.15em}
h3{font-size:1.05em;margin:1.1em 0 .4em}
table{border-collapse:collapse;margin:.4em 0 .9em;font-size:.84em}
th,td{border:1px solid #d5dbe6;padding:2px 6px;text-align:left;vertical-align:top}
td{white-space:nowrap}
td.w{white-space:normal;min-width:14em}
.tw{overflow-x:auto;max-width:100%}
th{background:#eef2f8;font-weight:600}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr:nth-child(even) td{background:#f8f9fc}
img{max-width:100%;height:auto;display:block;margin:.3em 0 .8em}
.note{background:#fff6df;border-left:4px solid #e0a800;padding:6px 12px;margin:.6em 0}
.cut{background:#fdecec;border-left:4px solid #c0392b;padding:6px 12px;margin:.6em 0}
.flag{background:#fdecec;border-left:4px solid #c0392b;padding:4px 12px;margin:.3em 0}
.ok{background:#e9f6ec;border-left:4px solid #1a7f37;padding:6px 12px;margin:.6em 0}
.job{border-top:2px solid #2b5797;margin-top:2em}
.kv td{white-space:normal}
.kv td:first-child{font-weight:600;background:#f3f5fa;white-space:nowrap}
.toc{columns:3;font-size:.9em}
.muted{color:#667;font-size:.9em}
dl.gl dt{font-weight:600;margin-top:.5em}
dl.gl dd{margin:0 0 0 1.5em}
code{background:#f1f3f7;padding:0 3px;border-radius:3px}
"""


def esc(text) -> str:
    """HTML-escaped text; '://' and 'url(' are written as entities so no address appears."""
    s = html.escape("" if text is None else str(text), quote=True)
    return s.replace("://", ":&#47;&#47;").replace("url(", "url&#40;")


def isnum(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def finite(*vals) -> bool:
    return all(v is not None and isinstance(v, (int, float)) and math.isfinite(v) for v in vals)


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
        if v != 0 and (abs(v) >= 1e6 or abs(v) < 10 ** -(digits + 2)):
            return f"{v:.3g}"
        if v == int(v) and abs(v) < 1e6:
            return str(int(v))
        return f"{v:.{digits}f}"
    if isinstance(v, (list, tuple)):
        return ", ".join(fmt(x, digits) for x in v)
    if isinstance(v, dict):
        return ", ".join(f"{k}={fmt(x, digits)}" for k, x in v.items())
    return str(v)


def cell(header: str, v, digits: int = 4) -> str:
    """One table cell's text: p-values in scientific notation, seat lists shortened."""
    if header in P_COLUMNS and isnum(v):
        return fmt_p(v)
    if header in POLICY_COLUMNS and isinstance(v, str):
        return short_policies(v)
    return fmt(v, digits)


def table(headers: list[str], rows: list[list], cls: str = "", cap: int | None = None, digits: int = 4) -> str:
    cap = MAX_TABLE_ROWS if cap is None else cap
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = []
    for row in rows[:cap]:
        cells = []
        for h, v in zip(headers, row):
            text = cell(h, v, digits)
            klass = ' class="n"' if isnum(v) else ' class="w"' if len(text) > 40 else ""
            cells.append(f"<td{klass}>{esc(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    more = (f'<p class="muted">{len(rows) - cap} more rows not shown (see the table files).</p>'
            if len(rows) > cap else "")
    c = f' class="{cls}"' if cls else ""
    return f'<div class="tw"><table{c}><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>{more}'


COLLAPSIBLE = ("game", "variant", "players", "policies", "policy")


def frame_table(df, drop=(), cap: int | None = None, digits: int = 4) -> str:
    """A Polars frame as a table, without the columns in ``drop``, columns null (or empty) in every
    row, and key columns with one value in every row (said once above the table instead), so the
    table fits a 1400 px page."""
    cols = [c for c in df.columns if c not in drop and df[c].null_count() < df.height
            and not (df[c].dtype == pl.String and (df[c].fill_null("") == "").all())]
    same = [c for c in cols if c in COLLAPSIBLE and df.height > 1 and df[c].n_unique() == 1]
    cols = [c for c in cols if c not in same]
    head = (f'<p class="muted">Every row: {esc(", ".join(f"{c} {cell(c, df[c][0])}" for c in same))}.</p>'
            if same else "")
    return head + table(cols, [list(r) for r in df.select(cols).iter_rows()], cap=cap, digits=digits)


def kv(pairs: list[tuple[str, object]]) -> str:
    rows = "".join(f"<tr><td>{esc(k)}</td><td>{esc(fmt(v))}</td></tr>" for k, v in pairs)
    return f'<table class="kv"><tbody>{rows}</tbody></table>'


def job_title(job: dict, keys: list[str]) -> str:
    """``game / variant / 3p [heuristic x3] — axis=value``: the whole label, never cut."""
    parts = [str(job.get("game", "?")), str(job.get("variant", "?")), f"{job.get('players', '?')}p"]
    pol = f" [{short_policies(job['policies'])}]" if job.get("policies") is not None else ""
    labels = [f"{k}={job[k]}" for k in keys if k not in BASE_KEYS and job.get(k) is not None]
    return " / ".join(parts) + pol + (" — " + ", ".join(labels) if labels else "")


def section(sid: str, title: str, body: str) -> str:
    return f'<h2 id="{esc(sid)}">{esc(title)}</h2>{body}'
