"""Printing and writing report tables: fixed file names, written atomically.

Files: seats, variants, scores, lengths, counters (.parquet or .csv) and meta.json, written into
the staging folder of ``simcli.output`` (renamed into place only when complete).
"""
from __future__ import annotations

import json
import platform
from importlib import metadata
from pathlib import Path

import polars as pl

from .errors import SimError

TABLES = ("seats", "variants", "scores", "lengths", "counters", "policies", "paired")
FORMATS = ("parquet", "csv")


def package_versions() -> dict:
    vers = {"python": platform.python_version()}
    for p in ("simcli", "numba", "numpy", "polars", "typer", "tqdm"):
        try:
            vers[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            vers[p] = None
    return vers


def write_tables(tables: dict[str, pl.DataFrame], folder: Path, fmt: str, meta: dict,
                 extra_files: dict[str, bytes] | None = None) -> list[Path]:
    """Write every table, meta.json and the extra files into ``folder`` (a staging folder of
    ``simcli.output``, renamed into place by the caller only when everything is written)."""
    if fmt not in FORMATS:
        raise SimError(f"unknown --format {fmt!r}; valid formats: {', '.join(FORMATS)}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
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


def print_tables(tables: dict[str, pl.DataFrame], echo=print) -> None:
    """The readable summary: variants, seats, and the game counters' derived metrics."""
    seats = tables["seats"]
    variants = tables["variants"]
    if not variants.height:
        return
    known = {"game", "variant", "players", "policies", "games", "deals", "rotations", "tie_rate",
             "timeout_rate", "seat0_advantage", "balance", "length_mean", "length_sd", "leader_gap",
             "decisions_per_game", "length_unit", "wall_s"}
    labels = [c for c in variants.columns if c not in known]  # sweep axes, dates
    with pl.Config(tbl_rows=200, tbl_cols=30, tbl_width_chars=160, float_precision=4,
                   tbl_hide_dataframe_shape=True, tbl_hide_column_data_types=True,
                   fmt_str_lengths=40):
        echo("Variants")
        echo(str(variants.select(["game", "variant", "players", "policies", *labels] + [c for c in (
            "games", "tie_rate", "timeout_rate", "seat0_advantage", "balance", "length_mean", "leader_gap")
            if c in variants.columns])))
        echo("Seats")
        echo(str(seats.select([c for c in (
            "game", "variant", "players", *labels, "seat", "policy", "win_share", "win_ci_low",
            "win_ci_high", "mean_place", "score_mean", "score_sd", "score_p50") if c in seats.columns])))
        pol = tables.get("policies")
        if pol is not None and pol.height:
            echo("Policies (same deals, every seat rotation)")
            echo(str(pol.select("game", "variant", "players", "policy", "seats_held", "deals",
                                "win_share", "win_ci_low", "win_ci_high")))
        counters = tables.get("counters")
        if counters is not None and counters.height:
            m = counters.filter(pl.col("kind") == "metric").filter(
                ~pl.col("metric").str.contains(r"_\d+_share$"))
            echo("Game counters")
            echo(str(m.select("game", "variant", "players", *labels, "metric", "value")))
