"""Printing and writing report tables: fixed file names, written atomically.

Files: seats, variants, scores, lengths, counters, arc (.parquet or .csv), meta.json and arc.png
(leader win rate against checkpoints from the end, when the run has an ``arc`` table), written into
the staging folder of ``simcli.output`` (renamed into place only when complete).
"""
from __future__ import annotations

import json
import platform
from importlib import metadata
from pathlib import Path

import polars as pl

from simcli.errors import SimError
from simcli.report.tables import ARC_COLUMNS

TABLES = ("findings", "seats", "variants", "scores", "lengths", "counters", "policies", "paired", "arc")
FORMATS = ("parquet", "csv")


def package_versions() -> dict:
    vers = {"python": platform.python_version()}
    for p in ("simcli", "numba", "numpy", "polars", "typer", "tqdm"):
        try:
            vers[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            vers[p] = None
    return vers


# arc.png draws one line per job, at most this many; a larger run (the default suite) gets no
# partial figure beside its tables, and does not pay matplotlib's start-up (~0.7 s) on every run:
# its HTML report (--html, simcli report) has the arc section
ARC_PNG_MAX_JOBS = 10


def arc_jobs(arc: pl.DataFrame) -> int:
    """Jobs in an ``arc`` table: each has exactly one final checkpoint (end, 0)."""
    return arc.filter((pl.col("counted") == "end") & (pl.col("checkpoint") == 0)).height


def write_tables(tables: dict[str, pl.DataFrame], folder: Path, fmt: str, meta: dict,
                 extra_files: dict[str, bytes] | None = None) -> list[Path]:
    """Write every table, meta.json and the extra files into ``folder`` (a staging folder of
    ``simcli.output``, renamed into place by the caller only when everything is written)."""
    if fmt not in FORMATS:
        raise SimError(f"unknown --format {fmt!r}; valid formats: {', '.join(FORMATS)}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    arc = tables.get("arc")
    if arc is not None and arc.height and "arc.png" not in (extra_files or {}) and \
            arc_jobs(arc) <= ARC_PNG_MAX_JOBS:
        from simcli.report.html import arc_png
        extra_files = {**(extra_files or {}), "arc.png": arc_png(arc)}
    written = []
    for name, df in tables.items():
        p = folder / f"{name}.{fmt}"
        if fmt == "csv":
            df.write_csv(p)
        else:
            df.write_parquet(p)
        written.append(p)
    (folder / "meta.json").write_text(json.dumps(meta, indent=2, default=str) + "\n")
    written.append(folder / "meta.json")
    for name, data in (extra_files or {}).items():
        (folder / name).write_bytes(data)
        written.append(folder / name)
    return written


def print_tables(tables: dict[str, pl.DataFrame], echo=print, wide: bool = False) -> None:
    """The readable summary: variants, seats, policies, paired differences, the game arc and
    the game counters' derived metrics, each fitted to the screen (``simcli.report.fmt``)."""
    from functools import partial
    from simcli.report.fmt import echo_table as _echo_table
    seats = tables["seats"]
    variants = tables["variants"]
    if not variants.height:
        return
    labels = label_columns(variants)   # sweep axes, dates
    rotated = "rotations" in variants.columns and (variants["rotations"] > 1).any()
    # without rotation a deal is a game: one count column says it
    drop = set() if rotated else {"deals", "rotations"}
    pick = lambda df, cols: df.select([c for c in cols if c in df.columns and c not in drop])  # noqa: E731
    # every table's precision from the run's smallest sample (deals: the unit of every interval)
    n = int(variants["deals"].min()) if "deals" in variants.columns else None
    echo_table = partial(_echo_table, n=n)
    echo_table(echo, pick(variants, ["game", "variant", "players", "policies", *labels, "deals", "rotations",
                                     "games", "tie_rate", "timeout_rate", "seat0_advantage", "balance",
                                     "length_mean", "leader_gap"]), title="Variants", wide=wide)
    echo_table(echo, pick(seats, ["game", "variant", "players", "policies", *labels, "seat", "policy",
                                  "deals", "win_share", "win_ci_low", "win_ci_high", "mean_place",
                                  "score_mean", "score_sd", "score_p50"]), title="Seats", wide=wide)
    pol = tables.get("policies")
    if pol is not None and pol.height:
        echo_table(echo, pick(pol, ["game", "variant", "players", *labels, "policy", "seats_held", "deals",
                                    "win_share", "win_ci_low", "win_ci_high"]),
                   title="Policies (same deals, every seat rotation)", wide=wide)
    paired = tables.get("paired")
    if paired is not None and paired.height:
        echo_table(echo, pick(paired, ["game", "variant", "players", *labels, "policy_a", "policy_b", "deals",
                                       "diff", "ci_low", "ci_high", "p_value"]),
                   title="Paired (policy_a minus policy_b, win share per seat, same deals)", wide=wide)
    arc = arc_table(variants, labels)
    if arc.height:
        echo_table(echo, arc, title="Game arc (games with checkpoints and a winner; docs/balance.md)",
                   wide=wide)
    counters = tables.get("counters")
    if counters is not None and counters.height:
        m = counters.filter(pl.col("kind") == "metric").filter(
            ~pl.col("metric").str.contains(r"_\d+_share$"))
        echo_table(echo, pick(m, ["game", "variant", "players", "policies", *labels, "metric", "value"]),
                   title="Game counters", wide=wide)


KNOWN_VARIANT_COLUMNS = {"game", "variant", "players", "policies", "games", "deals", "rotations", "tie_rate",
                         "timeout_rate", "seat0_advantage", "balance", "length_mean", "length_sd",
                         "leader_gap", "decisions_per_game", "length_unit", "wall_s", *ARC_COLUMNS}


def label_columns(variants: pl.DataFrame) -> list[str]:
    """The key columns a run adds (sweep axes, dates, later a skill level)."""
    return [c for c in variants.columns if c not in KNOWN_VARIANT_COLUMNS]


def arc_table(variants: pl.DataFrame, labels: list[str] | None = None) -> pl.DataFrame:
    """One row per job with checkpoints: the four game-arc metrics (docs/balance.md)."""
    if "arc_games" not in variants.columns:
        return pl.DataFrame()
    rows = variants.filter(pl.col("arc_games").is_not_null() & (pl.col("arc_games") > 0))
    return rows.select("game", "variant", "players", "policies", *(labels or []), "lead_changes",
                       "comeback_rate", "decided_at", "last_swing",
                       pl.col("checkpoints_mean").alias("checkpoints"), "arc_games",
                       pl.col("arc_excluded").alias("timeouts_left_out"))
