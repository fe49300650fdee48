"""Printed tables that fit the screen: every place that prints a table goes through here.

* Width: ``COLUMNS`` if set, else the terminal's width, else 100 (output to a file or a pipe).
  A table wider than that is printed in column blocks, each repeating the table's key columns:
  no header is ever split and no row is ever hidden. ``wide=True`` prints one block.
* Precision from the sample size: a column of shares or rates gets the decimals that its
  standard error (at most 0.5 / sqrt(n)) resolves, plus one; a column of integral values prints
  as integers; larger values keep as many significant digits.
* p-values (columns ``p``, ``p_value``, ``p_holm``) in scientific notation below 0.001, and
  ``<1e-300`` at the floating-point floor; null and NaN both print as ``-``.
* Seat lists are shortened: ``heuristic,heuristic,heuristic,heuristic`` -> ``heuristic x4``.
* Columns that are null in every row (a solo game's seat-advantage columns) are left out.
"""
from __future__ import annotations

import math
import os
import shutil
import sys

import polars as pl

NOT_A_TTY_WIDTH = 100
MIN_WIDTH = 40
MAX_CELL = 40               # longer text cells are cut with "..." (never in --wide)
P_COLUMNS = ("p", "p_value", "p_holm")
KEY_NAMES = ("game", "variant", "players", "policies", "policy", "seat", "restriction", "rung",
             "metric", "date", "kind", "subject", "skill")
GAP = "  "


def width() -> int:
    """Columns available for a printed line."""
    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) > 0:
        return max(int(env), MIN_WIDTH)
    if sys.stdout.isatty():
        return max(shutil.get_terminal_size((NOT_A_TTY_WIDTH, 24)).columns, MIN_WIDTH)
    return NOT_A_TTY_WIDTH


def short_policies(text) -> str:
    """``a,a,a,b`` -> ``a x3,b`` (consecutive repeats only, so seat order stays readable)."""
    if not isinstance(text, str) or "," not in text:
        return text
    out: list[str] = []
    runs: list[int] = []
    for p in text.split(","):
        if out and out[-1] == p:
            runs[-1] += 1
        else:
            out.append(p)
            runs.append(1)
    return ",".join(p if n == 1 else f"{p} x{n}" for p, n in zip(out, runs))


def decimals_for(n) -> int:
    """Decimals that a share over ``n`` independent units resolves: the standard error's
    leading digit plus one (n = 2,000 -> 3; 200,000 -> 4), between 2 and 6."""
    if not n or n <= 0:
        return 4
    se = 0.5 / math.sqrt(n)
    return min(6, max(2, round(-math.log10(se)) + 1))


def fmt_p(p) -> str:
    if p is None or p != p:
        return "-"
    if p <= 0:
        return "<1e-300"
    if p >= 1e-3:
        return f"{p:.2g}"
    return f"{p:.1e}"


def _is_missing(v) -> bool:
    return v is None or (isinstance(v, float) and v != v)


def _column_formatter(name: str, values: list, decimals: int):
    """A function value -> text for one column."""
    if name in P_COLUMNS:
        return fmt_p
    nums = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool) and not _is_missing(v)]
    if not nums or all(isinstance(v, int) for v in nums):
        return lambda v: "-" if _is_missing(v) else (f"{v:,}" if isinstance(v, int) and not isinstance(v, bool)
                                                     and abs(v) >= 100_000 else str(v))
    finite = [abs(v) for v in nums if math.isfinite(v)]
    if finite and all(float(v).is_integer() for v in nums if math.isfinite(v)):
        d = 0
    else:
        top = max(finite) if finite else 0.0
        # shares and rates (|v| <= 1) get the sample's decimals; larger values keep their
        # significant digits (a mean length of 40.27 is not written 40.2700)
        d = decimals if top <= 1 else max(1, decimals - int(math.floor(math.log10(top))))

    def f(v):
        if _is_missing(v):
            return "-"
        if isinstance(v, float) and not math.isfinite(v):
            return "inf" if v > 0 else "-inf"
        return f"{v:.{d}f}"
    return f


def _cut(text: str, wide: bool) -> str:
    if wide or len(text) <= MAX_CELL:
        return text
    return text[:MAX_CELL - 3] + "..."


def render_columns(df: pl.DataFrame, n=None, wide: bool = False) -> list[tuple[str, list[str], bool]]:
    """Each printable column as (header, cells, right-aligned), formatted for the sample size
    ``n`` (deals or games behind the table's shares; None: read a ``deals``/``games`` column)."""
    if n is None:
        for c in ("deals", "games"):
            if c in df.columns and df[c].dtype.is_numeric() and df.height:
                n = int(df[c].min() or 0)
                break
    decimals = decimals_for(n)
    cols = []
    for name in df.columns:
        values = df[name].to_list()
        if all(_is_missing(v) for v in values) and df.height:
            continue  # e.g. a solo game's seat-advantage columns
        if name in ("policies", "policy", "versus", "policy_a", "policy_b"):
            values = [short_policies(v) for v in values]
        numeric = df[name].dtype.is_numeric()
        if numeric:
            f = _column_formatter(name, values, decimals)
            cells = [f(v) for v in values]
        else:
            cells = [_cut("-" if _is_missing(v) else str(v).lower() if isinstance(v, bool) else str(v), wide)
                     for v in values]
        cols.append((name, cells, numeric))
    return cols


def _blocks(cols, keys: list[int], limit: int | None) -> list[list[int]]:
    """Column indices per printed block: the key columns, then as many others as fit."""
    w = [max(len(h), *(len(c) for c in cells)) if cells else len(h) for h, cells, _ in cols]
    key_w = sum(w[i] + len(GAP) for i in keys)
    rest = [i for i in range(len(cols)) if i not in keys]
    if limit is None:
        return [keys + rest]
    blocks, cur, used = [], [], key_w
    for i in rest:
        if cur and used + w[i] > limit:
            blocks.append(keys + cur)
            cur, used = [], key_w
        cur.append(i)
        used += w[i] + len(GAP)
    if cur or not blocks:
        blocks.append(keys + cur)
    return blocks


def _lines(cols, idx: list[int], height: int) -> list[str]:
    w = {i: max(len(cols[i][0]), *(len(c) for c in cols[i][1])) if height else len(cols[i][0]) for i in idx}

    def cell(i, text):
        return text.rjust(w[i]) if cols[i][2] else text.ljust(w[i])
    head = GAP.join(cell(i, cols[i][0]) for i in idx).rstrip()
    rule = GAP.join("-" * w[i] for i in idx)
    body = [GAP.join(cell(i, cols[i][1][r]) for i in idx).rstrip() for r in range(height)]
    return [head, rule, *body]


def table_lines(df: pl.DataFrame, *, title: str | None = None, n=None, wide: bool = False,
                keys: tuple[str, ...] | None = None, limit: int | None = None) -> list[str]:
    """``df`` as printed lines that fit ``limit`` (default: ``width()``; ``wide``: no limit)."""
    lines = [title] if title else []
    if df is None or not df.height:
        return lines + (["(no rows)"] if title else [])
    cols = render_columns(df, n, wide)
    limit = None if wide else (limit or width())
    names = [c[0] for c in cols]
    key_idx = [names.index(k) for k in (keys or KEY_NAMES) if k in names]
    # key columns that alone leave no room are not repeated: the first block carries them
    if limit is not None and sum(max(len(cols[i][0]), *(len(c) for c in cols[i][1])) + 2
                                 for i in key_idx) > limit * 0.6:
        key_idx = key_idx[:2]
    blocks = _blocks(cols, key_idx, limit)
    for bi, block in enumerate(blocks):
        if bi:
            lines.append("")
        lines += _lines(cols, block, df.height)
    return lines


def echo_table(echo, df: pl.DataFrame, **kw) -> None:
    for line in table_lines(df, **kw):
        echo(line)


def fit(text: str, limit: int | None = None) -> list[str]:
    """A long printed sentence wrapped at word boundaries to ``limit`` (default ``width()``),
    continuation lines indented two spaces beyond the first line's indent."""
    import textwrap
    limit = limit or width()
    lead = len(text) - len(text.lstrip(" "))
    return textwrap.wrap(text.strip(), limit, initial_indent=" " * lead, subsequent_indent=" " * (lead + 2),
                         break_long_words=True, break_on_hyphens=False) or [""]
