"""The ``tuned`` policy's parameter files: configs/tuned/<game>[-<variant>]-<P>p.toml.

A game module that declares ``KNOBS`` (tuple of ``spec.Knob``) plays ``tuned`` as its heuristic's
decision rule with the seat's knob values in the seat row's knob columns
(``spec.SEAT_KNOBS + knob.index``). Without an explicit file (``tuned@FILE``), a tuned seat takes
the committed trained knobs for its game, variant and player count: the variant's own file when
there is one, else the game's file for that player count. A file holds::

    game = "forecasts-bid"
    players = 4
    [knobs]            # every knob of the game, name -> integer in the knob's range
    clear_halves = 3
    ...
    [provenance]       # how it was made (simcli train): seed, settings, pool, code versions, command

The schema machinery checks the file's shape (``schema.TUNED``); this module checks what only the
game knows (its knob names and ranges, the game and player count the file was trained for).
"""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from kernels.spec import MAX_KNOBS, SEAT_KNOBS
from simcli.errors import SimError

TUNED_DIR = "tuned"


def tuned_dir() -> Path:
    from simcli.config.jobs import configs_dir
    return configs_dir() / TUNED_DIR


def knobs_of(mod) -> tuple:
    return tuple(getattr(mod, "KNOBS", ()))


def default_file(game: str, variant: str | None, players: int) -> Path:
    """The committed file a ``tuned`` seat uses: the variant's own, else the game's."""
    d = tuned_dir()
    if variant:
        own = d / f"{game}-{variant}-{players}p.toml"
        if own.is_file():
            return own
    return d / f"{game}-{players}p.toml"


def check_values(mod, values: dict, where: str) -> dict:
    """Every knob of the game present (an ``optional`` knob left out takes its default), no
    other name, each in its range; name -> int."""
    knobs = knobs_of(mod)
    names = [k.name for k in knobs]
    unknown = [n for n in values if n not in names]
    if unknown:
        raise SimError(f"{where}: unknown knob(s) {', '.join(unknown)} for {mod.GAME_ID}; "
                       f"valid knobs: {', '.join(names)}")
    missing = [k.name for k in knobs if k.name not in values and not k.optional]
    if missing:
        raise SimError(f"{where}: knob(s) {', '.join(missing)} missing (give every knob of {mod.GAME_ID})")
    values = {k.name: values.get(k.name, k.default) for k in knobs}
    for k in knobs:
        v = values[k.name]
        if not k.lo <= v <= k.hi:
            raise SimError(f"{where}: knob {k.name} must be a whole number in {k.lo}..{k.hi}, not {v}")
    return {k.name: int(values[k.name]) for k in knobs}


def listed_knobs(mod, path: Path) -> tuple:
    """The knobs a parameter file lists (in the game's order): every knob but the optional ones
    it leaves out (knobs added after it was trained)."""
    p = Path(path)
    listed = _read(str(p), p.stat().st_mtime_ns)["knobs"]
    return tuple(k for k in knobs_of(mod) if k.name in listed)


@functools.lru_cache(maxsize=64)
def _read(path: str, mtime_ns: int) -> dict:
    from simcli.config import schema
    return schema.load(path, "tuned")


def load_file(mod, path: Path, players: int | None = None) -> dict:
    """The knob values (name -> int) of a parameter file, validated for ``mod`` (and, when given,
    for ``players``): one SimError line on any problem."""
    p = Path(path)
    if not p.is_file() and not p.is_dir():
        raise SimError(f"tuned parameter file {p} not found")
    data = _read(str(p), p.stat().st_mtime_ns if p.is_file() else 0)
    if data.get("game", mod.GAME_ID) != mod.GAME_ID:
        raise SimError(f"tuned parameter file {p} is for {data['game']}, not {mod.GAME_ID}")
    if players is not None and data.get("players", players) != players:
        raise SimError(f"tuned parameter file {p} is for {data['players']} players, not {players}")
    return check_values(mod, data["knobs"], f"tuned parameter file {p}")


def load_for(mod, variant: str | None, players: int, path: str | None = None) -> dict:
    """The knobs a ``tuned`` seat plays with: ``path`` when given, else the committed file."""
    if not knobs_of(mod):
        raise SimError(f"{mod.GAME_ID} has no tuned policy (it declares no knobs)")
    if path:
        return load_file(mod, Path(path), players)
    f = default_file(mod.GAME_ID, variant, players)
    if not f.is_file():
        raise SimError(f"no trained parameters for {mod.GAME_ID} at {players} players "
                       f"(configs/{TUNED_DIR}/{f.name} is missing); make them with "
                       f"`simcli train {mod.GAME_ID} --players {players} --out {f}` or give tuned@FILE")
    return load_file(mod, f, players)


def row_of(mod, values: dict) -> np.ndarray:
    """The MAX_KNOBS knob columns of a seat row (zeros past the game's knobs)."""
    row = np.zeros(MAX_KNOBS, dtype=np.int64)
    for k in knobs_of(mod):
        row[k.index] = values[k.name]
    return row


def defaults(mod) -> dict:
    return {k.name: int(k.default) for k in knobs_of(mod)}


def fill(row: np.ndarray, knob_row: np.ndarray) -> None:
    """Write the knob columns of one seat row in place."""
    row[SEAT_KNOBS:SEAT_KNOBS + MAX_KNOBS] = knob_row


def render(game: str, players: int, variant: str, values: dict, knobs: tuple, provenance: dict) -> str:
    """The text of a parameter file: knobs in declaration order with their help, then provenance."""
    lines = [f"# tuned knobs for {game} at {players} players (variant {variant}), made by simcli train;",
             "# the [provenance] command reproduces every value but `date`. docs/search.md, \"Strong play: tuned\".",
             f'game = "{game}"', f"players = {players}", "", "[knobs]"]
    for k in knobs:
        mark = "" if values[k.name] == k.default else f"   (heuristic: {k.default})"
        lines.append(f"{k.name} = {values[k.name]}   # {k.help}{mark}")
    lines += ["", "[provenance]"]
    for key, v in provenance.items():
        lines.append(f"{key} = {_toml_value(v)}")
    return "\n".join(lines) + "\n"


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    s = str(v).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{s}"'
