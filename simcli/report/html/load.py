"""Reading a report folder for the HTML page: its tables (Parquet or CSV), meta.json, and the
jobs they describe (``Report``: one object every section reads)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from simcli.errors import SimError

TABLES = ("findings", "seats", "variants", "scores", "lengths", "counters", "policies", "paired", "dates",
          "tune", "ablations", "ladder", "arc", "skill_verdicts", "skill_levels")
GROUPED = ("seats", "variants", "scores", "lengths", "counters", "policies", "paired")


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


def key_columns(tables: dict[str, pl.DataFrame]) -> list[str]:
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


def normalise(tables: dict[str, pl.DataFrame], keys: list[str]) -> dict[str, pl.DataFrame]:
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


def groups(df: pl.DataFrame | None, keys: list[str]) -> tuple[list[str], dict]:
    """Partition a table by the job keys it has: (keys used, {key tuple: frame})."""
    if df is None or df.height == 0:
        return [], {}
    present = [k for k in keys if k in df.columns]
    if not present:
        return present, {(): df}
    return present, df.partition_by(present, as_dict=True, maintain_order=True)


def job_metrics(var: pl.DataFrame | None, seats: pl.DataFrame | None) -> dict:
    """One job's variants row, with seat 0's win share and its interval, and its seat count."""
    m = dict(var.row(0, named=True)) if var is not None and var.height else {}
    if seats is not None and seats.height and "seat" in seats.columns:
        m["seat_rows"] = seats.height
        s0 = seats.filter(pl.col("seat") == 0)
        if s0.height and "win_share" in s0.columns:
            m["seat0_win_share"] = s0["win_share"][0]
            for c in ("win_ci_low", "win_ci_high"):
                if c in s0.columns:
                    m[f"seat0_{c}"] = s0[c][0]
    return m


@dataclass
class Report:
    """Everything the sections of one page read."""
    folder: Path
    raw: dict
    tables: dict
    meta: dict
    keys: list                    # key columns of the folder's tables
    present_keys: list            # ... that the job list has
    jobs: list                    # one dict of key values per job
    metrics: list                 # job_metrics of each job
    parts: dict = field(default_factory=dict)   # table name -> groups()
    shown_as: Path | None = None

    def part(self, name: str, job: dict) -> pl.DataFrame | None:
        present, parts = self.parts.get(name, ([], {}))
        return parts.get(tuple(job.get(k) for k in present))

    def table(self, name: str) -> pl.DataFrame | None:
        df = self.tables.get(name)
        return df if df is not None and df.height else None

    @property
    def axes(self) -> list | None:
        a = self.meta.get("axes")
        return [str(x) for x in a] if isinstance(a, list) else None


def load(report_dir: Path, shown_as: Path | None = None) -> Report:
    report_dir = Path(report_dir)
    raw, meta = read_report(report_dir)
    keys = key_columns(raw)
    tables = normalise(raw, keys)
    source = next((tables[n] for n in ("variants", "seats") if n in tables and tables[n].height), None)
    present = [k for k in keys if source is not None and k in source.columns]
    if source is None:
        jobs = []
    elif present:
        jobs = [dict(zip(present, r)) for r in source.select(present).unique(maintain_order=True).iter_rows()]
    else:
        jobs = [{}]
    rep = Report(report_dir, raw, tables, meta, keys, present, jobs, [], shown_as=shown_as)
    rep.parts = {name: groups(tables.get(name), keys) for name in GROUPED}
    rep.metrics = [job_metrics(rep.part("variants", j), rep.part("seats", j)) for j in jobs]
    return rep
