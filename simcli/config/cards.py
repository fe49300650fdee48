"""daily-weather card data: read, validate and pack a card file (configs/daily-weather-cards.toml,
a STAND-IN set, or the file given to ``--cards``) into the kernel's card tail.

The one place the card data is read. The file goes through the one TOML reader and the
``cards`` schema (``schema.load``: keys, TOML types, list lengths, ranges); ``parse`` then checks
what a schema cannot say (icon and background words, each month and date once, week ranges
covering 1..31, a Day Card face for every season and weekday, arrows naming a Week Card symbol)
and returns the arrays the kernel reads. Nothing is kept between calls except a cache of the
shipped file's parse: a card file travels inside each job's ``params`` (the tail after the rule
values, ``kernels.daily_weather.card_tail``), so worker processes and Dask workers need no state.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from kernels import daily_weather as dw
from simcli.errors import SimError

GAME = dw.GAME_ID
FILE_NAME = "daily-weather-cards.toml"


class CardDataError(ValueError):
    """A card file that is well-formed TOML of the right shape but breaks a card rule."""


@dataclass(frozen=True)
class CardData:
    cells: np.ndarray      # (N_CELL_IDS, CELL_FIELDS): icon, background, kind, label
    week: np.ndarray       # (N_WEEK_FACES, WEEK_FIELDS)
    day: np.ndarray        # (N_DAY_FACES, DAY_FIELDS)
    standin: bool
    label: str

    @property
    def tail(self) -> np.ndarray:
        return dw.card_tail(self.cells, self.week, self.day, self.standin)

    @property
    def notes(self) -> tuple:
        """The lines stamped into meta.json and the HTML report for a job using these cards."""
        notes = (f"daily-weather card data: {self.label or 'unlabelled'}",)
        if self.standin:
            notes = ("daily-weather: STAND-IN card data built from the component list, "
                     "not the printed cards",) + notes
        return notes


# ----------------------------------------------------------------------------- reading
def shipped_file() -> Path:
    from simcli.config.jobs import configs_dir
    return configs_dir() / FILE_NAME


def load(path) -> CardData:
    """Read and validate a card file; any problem is one SimError line naming the file."""
    from simcli.config import schema
    data = schema.load(path, "cards")
    try:
        return parse(data)
    except CardDataError as e:
        raise SimError(f"card data file {path}: {e}") from None


@lru_cache(maxsize=1)
def shipped() -> CardData:
    """The shipped (STAND-IN) card set."""
    return load(shipped_file())


def with_cards(params, cards: CardData | None = None) -> np.ndarray:
    """The kernel's params: the rule values of ``params`` followed by the card tail."""
    return np.concatenate((np.asarray(params, dtype=np.int64)[:dw.N_RULES], (cards or shipped()).tail))


def attach(job, cards: CardData | None = None):
    """Give a daily-weather job its card tail (after its rule values) and its report notes."""
    cards = cards or shipped()
    job.params = with_cards(job.params, cards)
    job.notes = cards.notes
    return job


# ----------------------------------------------------------------------------- card rules
def _cell(text, where):
    parts = str(text).strip().split("/")
    if len(parts) != 2:
        raise CardDataError(f"{where}: {text!r} is not 'icon/background'")
    icon, bg = parts[0].strip().lower(), parts[1].strip().lower()
    if icon not in dw.ICONS:
        raise CardDataError(f"{where}: icon {icon!r} is not one of {'|'.join(dw.ICONS)}")
    if bg not in dw.BACKGROUNDS:
        raise CardDataError(f"{where}: background {bg!r} is not one of {'|'.join(dw.BACKGROUNDS)}")
    return dw.ICONS.index(icon), dw.BACKGROUNDS.index(bg)


def _symbol(text, where, allow_arrow=False):
    s = str(text).strip().lower()
    if allow_arrow and s == "arrow":
        return dw.SYMBOL_ARROW
    if s not in dw.SYMBOLS:
        raise CardDataError(f"{where}: symbol {text!r} is not one of {'|'.join(dw.SYMBOLS)}"
                            + ("|arrow" if allow_arrow else ""))
    return dw.SYMBOLS.index(s)


def _count(items, n, key, what):
    if len(items) != n:
        raise CardDataError(f"[[{key}]]: need {n} {what}")


def _weather(data, cells):
    _count(data["weather"], dw.N_WEATHER, "weather", "Weather Cards")
    for c, card in enumerate(data["weather"]):
        name = card.get("name", f"#{c + 1}")
        for f, face in enumerate("ab"):
            for k, text in enumerate(card[face]):
                icon, bg = _cell(text, f"weather card {name} face {face} cell {k + 1}")
                cells[(c * 2 + f) * dw.FACE_CELLS + k] = (icon, bg, dw.KIND_WEATHER, -1)


def _month(data, cells):
    seen = {}
    for f, face in enumerate("ab"):
        for k, text in enumerate(data["month"][face]):
            where = f"month card face {face} cell {k + 1}"
            parts = str(text).split(None, 1)
            if len(parts) != 2 or parts[0].upper() not in dw.MONTHS:
                raise CardDataError(f"{where}: {text!r} is not 'MON icon/background'")
            m = dw.MONTHS.index(parts[0].upper()) + 1
            if m in seen:
                raise CardDataError(f"{where}: {parts[0]} already on {seen[m]}")
            seen[m] = where
            icon, bg = _cell(parts[1], where)
            cells[dw.MONTH_CELL0 + f * dw.FACE_CELLS + k] = (icon, bg, dw.KIND_MONTH, m)
    if len(seen) != 12:
        raise CardDataError("month card: every month must appear once")


def _date_label(text, where):
    lab = text.lower()
    if lab in dw.HOLIDAYS[1:]:
        return dw.HOLIDAY_LABEL0 + dw.HOLIDAYS.index(lab)
    if lab.isdigit() and 1 <= int(lab) <= 31:
        return int(lab)
    raise CardDataError(f"{where}: label {text!r} is not 1..31 or a holiday")


def _dates(data, cells):
    _count(data["date"], dw.N_DATE_CARDS, "date", "Date Cards")
    seen = {}
    for c, card in enumerate(data["date"]):
        name = card.get("name", f"#{c + 1}")
        for f, face in enumerate("ab"):
            for k, text in enumerate(card[face]):
                where = f"date card {name} face {face} cell {k + 1}"
                parts = str(text).split(None, 1)
                if len(parts) != 2:
                    raise CardDataError(f"{where}: {text!r} is not 'label icon/background'")
                label = _date_label(parts[0], where)
                if label in seen:
                    raise CardDataError(f"{where}: {parts[0]} already on {seen[label]}")
                seen[label] = where
                icon, bg = _cell(parts[1], where)
                cells[dw.DATE_CELL0 + (c * 2 + f) * dw.FACE_CELLS + k] = (icon, bg, dw.KIND_DATE, label)
    missing = [str(d) for d in range(1, 32) if d not in seen] + \
        [h for i, h in enumerate(dw.HOLIDAYS[1:], 1) if dw.HOLIDAY_LABEL0 + i not in seen]
    if missing:
        raise CardDataError(f"date cards: missing {', '.join(missing)}")


def _weeks(data) -> np.ndarray:
    _count(data["week"], dw.N_WEEK_FACES, "week", "Week Card faces")
    week = np.full((dw.N_WEEK_FACES, dw.WEEK_FIELDS), -1, dtype=np.int64)
    covered = {}
    for i, wk in enumerate(data["week"]):
        where = f"week card {wk.get('card', '?')} face {wk.get('face', '?')}"
        lo, hi = wk["dates"]
        if lo > hi:
            raise CardDataError(f"{where}: dates must be [first, last] within 1..31")
        for d in range(lo, hi + 1):
            if d in covered:
                raise CardDataError(f"{where}: date {d} is also on {covered[d]}")
            covered[d] = where
        at = wk["date_card_at"]
        if not all(abs(v) <= dw.MAX_DIAGRAM_OFFSET for v in at):
            raise CardDataError(f"{where}: date_card_at must be [row, col] with |value| <= "
                                f"{dw.MAX_DIAGRAM_OFFSET}")
        if abs(at[0]) < dw.FACE_ROWS and abs(at[1]) < dw.FACE_COLS:
            raise CardDataError(f"{where}: date_card_at {at} puts the Date Card on the Month Card")
        syms = wk["symbols"]
        if len(syms) > dw.MAX_WEEK_SYMBOLS:
            raise CardDataError(f"{where}: symbols must list 1..{dw.MAX_WEEK_SYMBOLS} symbols")
        week[i, dw.WK_LO], week[i, dw.WK_HI] = lo, hi
        week[i, dw.WK_DR], week[i, dw.WK_DC] = at
        week[i, dw.WK_NSYM] = len(syms)
        for j, s in enumerate(syms):
            week[i, dw.WK_SYM0 + j] = _symbol(s, f"{where} symbol {j + 1}")
    if len(covered) != 31:
        raise CardDataError("week cards: every date 1..31 must be in exactly one range")
    return week


def _arrows(dy, row, season, serves, min_slots, where):
    """The Week Card symbol each weekday of a Day Card face points at."""
    for wd in dy["weekdays"]:
        wd = str(wd).lower()
        if wd not in dw.WEEKDAYS:
            raise CardDataError(f"{where}: weekday {wd!r} is not one of {'|'.join(dw.WEEKDAYS)}")
        if (season, wd) in serves:
            raise CardDataError(f"{where}: {season} {wd} is also on {serves[(season, wd)]}")
        serves[(season, wd)] = where
        if "arrows" in dy:
            if wd not in dy["arrows"]:
                raise CardDataError(f"{where}: arrows has no arrow labelled {wd}")
            slot = dy["arrows"][wd]
        else:
            slot = dy.get("arrow")
        if not 0 <= slot < min_slots:
            raise CardDataError(f"{where}: arrow for {wd} must be 0..{min_slots - 1} "
                                "(a Week Card symbol)")
        row[dw.DY_ARROW0 + dw.WEEKDAYS.index(wd)] = slot


def _pattern(dy, row, where):
    pts = []
    for r, line in enumerate(dy["pattern"]):
        for c, ch in enumerate(str(line)):
            if ch == "#":
                pts.append((r, c))
            elif ch != ".":
                raise CardDataError(f"{where}: pattern row {r + 1} has {ch!r} (use # and .)")
    if not 1 <= len(pts) <= dw.MAX_PATTERN:
        raise CardDataError(f"{where}: pattern must have 1..{dw.MAX_PATTERN} cells")
    row[dw.DY_NPAT] = len(pts)
    for j, (r, c) in enumerate(pts):
        row[dw.DY_PAT0 + 2 * j] = r
        row[dw.DY_PAT0 + 2 * j + 1] = c


def _days(data, min_slots) -> np.ndarray:
    _count(data["day"], dw.N_DAY_FACES, "day", "Day Card faces")
    day = np.full((dw.N_DAY_FACES, dw.DAY_FIELDS), -1, dtype=np.int64)
    serves = {}
    for i, dy in enumerate(data["day"]):
        where = f"day card {dy.get('card', '?')} face {dy.get('face', '?')}"
        season = dy["season"].lower()
        if season not in dw.SEASONS:
            raise CardDataError(f"{where}: season {season!r} is not one of {'|'.join(dw.SEASONS)}")
        day[i, dw.DY_SEASON] = dw.SEASONS.index(season)
        _arrows(dy, day[i], season, serves, min_slots, where)
        _pattern(dy, day[i], where)
        kind = dy["score"]["kind"].lower()
        if kind not in dw.SCORE_KINDS:
            raise CardDataError(f"{where}: score.kind must be one of {'|'.join(dw.SCORE_KINDS)}")
        day[i, dw.DY_KIND] = dw.SCORE_KINDS.index(kind)
        day[i, dw.DY_SYMBOL] = _symbol(dy["score"].get("symbol", "arrow"), f"{where} score", allow_arrow=True)
        day[i, dw.DY_POINTS] = dy["score"].get("points", 1)
    missing = [f"{s} {w}" for s in dw.SEASONS for w in dw.WEEKDAYS if (s, w) not in serves]
    if missing:
        raise CardDataError(f"day cards: no face for {', '.join(missing)}")
    return day


def parse(data: dict) -> CardData:
    """Card data (TOML that passed the ``cards`` schema) -> arrays; errors name the card, face
    and cell."""
    cells = np.zeros((dw.N_CELL_IDS, dw.CELL_FIELDS), dtype=np.int64)
    _weather(data, cells)
    _month(data, cells)
    _dates(data, cells)
    week = _weeks(data)
    day = _days(data, int(week[:, dw.WK_NSYM].min()))
    return CardData(cells, week, day, bool(data["standin"]), str(data.get("label", "")))
