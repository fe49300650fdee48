"""daily-weather: hand-built maps for every rule, the solver on hand-built deals, invariants,
chunking, trace == run and game-by-game agreement with the plain-Python reference."""
from __future__ import annotations

import copy

import numpy as np
import pytest

from kernels import daily_weather as dw
from kernels import layout
from simcli.config import cards, schema
from simcli.config import jobs as cfg
from tests.reference import daily_weather_ref as ref

S = 1
WIDTH = layout.out_width(S, dw.N_COUNTERS)
SEATS = {name: np.array([[code, 0, 0, 0]], dtype=np.int64) for name, code in dw.POLICIES.items()}
WEATHER_IDS = dw.MONTH_CELL0

# picture letters: icon initial, lower case = plain, upper case = striped
LETTER = {"s": "sun/plain", "S": "sun/striped", "c": "cloud/plain", "C": "cloud/striped",
          "r": "rain/plain", "R": "rain/striped", "n": "snow/plain", "N": "snow/striped"}


def col(i):
    return layout.col_counter(S, i)


# ---------------------------------------------------------------- hand-built card data
def make_cards(weather=None, labels="sun/plain", month_b=("JUL", "AUG", "SEP", "OCT", "NOV", "DEC"),
               d2b=("19", "20", "21", "22", "23", "24"), diagram=(0, 3), pattern=("#.", "##"),
               symbol="snow", kind="groups", score_symbol="arrow", points=1):
    """A complete card data table (as parsed TOML) with every label cell of type ``labels``."""
    weather = weather or [["sun/plain"] * 6] * 12
    data = {"standin": False, "label": "test cards",
            "weather": [{"name": f"W{c + 1}", "a": list(weather[2 * c]), "b": list(weather[2 * c + 1])}
                        for c in range(6)],
            "month": {"name": "M", "a": [f"{m} {labels}" for m in dw.MONTHS[:6]],
                      "b": [f"{m} {labels}" for m in month_b]}}
    dates = [str(d) for d in range(1, 19)] + list(d2b) + [str(d) for d in range(25, 32)] + \
        list(dw.HOLIDAYS[1:])
    data["date"] = [{"name": f"D{c + 1}", "a": [f"{x} {labels}" for x in dates[12 * c:12 * c + 6]],
                     "b": [f"{x} {labels}" for x in dates[12 * c + 6:12 * c + 12]]} for c in range(3)]
    ranges = [(1, 7), (8, 14), (15, 21), (22, 31)]
    data["week"] = [{"card": "K", "face": "ab"[i % 2], "dates": list(r), "date_card_at": list(diagram),
                     "symbols": [symbol, "sun", "cloud"]} for i, r in enumerate(ranges)]
    data["day"] = []
    for season in dw.SEASONS:
        for wds in (["mon", "tue"], ["wed", "thu", "fri"], ["sat", "sun"]):
            face = {"card": "Y", "face": "a", "season": season, "weekdays": wds,
                    "pattern": list(pattern), "score": {"kind": kind, "symbol": score_symbol,
                                                         "points": points}}
            if "sat" in wds:
                face["arrows"] = {"sat": 0, "sun": 0}
            else:
                face["arrow"] = 0
            data["day"].append(face)
    return data


def params_for(data, **rules):
    p = dw.default_params()
    for name, value in rules.items():
        rule = next(r for r in dw.RULES if r.name == name)
        p[rule.index] = rule.encode(value)
    return np.concatenate((p, cards.parse(data).tail))


class Board:
    """A game state built by the kernel's own setup, for hand-made positions."""

    def __init__(self, data, hand=None, seed=1, game=0, **rules):
        self.data = data
        self.p = params_for(data, **rules)
        self.st = np.zeros(dw.ST_LEN, dtype=np.int64)
        self.top = np.empty(dw.H * dw.W, dtype=np.int64)
        self.tm = np.zeros((dw.N_TYPES, dw.H), dtype=np.int64)
        self.pat = np.zeros((dw.N_SYMMETRIES, 2 * dw.MAX_PATTERN), dtype=np.int64)
        dw.new_game(self.p, seed, game, self.st, self.top, self.tm, self.pat)
        if hand is not None:
            deck = list(hand) + [c for c in range(12) if c // 2 not in {h // 2 for h in hand}][::2]
            for i, code in enumerate(deck[:6]):
                self.st[dw.S_DECK0 + i] = code
            self.st[dw.S_HAND0], self.st[dw.S_HAND1] = deck[0], deck[1]
        self.r0, self.c0 = int(self.st[dw.S_MONTH_R]), int(self.st[dw.S_MONTH_C])
        self.undo = np.empty(dw.FACE_CELLS + dw.ST_LEN, dtype=np.int64)
        self.rows = np.zeros(dw.H, dtype=np.int64)
        self.work = np.zeros((dw.N_WORK, dw.WORK_LEN), dtype=np.int64)
        self.ok = np.zeros(dw.N_REQ, dtype=np.int64)

    def pos(self, r, c):
        """Board index of map cell (r, c), relative to the Month Card's top-left cell."""
        return (self.r0 + r) * dw.W + self.c0 + c

    def at(self, r, c):
        return int(self.top[self.pos(r, c)])

    def option(self, slot, rot, r, c):
        return ((slot * 4 + rot) * dw.H + self.r0 + r) * dw.W + self.c0 + c

    def legal(self):
        opts = np.empty(dw.MAX_OPTIONS, dtype=np.int64)
        n = dw.legal_placements(self.p, self.st, self.tm, opts, np.zeros(dw.H, dtype=np.int64))
        return sorted((int(o) // (4 * dw.H * dw.W), int(o) // (dw.H * dw.W) % 4,
                       int(o) // dw.W % dw.H - self.r0, int(o) % dw.W - self.c0) for o in opts[:n])

    def place(self, slot, rot, r, c):
        assert (slot, rot, r, c) in self.legal()
        return dw.apply_placement(self.p, self.st, self.top, self.tm, self.option(slot, rot, r, c), self.undo)

    def today(self):
        return [(int(self.st[k]) // dw.W - self.r0, int(self.st[k]) % dw.W - self.c0)
                for k in (dw.S_MONTH_POS, dw.S_DATE_POS)]

    def paint(self, picture, keep=()):
        """Replace the map by a picture (rows of letters, '.' empty); cells listed in ``keep``
        (map positions) keep their label cell."""
        kept = {p: self.at(*p) for p in keep}
        self.top[:] = -1
        self.tm[:] = 0
        ids = {}
        for cid in range(WEATHER_IDS):
            ids.setdefault(int(dw.cell_type(self.p, cid)), cid)
        for i, line in enumerate(picture):
            for j, ch in enumerate(line.split()):
                if ch == ".":
                    continue
                if (i, j) in kept:
                    cid = kept[(i, j)]
                else:
                    icon, bg = LETTER[ch].split("/")
                    cid = ids[dw.ICONS.index(icon) * 2 + dw.BACKGROUNDS.index(bg)]
                dw.set_top(self.p, self.top, self.tm, self.r0 + i, self.c0 + j, cid)
        self.st[dw.S_RMIN] = self.r0 - 3
        self.st[dw.S_RMAX] = self.r0 + len(picture) + 3

    def checks(self):
        dw.end_checks(self.st, self.top, self.tm, self.pat, self.rows, self.work, self.ok)
        return [bool(x) for x in self.ok]

    def measure(self):
        return int(dw.measure(self.st, self.tm, self.rows, self.work))


ALL_TYPES = [LETTER[k] for k in "sScCrRnN"]
MIXED = [ALL_TYPES[(i + j) % 8:] + ALL_TYPES[:(i + j) % 8] for i in range(6) for j in (0, 3)]
MIXED = [row[:6] for row in MIXED]


def pic_cards(**kw):
    """Card data whose Weather Cards show all eight kinds of cell, for painting maps."""
    return make_cards(weather=MIXED, **kw)


# ---------------------------------------------------------------- card data
def test_standin_file_loads_and_says_it_is_a_standin():
    data = cards.shipped()
    assert data.standin is True and "STAND-IN" in data.label
    assert "STAND-IN" in cards.shipped_file().read_text().splitlines()[0]


def test_bad_card_data_names_the_card_and_cell():
    raw = schema.read_toml(cards.shipped_file())
    bad = copy.deepcopy(raw)
    bad["weather"][1]["b"][2] = "sunny/plain"
    with pytest.raises(cards.CardDataError, match="weather card W2 face b cell 3: icon 'sunny'"):
        cards.parse(bad)
    bad = copy.deepcopy(raw)
    bad["date"][0]["a"][0] = "40 sun/plain"
    with pytest.raises(cards.CardDataError, match="date card D1 face a cell 1: label '40'"):
        cards.parse(bad)
    bad = copy.deepcopy(raw)
    bad["month"]["b"][5] = "JAN sun/plain"
    with pytest.raises(cards.CardDataError, match="month card face b cell 6: JAN already on"):
        cards.parse(bad)
    bad = copy.deepcopy(raw)
    bad["day"][0]["arrow"] = 7
    with pytest.raises(cards.CardDataError, match="day card Day 1 face a: arrow for mon"):
        cards.parse(bad)


def test_check_rejects_impossible_dates_and_misplaced_holidays():
    p = dw.default_params()
    dw.check(1, p)
    p[dw.R_MONTH], p[dw.R_DAY] = 2, 30
    with pytest.raises(ValueError, match="not a date"):
        dw.check(1, p)
    p = dw.default_params()
    p[dw.R_HOLIDAY] = dw.HOLIDAYS.index("valentine")
    with pytest.raises(ValueError, match="valentine is FEB 14"):
        dw.check(1, p)
    p[dw.R_MONTH], p[dw.R_DAY], p[dw.R_WEEKDAY] = 11, 26, 3
    p[dw.R_HOLIDAY] = dw.HOLIDAYS.index("thanksgiving")
    dw.check(1, p)
    p[dw.R_WEEKDAY] = 2
    with pytest.raises(ValueError, match="fourth Thursday"):
        dw.check(1, p)


# ---------------------------------------------------------------- setup for a date
def test_setup_finds_todays_faces_december_23():
    # DEC is the 6th month cell of the Month Card's face b; 23 is on Date Card D2 face b
    # (19-24, 5th cell); Week 4/5 covers 22-31; Wednesday in winter is the wed-fri Day face
    b = Board(schema.read_toml(cards.shipped_file()))
    assert b.st[dw.S_MONTH_FACE] == 1 and b.st[dw.S_DATE_FACE] == 3 and b.st[dw.S_WEEK_FACE] == 3
    assert b.st[dw.S_DAY_FACE] == 1                      # Day 1 face b: winter, wed thu fri
    assert b.today() == [(1, 2), (1 + 1, 3 + 1)]         # diagram [1, 3]; 23 at (1, 1) of D2b
    assert dw.SYMBOLS[b.st[dw.S_PAT_SYM]] == "cloud"     # arrow 1 -> Week 4/5 symbols[1]
    assert dw.SCORE_KINDS[b.st[dw.S_SCORE_KIND]] == "groups"


def test_holiday_date_card_and_weekend_arrows():
    raw = schema.read_toml(cards.shipped_file())
    # Saturday FEB 14: Valentine's cell (D3 face b, 2nd cell); winter weekend arrow sat = 2
    b = Board(raw, month=2, day=14, weekday=5, holiday="valentine")
    assert b.st[dw.S_DATE_FACE] == 5 and b.st[dw.S_LABEL] == dw.HOLIDAY_LABEL0 + 1
    assert dw.SYMBOLS[b.st[dw.S_PAT_SYM]] == "snow"      # Week 2 symbols [cloud, plain, snow][2]
    b = Board(raw, month=2, day=15, weekday=6)            # Sunday: arrow sun = 0 on Week 3
    assert dw.SYMBOLS[b.st[dw.S_PAT_SYM]] == "rain"
    b = Board(raw, month=2, day=14, weekday=5, holiday="valentine", use_holiday=False)
    assert b.st[dw.S_LABEL] == 14 and b.st[dw.S_DATE_FACE] == 2


@pytest.mark.parametrize("month,day,meteo,astro", [(12, 1, 0, 3), (12, 21, 0, 0), (3, 1, 1, 0),
                                                   (3, 20, 1, 1), (6, 1, 2, 1), (9, 22, 3, 3),
                                                   (8, 31, 2, 2)])
def test_seasons_switch(month, day, meteo, astro):
    assert dw.season_of(month, day, dw.SEASONS_METEOROLOGICAL) == meteo
    assert dw.season_of(month, day, dw.SEASONS_ASTRONOMICAL) == astro


# ---------------------------------------------------------------- placement rules
def one_match_cards():
    """Labels are all sun/plain; W1a has one sun/plain cell (its first); W2a none."""
    weather = [["sun/plain"] + ["cloud/striped"] * 5, ["rain/striped"] * 6] + \
        [["rain/striped"] * 6] * 10
    return make_cards(weather=weather)


def test_a_placement_must_cover_a_matching_cell_and_never_todays_cells():
    b = Board(one_match_cards(), hand=[0, 2])
    today = b.today()
    labels = [(r, c) for r in range(2) for c in range(6) if (r, c) not in today]
    expected = set()
    for rot in range(4):
        h, w = (2, 3) if rot % 2 == 0 else (3, 2)
        # where the sun/plain cell (face cell 0 = top-left of the unturned card) ends up
        at = {0: (0, 0), 1: (0, 1), 2: (1, 2), 3: (2, 0)}[rot]
        for (r, c) in labels:
            ar, ac = r - at[0], c - at[1]
            cover = {(ar + i, ac + j) for i in range(h) for j in range(w)}
            if not cover & set(today):
                expected.add((0, rot, ar, ac))
    assert set(b.legal()) == expected and len(expected) > 0
    assert all(o[0] == 0 for o in b.legal())             # W2a has nothing to match


def test_rotation_lays_the_turned_card_and_never_flips():
    weather = [[f"{i}/plain" for i in ("sun", "cloud", "rain", "snow", "cloud", "sun")]] + \
        [["rain/striped"] * 6] * 11
    b = Board(make_cards(weather=weather), hand=[0, 2])
    # today's cells of Dec 23 here: DEC at (1, 2), 23 at (1, 3 + 1)
    assert b.today() == [(1, 2), (1, 4)]
    # [[a b c] [d e f]] turned a quarter clockwise is [[d a] [e b] [f c]]: its bottom row
    # (f, c) = (sun, rain) lies on JUL, AUG (sun/plain) and f matches
    b.place(0, 1, -2, 0)
    assert [[b.at(-2 + i, j) for j in range(2)] for i in range(3)] == [[3, 0], [4, 1], [5, 2]]
    assert b.st[dw.S_COVERED] == 2 and b.st[dw.S_HAND0] == b.st[dw.S_DECK0 + 2]
    # never flipped: the only Weather cells on the map are face a's (ids 0..5)
    assert sorted(x for x in b.top if 0 <= x < WEATHER_IDS) == [0, 1, 2, 3, 4, 5]


def test_a_card_may_completely_cover_another_but_not_todays_cells():
    b = Board(make_cards(), hand=[0, 2])                  # every cell is sun/plain
    assert b.place(0, 0, -1, 0) == 3                      # over JUL AUG SEP
    covered = b.place(1, 0, -1, 0)                        # exactly on top: all six covered
    assert covered == 6 and all(b.at(-1 + i, j) == 2 * 6 + 3 * i + j for i in range(2) for j in range(3))
    for o in b.legal():
        h, w = (2, 3) if o[1] % 2 == 0 else (3, 2)
        assert not any(o[2] <= r < o[2] + h and o[3] <= c < o[3] + w for r, c in b.today())
    legal = set(b.legal())
    assert (0, 0, 0, 2) not in legal and (0, 0, 1, -1) in legal  # over DEC / beside it


def test_the_grid_is_unbounded_in_practice():
    # six cards each pushed two cells further up never reach the board's edge
    b = Board(make_cards(), hand=[0, 2])
    for k in range(6):
        slot = 0 if b.st[dw.S_HAND0] >= 0 else 1
        highest = min(o[2] for o in b.legal() if o[0] == slot and o[1] == 1 and o[3] == 0)
        assert highest == -2 * (k + 1)                    # a 3-tall card reaches 2 rows higher
        b.place(slot, 1, highest, 0)
        assert b.at(highest, 0) >= 0
    assert b.st[dw.S_RMIN] == b.r0 - 12 >= 0 and dw.cards_left(b.st) == 0


# ---------------------------------------------------------------- end requirements
DEC23 = ("n s n s s n",
         "s s M s D s",
         "n n s n s s",
         "n s s s n n")


def test_december_23_example_scores_six_by_groups():
    """Rulebook Scoring Example: DEC and 23 the only labels, the pattern present, connected,
    and 6 groups of the scoring symbol (counted by hand: (0,0); (0,2); (0,5); the L of
    (2,0), (2,1), (3,0); (2,3); (3,4)-(3,5))."""
    b = Board(pic_cards(month_b=("JUL", "AUG", "SEP", "OCT", "NOV", "DEC"), pattern=("#.", "##"),
                         symbol="snow", kind="groups"))
    assert b.today() == [(1, 2), (1, 4)]
    b.paint([line.replace("M", "s").replace("D", "s") for line in DEC23], keep=b.today())
    assert b.checks() == [True, True, True, True]
    assert b.measure() == 6


def test_other_label_cells_visible_fail_the_date_and_month_requirements():
    b = Board(pic_cards())
    assert b.checks()[:2] == [False, False]              # nothing covered yet
    b.paint([line.replace("M", "s").replace("D", "s") for line in DEC23], keep=b.today() + [(0, 4)])
    assert b.checks() == [False, True, True, True]       # (0, 4) is a date cell
    b = Board(pic_cards())
    b.paint([line.replace("M", "s").replace("D", "s") for line in DEC23], keep=b.today() + [(1, 0)])
    assert b.checks() == [True, False, True, True]


@pytest.mark.parametrize("shape", [
    ("n n", "n ."), ("n n", ". n"), ("n .", "n n"), (". n", "n n")])
def test_pattern_matches_under_rotation(shape):
    b = Board(pic_cards(pattern=("#.", "##")))
    b.paint(["s " * 3 + line for line in shape])
    assert b.checks()[2]


@pytest.mark.parametrize("shape", [
    ("n n n", "n . ."), ("n n n", ". . n"), ("n . .", "n n n"), (". . n", "n n n"),
    ("n n", "n .", "n ."), ("n n", ". n", ". n"), ("n .", "n .", "n n"), (". n", ". n", "n n")])
def test_pattern_matches_under_reflection_and_rotation(shape):
    b = Board(pic_cards(pattern=("#..", "###")))        # the L tetromino: 8 distinct images
    b.paint(shape)
    assert b.checks()[2]


@pytest.mark.parametrize("shape,present", [
    (("n n n n",), False), (("n n", "n n"), False), (("n n n", ". n ."), False),
    (("n n n", "s . ."), False), (("n n N",), False),
    (("n . n", "n n n"), True),                          # a U holds an L: extra cells are fine
    (("n n N", "n . ."), True)])                         # N = snow on stripes: still snow
def test_pattern_present_or_absent(shape, present):
    b = Board(pic_cards(pattern=("#..", "###")))
    b.paint(shape)
    assert b.checks()[2] == present


def test_pattern_cells_may_match_by_background():
    b = Board(pic_cards(pattern=("###",), symbol="striped"))
    b.paint(["S C R"])
    assert b.checks()[2]
    b.paint(["S c R"])
    assert not b.checks()[2]


def test_connected_means_edge_contact():
    b = Board(pic_cards())
    b.paint(["s s .", ". . s"])                            # diagonal contact only
    assert not b.checks()[3]
    b.paint(["s s .", ". s s"])
    assert b.checks()[3]


# ---------------------------------------------------------------- scoring terms
@pytest.mark.parametrize("kind,picture,expected", [
    ("row", ["n n . n n n", "n n n n . ."], 4),            # a gap ends a line; best line scores
    ("row", ["n n s n n n"], 3),
    ("column", ["n s", "n n", "s n", "n n", "n s"], 3),
    ("diagonal", ["n . . .", ". n . .", ". . n .", ". . . s"], 3),
    ("diagonal", [". . . n", ". . n .", ". n . .", "n . . ."], 4),
    ("diagonal", ["n . n", ". s .", "n . n"], 1),
    ("groups", ["n s n", "s n s", "n s n"], 5),
    ("largest_group", ["n n s", "s n s", "n s n"], 3),
    ("border", ["n n n", "n n n", "n n n"], 8),            # the centre touches cells on 4 sides
    ("border", ["s s s s", "s n n s", "s n n s", "s s s s"], 0),
    ("border", ["n n n .", "n n n n", "n n n n"], 9),      # only (1,1), (1,2) are inside
])
def test_scoring_terms(kind, picture, expected):
    b = Board(pic_cards(kind=kind, symbol="snow"))
    b.paint(picture)
    assert b.measure() == expected


def test_scoring_symbol_other_than_the_arrow():
    b = Board(pic_cards(kind="groups", symbol="snow", score_symbol="sun"))
    b.paint(["s n s", "n n n"])
    assert b.measure() == 2


# ---------------------------------------------------------------- whole games on hand-built deals
def play(data, policy, games=1, seed=3, first=0, budget=0, **rules):
    p = params_for(data, **rules)
    seats = SEATS[policy].copy()
    seats[0, 1] = budget
    out = np.zeros((games, WIDTH), dtype=np.int64)
    dw.play_games_serial(p, seats, seed, first, out)
    return out


def solvable_cards():
    # every cell alike; DEC top-left, 23 top-right of the Date Card beside it
    return make_cards(month_b=("DEC", "JUL", "AUG", "SEP", "OCT", "NOV"),
                      d2b=("21", "22", "23", "19", "20", "24"), symbol="sun", kind="border")


def test_solver_finds_a_valid_map_on_solvable_deals():
    # covering the ten other labels takes four cards (by hand: rows 1-2 under each face, and
    # rows -1..0 over columns 1-3 and 2-4), so every shuffle is solvable
    out = play(solvable_cards(), "solver", games=5, budget=2000)
    assert (out[:, 2] == 1).all() and (out[:, col(dw.C_SOLVER_FOUND)] == 1).all()
    assert (out[:, 0] > 0).all()


def test_solver_reports_none_on_an_unsolvable_deal():
    # DEC at (1, 2) and 23 at (1, 4) leave the date cell (1, 3) between them: a card covering
    # it would span two columns of row 1 and so cover a today cell -- never coverable
    out = play(make_cards(), "solver", games=3, budget=3000)
    assert (out[:, 2] == 0).all() and (out[:, col(dw.C_SOLVER_FOUND)] == 0).all()
    assert (out[:, col(dw.C_FAIL0 + dw.REQ_DATE)] == 1).all()
    # nothing matches the labels: stuck at once, the search is complete and finds nothing
    none = make_cards(weather=[["rain/striped"] * 6] * 12)
    out = play(none, "solver", games=2)
    assert (out[:, col(dw.C_SOLVER_COMPLETE)] == 1).all() and (out[:, 2] == 0).all()
    assert (out[:, col(dw.C_STUCK)] == 1).all() and (out[:, col(dw.C_PLACEMENTS)] == 0).all()


def test_stuck_discard_switch_discards_every_card():
    none = make_cards(weather=[["rain/striped"] * 6] * 12)
    out = play(none, "random", games=3, stuck="discard")
    assert (out[:, col(dw.C_DISCARDS)] == 6).all() and (out[:, col(dw.C_STUCK)] == 6).all()
    assert (out[:, 2] == 0).all() and (out[:, layout.col_decisions(S)] == 0).all()


def test_random_takes_the_winning_last_placement():
    # on the solvable cards greedy and solver always win; random with take_win wins more often
    # than without (same deals, same seat streams up to the last placement)
    data = solvable_cards()
    with_win = play(data, "random", games=400, take_win=True)
    without = play(data, "random", games=400, take_win=False)
    assert with_win[:, 2].sum() > without[:, 2].sum()
    assert (with_win[:, col(dw.C_TOOK_WIN)] == with_win[:, 2]).all()
    assert (without[:, col(dw.C_TOOK_WIN)] == 0).all()


# ---------------------------------------------------------------- invariants over random games
DATES = [dict(month=12, day=23, weekday=2), dict(month=2, day=14, weekday=5, holiday="valentine"),
         dict(month=6, day=1, weekday=0), dict(month=9, day=17, weekday=3),
         dict(month=11, day=26, weekday=3, holiday="thanksgiving"),
         dict(month=4, day=5, weekday=6, holiday="birthday", stuck="discard", seasons="astronomical")]


@pytest.mark.parametrize("date", DATES)
def test_invariants_random_games(date):
    raw = schema.read_toml(cards.shipped_file())
    out = play(raw, "random", games=3000, seed=11, **date)
    lo, hi = dw.score_range(1, params_for(raw))
    win = out[:, 2]
    fails = out[:, col(0):col(4)].sum(1)
    placements = out[:, col(dw.C_PLACEMENTS)]
    assert ((out[:, 0] >= lo) & (out[:, 0] <= hi)).all()
    assert ((win == 1) == ((fails == 0) & (placements + out[:, col(dw.C_DISCARDS)] == 6))).all()
    assert (out[win == 0, 0] == 0).all()
    assert (out[:, layout.col_length(S)] == placements).all()
    assert (out[:, layout.col_decisions(S)] == placements).all()
    # cards conserved: each card is placed or discarded, or the game failed stuck before it
    assert (placements + out[:, col(dw.C_DISCARDS)] <= 6).all()
    stuck_fail = out[:, col(dw.C_STUCK)] > out[:, col(dw.C_DISCARDS)]
    assert ((placements + out[:, col(dw.C_DISCARDS)] == 6) | stuck_fail).all()
    assert (out[:, col(dw.C_LABELS_COVERED)] <= 10).all()
    assert ((out[:, col(dw.C_FAIL0)] == 0) | (out[:, col(dw.C_LABELS_COVERED)] < 10)).all()
    assert (out[:, col(dw.C_MAP_CELLS)] <= 12 + 6 * placements).all()
    assert (out[:, col(dw.C_MAP_CELLS)] >= 12).all()
    assert (out[:, layout.col_place(S, 0)] == 1).all()


def test_todays_cells_never_covered_in_random_games():
    raw = schema.read_toml(cards.shipped_file())
    for date in DATES[:3]:
        rules = {k: v for k, v in date.items()}
        b0 = Board(raw, **rules)
        today_ids = [b0.at(*p) for p in b0.today()]
        rs = np.random.default_rng(5)
        for g in range(60):
            b = Board(raw, seed=9, game=g, **rules)
            while dw.cards_left(b.st) > 0:
                legal = b.legal()
                if not legal:
                    break
                for o in legal:                               # no legal option covers today
                    h, w = (2, 3) if o[1] % 2 == 0 else (3, 2)
                    assert not any(o[2] <= r < o[2] + h and o[3] <= c < o[3] + w
                                   for r, c in b.today())
                b.place(*legal[rs.integers(len(legal))])
            assert [b.at(*p) for p in b.today()] == today_ids


def test_deal_is_uniform_and_flips_are_fair_coins():
    # 6000 deals: the first card is uniform over 6 cards (chi-square, 5 df, 1e-4 critical
    # value 25.74) and face b shows with probability 1/2 (4.5 sigma band)
    p = cards.with_cards(dw.default_params())
    st = np.zeros(dw.ST_LEN, dtype=np.int64)
    firsts = np.zeros(6)
    flips = 0
    n = 6000
    for g in range(n):
        dw.deal(p, 77, g, st)
        deck = st[dw.S_DECK0:dw.S_DECK0 + 6]
        assert sorted(deck // 2) == list(range(6))
        firsts[deck[0] // 2] += 1
        flips += int((deck % 2).sum())
    assert ((firsts - n / 6) ** 2 / (n / 6)).sum() < 25.74
    assert abs(flips - 3 * n) < 4.5 * np.sqrt(6 * n * 0.25)


# ---------------------------------------------------------------- determinism
@pytest.mark.parametrize("policy,n", [("random", 600), ("greedy", 40), ("solver", 6)])
def test_serial_parallel_chunks_and_trace_agree(policy, n):
    p = cards.with_cards(dw.default_params())
    seats = SEATS[policy].copy()
    seats[0, 1] = 300 if policy == "solver" else 0
    a = np.zeros((n, WIDTH), dtype=np.int64)
    b = np.zeros((n, WIDTH), dtype=np.int64)
    dw.play_games_serial(p, seats, 21, 100, a)
    dw.play_games(p, seats, 21, 100, b)
    assert (a == b).all()
    k = n // 3
    c1 = np.zeros((k, WIDTH), dtype=np.int64)
    c2 = np.zeros((n - k, WIDTH), dtype=np.int64)
    dw.play_games(p, seats, 21, 100, c1)
    dw.play_games(p, seats, 21, 100 + k, c2)
    assert (np.vstack([c1, c2]) == a).all()
    for g in (0, n - 1):
        one = np.zeros((1, WIDTH), dtype=np.int64)
        ev = np.zeros((64, layout.EVENT_WIDTH), dtype=np.int64)
        ev_n = np.zeros(1, dtype=np.int64)
        dw.trace_game(p, seats, 21, 100 + g, one, ev, ev_n)
        assert (one[0] == a[g]).all()
        names = [dw.EVENTS[int(code) - 1].name for code in ev[:ev_n[0], 0]]
        assert names[:3] == ["setup", "layout", "deal"] and names[-3:] == ["check", "score", "result"]
        assert names.count("place") == a[g, col(dw.C_PLACEMENTS)]
        res = ev[ev_n[0] - 1]
        assert res[2] == a[g, 2] and res[3] == a[g, 0]


def test_trace_place_events_name_cards_and_cells():
    p = cards.with_cards(dw.default_params())
    one = np.zeros((1, WIDTH), dtype=np.int64)
    ev = np.zeros((64, layout.EVENT_WIDTH), dtype=np.int64)
    ev_n = np.zeros(1, dtype=np.int64)
    dw.trace_game(p, SEATS["greedy"], 4, 2, one, ev, ev_n)
    deal = ev[2, 2:8]
    places = [e for e in ev[:ev_n[0]] if e[0] == dw.E_PLACE]
    assert {int(e[2]) for e in places} <= set(int(c) for c in deal)
    assert dw.format_card(int(deal[0])).startswith("W") and dw.format_card(-1) == "-"
    assert sum(int(e[6]) for e in places) == one[0, col(dw.C_CELLS_COVERED)]


# ---------------------------------------------------------------- the plain-Python reference
REF_DATES = [dict(month=12, day=23, weekday=2), dict(month=2, day=14, weekday=5, holiday="valentine"),
             dict(month=6, day=1, weekday=0), dict(month=3, day=20, weekday=4, seasons="astronomical"),
             dict(month=11, day=26, weekday=3, holiday="thanksgiving", stuck="discard"),
             dict(month=9, day=19, weekday=6, take_win=False),
             dict(month=7, day=10, weekday=4, flips="none")]


def ref_rules(date):
    rules = {r.name: r.default for r in dw.RULES}
    rules.update(date)
    return rules


@pytest.mark.parametrize("date", REF_DATES)
def test_reference_agrees_random(date):
    raw = schema.read_toml(cards.shipped_file())
    n = 400
    out = play(raw, "random", games=n, seed=8, **date)
    for g in range(n):
        assert ref.play(raw, ref_rules(date), 8, g, "random") == out[g].tolist(), (date, g)


@pytest.mark.parametrize("date", REF_DATES[:4])
def test_reference_agrees_greedy(date):
    raw = schema.read_toml(cards.shipped_file())
    n = 10
    out = play(raw, "greedy", games=n, seed=8, **date)
    for g in range(n):
        assert ref.play(raw, ref_rules(date), 8, g, "greedy") == out[g].tolist(), (date, g)


def test_reference_agrees_on_hand_built_cards():
    for data in (solvable_cards(), make_cards(weather=MIXED, labels="snow/striped")):
        out = play(data, "random", games=150, seed=2)
        for g in range(150):
            assert ref.play(data, ref_rules({}), 2, g, "random") == out[g].tolist(), g


def test_derived_metrics_from_counter_sums():
    sums = {c.name: 0 for c in dw.COUNTERS}
    sums.update(fail_date=3, fail_pattern=1, placements=48, options=960, stuck=2)
    m = dw.derived_metrics(sums, 10, 1, cards.with_cards(dw.default_params()))
    assert m["fail_date_rate"] == 0.3 and m["fail_pattern_rate"] == 0.1 and m["fail_month_rate"] == 0
    assert m["options_per_placement"] == 20 and m["stuck_rate"] == 0.2 and m["placements_mean"] == 4.8
    assert m["standin_cards"] == 1.0


def test_solver_plays_the_line_it_found_and_starts_from_greedys_line():
    raw = schema.read_toml(cards.shipped_file())
    solver = play(raw, "solver", games=30, seed=6, budget=400)
    assert (solver[:, 2] == solver[:, col(dw.C_SOLVER_FOUND)]).all()
    # a budget of one node ends the search after greedy's line (ties to the first option):
    # the solver then plays exactly the reference's greedy-first game
    one = play(raw, "solver", games=12, seed=6, budget=1)
    keep = [0, 2, 3] + [col(i) for i in (0, 1, 2, 3, dw.C_PLACEMENTS, dw.C_CELLS_COVERED,
                                          dw.C_LABELS_COVERED, dw.C_MAP_CELLS, dw.C_MEASURE)]
    for g in range(12):
        expect = ref.play(raw, ref_rules({}), 6, g, "greedy-first")
        assert [expect[k] for k in keep] == one[g, keep].tolist(), g
    # a larger budget only replaces the line by a strictly better one
    assert (one[:, 2] <= solver[:12, 2]).all() and (one[:, 0] <= solver[:12, 0]).all()


def test_report_notes_say_stand_in():
    notes = list(cfg.resolve("daily-weather").notes)
    assert "STAND-IN" in notes[0] and any("card data" in n for n in notes)
    mine = cards.CardData(*(getattr(cards.shipped(), k) for k in ("cells", "week", "day")), False, "printed")
    assert mine.notes == ("daily-weather card data: printed",)


def test_the_kernel_plays_only_params_that_carry_the_cards():
    # the kernel reads no card file: bare rule values are refused, the card tail is what it plays
    out = np.zeros((1, WIDTH), dtype=np.int64)
    with pytest.raises(ValueError, match="card tail"):
        dw.play_games(dw.default_params(), SEATS["greedy"], 1, 0, out)
    job = cfg.resolve("daily-weather", policy="greedy")
    assert job.params.shape == (dw.N_RULES + dw.TAIL_LEN,)
    assert (job.params[dw.N_RULES:] == cards.shipped().tail).all()
    # another card set in the tail changes the game (every Weather Card blank sun: no pattern)
    plain = cards.with_cards(job.params, cards.parse(make_cards()))
    a, b = np.zeros((20, WIDTH), dtype=np.int64), np.zeros((20, WIDTH), dtype=np.int64)
    dw.play_games(job.params, job.seats, 3, 0, a)
    dw.play_games(plain, job.seats, 3, 0, b)
    assert not (a == b).all()


# ---------------------------------------------------------------- one option per map
ALIKE_TURNED = ["sun/plain", "cloud/plain", "rain/plain", "rain/plain", "cloud/plain", "sun/plain"]
NOT_ALIKE = ["sun/plain", "cloud/plain", "snow/plain", "rain/plain", "rain/plain", "sun/plain"]


def _option_maps(b, slot):
    """{option: the map's cell types after it} for hand slot ``slot``'s legal options."""
    maps = {}
    for o in [o for o in b.legal() if o[0] == slot]:
        code = b.option(*o)
        dw.apply_placement(b.p, b.st, b.top, b.tm, code, b.undo)
        maps[o] = b.tm.tobytes()
        dw.undo_placement(b.p, b.st, b.top, b.tm, code, b.undo)
    return maps


def test_placements_giving_the_same_map_are_one_option():
    # W1a reads [[sun cloud rain] [rain cloud sun]]: turned 180 degrees it reads the same, so at
    # any anchor rotation 2 (3) lays exactly the cells rotation 0 (1) lays: one option, not two.
    # W2a reads [[sun cloud snow] [rain rain sun]]: turned it reads [[sun rain rain] [snow cloud
    # sun]], another map, so all four rotations stay.
    weather = [ALIKE_TURNED, ["rain/striped"] * 6, NOT_ALIKE] + [["rain/striped"] * 6] * 9
    b = Board(make_cards(weather=weather), hand=[0, 2])
    assert dw.looks_same_turned(b.p, 0) and not dw.looks_same_turned(b.p, 2)
    alike, other = _option_maps(b, 0), _option_maps(b, 1)
    assert alike and {o[1] for o in alike} == {0, 1}
    assert {o[1] for o in other} == {0, 1, 2, 3}
    # every option is a different map (within a hand slot)
    assert len(set(alike.values())) == len(alike)
    assert len(set(other.values())) == len(other)


def test_reference_agrees_with_a_face_alike_turned():
    # random's one draw is over the distinct maps: checked game by game against the reference,
    # whose legal placements drop a turned face equal to the face itself
    weather = [ALIKE_TURNED, NOT_ALIKE] * 6
    data = make_cards(weather=weather, d2b=("19", "20", "23", "22", "21", "24"))
    out = play(data, "random", games=150, seed=4)
    for g in range(150):
        assert ref.play(data, ref_rules({}), 4, g, "random") == out[g].tolist(), g


def test_solver_budget_counts_greedys_line_which_always_completes():
    # docs: the budget N counts placements tried, greedy's first line included; that line is
    # always played out, then the search runs while fewer than N were tried. So nodes =
    # max(N, G) with G = greedy's line, unless the search finishes first (solver_complete).
    # G is what a budget of 1 reports (no search after the line); per game G = the options
    # greedy-first evaluated, i.e. the sum of `options` over its placements.
    raw = schema.read_toml(cards.shipped_file())
    nodes = col(dw.C_SOLVER_NODES)
    one = play(raw, "solver", games=8, seed=6, budget=1)
    G = one[:, nodes]
    assert (G == one[:, col(dw.C_OPTIONS)]).all()       # the line is the game played
    for budget in (int(G.min()) - 1, int(G.max()) + 50):
        out = play(raw, "solver", games=8, seed=6, budget=budget)
        done = out[:, col(dw.C_SOLVER_COMPLETE)] == 1
        assert ((out[:, nodes] == np.maximum(budget, G)) | (done & (out[:, nodes] <= budget))).all()


def test_every_policy_takes_a_winning_last_placement():
    # RULINGS: every policy takes an immediate game-winning action. Play (greedy's pick or a
    # random legal one, by a coin) up to the last card on the stand-in cards; wherever some but
    # not every last placement wins, greedy, the solver (given a planned last placement that
    # does not win) and mc each choose a winning one.
    from kernels import rng
    raw = schema.read_toml(cards.shipped_file())
    rs = np.random.default_rng(11)
    checked = 0
    for g in range(120):
        b = Board(raw, seed=3, game=g, month=12, day=23, weekday=2)
        while dw.cards_left(b.st) > 1:
            legal = b.legal()
            if not legal:
                break
            if rs.integers(2):
                b.place(*legal[rs.integers(len(legal))])
                continue
            opts = np.array([b.option(*o) for o in legal], dtype=np.int64)
            keys, ctrs = rng.new_streams(1)
            o = dw.choose_greedy(b.p, b.st, b.top, b.tm, b.pat, opts, len(legal),
                                 np.empty(dw.MAX_OPTIONS, dtype=np.int64), keys, ctrs, b.undo,
                                 b.rows, b.work, b.ok, False)
            dw.apply_placement(b.p, b.st, b.top, b.tm, o, b.undo)
        if dw.cards_left(b.st) != 1:
            continue
        opts = np.empty(dw.MAX_OPTIONS, dtype=np.int64)
        n = dw.legal_placements(b.p, b.st, b.tm, opts, np.zeros(dw.H, dtype=np.int64))
        wins = np.empty(dw.MAX_OPTIONS, dtype=np.int64)
        k = dw.winning_options(b.p, b.st, b.top, b.tm, b.pat, opts, n, wins, b.undo, b.rows, b.work, b.ok)
        if k == 0 or k == n:
            continue
        losing = next(int(o) for o in opts[:n] if o not in set(wins[:k].tolist()))
        keys, ctrs = rng.new_streams(1)
        plan = np.zeros(dw.SOLVER_DEPTH, dtype=np.int64)
        info = np.zeros(dw.INFO_LEN, dtype=np.int64)
        plan[0], info[dw.I_PLAN_LEN] = losing, 1
        picks = {
            "greedy": dw.choose_greedy(b.p, b.st.copy(), b.top, b.tm, b.pat, opts[:n].copy(), n,
                                       wins.copy(), keys, ctrs, b.undo, b.rows, b.work, b.ok, True),
            "solver": dw.choose_solver(b.p, b.st.copy(), b.top, b.tm, b.pat, opts[:n].copy(), n,
                                       wins.copy(), keys, ctrs, b.undo, b.rows, b.work, b.ok,
                                       plan, info, 0),
            "mc": dw.mc_choose(b.p, b.st.copy(), b.top, b.tm, b.pat, opts[:n].copy(), n, 2,
                               dw.P_RANDOM, keys, ctrs, np.zeros(2, dtype=np.int64)),
        }
        for name, o in picks.items():
            assert dw.wins_now(b.p, b.st, b.top, b.tm, b.pat, o, b.undo, b.rows, b.work, b.ok), (g, name)
        checked += 1
    assert checked >= 5, checked
