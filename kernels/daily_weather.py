"""daily-weather: the one-player map puzzle of The Daily Weather (rulebook daily-weather.txt).

One seat builds a weather map for a calendar date from six two-sided Weather Cards laid over
the Month and Date Cards. A game is one attempt: it is a win (winners mask 1) when the final
map meets the four end requirements, and then it scores by the Day Card's condition; a failed
map scores 0. See docs/games/daily-weather.md for every ruling, switch and the draw protocol.

Encodings (all small ints):

* cell kind ``type = icon * 2 + background``; icons 0..3 sun, cloud, rain, snow; backgrounds
  0..1 plain, striped.  A pattern/scoring *symbol* is 0..5 = sun, cloud, rain, snow, plain,
  striped: a cell matches symbol s < 4 when its icon is s, symbol s >= 4 when its background
  is s - 4.
* a Weather Card face ("card code") is ``card * 2 + face`` (face 0 = a, 1 = b), 0..11.
* a cell id: Weather cells ``code * 6 + k`` (0..71), Month cells ``72 + face * 6 + k``,
  Date cells ``84 + (card * 2 + face) * 6 + k``; ``k`` = reading order on the 2x3 face.
* the board is ``H`` x ``W`` cells; ``top[r * W + c]`` = id of the visible cell, -1 = empty.
  Per-kind row bit masks ``tm[type, r]`` (bit c = column c) drive every rule check.

The card data is not in the contract's rule slots: a job's ``params`` carry it as a tail,
``params = [rules..., card tail]`` (``card_tail``), packed by simcli/config/cards.py from
``configs/daily-weather-cards.toml`` (a STAND-IN set) or the file given to ``--cards``. This
module reads no file and keeps no card state.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from . import builds, layout, rng
from ._jit import jit, jit_borrowing, pjit
from .cards import lowest_bit, popcount
from .spec import SEAT_FORBID, SEAT_WATCH, Counter, Event, Restriction, Rule

GAME_ID = "daily-weather"
VERSION = 2  # 2: placements giving the same map are one option (a face alike turned 180 degrees)
PLAYER_COUNTS = (1,)
LOWER_IS_BETTER = False
LENGTH_UNIT = "placements"
SOLO = True        # one seat: winners = 0 is a failed attempt (a lost map), never a timeout
POLICIES = {"random": 0, "greedy": 1, "solver": 2, "mc": 3}
P_RANDOM, P_GREEDY, P_SOLVER, P_MC = 0, 1, 2, 3
# the policies played by the search build (kernels/builds.py): the whole-game solver and mc; a
# random or greedy run compiles neither (the default suite's daily-weather job is greedy)
SEARCH_CODES = (P_SOLVER, P_MC)
# solver:N = a per-game budget of N placements tried; 0 (the default) = the solver_nodes rule;
# mc:BUDGET:ROLLOUT = samples per decision (shared by every option) and the rollout policy
POLICY_ARGS = {"solver": (("nodes", 0, 0, 10**8),),
               "mc": (("budget", 64, 1, 4096), ("rollout", "greedy", None, None))}

# ---------------------------------------------------------------- symbols and card geometry
ICONS = ("sun", "cloud", "rain", "snow")
BACKGROUNDS = ("plain", "striped")
SYMBOLS = ICONS + BACKGROUNDS
N_ICONS = 4
N_BGS = 2
N_TYPES = N_ICONS * N_BGS
N_SYMBOLS = 6
MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
HOLIDAYS = ("none", "valentine", "halloween", "thanksgiving", "christmas", "birthday")
HOLIDAY_LABEL0 = 31                 # date label of holiday h (1..5) is 31 + h
SEASONS = ("winter", "spring", "summer", "autumn")
N_SEASONS = 4
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
SCORE_KINDS = ("groups", "row", "column", "diagonal", "border", "largest_group")
K_GROUPS, K_ROW, K_COLUMN, K_DIAGONAL, K_BORDER, K_LARGEST = 0, 1, 2, 3, 4, 5
SYMBOL_ARROW = -1                   # scoring symbol "arrow": the pattern symbol of today

FACE_ROWS, FACE_COLS, FACE_CELLS = 2, 3, 6
N_WEATHER, N_WEATHER_FACES = 6, 12
N_DATE_CARDS = 3
N_WEEK_FACES, N_DAY_FACES = 4, 12
MAX_WEEK_SYMBOLS = 4
MAX_PATTERN = 6
MAX_DIAGRAM_OFFSET = 4              # |row|, |col| of the Date Card relative to the Month Card
HAND_SIZE = 2
N_ROTATIONS = 4

# cell ids
MONTH_CELL0 = N_WEATHER_FACES * FACE_CELLS          # 72
DATE_CELL0 = MONTH_CELL0 + 2 * FACE_CELLS           # 84
N_CELL_IDS = DATE_CELL0 + 2 * N_DATE_CARDS * FACE_CELLS  # 120
KIND_WEATHER, KIND_MONTH, KIND_DATE = 0, 1, 2

# Board: a Weather Card must overlap the map, so each placement reaches at most 2 cells past it;
# 6 placements reach 12. The Month/Date block (at most 6 x 7) sits at BASE so nothing can reach
# the edge: the finite board plays exactly like the rulebook's infinite grid.
H = 40
W = 40
BASE = 14
FULL_ROW = (1 << W) - 1
# scratch rows for the end checks: row masks (H) or a cell stack (at most 12 + 6 * 6 cells)
WORK_LEN = 2 * H

# Rotation r (clockwise quarter turns) moves face cell k = (i, j) of the 2x3 face to
# (ROT_DR[r, k], ROT_DC[r, k]) from the rotated card's top-left (the anchor).
ROT_DR = np.array([[0, 0, 0, 1, 1, 1], [0, 1, 2, 0, 1, 2], [1, 1, 1, 0, 0, 0], [2, 1, 0, 2, 1, 0]],
                  dtype=np.int64)
ROT_DC = np.array([[0, 1, 2, 0, 1, 2], [1, 1, 1, 0, 0, 0], [2, 1, 0, 2, 1, 0], [0, 0, 0, 1, 1, 1]],
                  dtype=np.int64)

# ---------------------------------------------------------------- rules (params[0 .. N_RULES))
R_MONTH, R_DAY, R_WEEKDAY, R_HOLIDAY, R_USE_HOLIDAY, R_SEASONS, R_TAKE_WIN, R_STUCK, \
    R_SOLVER_NODES, R_FLIPS = range(10)
SEASONS_METEOROLOGICAL, SEASONS_ASTRONOMICAL = 0, 1
STUCK_FAIL, STUCK_DISCARD = 0, 1
FLIPS_COIN, FLIPS_NONE = 0, 1
DEFAULT_SOLVER_NODES = 5000    # ~10-25 ms a game: a year x 20 games x solver in ~1-2 min on 2 cores

RULES = (
    Rule("month", R_MONTH, 12, "today's month, 1..12", lo=1, hi=12, ruling="the date of play"),
    Rule("day", R_DAY, 23, "today's day of the month", lo=1, hi=31, ruling="the date of play"),
    Rule("weekday", R_WEEKDAY, 2, "today's weekday, 0 = Monday .. 6 = Sunday", lo=0, hi=6,
         ruling="the date of play"),
    Rule("holiday", R_HOLIDAY, "none", "today's holiday, if any", choices=HOLIDAYS,
         ruling="rulebook Setup: the holiday Date Card option"),
    Rule("use_holiday", R_USE_HOLIDAY, True,
         "on a holiday, use the holiday cell as today's date cell instead of the number",
         ruling="gap: the rulebook says 'may'; the player takes the option"),
    Rule("seasons", R_SEASONS, "meteorological",
         "season of a date: by whole months (Dec-Feb winter ...) or by solstice/equinox",
         choices=("meteorological", "astronomical"),
         ruling="gap: the rulebook never says where seasons start"),
    Rule("take_win", R_TAKE_WIN, True,
         "random and greedy take a placement that completes a winning map when one is offered",
         ruling="RULINGS.md Conventions for all games: immediate game-winning actions"),
    Rule("stuck", R_STUCK, "fail",
         "when no hand card can be placed: the attempt fails, or the first hand card is discarded",
         choices=("fail", "discard"), ruling="gap: the rulebook assumes a placement exists"),
    Rule("solver_nodes", R_SOLVER_NODES, DEFAULT_SOLVER_NODES,
         "solver budget: placements tried per game, greedy's first line included (always played "
         "out, so a game tries max(budget, that line)); a seat's arg0 > 0 overrides", lo=1, hi=10**8,
         ruling="RULINGS.md daily-weather: a search-based solver as an upper bound"),
    Rule("flips", R_FLIPS, "coin",
         "how the shuffle flips Weather Cards: each one independently with chance 1/2, or none",
         choices=("coin", "none"), ruling="gap: 'randomly flipping some over' as a fair coin each"),
)
N_RULES = len(RULES)

# ---------------------------------------------------------------- the card tail of params
# cells [N_CELL_IDS] x (icon, background, kind, label)
CELL_ICON, CELL_BG, CELL_KIND, CELL_LABEL = 0, 1, 2, 3
CELL_FIELDS = 4
# week faces [4] x (first date, last date, date-card row, col, n symbols, symbols[4])
WK_LO, WK_HI, WK_DR, WK_DC, WK_NSYM, WK_SYM0 = 0, 1, 2, 3, 4, 5
WEEK_FIELDS = WK_SYM0 + MAX_WEEK_SYMBOLS
# day faces [12] x (season, arrow slot per weekday[7] (-1 = not this face), n pattern cells,
# pattern (row, col)[6], score kind, score symbol, points per unit)
DY_SEASON, DY_ARROW0, DY_NPAT, DY_PAT0 = 0, 1, 8, 9
DY_KIND = DY_PAT0 + 2 * MAX_PATTERN
DY_SYMBOL, DY_POINTS = DY_KIND + 1, DY_KIND + 2
DAY_FIELDS = DY_POINTS + 1
T_CELLS = 0
T_WEEK = T_CELLS + N_CELL_IDS * CELL_FIELDS
T_DAY = T_WEEK + N_WEEK_FACES * WEEK_FIELDS
T_STANDIN = T_DAY + N_DAY_FACES * DAY_FIELDS
TAIL_LEN = T_STANDIN + 1
CELLS_AT = N_RULES + T_CELLS
WEEK_AT = N_RULES + T_WEEK
DAY_AT = N_RULES + T_DAY

# ---------------------------------------------------------------- game state st[]
(S_HAND0, S_HAND1, S_DECK0) = (0, 1, 2)              # hand slots and deck (card codes, -1 none)
S_NEXT = S_DECK0 + N_WEATHER                         # index of the next deck card
(S_PLACED, S_RMIN, S_RMAX, S_CMIN, S_CMAX, S_MONTH_POS, S_DATE_POS, S_FOREIGN, S_PAT_SYM,
 S_SCORE_KIND, S_SCORE_SYM, S_POINTS, S_NPAT, S_MONTH_FACE, S_DATE_FACE, S_WEEK_FACE,
 S_DAY_FACE, S_MONTH_R, S_MONTH_C, S_DATE_R, S_DATE_C, S_COVERED, S_DISCARDS, S_STUCK,
 S_OPTIONS, S_DECISIONS, S_TOOK_WIN, S_LABEL) = range(S_NEXT + 1, S_NEXT + 29)
ST_LEN = S_LABEL + 1
N_FOREIGN = 2 * (FACE_CELLS - 1)                     # label cells that must be covered

# ---------------------------------------------------------------- options
# A placement option is one int: ((slot * 4 + rotation) * H + anchor row) * W + anchor col, so
# sorting options numerically sorts by (hand slot, rotation, row, col). DISCARD is the forced
# discard of the stuck = discard switch.
MAX_OPTIONS = 4096   # >= 2 slots x 4 rotations x 48 visible cells x 6 card cells
DISCARD = -2
SOLVER_DEPTH = N_WEATHER + 1
# solver report info[]: placements tried, found a win, search finished, plan length, best key
I_NODES, I_FOUND, I_COMPLETE, I_PLAN_LEN, I_BEST = range(5)
INFO_LEN = 5
N_SYMMETRIES = 8                 # a pattern's 4 rotations x (as printed, mirrored)
N_WORK = 4                       # scratch rows for end checks (see WORK_LEN)

# end requirements, in the rulebook's order
REQ_DATE, REQ_MONTH, REQ_PATTERN, REQ_CONNECTED = 0, 1, 2, 3
REQUIREMENTS = ("date", "month", "pattern", "connected")
N_REQ = 4

# ---------------------------------------------------------------- counters and events
COUNTERS = (
    Counter("fail_date", "end: a date cell other than today's was visible"),
    Counter("fail_month", "end: a month cell other than today's was visible"),
    Counter("fail_pattern", "end: the seasonal weather pattern was not in the map"),
    Counter("fail_connected", "end: the map was not connected"),
    Counter("stuck", "times no hand card had a legal placement"),
    Counter("placements", "Weather Cards placed"),
    Counter("discards", "cards discarded under stuck = discard"),
    Counter("cells_covered", "cells laid on top of an occupied cell"),
    Counter("labels_covered", "other month/date cells covered at the end (0..10)"),
    Counter("map_cells", "visible cells of the final map"),
    Counter("options", "legal placements offered, summed over decisions"),
    Counter("took_win", "last placements chosen among the winning ones (take_win)"),
    Counter("solver_nodes", "placements the solver tried"),
    Counter("solver_found", "the solver found a winning map"),
    Counter("solver_complete", "the solver's search finished inside its budget (result exact)"),
    Counter("measure", "the final map's scoring measure (win or not), before points per unit"),
    Counter("mc_rollouts", "rollouts played by the search (mc) seat"),
    Counter("mc_rollout_plays", "placements simulated in those rollouts (each option's own included)"),
    Counter("restriction_forbidden", "decisions at which a seat with a watch bit took an option in "
            "its watched set"),
    Counter("restriction_yielded", "decisions at which a restricted seat found every legal option "
            "forbidden"),
)
C_FAIL0, C_STUCK, C_PLACEMENTS, C_DISCARDS, C_CELLS_COVERED, C_LABELS_COVERED, C_MAP_CELLS, \
    C_OPTIONS, C_TOOK_WIN, C_SOLVER_NODES, C_SOLVER_FOUND, C_SOLVER_COMPLETE, C_MEASURE, \
    C_MC_ROLLOUTS, C_MC_PLAYS = 0, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17
C_FORBIDDEN, C_YIELDED = 18, 19                     # restricted play (issue #15), appended last
N_SEATS = 1
N_COUNTERS = len(COUNTERS)

# ---------------------------------------------------------------- restrictions
# Restricted play (``POLICY+RESTRICTION``, docs/games/daily-weather.md): the seat's placements
# are cut before it chooses, in the game and in its own look-ahead (solver, mc rollouts).
X_NO_ROTATION, X_NO_FULL_COVER = 0, 1
RESTRICTIONS = (
    Restriction("no-rotation", X_NO_ROTATION, "never rotate a Weather Card: every card is "
                "placed the way it was drawn"),
    Restriction("no-full-cover", X_NO_FULL_COVER, "never completely cover an earlier Weather "
                "Card (the rulebook's 'may completely cover an existing card'): every placed "
                "card keeps a visible cell"),
)

E_SETUP, E_LAYOUT, E_DEAL, E_PLACE, E_STUCK, E_CHECK, E_SCORE, E_RESULT, E_SOLVER = range(1, 10)
_ROT_WORDS = ("0", "90", "180", "270")
EVENTS = (
    Event(E_SETUP, "setup", ("month", "day", "weekday", "date_label", "month_face", "date_face",
                             "week_face", "day_face"),
          words=(("weekday", WEEKDAYS),)),
    Event(E_LAYOUT, "layout", ("pattern_symbol", "score_kind", "score_symbol", "points",
                               "date_card_row", "date_card_col", "today_month_cell",
                               "today_date_cell"),
          words=(("pattern_symbol", SYMBOLS), ("score_kind", SCORE_KINDS),
                 ("score_symbol", SYMBOLS))),
    Event(E_DEAL, "deal", ("c0", "c1", "c2", "c3", "c4", "c5"),
          cards=("c0", "c1", "c2", "c3", "c4", "c5")),
    Event(E_PLACE, "place", ("card", "rotation", "row", "col", "cells_covered", "labels_covered",
                             "options", "slot"),
          cards=("card",), words=(("rotation", _ROT_WORDS),)),
    Event(E_STUCK, "stuck", ("hand0", "hand1", "discarded"), cards=("hand0", "hand1", "discarded")),
    Event(E_CHECK, "check", ("date_ok", "month_ok", "pattern_ok", "connected_ok", "failed",
                             "labels_visible")),
    Event(E_SCORE, "score", ("measure", "points", "score", "win")),
    Event(E_RESULT, "result", ("win", "score", "placements")),
    Event(E_SOLVER, "solver", ("nodes", "found", "complete", "best_measure")),
)


def format_card(c: int) -> str:
    """A Weather Card face: W1a .. W6b; -1 is '-'."""
    c = int(c)
    if c < 0:
        return "-"
    return f"W{c // 2 + 1}{'ab'[c % 2]}"


# ================================================================= card data (arrays in)
# The card files are read and validated outside the kernel (simcli/config/cards.py); a job's
# params carry the packed arrays after the rule values, so every process plays the same cards.
def card_tail(cells, week, day, standin) -> np.ndarray:
    """The card tail of ``params`` from the card arrays (cells, week faces, day faces)."""
    tail = np.zeros(TAIL_LEN, dtype=np.int64)
    tail[T_CELLS:T_WEEK] = np.asarray(cells, dtype=np.int64).ravel()
    tail[T_WEEK:T_DAY] = np.asarray(week, dtype=np.int64).ravel()
    tail[T_DAY:T_STANDIN] = np.asarray(day, dtype=np.int64).ravel()
    tail[T_STANDIN] = int(standin)
    return tail


def kernel_params(params) -> np.ndarray:
    """``params`` as the kernel reads them: the rule values followed by the card tail."""
    params = np.asarray(params, dtype=np.int64)
    if params.shape[0] != N_RULES + TAIL_LEN:
        raise ValueError(f"{GAME_ID}: params must hold {N_RULES} rule values and the card tail "
                         f"({TAIL_LEN} values, card_tail)")
    return params


def is_standin(params) -> bool:
    return bool(kernel_params(params)[N_RULES + T_STANDIN])


def default_params() -> np.ndarray:
    return np.array([r.encode(r.default) for r in RULES], dtype=np.int64)


# ================================================================= contract helpers
def n_seats(players, params):
    return N_SEATS


def extra_seats(players, params):
    return ()


def score_range(players, params):
    p = kernel_params(params)
    best = int(p[DAY_AT + DY_POINTS:DAY_AT + N_DAY_FACES * DAY_FIELDS:DAY_FIELDS].max())
    return (0, best * (2 * FACE_CELLS + N_WEATHER * FACE_CELLS))


def length_range(players, params):
    return (0, N_WEATHER)


_DAYS_IN_MONTH = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_HOLIDAY_DATES = {1: (2, 14), 2: (10, 31), 4: (12, 25)}


def check(players, params):
    """Cross-rule conflicts: the date must exist and a fixed holiday must fall on its date."""
    if players not in PLAYER_COUNTS:
        raise ValueError(f"{GAME_ID} is a one-player game")
    p = np.asarray(params)
    month, day, wd, hol = int(p[R_MONTH]), int(p[R_DAY]), int(p[R_WEEKDAY]), int(p[R_HOLIDAY])
    if day > _DAYS_IN_MONTH[month - 1]:
        raise ValueError(f"{MONTHS[month - 1]} {day} is not a date")
    if hol in _HOLIDAY_DATES and _HOLIDAY_DATES[hol] != (month, day):
        m, d = _HOLIDAY_DATES[hol]
        raise ValueError(f"holiday {HOLIDAYS[hol]} is {MONTHS[m - 1]} {d}, not {MONTHS[month - 1]} {day}")
    if hol == 3 and not (month == 11 and 22 <= day <= 28 and wd == 3):
        raise ValueError("thanksgiving is the fourth Thursday of November (NOV 22-28, weekday 3)")


def derived_metrics(sums: dict, games: int, players: int, params) -> dict:
    """Per-variant metrics from the integer counter sums (name -> sum)."""
    if not isinstance(sums, dict):
        sums = {c.name: int(v) for c, v in zip(COUNTERS, sums)}
    g = max(int(games), 1)
    out = {f"fail_{req}_rate": sums[f"fail_{req}"] / g for req in REQUIREMENTS}
    out["stuck_rate"] = sums["stuck"] / g
    out["placements_mean"] = sums["placements"] / g
    out["labels_covered_mean"] = sums["labels_covered"] / g
    out["map_cells_mean"] = sums["map_cells"] / g
    out["options_per_placement"] = sums["options"] / max(sums["placements"], 1)
    out["solver_nodes_mean"] = sums["solver_nodes"] / g
    out["solver_found_rate"] = sums["solver_found"] / g
    out["solver_complete_rate"] = sums["solver_complete"] / g
    out["standin_cards"] = float(is_standin(params))
    return out


# ================================================================= kernel: small helpers
@jit
def cell_type(params, cid):
    b = CELLS_AT + cid * CELL_FIELDS
    return params[b + CELL_ICON] * N_BGS + params[b + CELL_BG]


@jit
def type_matches(t, sym):
    """Does a cell of kind t show symbol sym (icon or background)?"""
    if sym < N_ICONS:
        return t // N_BGS == sym
    return t % N_BGS == sym - N_ICONS


@jit
def symbol_rows(tm, sym, rows):
    """rows[r] = bit mask of visible cells showing ``sym``."""
    for r in range(H):
        rows[r] = 0
    for t in range(N_TYPES):
        if type_matches(t, sym):
            for r in range(H):
                rows[r] |= tm[t, r]


@jit
def occupied_rows(tm, rows):
    for r in range(H):
        x = 0
        for t in range(N_TYPES):
            x |= tm[t, r]
        rows[r] = x


@jit
def set_top(params, top, tm, r, c, cid):
    """Make ``cid`` the visible cell at (r, c), keeping the kind masks in step."""
    p = r * W + c
    old = top[p]
    bit = np.int64(1) << c
    if old >= 0:
        tm[cell_type(params, old), r] &= ~bit
    top[p] = cid
    if cid >= 0:
        tm[cell_type(params, cid), r] |= bit


@jit
def season_of(month, day, rule):
    """0 winter, 1 spring, 2 summer, 3 autumn."""
    if rule == SEASONS_METEOROLOGICAL:
        return (month % 12) // 3
    # astronomical: spring from MAR 20, summer from JUN 21, autumn from SEP 22, winter from DEC 21
    starts = ((3, 20), (6, 21), (9, 22), (12, 21))
    s = 0
    for i in range(N_SEASONS):
        if month > starts[i][0] or (month == starts[i][0] and day >= starts[i][1]):
            s = i + 1
    return s % N_SEASONS


# ================================================================= setup
@jit
def setup_faces(params, st):
    """Find today's Month, Date, Week and Day faces and today's cells (rulebook Setup)."""
    month = params[R_MONTH]
    day = params[R_DAY]
    label = day
    if params[R_HOLIDAY] > 0 and params[R_USE_HOLIDAY] == 1:
        label = HOLIDAY_LABEL0 + params[R_HOLIDAY]
    st[S_LABEL] = label
    st[S_MONTH_FACE] = -1
    st[S_DATE_FACE] = -1
    for cid in range(MONTH_CELL0, DATE_CELL0):
        if params[CELLS_AT + cid * CELL_FIELDS + CELL_LABEL] == month:
            st[S_MONTH_FACE] = (cid - MONTH_CELL0) // FACE_CELLS
            st[S_MONTH_POS] = cid            # temporarily the cell id
    for cid in range(DATE_CELL0, N_CELL_IDS):
        if params[CELLS_AT + cid * CELL_FIELDS + CELL_LABEL] == label:
            st[S_DATE_FACE] = (cid - DATE_CELL0) // FACE_CELLS
            st[S_DATE_POS] = cid
    st[S_WEEK_FACE] = -1
    for i in range(N_WEEK_FACES):
        b = WEEK_AT + i * WEEK_FIELDS
        if params[b + WK_LO] <= day <= params[b + WK_HI]:
            st[S_WEEK_FACE] = i
    season = season_of(month, day, params[R_SEASONS])
    wd = params[R_WEEKDAY]
    st[S_DAY_FACE] = -1
    for i in range(N_DAY_FACES):
        b = DAY_AT + i * DAY_FIELDS
        if params[b + DY_SEASON] == season and params[b + DY_ARROW0 + wd] >= 0:
            st[S_DAY_FACE] = i
    wb = WEEK_AT + st[S_WEEK_FACE] * WEEK_FIELDS
    db = DAY_AT + st[S_DAY_FACE] * DAY_FIELDS
    st[S_PAT_SYM] = params[wb + WK_SYM0 + params[db + DY_ARROW0 + wd]]
    st[S_SCORE_KIND] = params[db + DY_KIND]
    sym = params[db + DY_SYMBOL]
    st[S_SCORE_SYM] = st[S_PAT_SYM] if sym == SYMBOL_ARROW else sym
    st[S_POINTS] = params[db + DY_POINTS]
    st[S_NPAT] = params[db + DY_NPAT]


@jit
def pattern_orientations(params, st, pat):
    """pat[o, 2k], pat[o, 2k+1]: cell k of the pattern under symmetry o (4 rotations x mirror),
    shifted so its smallest row and column are 0."""
    db = DAY_AT + st[S_DAY_FACE] * DAY_FIELDS
    n = st[S_NPAT]
    for o in range(N_SYMMETRIES):
        rmin = 1 << 20
        cmin = 1 << 20
        for k in range(n):
            r = params[db + DY_PAT0 + 2 * k]
            c = params[db + DY_PAT0 + 2 * k + 1]
            if o >= N_ROTATIONS:
                c = -c
            for _ in range(o % N_ROTATIONS):
                r, c = c, -r
            pat[o, 2 * k] = r
            pat[o, 2 * k + 1] = c
            rmin = min(rmin, r)
            cmin = min(cmin, c)
        for k in range(n):
            pat[o, 2 * k] -= rmin
            pat[o, 2 * k + 1] -= cmin


@jit
def lay_label_cards(params, st, top, tm):
    """Place the Month and Date faces as the Week Card's setup diagram shows."""
    wb = WEEK_AT + st[S_WEEK_FACE] * WEEK_FIELDS
    dr = params[wb + WK_DR]
    dc = params[wb + WK_DC]
    mr = BASE - min(0, dr)
    mc = BASE - min(0, dc)
    st[S_MONTH_R] = mr
    st[S_MONTH_C] = mc
    st[S_DATE_R] = mr + dr
    st[S_DATE_C] = mc + dc
    month_cid = st[S_MONTH_POS]
    date_cid = st[S_DATE_POS]
    for k in range(FACE_CELLS):
        i = k // FACE_COLS
        j = k % FACE_COLS
        cid = MONTH_CELL0 + st[S_MONTH_FACE] * FACE_CELLS + k
        set_top(params, top, tm, mr + i, mc + j, cid)
        if cid == month_cid:
            st[S_MONTH_POS] = (mr + i) * W + mc + j
        cid = DATE_CELL0 + st[S_DATE_FACE] * FACE_CELLS + k
        set_top(params, top, tm, mr + dr + i, mc + dc + j, cid)
        if cid == date_cid:
            st[S_DATE_POS] = (mr + dr + i) * W + mc + dc + j
    st[S_RMIN] = min(mr, mr + dr)
    st[S_RMAX] = max(mr, mr + dr) + FACE_ROWS - 1
    st[S_CMIN] = min(mc, mc + dc)
    st[S_CMAX] = max(mc, mc + dc) + FACE_COLS - 1
    st[S_FOREIGN] = N_FOREIGN


@jit(_nrt=True)    # allocates: called from _play_game, compiled without counting
def deal(params, seed, g, st):
    """Shuffle the six Weather Cards (DEAL stream, round 0), then flip each (a coin per card
    in deck order), then draw a hand of two."""
    keys, ctrs = rng.new_streams(1)
    keys[0] = rng.stream_key(seed, g, rng.DEAL, 0)
    order = np.arange(N_WEATHER)
    rng.shuffle(order, N_WEATHER, keys, ctrs, 0)
    for i in range(N_WEATHER):
        face = 0
        if params[R_FLIPS] == FLIPS_COIN:
            face = rng.below(keys, ctrs, 0, 2)
        st[S_DECK0 + i] = order[i] * 2 + face
    st[S_HAND0] = st[S_DECK0]
    st[S_HAND1] = st[S_DECK0 + 1]
    st[S_NEXT] = HAND_SIZE


@jit
def new_game(params, seed, g, st, top, tm, pat):
    for i in range(ST_LEN):
        st[i] = 0
    for i in range(H * W):
        top[i] = -1
    for t in range(N_TYPES):
        for r in range(H):
            tm[t, r] = 0
    setup_faces(params, st)
    pattern_orientations(params, st, pat)
    lay_label_cards(params, st, top, tm)
    deal(params, seed, g, st)


# ================================================================= placement rules
@jit
def cards_left(st):
    """Weather Cards still to play: in hand plus in the deck."""
    n = N_WEATHER - st[S_NEXT]
    for s in range(HAND_SIZE):
        if st[S_HAND0 + s] >= 0:
            n += 1
    return n


@jit
def opt_slot(o):
    return o // (N_ROTATIONS * H * W)


@jit
def opt_rot(o):
    return (o // (H * W)) % N_ROTATIONS


@jit
def opt_row(o):
    return (o // W) % H


@jit
def opt_col(o):
    return o % W


@jit
def looks_same_turned(params, code):
    """Does face ``code`` look the same turned 180 degrees (cell k and cell 5 - k alike)?

    Then rotations 2 and 3 at an anchor lay exactly the cells rotations 0 and 1 lay there."""
    for k in range(FACE_CELLS // 2):
        if cell_type(params, code * FACE_CELLS + k) != \
                cell_type(params, code * FACE_CELLS + FACE_CELLS - 1 - k):
            return False
    return True


@jit
def legal_placements(params, st, tm, opts, cand):
    """Every legal placement of a hand card, in (slot, rotation, row, col) order; returns count.

    A placement is legal when some cell of the card lands on a visible cell with the same icon
    and background, and no cell lands on today's month or date cell. The anchor grid is the
    Month/Date grid and the card may take any of 4 rotations (never flipped). Placements that
    give the same map are one option: a face that looks the same turned 180 degrees is offered
    in rotations 0 and 1 only (2 and 3 would lay the same cells at the same anchors)."""
    n = 0
    rlo = st[S_RMIN] - (FACE_COLS - 1)
    rhi = st[S_RMAX]
    mpos = st[S_MONTH_POS]
    dpos = st[S_DATE_POS]
    for slot in range(HAND_SIZE):
        code = st[S_HAND0 + slot]
        if code < 0:
            continue
        n_rot = N_ROTATIONS // 2 if looks_same_turned(params, code) else N_ROTATIONS
        for rot in range(n_rot):
            for r in range(rlo, rhi + 1):
                cand[r] = 0
            for k in range(FACE_CELLS):
                t = cell_type(params, code * FACE_CELLS + k)
                dr = ROT_DR[rot, k]
                dc = ROT_DC[rot, k]
                for r in range(st[S_RMIN], st[S_RMAX] + 1):
                    cand[r - dr] |= tm[t, r] >> dc
            for k in range(FACE_CELLS):
                dr = ROT_DR[rot, k]
                dc = ROT_DC[rot, k]
                for p in (mpos, dpos):
                    ar = p // W - dr
                    ac = p % W - dc
                    if rlo <= ar <= rhi:
                        cand[ar] &= ~(np.int64(1) << ac)
            base = (slot * N_ROTATIONS + rot) * H
            for r in range(rlo, rhi + 1):
                x = cand[r]
                while x:
                    c = lowest_bit(x)
                    x &= x - 1
                    opts[n] = (base + r) * W + c
                    n += 1
    return n


@jit
def labels_under(st, top, o):
    """Other month/date cells (still visible) that placement ``o`` would cover."""
    code = st[S_HAND0 + opt_slot(o)]
    rot = opt_rot(o)
    ar = opt_row(o)
    ac = opt_col(o)
    n = 0
    for k in range(FACE_CELLS):
        cid = top[(ar + ROT_DR[rot, k]) * W + ac + ROT_DC[rot, k]]
        if cid >= MONTH_CELL0:
            n += 1
    return n


@jit
def draw(st, slot):
    """Refill hand ``slot`` from the deck (nothing when the deck is empty)."""
    if st[S_NEXT] < N_WEATHER:
        st[S_HAND0 + slot] = st[S_DECK0 + st[S_NEXT]]
        st[S_NEXT] += 1
    else:
        st[S_HAND0 + slot] = -1


@jit
def apply_placement(params, st, top, tm, o, undo):
    """Play option ``o`` (a placement, or DISCARD) and draw; ``undo`` saves what it changed.
    Returns the number of cells laid on occupied cells."""
    for i in range(ST_LEN):
        undo[FACE_CELLS + i] = st[i]
    if o == DISCARD:
        slot = 0 if st[S_HAND0] >= 0 else 1
        st[S_DISCARDS] += 1
        draw(st, slot)
        return 0
    slot = opt_slot(o)
    code = st[S_HAND0 + slot]
    rot = opt_rot(o)
    ar = opt_row(o)
    ac = opt_col(o)
    covered = 0
    for k in range(FACE_CELLS):
        r = ar + ROT_DR[rot, k]
        c = ac + ROT_DC[rot, k]
        old = top[r * W + c]
        undo[k] = old
        if old >= 0:
            covered += 1
            if old >= MONTH_CELL0:
                st[S_FOREIGN] -= 1
        set_top(params, top, tm, r, c, code * FACE_CELLS + k)
        st[S_RMIN] = min(st[S_RMIN], r)
        st[S_RMAX] = max(st[S_RMAX], r)
        st[S_CMIN] = min(st[S_CMIN], c)
        st[S_CMAX] = max(st[S_CMAX], c)
    st[S_COVERED] += covered
    st[S_PLACED] += 1
    draw(st, slot)
    return covered


@jit
def undo_placement(params, st, top, tm, o, undo):
    """Take back ``apply_placement(o)``."""
    if o != DISCARD:
        slot = opt_slot(o)
        rot = opt_rot(o)
        ar = opt_row(o)
        ac = opt_col(o)
        for k in range(FACE_CELLS - 1, -1, -1):
            set_top(params, top, tm, ar + ROT_DR[rot, k], ac + ROT_DC[rot, k], undo[k])
    for i in range(ST_LEN):
        st[i] = undo[FACE_CELLS + i]


# ================================================================= end requirements, scoring
@jit
def components(mask, left, stack, largest):
    """Number of 4-connected groups of the cells in row masks ``mask``; largest[0] = the size
    of the largest. A depth-first walk over the cells (``left`` and ``stack`` are scratch)."""
    for r in range(H):
        left[r] = mask[r]
    k = 0
    largest[0] = 0
    for r0 in range(H):
        while left[r0]:
            c0 = lowest_bit(left[r0])
            left[r0] &= ~(np.int64(1) << c0)
            stack[0] = r0 * W + c0
            top_ = 1
            size = 0
            while top_ > 0:
                top_ -= 1
                p = stack[top_]
                r = p // W
                c = p % W
                size += 1
                for q in range(4):
                    nr = r + (1 if q == 0 else (-1 if q == 1 else 0))
                    nc = c + (1 if q == 2 else (-1 if q == 3 else 0))
                    if 0 <= nr < H and 0 <= nc < W and (left[nr] >> nc) & 1:
                        left[nr] &= ~(np.int64(1) << nc)
                        stack[top_] = nr * W + nc
                        top_ += 1
            k += 1
            largest[0] = max(largest[0], size)
    return k


@jit
def pattern_present(sym_rows, st, pat):
    """The Day Card pattern under some rotation or reflection, every cell showing the symbol."""
    n = st[S_NPAT]
    for o in range(N_SYMMETRIES):
        for r in range(st[S_RMIN], st[S_RMAX] + 1):
            x = FULL_ROW
            for k in range(n):
                rr = r + pat[o, 2 * k]
                if rr >= H:
                    x = 0
                    break
                x &= sym_rows[rr] >> pat[o, 2 * k + 1]
                if x == 0:
                    break
            if x != 0:
                return True
    return False


@jit
def longest_line(m, step_r, step_c, cur):
    """Longest run of consecutive cells of ``m`` along (step_r, step_c), step_r in {0, 1}:
    cur[r] bit c after k rounds = a run of k+1 cells starts at (r, c)."""
    for r in range(H):
        cur[r] = m[r]
    k = 0
    while True:
        anyset = False
        for r in range(H):
            if cur[r]:
                anyset = True
                break
        if not anyset:
            return k
        k += 1
        for r in range(H):
            rr = r + step_r * k
            if rr >= H:
                cur[r] = 0
                continue
            nxt = m[rr]
            sh = step_c * k
            if sh > 0:
                nxt = nxt >> sh if sh < 63 else 0
            elif sh < 0:
                nxt = (nxt << (-sh)) & FULL_ROW if -sh < 63 else 0
            cur[r] &= nxt


@jit
def measure(st, tm, rows, work):
    """The Day Card scoring measure of the visible map (before points per unit)."""
    kind = st[S_SCORE_KIND]
    symbol_rows(tm, st[S_SCORE_SYM], rows)
    tmp = work[2]
    if kind == K_GROUPS or kind == K_LARGEST:
        big = work[3]
        n = components(rows, work[0], work[1], big)
        return n if kind == K_GROUPS else big[0]
    if kind == K_ROW:
        return longest_line(rows, 0, 1, tmp)
    if kind == K_COLUMN:
        return longest_line(rows, 1, 0, tmp)
    if kind == K_DIAGONAL:
        return max(longest_line(rows, 1, 1, tmp), longest_line(rows, 1, -1, tmp))
    # border: cells with at least one of the four sides not touching another cell
    occupied_rows(tm, tmp)
    n = 0
    for r in range(H):
        inner = tmp[r] & (tmp[r] << 1) & (tmp[r] >> 1)
        inner &= tmp[r - 1] if r > 0 else 0
        inner &= tmp[r + 1] if r < H - 1 else 0
        n += popcount(rows[r] & tmp[r] & ~inner)
    return n


@jit
def label_visible(st, top, kind):
    """Other month (kind 1) or date (kind 2) cells still visible."""
    n = 0
    if kind == KIND_MONTH:
        r0, c0, own = st[S_MONTH_R], st[S_MONTH_C], st[S_MONTH_POS]
    else:
        r0, c0, own = st[S_DATE_R], st[S_DATE_C], st[S_DATE_POS]
    for k in range(FACE_CELLS):
        p = (r0 + k // FACE_COLS) * W + c0 + k % FACE_COLS
        if p != own and top[p] >= MONTH_CELL0:
            n += 1
    return n


@jit
def end_checks_pieces(st, top, tm, pat, rows, work, ok):
    """end_checks, also giving the number of 4-connected pieces: (fails, pieces); leaves the
    occupied row masks in ``rows``."""
    ok[REQ_DATE] = 1 if label_visible(st, top, KIND_DATE) == 0 else 0
    ok[REQ_MONTH] = 1 if label_visible(st, top, KIND_MONTH) == 0 else 0
    symbol_rows(tm, st[S_PAT_SYM], rows)
    ok[REQ_PATTERN] = 1 if pattern_present(rows, st, pat) else 0
    occupied_rows(tm, rows)
    pieces = components(rows, work[0], work[1], work[3])
    ok[REQ_CONNECTED] = 1 if pieces == 1 else 0
    fails = 0
    for i in range(N_REQ):
        fails += 1 - ok[i]
    return fails, pieces


@jit
def end_checks(st, top, tm, pat, rows, work, ok):
    """ok[REQ_*] = 1 when that end requirement holds; returns the number that fail."""
    fails, _ = end_checks_pieces(st, top, tm, pat, rows, work, ok)
    return fails


@jit
def map_wins(st, top, tm, pat, rows, work, known_connected):
    """All four end requirements, cheapest first, stopping at the first that fails.
    ``known_connected``: the map is connected already (a placement, which overlaps the map
    with a connected 2x3 block, keeps it so)."""
    if st[S_FOREIGN] != 0:              # other month/date cells visible (requirements 1, 2)
        return False
    symbol_rows(tm, st[S_PAT_SYM], rows)
    if not pattern_present(rows, st, pat):
        return False
    if known_connected:
        return True
    occupied_rows(tm, rows)
    return components(rows, work[0], work[1], work[3]) == 1


@jit
def finished(st):
    return cards_left(st) == 0


# ================================================================= restricted play
@jit
def visible_per_card(st, top, vis):
    """vis[code] = visible cells of the Weather Card face ``code`` on the map (0 if not laid)."""
    for c in range(N_WEATHER_FACES):
        vis[c] = 0
    for r in range(st[S_RMIN], st[S_RMAX] + 1):
        for c in range(st[S_CMIN], st[S_CMAX] + 1):
            cid = top[r * W + c]
            if 0 <= cid < MONTH_CELL0:
                vis[cid // FACE_CELLS] += 1


@jit
def buries_a_card(st, top, o, vis, hit):
    """Would placement ``o`` cover every visible cell of some laid Weather Card (``vis`` from
    visible_per_card; ``hit`` scratch of N_WEATHER_FACES)?"""
    for c in range(N_WEATHER_FACES):
        hit[c] = 0
    rot = opt_rot(o)
    ar = opt_row(o)
    ac = opt_col(o)
    for k in range(FACE_CELLS):
        cid = top[(ar + ROT_DR[rot, k]) * W + ac + ROT_DC[rot, k]]
        if 0 <= cid < MONTH_CELL0:
            hit[cid // FACE_CELLS] += 1
    for c in range(N_WEATHER_FACES):
        if hit[c] > 0 and hit[c] == vis[c]:
            return True
    return False


@jit
def forbidden_bits(st, top, o, mask, vis, hit):
    """The bits of ``mask`` that forbid placement ``o`` (``vis`` filled when ``mask`` has
    no-full-cover)."""
    m = 0
    if mask & (1 << X_NO_ROTATION) and opt_rot(o) != 0:
        m |= 1 << X_NO_ROTATION
    if mask & (1 << X_NO_FULL_COVER) and buries_a_card(st, top, o, vis, hit):
        m |= 1 << X_NO_FULL_COVER
    return m


@jit(_nrt=True)    # allocates: called from _play_game, compiled without counting
def restrict_placements(st, top, opts, n, forbid):
    """Drop the placements ``forbid`` forbids, order kept; returns (count, yielded). When every
    placement is forbidden the restriction yields and ``opts`` stays whole."""
    vis = np.zeros(N_WEATHER_FACES, dtype=np.int64)
    hit = np.zeros(N_WEATHER_FACES, dtype=np.int64)
    if forbid & (1 << X_NO_FULL_COVER):
        visible_per_card(st, top, vis)
    k = 0
    for i in range(n):
        if forbidden_bits(st, top, opts[i], forbid, vis, hit) == 0:
            k += 1
    if k == 0:
        return n, 1
    k = 0
    for i in range(n):
        o = opts[i]
        if forbidden_bits(st, top, o, forbid, vis, hit) == 0:
            opts[k] = o
            k += 1
    return k, 0


@jit
def seat_placements(params, st, top, tm, opts, cand, forbid):
    """legal_placements cut by the seat's restrictions: (count, yielded)."""
    n = legal_placements(params, st, tm, opts, cand)
    if forbid == 0 or n == 0:
        return n, 0
    return restrict_placements(st, top, opts, n, forbid)


@jit(_nrt=True)    # allocates: called from _play_game, compiled without counting
def took_watched(st, top, o, watch):
    """Is placement ``o`` (not yet applied) in the watched set ``watch``?"""
    vis = np.zeros(N_WEATHER_FACES, dtype=np.int64)
    hit = np.zeros(N_WEATHER_FACES, dtype=np.int64)
    if watch & (1 << X_NO_FULL_COVER):
        visible_per_card(st, top, vis)
    return forbidden_bits(st, top, o, watch, vis, hit) != 0


# ================================================================= policies
# progress_key fields (bit offsets); each lower field is < 2**12
KEY_FIELD = (1 << 12) - 1
KEY_PIECES, KEY_PATTERN, KEY_COVERED, KEY_WON = 12, 24, 25, 30

@jit
def progress_key(st, top, tm, pat, rows, work, ok, complete):
    """Greedy's view of a map: (all four requirements met, other labels covered, pattern
    present, fewest pieces, scoring measure), packed into one int, larger is better."""
    fails, pieces = end_checks_pieces(st, top, tm, pat, rows, work, ok)
    won = 1 if (fails == 0 and complete) else 0
    covered = N_FOREIGN - st[S_FOREIGN]
    m = measure(st, tm, rows, work)
    return (won << KEY_WON) | (covered << KEY_COVERED) | (ok[REQ_PATTERN] << KEY_PATTERN) \
        | ((KEY_FIELD - min(pieces, KEY_FIELD)) << KEY_PIECES) | min(m, KEY_FIELD)


@jit
def wins_now(params, st, top, tm, pat, o, undo, rows, work, ok, known_connected=False):
    """Would placement ``o`` end the game with a winning map?"""
    if labels_under(st, top, o) != st[S_FOREIGN]:
        return False
    apply_placement(params, st, top, tm, o, undo)
    won = finished(st) and map_wins(st, top, tm, pat, rows, work, known_connected)
    undo_placement(params, st, top, tm, o, undo)
    return won


@jit
def winning_options(params, st, top, tm, pat, opts, n, wins, undo, rows, work, ok):
    """The options (in order) that end the game on a winning map; only the last card can."""
    if cards_left(st) != 1:
        return 0
    occupied_rows(tm, rows)
    connected = components(rows, work[0], work[1], work[3]) == 1
    k = 0
    for i in range(n):
        if wins_now(params, st, top, tm, pat, opts[i], undo, rows, work, ok, connected):
            wins[k] = opts[i]
            k += 1
    return k


@jit
def choose_random(params, st, top, tm, pat, opts, n, wins, keys, ctrs, undo, rows, work, ok):
    """Uniform over the legal placements: one below(n) on the seat stream; with take_win, one
    below(#winning) over the winning ones instead when the last card can win."""
    if params[R_TAKE_WIN] == 1:
        k = winning_options(params, st, top, tm, pat, opts, n, wins, undo, rows, work, ok)
        if k > 0:
            st[S_TOOK_WIN] += 1
            return wins[rng.below(keys, ctrs, 0, k)]
    return opts[rng.below(keys, ctrs, 0, n)]


@jit
def choose_greedy(params, st, top, tm, pat, opts, n, wins, keys, ctrs, undo, rows, work, ok,
                  draw_ties):
    """Best immediate progress_key; ties: one below(#tied) on the seat stream (or the first)."""
    if params[R_TAKE_WIN] == 1:
        k = winning_options(params, st, top, tm, pat, opts, n, wins, undo, rows, work, ok)
        if k > 0:
            st[S_TOOK_WIN] += 1
            n = k
            for i in range(k):
                opts[i] = wins[i]
    best = -1
    nb = 0
    for i in range(n):
        o = opts[i]
        apply_placement(params, st, top, tm, o, undo)
        key = progress_key(st, top, tm, pat, rows, work, ok, finished(st))
        undo_placement(params, st, top, tm, o, undo)
        if key > best:
            best = key
            nb = 0
        if key == best:
            wins[nb] = o
            nb += 1
    if draw_ties:
        return wins[rng.below(keys, ctrs, 0, nb)]
    return wins[0]


@jit(_nrt=True)    # allocates: called from _play_game, compiled without counting
def solve(params, st, top, tm, pat, budget, plan, info, rows, work, ok, forbid=0):
    """Depth-first search over the whole game (the solver knows the shuffled deck).

    The first line is greedy's (no tie draws; its option evaluations count as nodes). Then
    children are tried most-labels-covered first (ties in option order); a child is cut when
    the labels still visible after it exceed 6 per card left. Every placement tried counts one
    node; the search stops at ``budget`` nodes. Leaves are ranked by progress_key, so the best
    winning map (highest score) beats any failing one. plan[0..info[I_PLAN_LEN]) = the best line found;
    info = [nodes, found a win, search complete, plan length, best key]. A restricted seat's
    ``forbid`` cuts the options at every depth."""
    opts = np.empty((SOLVER_DEPTH, MAX_OPTIONS), dtype=np.int64)
    cnt = np.zeros(SOLVER_DEPTH, dtype=np.int64)
    pos = np.zeros(SOLVER_DEPTH, dtype=np.int64)
    path = np.zeros(SOLVER_DEPTH, dtype=np.int64)
    undos = np.empty((SOLVER_DEPTH, FACE_CELLS + ST_LEN), dtype=np.int64)
    cand = np.zeros(H, dtype=np.int64)
    buf = np.empty(MAX_OPTIONS, dtype=np.int64)
    bucket = np.zeros(FACE_CELLS + 2, dtype=np.int64)
    # First line: greedy's (ties to the first option), so the solver never ends below it.
    nodes = 0
    st0 = st.copy()
    gwins = np.empty(MAX_OPTIONS, dtype=np.int64)
    keys, ctrs = rng.new_streams(1)                # greedy without tie draws uses no stream
    d = 0
    while not finished(st):
        n, _ = seat_placements(params, st, top, tm, buf, cand, forbid)
        if n == 0:
            if params[R_STUCK] != STUCK_DISCARD:
                break
            o = DISCARD
        else:
            o = choose_greedy(params, st, top, tm, pat, buf, n, gwins, keys, ctrs, undos[d],
                              rows, work, ok, False)
            nodes += n
        apply_placement(params, st, top, tm, o, undos[d])
        path[d] = o
        d += 1
    best = progress_key(st, top, tm, pat, rows, work, ok, finished(st))
    for i in range(d):
        plan[i] = path[i]
    info[I_PLAN_LEN] = d
    while d > 0:
        d -= 1
        undo_placement(params, st, top, tm, path[d], undos[d])
    for i in range(ST_LEN):
        st[i] = st0[i]
    # Then depth-first search for a better line.
    cnt[0] = solver_children(params, st, top, tm, opts[0], buf, cand, bucket, forbid)
    pos[0] = 0
    complete = True
    while d >= 0:
        if pos[d] < cnt[d]:
            if nodes >= budget:
                complete = False
                pos[d] = cnt[d]
                continue
            o = opts[d, pos[d]]
            pos[d] += 1
            if o != DISCARD:
                left_after = cards_left(st) - 1
                if st[S_FOREIGN] - labels_under(st, top, o) > FACE_CELLS * left_after:
                    continue
            apply_placement(params, st, top, tm, o, undos[d])
            nodes += 1
            path[d] = o
            leaf = finished(st)
            if not leaf:
                n = solver_children(params, st, top, tm, opts[d + 1], buf, cand, bucket, forbid)
                if n == 0:
                    leaf = True
                else:
                    d += 1
                    cnt[d] = n
                    pos[d] = 0
                    continue
            key = progress_key(st, top, tm, pat, rows, work, ok, finished(st))
            if key > best:
                best = key
                for i in range(d + 1):
                    plan[i] = path[i]
                info[I_PLAN_LEN] = d + 1
            undo_placement(params, st, top, tm, o, undos[d])
        else:
            d -= 1
            if d >= 0:
                undo_placement(params, st, top, tm, path[d], undos[d])
    info[I_NODES] = nodes
    info[I_FOUND] = 1 if (best >= 0 and best >> KEY_WON == 1) else 0
    info[I_COMPLETE] = 1 if complete else 0
    info[I_BEST] = best


@jit
def solver_children(params, st, top, tm, out, buf, cand, bucket, forbid=0):
    """Legal options (cut by ``forbid``) ordered most-labels-covered first (stable); DISCARD when
    stuck allows it; 0 when stuck fails the game."""
    n, _ = seat_placements(params, st, top, tm, buf, cand, forbid)
    if n == 0:
        if params[R_STUCK] == STUCK_DISCARD and cards_left(st) > 0:
            out[0] = DISCARD
            return 1
        return 0
    for i in range(FACE_CELLS + 2):
        bucket[i] = 0
    for i in range(n):
        bucket[FACE_CELLS - labels_under(st, top, buf[i]) + 1] += 1
    for i in range(1, FACE_CELLS + 2):
        bucket[i] += bucket[i - 1]
    for i in range(n):
        b = FACE_CELLS - labels_under(st, top, buf[i])
        out[bucket[b]] = buf[i]
        bucket[b] += 1
    return n


# ================================================================= search player (mc)
# What an mc seat may use: the whole map (every laid cell, so every placed card, its face,
# rotation and position), the date setup (Month, Date, Week and Day faces), its hand of two
# (their faces up: they are never flipped), the cards already drawn, and the top card of the
# deck: the rulebook sets the shuffled Weather Cards down as a face-up deck and they are
# two-sided, so the top card always shows a face. It knows which cards remain (the six cards
# are known) but not the order of the cards under the top one nor the faces they show.
# A sample re-deals those cards: the remaining card ids in ascending order, shuffled on the
# seat's SEARCH stream, each flipped by a fresh coin (flips = coin; face a with flips = none).
MC_WIN_VALUE = 1000   # a win outranks any score (at most 10 points x 48 visible cells)


@jit
def judge(st, top, tm, pat, rows, work, ok, failed_stuck):
    """(win, measure, score) of the map as it stands; end_checks fills ok[]."""
    fails = end_checks(st, top, tm, pat, rows, work, ok)
    win = 1 if (fails == 0 and not failed_stuck) else 0
    m = measure(st, tm, rows, work)
    score = m * st[S_POINTS] if win == 1 else 0
    return win, m, score


@jit_borrowing   # allocates nothing; its caller (mc_choose) owns every array
def mc_determinize(params, st, keys, ctrs, deck, ids):
    """deck[0..6) = the deck with everything under its face-up top card re-dealt: the cards
    there, taken in ascending card order (so the true order is never read), shuffled on stream
    slot 0 of ``keys`` and flipped by a coin each (flips = coin)."""
    for i in range(N_WEATHER):
        deck[i] = st[S_DECK0 + i]
    first = st[S_NEXT] + 1
    if first >= N_WEATHER:
        return
    mask = 0
    for i in range(first, N_WEATHER):
        mask |= 1 << (st[S_DECK0 + i] // 2)
    k = 0
    for c in range(N_WEATHER):
        if (mask >> c) & 1:
            ids[k] = c
            k += 1
    rng.shuffle(ids, k, keys, ctrs, 0)
    for i in range(k):
        face = 0
        if params[R_FLIPS] == FLIPS_COIN:
            face = rng.below(keys, ctrs, 0, 2)
        deck[first + i] = ids[i] * 2 + face


@jit_borrowing   # allocates nothing; its caller (mc_choose) owns every array
def mc_rollout(params, st, top, tm, pat, pol, keys, ctrs, opts, wins, cand, undo, rows, work,
               ok, mcstat, forbid=0):
    """Play this state (the caller's copy) to the end of the game with ``pol`` (random or
    greedy, drawing on stream slot 0 of ``keys``) among the placements ``forbid`` leaves; the
    stuck switch as in play_one. Returns the value MC_WIN_VALUE * win + score; mcstat[1] +=
    placements made."""
    failed_stuck = False
    while not finished(st):
        n, _ = seat_placements(params, st, top, tm, opts, cand, forbid)
        if n == 0:
            if params[R_STUCK] != STUCK_DISCARD:
                failed_stuck = True
                break
            apply_placement(params, st, top, tm, DISCARD, undo)
            continue
        if pol == P_RANDOM:
            o = choose_random(params, st, top, tm, pat, opts, n, wins, keys, ctrs, undo, rows,
                              work, ok)
        else:
            o = choose_greedy(params, st, top, tm, pat, opts, n, wins, keys, ctrs, undo, rows,
                              work, ok, True)
        apply_placement(params, st, top, tm, o, undo)
        mcstat[1] += 1
    win, m, score = judge(st, top, tm, pat, rows, work, ok, failed_stuck)
    return MC_WIN_VALUE * win + score


@jit_borrowing   # allocates nothing; mc_choose owns every array
def _mc_samples(params, st, top, tm, pat, opts, n, samples, pol, keys, ctrs, mcstat, forbid, total,
                deck, ids, st2, top2, tm2, ropts, wins, cand, undo, rows, work, ok):
    """``mc_choose``'s samples: each option's rollout values added to ``total``. Its own function,
    compiled without reference counting (as forecasts-cubes' _mc_samples)."""
    for _ in range(samples):
        mc_determinize(params, st, keys, ctrs, deck, ids)
        for i in range(n):
            for j in range(ST_LEN):        # (slice copies would allocate: no counting here)
                st2[j] = st[j]
            for j in range(H * W):
                top2[j] = top[j]
            for a in range(N_TYPES):
                for b in range(H):
                    tm2[a, b] = tm[a, b]
            for j in range(N_WEATHER):
                st2[S_DECK0 + j] = deck[j]
            apply_placement(params, st2, top2, tm2, opts[i], undo)
            mcstat[1] += 1
            total[i] += mc_rollout(params, st2, top2, tm2, pat, pol, keys, ctrs, ropts, wins,
                                   cand, undo, rows, work, ok, mcstat, forbid)
            mcstat[0] += 1


@jit(_nrt=True)    # allocates: called from _play_game, compiled without counting
def mc_choose(params, st, top, tm, pat, opts, n, budget, pol, keys, ctrs, mcstat, forbid=0):
    """The search player's placement among opts[0..n) (n >= 1; opts may be rewritten).

    With take_win, a last card that can win is restricted to the winning placements (as every
    policy). With two or more options: ``budget`` samples, each one re-deal of the hidden cards
    (mc_determinize) shared by every option (common random numbers); per option a copy of the
    state takes the placement and is played to the end with ``pol``. Best mean value
    (MC_WIN_VALUE * win + score) wins; ties: the earlier option. When the option is the last
    card nothing is hidden and nothing is drawn, so one sample is exact. Draws only on the
    seat's SEARCH stream (slot 0 of ``keys``); reads nothing of the deck below its top card.
    A restricted seat passes only its allowed options and ``forbid``, which rollouts obey."""
    wins = np.empty(MAX_OPTIONS, dtype=np.int64)
    undo = np.empty(FACE_CELLS + ST_LEN, dtype=np.int64)
    rows = np.zeros(H, dtype=np.int64)
    work = np.zeros((N_WORK, WORK_LEN), dtype=np.int64)
    ok = np.zeros(N_REQ, dtype=np.int64)
    if params[R_TAKE_WIN] == 1:
        k = winning_options(params, st, top, tm, pat, opts, n, wins, undo, rows, work, ok)
        if k > 0:
            st[S_TOOK_WIN] += 1
            n = k
            for i in range(k):
                opts[i] = wins[i]
    if n == 1:
        return opts[0]
    total = np.zeros(n, dtype=np.int64)
    deck = np.zeros(N_WEATHER, dtype=np.int64)
    ids = np.zeros(N_WEATHER, dtype=np.int64)
    st2 = np.empty(ST_LEN, dtype=np.int64)
    top2 = np.empty(H * W, dtype=np.int64)
    tm2 = np.empty((N_TYPES, H), dtype=np.int64)
    ropts = np.empty(MAX_OPTIONS, dtype=np.int64)
    cand = np.zeros(H, dtype=np.int64)
    samples = 1 if cards_left(st) == 1 else budget
    _mc_samples(params, st, top, tm, pat, opts, n, samples, pol, keys, ctrs, mcstat, forbid, total,
                deck, ids, st2, top2, tm2, ropts, wins, cand, undo, rows, work, ok)
    best = 0
    for i in range(1, n):
        if total[i] > total[best]:
            best = i
    return opts[best]


# ================================================================= one game
@jit
def face_cell(pos, r0, c0):
    """Reading-order index (0..5) of board cell ``pos`` on the face whose top-left is (r0, c0)."""
    return (pos // W - r0) * FACE_COLS + pos % W - c0


@jit
def choose_solver(params, st, top, tm, pat, opts, n, wins, keys, ctrs, undo, rows, work, ok,
                  plan, info, turn):
    """The solver's next option: its plan; past the plan, greedy (ties to the first). With
    take_win, a last placement that does not win is replaced by the best winning one."""
    if turn >= info[I_PLAN_LEN]:
        return choose_greedy(params, st, top, tm, pat, opts, n, wins, keys, ctrs, undo, rows,
                             work, ok, False)
    o = plan[turn]
    if params[R_TAKE_WIN] == 1 and cards_left(st) == 1 and \
            not wins_now(params, st, top, tm, pat, o, undo, rows, work, ok):
        if winning_options(params, st, top, tm, pat, opts, n, wins, undo, rows, work, ok) > 0:
            return choose_greedy(params, st, top, tm, pat, opts, n, wins, keys, ctrs, undo,
                                 rows, work, ok, False)
    return o


@jit
def record_setup(ev, ev_n, params, st):
    layout.record_event(ev, ev_n, E_SETUP, 0, params[R_MONTH], params[R_DAY],
                        params[R_WEEKDAY], st[S_LABEL], st[S_MONTH_FACE], st[S_DATE_FACE],
                        st[S_WEEK_FACE], st[S_DAY_FACE])
    layout.record_event(ev, ev_n, E_LAYOUT, 0, st[S_PAT_SYM], st[S_SCORE_KIND],
                        st[S_SCORE_SYM], st[S_POINTS], st[S_DATE_R] - st[S_MONTH_R],
                        st[S_DATE_C] - st[S_MONTH_C],
                        face_cell(st[S_MONTH_POS], st[S_MONTH_R], st[S_MONTH_C]),
                        face_cell(st[S_DATE_POS], st[S_DATE_R], st[S_DATE_C]))
    layout.record_event(ev, ev_n, E_DEAL, 0, st[S_DECK0], st[S_DECK0 + 1], st[S_DECK0 + 2],
                        st[S_DECK0 + 3], st[S_DECK0 + 4], st[S_DECK0 + 5])


@jit
def write_row(out, row, st, tm, rows, ok, m, score, win, info, mcstat):
    """The result record of one game (every column; see kernels/layout.py and COUNTERS)."""
    S = N_SEATS
    out[row, 0] = score
    out[row, layout.col_place(S, 0)] = 1
    out[row, layout.col_winners(S)] = win
    out[row, layout.col_length(S)] = st[S_PLACED]
    out[row, layout.col_flags(S)] = 0
    out[row, layout.col_decisions(S)] = st[S_DECISIONS]
    for i in range(N_REQ):
        out[row, layout.col_counter(S, C_FAIL0 + i)] = 1 - ok[i]
    out[row, layout.col_counter(S, C_STUCK)] = st[S_STUCK]
    out[row, layout.col_counter(S, C_PLACEMENTS)] = st[S_PLACED]
    out[row, layout.col_counter(S, C_DISCARDS)] = st[S_DISCARDS]
    out[row, layout.col_counter(S, C_CELLS_COVERED)] = st[S_COVERED]
    out[row, layout.col_counter(S, C_LABELS_COVERED)] = N_FOREIGN - st[S_FOREIGN]
    occupied_rows(tm, rows)
    cells = 0
    for r in range(H):
        cells += popcount(rows[r])
    out[row, layout.col_counter(S, C_MAP_CELLS)] = cells
    out[row, layout.col_counter(S, C_OPTIONS)] = st[S_OPTIONS]
    out[row, layout.col_counter(S, C_TOOK_WIN)] = st[S_TOOK_WIN]
    out[row, layout.col_counter(S, C_SOLVER_NODES)] = info[I_NODES]
    out[row, layout.col_counter(S, C_SOLVER_FOUND)] = info[I_FOUND]
    out[row, layout.col_counter(S, C_SOLVER_COMPLETE)] = info[I_COMPLETE]
    out[row, layout.col_counter(S, C_MEASURE)] = m
    out[row, layout.col_counter(S, C_MC_ROLLOUTS)] = mcstat[0]
    out[row, layout.col_counter(S, C_MC_PLAYS)] = mcstat[1]


@jit(inline='always')
def play_one(params, seats, seed, g, out, row, ev, ev_n, search):
    """Play game ``g`` for seat row 0 into ``out[row]``; record events when ``ev`` has rows.

    ``search`` is None unless the seat is ``mc``: Numba then prunes the search player's branch at
    compile time, so the other policies' build compiles without it.
    """
    st = np.zeros(ST_LEN, dtype=np.int64)
    top = np.empty(H * W, dtype=np.int64)
    tm = np.zeros((N_TYPES, H), dtype=np.int64)
    pat = np.zeros((N_SYMMETRIES, 2 * MAX_PATTERN), dtype=np.int64)
    opts = np.empty(MAX_OPTIONS, dtype=np.int64)
    wins = np.empty(MAX_OPTIONS, dtype=np.int64)
    cand = np.zeros(H, dtype=np.int64)
    undo = np.empty(FACE_CELLS + ST_LEN, dtype=np.int64)
    rows = np.zeros(H, dtype=np.int64)
    work = np.zeros((N_WORK, WORK_LEN), dtype=np.int64)
    ok = np.zeros(N_REQ, dtype=np.int64)
    plan = np.zeros(SOLVER_DEPTH, dtype=np.int64)
    info = np.zeros(INFO_LEN, dtype=np.int64)
    keys, ctrs = rng.new_streams(1)
    skeys, sctrs = rng.new_streams(1)          # the search player's own stream
    mcstat = np.zeros(2, dtype=np.int64)       # rollouts, placements simulated
    _play_game(params, seats, seed, g, out, row, ev, ev_n, search, st, top, tm, pat, opts, wins,
               cand, undo, rows, work, ok, plan, info, keys, ctrs, skeys, sctrs, mcstat)


@jit_borrowing   # allocates nothing; play_one owns every array
def _play_game(params, seats, seed, g, out, row, ev, ev_n, search, st, top, tm, pat, opts, wins,
               cand, undo, rows, work, ok, plan, info, keys, ctrs, skeys, sctrs, mcstat):
    """play_one's game in its working arrays. Its own function, compiled without reference
    counting: in play_one (which allocates, so counts references) every call of a placement's
    helpers counted its array arguments up and down with atomic instructions."""
    for j in range(out.shape[1]):
        out[row, j] = 0
    new_game(params, seed, g, st, top, tm, pat)
    keys[0] = rng.stream_key(seed, g, rng.SEAT, 0)
    policy = seats[0, 0]
    forbid = seats[0, SEAT_FORBID] if seats.shape[1] > SEAT_WATCH else 0
    watch = seats[0, SEAT_WATCH] if seats.shape[1] > SEAT_WATCH else 0
    n_forbidden = 0
    n_yielded = 0
    if search is not None and policy == P_MC:
        skeys[0] = rng.stream_key(seed, g, rng.SEARCH, 0)
    tracing = ev.shape[0] > 0
    if tracing:
        record_setup(ev, ev_n, params, st)
    if search is not None and policy == P_SOLVER:   # the solver lives in the search build
        budget = seats[0, 1] if seats[0, 1] > 0 else params[R_SOLVER_NODES]
        solve(params, st, top, tm, pat, budget, plan, info, rows, work, ok, forbid)
        if tracing:
            layout.record_event(ev, ev_n, E_SOLVER, 0, info[I_NODES], info[I_FOUND],
                                info[I_COMPLETE], info[I_BEST] & KEY_FIELD)
    turn = 0                      # choices made (placements and forced discards): plan index
    failed_stuck = False
    while not finished(st):
        n = legal_placements(params, st, tm, opts, cand)
        if forbid != 0 and n > 0:
            n, yielded = restrict_placements(st, top, opts, n, forbid)
            n_yielded += yielded
        if n == 0:                # neither hand card can be placed: the stuck switch
            st[S_STUCK] += 1
            discard = params[R_STUCK] == STUCK_DISCARD
            if tracing:
                gone = -1
                if discard:
                    gone = st[S_HAND0] if st[S_HAND0] >= 0 else st[S_HAND1]
                layout.record_event(ev, ev_n, E_STUCK, 0, st[S_HAND0], st[S_HAND1], gone)
            if not discard:
                failed_stuck = True
                break
            apply_placement(params, st, top, tm, DISCARD, undo)
            turn += 1
            continue
        st[S_OPTIONS] += n
        st[S_DECISIONS] += 1
        if policy == P_RANDOM:
            o = choose_random(params, st, top, tm, pat, opts, n, wins, keys, ctrs, undo, rows,
                              work, ok)
        elif policy == P_GREEDY:
            o = choose_greedy(params, st, top, tm, pat, opts, n, wins, keys, ctrs, undo, rows,
                              work, ok, True)
        elif search is not None and policy == P_SOLVER:
            o = choose_solver(params, st, top, tm, pat, opts, n, wins, keys, ctrs, undo, rows,
                              work, ok, plan, info, turn)
        elif search is not None and policy == P_MC:
            o = mc_choose(params, st, top, tm, pat, opts, n, seats[0, 1], seats[0, 2], skeys,
                          sctrs, mcstat, forbid)
        else:                     # not reached: solver and mc play only in the search build
            o = opts[0]
        turn += 1
        if watch != 0 and took_watched(st, top, o, watch):
            n_forbidden += 1
        code = st[S_HAND0 + opt_slot(o)]
        lab = labels_under(st, top, o)
        cov = apply_placement(params, st, top, tm, o, undo)
        if tracing:
            layout.record_event(ev, ev_n, E_PLACE, 0, code, opt_rot(o),
                                opt_row(o) - st[S_MONTH_R], opt_col(o) - st[S_MONTH_C], cov, lab,
                                n, opt_slot(o))
    win, m, score = judge(st, top, tm, pat, rows, work, ok, failed_stuck)
    if tracing:
        first_failed = -1
        for i in range(N_REQ - 1, -1, -1):
            if ok[i] == 0:
                first_failed = i
        layout.record_event(ev, ev_n, E_CHECK, 0, ok[REQ_DATE], ok[REQ_MONTH], ok[REQ_PATTERN],
                            ok[REQ_CONNECTED], first_failed, st[S_FOREIGN])
        layout.record_event(ev, ev_n, E_SCORE, 0, m, st[S_POINTS], score, win)
        layout.record_event(ev, ev_n, E_RESULT, 0, win, score, st[S_PLACED])
    write_row(out, row, st, tm, rows, ok, m, score, win, info, mcstat)
    out[row, layout.col_counter(N_SEATS, C_FORBIDDEN)] = n_forbidden
    out[row, layout.col_counter(N_SEATS, C_YIELDED)] = n_yielded


@pjit
def _play_games(params, seats, seed, first_game, out, search):
    ev = layout.no_events()[0]     # not np.zeros here: it would be a parallel region
    for i in prange(out.shape[0]):
        ev_n = np.zeros(1, dtype=np.int64)
        play_one(params, seats, seed, first_game + i, out, np.uint64(i), ev, ev_n, search)


@jit
def _play_games_serial(params, seats, seed, first_game, out, search):
    ev = np.zeros((0, layout.EVENT_WIDTH), dtype=np.int64)
    ev_n = np.zeros(1, dtype=np.int64)
    for i in range(out.shape[0]):
        play_one(params, seats, seed, first_game + i, out, np.uint64(i), ev, ev_n, search)


@jit
def _trace_game(params, seats, seed, game_index, out, ev, ev_n, search):
    play_one(params, seats, seed, game_index, out, np.uint64(0), ev, ev_n, search)


def play_games(params, seats, seed, first_game, out):
    """Play games ``first_game ..`` into the rows of ``out``, in parallel (kernels/builds.py).

    ``params`` holds the rule values and the card tail (``kernel_params``)."""
    builds.play(_play_games, _play_games_serial, kernel_params(params),
                np.asarray(seats, dtype=np.int64), np.int64(seed), np.int64(first_game), out,
                builds.search_arg(seats, SEARCH_CODES))


def play_games_serial(params, seats, seed, first_game, out):
    """``play_games`` without prange (tests: serial == parallel)."""
    _play_games_serial(kernel_params(params), np.asarray(seats, dtype=np.int64), np.int64(seed),
                       np.int64(first_game), out, builds.search_arg(seats, SEARCH_CODES))


def trace_game(params, seats, seed, game_index, out, ev, ev_n):
    """Play game ``game_index`` into ``out[0]`` recording events into ``ev`` (count in ev_n)."""
    _trace_game(kernel_params(params), np.asarray(seats, dtype=np.int64), np.int64(seed),
                np.int64(game_index), out, ev, ev_n, builds.search_arg(seats, SEARCH_CODES))
