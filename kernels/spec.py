"""Declarations every game module makes: rules, policies, counters, trace events.

Plain data, no Numba, no imports from ``simcli``: the CLI and reports read these to
validate input, label tables and decode traces. A rule's value reaches the kernel as one
entry of an int64 ``params`` array at ``Rule.index``; a rule with ``choices`` is stored as
the index of the chosen word.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Rule:
    name: str
    index: int
    default: int | str | bool
    help: str
    lo: int | None = None          # integer range, inclusive
    hi: int | None = None
    choices: tuple[str, ...] = ()  # word-valued rule: stored as the index of the word
    ruling: str = ""               # where the default comes from (rulebook / RULINGS.md / "gap")

    @property
    def kind(self) -> str:
        if self.choices:
            return "choice"
        if isinstance(self.default, bool):
            return "bool"
        return "int"

    def domain(self) -> str:
        if self.kind == "choice":
            return " | ".join(self.choices)
        if self.kind == "bool":
            return "true | false"
        return f"{self.lo}..{self.hi}"

    def encode(self, value) -> int:
        """Turn a config or CLI value into the kernel's int; ValueError names the valid choices."""
        if self.kind == "choice":
            v = str(value).strip().lower()
            if v not in self.choices:
                raise ValueError(f"rule {self.name}: {value!r} is not one of {self.domain()}")
            return self.choices.index(v)
        if self.kind == "bool":
            if isinstance(value, bool):
                return int(value)
            v = str(value).strip().lower()
            if v in ("true", "1", "yes", "on"):
                return 1
            if v in ("false", "0", "no", "off"):
                return 0
            raise ValueError(f"rule {self.name}: {value!r} is not one of true | false")
        if isinstance(value, bool):
            raise ValueError(f"rule {self.name}: {value!r} is not a whole number in {self.domain()}")
        try:
            v = int(str(value).strip())
        except ValueError:
            raise ValueError(f"rule {self.name}: {value!r} is not a whole number in {self.domain()}") from None
        if (self.lo is not None and v < self.lo) or (self.hi is not None and v > self.hi):
            raise ValueError(f"rule {self.name}: {v} is outside {self.domain()}")
        return v

    def decode(self, code: int):
        if self.kind == "choice":
            return self.choices[code]
        if self.kind == "bool":
            return bool(code)
        return int(code)


@dataclass(frozen=True)
class Event:
    """One trace event: its code, name and the names of its integer fields (after seat)."""
    code: int
    name: str
    fields: tuple[str, ...] = ()
    cards: tuple[str, ...] = ()    # fields holding one card, written as a card name
    masks: tuple[str, ...] = ()    # fields holding a hand mask, written as a list of card names
    words: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (field, names): value i written as names[i]
    seat_always: bool = False      # write ``seat`` even when it is -1 (e.g. "winner, -1 = none")


@dataclass(frozen=True)
class Counter:
    name: str
    help: str = ""


@dataclass
class Tables:
    """Extra per-variant metrics a game derives from its counter sums (name -> value)."""
    metrics: dict = field(default_factory=dict)


# A seat row of the int64 ``seats`` array: [policy code, arg0, arg1, arg2, forbid mask, watch mask].
# ``forbid`` bits are restrictions the seat obeys (restricted play, ``POLICY+RESTRICTION``); ``watch``
# bits are only counted (how often an unrestricted seat takes what a restriction would forbid).
# A seats array narrower than SEAT_WIDTH has neither (older callers and hand-built tests).
SEAT_FORBID = 4
SEAT_WATCH = 5
# Then MAX_KNOBS columns from SEAT_KNOBS: the named parameters ("knobs") of a parameterised policy
# (``tuned``), each an integer in its Knob's units. A seat that is not ``tuned`` leaves them zero.
SEAT_KNOBS = 6
MAX_KNOBS = 32       # pgc declares 28 (issue #24, session 25)
SEAT_WIDTH = SEAT_KNOBS + MAX_KNOBS


@dataclass(frozen=True)
class Knob:
    """One named parameter of a game's ``tuned`` policy: slot ``index`` of the seat's knob columns
    (``seats[s, SEAT_KNOBS + index]``), an integer in ``lo..hi``; ``default`` reproduces the
    ``heuristic`` policy's decision rule. ``scale``: the integer means value / scale (e.g. 1000 for
    a weight in thousandths), so a knob stays exact in the int64 seats array. ``optional``: a
    parameter file may leave the knob out and then plays its default (a knob added after files
    were trained; ``simcli train`` from such a file searches only the knobs the file lists)."""
    name: str
    index: int
    default: int
    lo: int
    hi: int
    help: str
    scale: int = 1
    optional: bool = False


@dataclass(frozen=True)
class Restriction:
    """A kind of choice a seat may be forbidden: ``name`` as typed after ``+``, its ``bit``."""
    name: str
    bit: int
    help: str
