"""One declared schema per config-file kind, and the validator every config loader goes through.

Kinds (``SCHEMAS``): ``sweep`` (simcli/analyses/sweep.py), ``check`` (configs/check.toml), ``suite``
(configs/suite.toml), ``expectations`` (configs/expectations.toml) and ``cards`` (the
daily-weather card data, configs/daily-weather-cards.toml). ``load(path, kind)`` reads a TOML
file and checks it against its schema; every problem is one ``SimError`` line naming the file,
the key as a dotted path (``job[2].games``: array-of-tables entries count from 1, as a reader
counts them in the file) and what is allowed. Checked here: unknown keys, missing required
keys, TOML types (an integer is not a string, a list or a table; ``true`` is not a number),
ranges, list lengths, and a folder or a missing file where a file is expected. What a schema
cannot say (a variant of the named game, a policy a game has, card counts that must add up)
stays with the loader that knows the game.

Plain Python, no dependency beyond the standard library (``tomllib``).
"""
from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from simcli.errors import SimError

SEED_MAX = 2**63 - 1        # a master seed is a non-negative int64
MAX_GAMES = 10**12          # games per job (~40 days of the fastest kernel on 2 cores); the one bound, CLI and files alike
MAX_PLAYERS = 16            # a sanity bound; the game's own counts are checked when jobs resolve
MAX_CONFIG_BYTES = 1 << 20  # a config file is read only up to this size (1 MiB)
MAX_DEPTH = 16              # nesting of arrays and tables in a config file (the schemas use 4)


def _word(v) -> str:
    """How a TOML value's type is named in a message."""
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int):
        return "an integer"
    if isinstance(v, float):
        return "a float"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "a table"
    return type(v).__name__  # dates and times


def _shown(v) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


class Spec:
    """A value's declared shape. ``check`` returns a problem ("must be ...") or None."""

    def allowed(self) -> str:
        raise NotImplementedError

    def check(self, v, where: str, problems: list) -> None:
        raise NotImplementedError


@dataclass(frozen=True)
class Int(Spec):
    lo: int | None = None
    hi: int | None = None

    def allowed(self) -> str:
        if self.lo is not None and self.hi is not None:
            return f"a whole number in {self.lo}..{self.hi}"
        if self.lo is not None:
            return f"a whole number >= {self.lo}"
        return "a whole number"

    def check(self, v, where, problems):
        if isinstance(v, bool) or not isinstance(v, int):
            problems.append((where, f"must be {self.allowed()}, not {_word(v)} {_shown(v)}"))
        elif (self.lo is not None and v < self.lo) or (self.hi is not None and v > self.hi):
            problems.append((where, f"must be {self.allowed()}, not {v}"))


@dataclass(frozen=True)
class Float(Spec):
    """A number (TOML integer or float, finite). ``lo_open``/``hi_open``: the bound is excluded."""
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False

    def allowed(self) -> str:
        if self.lo is not None and self.hi is not None:
            return (f"a number in {'(' if self.lo_open else '['}{self.lo}, {self.hi}"
                    f"{')' if self.hi_open else ']'}")
        if self.lo is not None:
            return f"a number {'>' if self.lo_open else '>='} {self.lo}"
        return "a finite number"

    def check(self, v, where, problems):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            problems.append((where, f"must be {self.allowed()}, not {_word(v)} {_shown(v)}"))
            return
        low = self.lo is not None and (v <= self.lo if self.lo_open else v < self.lo)
        high = self.hi is not None and (v >= self.hi if self.hi_open else v > self.hi)
        if low or high:
            problems.append((where, f"must be {self.allowed()}, not {v}"))


@dataclass(frozen=True)
class Str(Spec):
    """A string; ``choices`` (a tuple, or a function returning one) restricts it (exact match).
    ``noun`` words a wrong choice as the CLI does: "unknown game 'x'; valid games: ..."."""
    choices: tuple | Callable | None = None
    noun: str = ""

    def _choices(self):
        return self.choices() if callable(self.choices) else self.choices

    def allowed(self) -> str:
        c = self._choices()
        return f"one of {', '.join(map(str, c))}" if c else "a string"

    def check(self, v, where, problems):
        if not isinstance(v, str):
            problems.append((where, f"must be {self.allowed()}, not {_word(v)} {_shown(v)}"))
            return
        c = self._choices()
        if c and v not in c:
            problems.append((where, f"unknown {self.noun} {_shown(v)}; valid {self.noun}s: {', '.join(c)}"
                             if self.noun else f"must be {self.allowed()}, not {_shown(v)}"))


@dataclass(frozen=True)
class Bool(Spec):
    def allowed(self) -> str:
        return "true or false"

    def check(self, v, where, problems):
        if not isinstance(v, bool):
            problems.append((where, f"must be true or false, not {_word(v)} {_shown(v)}"))


@dataclass(frozen=True)
class Scalar(Spec):
    """A rule value: an integer, a string or a boolean (the rule itself checks its domain)."""

    def allowed(self) -> str:
        return "a rule value (a whole number, a word or true/false)"

    def check(self, v, where, problems):
        if not isinstance(v, (int, str, bool)):
            problems.append((where, f"must be {self.allowed()}, not {_word(v)} {_shown(v)}"))


@dataclass(frozen=True)
class ListOf(Spec):
    item: Spec
    min_len: int = 1
    max_len: int | None = None

    def _size(self) -> str:
        if self.max_len == self.min_len:
            return f"{self.min_len} "
        if self.max_len is not None:
            return f"{self.min_len}..{self.max_len} "
        return "" if self.min_len <= 1 else f"at least {self.min_len} "

    def allowed(self) -> str:
        return f"a list of {self._size()}values, each {self.item.allowed()}"

    def check(self, v, where, problems):
        if not isinstance(v, list):
            problems.append((where, f"must be {self.allowed()} (e.g. [ ... ]), not {_word(v)} {_shown(v)}"))
            return
        if len(v) < self.min_len or (self.max_len is not None and len(v) > self.max_len):
            problems.append((where, f"must be {self.allowed()}, not a list of {len(v)}"))
            return
        for i, x in enumerate(v):
            self.item.check(x, f"{where}[{i + 1}]", problems)


@dataclass(frozen=True)
class OneOrList(Spec):
    """A value or a list of values (a sweep's rule axis)."""
    item: Spec

    def allowed(self) -> str:
        return f"{self.item.allowed()} or a non-empty list of them"

    def check(self, v, where, problems):
        if isinstance(v, list):
            ListOf(self.item).check(v, where, problems)
        else:
            self.item.check(v, where, problems)


@dataclass(frozen=True)
class Table(Spec):
    """A TOML table with declared keys; ``extra`` (a Spec) admits any other key with that value."""
    keys: dict = field(default_factory=dict)
    required: tuple = ()
    extra: Spec | None = None
    one_of: tuple = ()   # at least one of these keys must be present

    def allowed(self) -> str:
        return "a table"

    def check(self, v, where, problems):
        if not isinstance(v, dict):
            problems.append((where, f"must be a table (e.g. {{ key = value }}), not {_word(v)} {_shown(v)}"))
            return
        prefix = f"{where}." if where else ""
        for k in self.required:
            if k not in v:
                if isinstance(self.keys[k], Tables):
                    problems.append((where, f"has no [[{k}]] tables (at least one is required)"))
                else:
                    problems.append((f"{prefix}{k}", "is missing (required)"))
        if self.one_of and not any(k in v for k in self.one_of):
            problems.append((where, f"needs at least one of {', '.join(self.one_of)}"))
        unknown = [k for k in v if k not in self.keys and self.extra is None]
        if unknown:
            problems.append((where, f"unknown key(s) {', '.join(unknown)}"
                             + ("" if where else " at the top level")
                             + f"; valid keys: {', '.join(sorted(self.keys))}"))
        for k, x in v.items():
            spec = self.keys.get(k, self.extra)
            if spec is not None:
                spec.check(x, f"{prefix}{k}", problems)


@dataclass(frozen=True)
class Tables(Spec):
    """An array of tables (``[[job]]``): entries are named ``job[1]``, ``job[2]``, ..."""
    table: Table
    min_len: int = 0
    max_len: int | None = None

    def allowed(self) -> str:
        if self.max_len == self.min_len:
            return f"exactly {self.min_len} tables"
        return f"at least {self.min_len} tables" if self.min_len else "tables"

    def check(self, v, where, problems):
        name = where.rsplit(".", 1)[-1]
        if not isinstance(v, list) or not all(isinstance(x, dict) for x in v):
            problems.append((where, f"must be written as [[{name}]] tables, not {_word(v)} {_shown(v)}"))
            return
        if len(v) < self.min_len or (self.max_len is not None and len(v) > self.max_len):
            problems.append((where, f"needs {self.allowed()} [[{name}]], found {len(v)}"))
            return
        for i, x in enumerate(v):
            self.table.check(x, f"{where}[{i + 1}]", problems)


def _game_ids() -> tuple:
    import kernels
    return tuple(kernels.GAMES)


# ------------------------------------------------------------------------- the declared schemas
GAMES = Int(1, MAX_GAMES)
SEED = Int(0, SEED_MAX)
GAME = Str(_game_ids, noun="game")
PLAYERS = ListOf(Int(1, MAX_PLAYERS))
RULES = Table(extra=Scalar())

JOB = Table({"game": GAME, "variants": ListOf(Str()), "players": PLAYERS, "policy": Str(),
             "seats": Str(), "rules": RULES, "games": GAMES}, required=("game",))

SWEEP = Table({
    "games": GAMES, "seed": SEED, "rotate": Bool(),
    "grid": Tables(Table({"game": GAME, "variants": ListOf(Str()), "players": PLAYERS,
                          "policies": ListOf(Str()), "rules": Table(extra=OneOrList(Scalar())),
                          "games": GAMES}, required=("game",)), min_len=1),
}, required=("grid",))

CHECK = Table({"games": GAMES, "baseline_seed": SEED, "check_seed": SEED,
               "alpha": Float(0, 0.5, lo_open=True), "job": Tables(JOB, min_len=1)}, required=("job",))

SUITE = Table({"games": GAMES, "seed": SEED, "job": Tables(JOB, min_len=1)}, required=("job",))

EXPECTATIONS = Table({"expect": Tables(Table(
    {"game": GAME, "variant": Str(), "players": Int(1, MAX_PLAYERS), "policies": Str(), "metric": Str(),
     "within": Float(0, lo_open=True), "below": Float(), "above": Float()},
    required=("metric",), one_of=("within", "below", "above")))})

_FACE = ListOf(Str(), 6, 6)   # a face: 6 cells in reading order (kernels/daily_weather.py)
_CARD = Table({"name": Str(), "a": _FACE, "b": _FACE}, required=("a", "b"))
CARDS = Table({
    "standin": Bool(), "label": Str(),
    "weather": Tables(_CARD, 1), "month": _CARD, "date": Tables(_CARD, 1),
    "week": Tables(Table({"card": Str(), "face": Str(), "title": Str(),
                         "dates": ListOf(Int(1, 31), 2, 2), "date_card_at": ListOf(Int(), 2, 2),
                         "symbols": ListOf(Str())},
                        required=("dates", "date_card_at", "symbols")), 1),
    "day": Tables(Table({"card": Str(), "face": Str(), "season": Str(), "weekdays": ListOf(Str()),
                        "arrow": Int(0), "arrows": Table(extra=Int(0)), "pattern": ListOf(Str()),
                        "score": Table({"kind": Str(), "symbol": Str(), "points": Int(1, 10)},
                                       required=("kind",))},
                       required=("season", "weekdays", "pattern", "score"), one_of=("arrow", "arrows")), 1),
}, required=("standin", "weather", "month", "date", "week", "day"))

# a tuned parameter file (simcli/config/tuned.py): knob names and ranges are the game's, checked there
TUNED = Table({
    "game": GAME, "players": Int(1, MAX_PLAYERS), "knobs": Table(extra=Int()),
    "provenance": Table({
        "seed": SEED, "game": GAME, "variant": Str(), "players": Int(1, MAX_PLAYERS),
        "game_version": Int(0), "simcli_version": Str(), "date": Str(), "command": Str(),
        "generations": Int(1), "candidates": Int(1), "games": Int(1), "finalists": Int(1),
        "final_games": Int(1), "pool": ListOf(Str()), "restrictions": ListOf(Str(), 0),
        "exploit_weight": Float(0), "fitness": Float(), "start": Str(),
        "exploit_penalty": Str(), "horizon": Int(0), "no_win_weight": Float(0), "search": ListOf(Str())}),
}, required=("knobs",))

SCHEMAS = {"sweep": SWEEP, "check": CHECK, "suite": SUITE, "expectations": EXPECTATIONS, "cards": CARDS,
           "tuned": TUNED}
KIND_NAMES = {"sweep": "sweep file", "check": "check config", "suite": "suite file", "tuned": "tuned parameter file",
              "expectations": "expectations file", "cards": "card data file"}


def validate(data: dict, kind: str, path) -> dict:
    """Check parsed TOML against the schema of ``kind``; the first problem is a SimError."""
    problems: list = []
    SCHEMAS[kind].check(data, "", problems)
    if problems:
        where, what = problems[0]
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        where = f"{where}: " if where and not what.startswith(("must", "is ", "needs", "has ")) else \
            (f"{where} " if where else "")
        raise SimError(f"{KIND_NAMES[kind]} {path}: {where}{what}{more}")
    return data


def _too_deep(v, depth: int = 0) -> bool:
    """Whether ``v`` nests arrays and tables deeper than ``MAX_DEPTH`` (iterative: no recursion)."""
    stack = [(v, depth)]
    while stack:
        x, d = stack.pop()
        if isinstance(x, (list, dict)):
            if d >= MAX_DEPTH:
                return True
            stack.extend((y, d + 1) for y in (x.values() if isinstance(x, dict) else x))
    return False


def _read_bounded(p: Path, what: str) -> bytes:
    """At most ``MAX_CONFIG_BYTES`` of the file (a device such as /dev/zero never ends)."""
    with open(p, "rb") as f:
        data = f.read(MAX_CONFIG_BYTES + 1)
    if len(data) > MAX_CONFIG_BYTES:
        raise SimError(f"{what} {p} is larger than {MAX_CONFIG_BYTES // 1024} KiB; a config file "
                       f"is a small TOML file")
    return data


def read_toml(path, what: str = "config file") -> dict:
    """Parse a TOML file; a missing file, a folder, an unreadable, malformed, oversized or too
    deeply nested file, or a name the OS refuses, is one line."""
    p = Path(path)
    if str(path) == "":
        raise SimError(f"{what}: an empty path was given; give a TOML file")
    try:
        if p.is_dir():
            raise SimError(f"{what} {p} is a folder; give a TOML file")
        data = tomllib.loads(_read_bounded(p, what).decode("utf-8"))
    except FileNotFoundError:
        raise SimError(f"{what} {p} not found") from None
    except tomllib.TOMLDecodeError as e:
        raise SimError(f"{what} {p} is not valid TOML: {' '.join(str(e).split())}") from None
    except UnicodeDecodeError:
        raise SimError(f"{what} {p} is not a UTF-8 text file (TOML)") from None
    except (RecursionError, MemoryError):
        raise SimError(f"{what} {p} nests arrays or tables too deeply (at most {MAX_DEPTH} levels)") from None
    except OSError as e:
        raise SimError(f"{what} {p} cannot be read: {e.strerror or e}") from None
    if _too_deep(data):
        raise SimError(f"{what} {p} nests arrays or tables too deeply (at most {MAX_DEPTH} levels)")
    return data


def load(path, kind: str) -> dict:
    """Read the TOML file ``path`` and validate it as a config of ``kind`` (a key of SCHEMAS)."""
    return validate(read_toml(path, KIND_NAMES[kind]), kind, path)
