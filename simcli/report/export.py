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

TABLES = ("seats", "variants", "scores", "lengths", "counters", "policies", "paired", "arc")
FORMATS = ("parquet", "csv")


def png_bytes(draw, *args) -> bytes:
    """The plot ``draw(*args, file)`` saves, as PNG bytes made in memory: no temporary file, so a
    full or unwritable TMPDIR or an interrupt cannot fail the command or leave a file behind."""
    import io
    buf = io.BytesIO()
    draw(*args, buf)
    return buf.getvalue()


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


def print_tables(tables: dict[str, pl.DataFrame], echo=print) -> None:
    """The readable summary: variants, seats, and the game counters' derived metrics."""
    seats = tables["seats"]
    variants = tables["variants"]
    if not variants.height:
        return
    known = {"game", "variant", "players", "policies", "games", "deals", "rotations", "tie_rate",
             "timeout_rate", "seat0_advantage", "balance", "length_mean", "length_sd", "leader_gap",
             "decisions_per_game", "length_unit", "wall_s", *ARC_COLUMNS}
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
        for line in arc_lines(variants):
            echo(line)
        counters = tables.get("counters")
        if counters is not None and counters.height:
            m = counters.filter(pl.col("kind") == "metric").filter(
                ~pl.col("metric").str.contains(r"_\d+_share$"))
            echo("Game counters")
            echo(str(m.select("game", "variant", "players", *labels, "metric", "value")))


def arc_lines(variants: pl.DataFrame) -> list[str]:
    """One printed line per job with checkpoints: the four game-arc metrics (docs/balance.md)."""
    if "arc_games" not in variants.columns:
        return []
    lines = []
    for v in variants.iter_rows(named=True):
        if not v["arc_games"]:
            continue
        lines.append(f"arc {v['game']}/{v['variant']}/{v['players']}p [{v['policies']}]: "
                     f"lead_changes {v['lead_changes']:.3f}, comeback_rate {v['comeback_rate']:.4f}, "
                     f"decided_at {v['decided_at']:.3f}, last_swing {v['last_swing']:.4f} "
                     f"({v['checkpoints_mean']:.2f} checkpoints/game, {v['arc_games']} games, "
                     f"{v['arc_excluded']} timeouts not counted)")
    return lines
