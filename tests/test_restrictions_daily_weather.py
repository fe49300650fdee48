"""daily-weather restricted play (issue #15): ``no-rotation`` and ``no-full-cover``.

The seat row is hand-built 6 wide ``[policy, arg0, arg1, arg2, forbid, watch]``. What each
restriction forbids is restated here on the reference's placement words (slot, rotation, row,
col) with a card-ownership map of our own (docs/games/daily-weather.md), and whole restricted
games are checked against the plain-Python reference (tests/reference/daily_weather_ref.py)
with the placements cut the same way: so a restricted random seat must make the reference's one
uniform draw over what is left, and greedy pick the reference's best remaining placement.
"""

import numpy as np
import pytest

from kernels import daily_weather as dw
from simcli.config import cards, schema
from kernels import layout
from kernels.spec import SEAT_FORBID, SEAT_WATCH, SEAT_WIDTH
from tests.reference import daily_weather_ref as ref
from tests.test_daily_weather import REF_DATES, Board, make_cards, params_for, ref_rules

BIT = {r.name: 1 << r.bit for r in dw.RESTRICTIONS}
ALL = sum(BIT.values())
WIDTH = layout.out_width(1, dw.N_COUNTERS)
COL = {c.name: layout.col_counter(1, i) for i, c in enumerate(dw.COUNTERS)}
RAW = schema.read_toml(cards.shipped_file())


def cells_of(rot, ar, ac):
    """Map cells a 2x3 face covers at rotation ``rot`` with its top-left at (ar, ac)."""
    h, w = (2, 3) if rot % 2 == 0 else (3, 2)
    return {(ar + i, ac + j) for i in range(h) for j in range(w)}


class Owners:
    """Which placement shows at each map cell: enough to tell a buried card."""

    def __init__(self):
        self.at = {}
        self.n = 0

    def buries(self, rot, ar, ac):
        fp = cells_of(rot, ar, ac)
        for k in range(self.n):
            vis = {p for p, o in self.at.items() if o == k}
            if vis and vis <= fp:
                return True
        return False

    def place(self, rot, ar, ac):
        for p in cells_of(rot, ar, ac):
            self.at[p] = self.n
        self.n += 1


def forbidden(names, owners, o):
    slot, rot, ar, ac = o
    return (("no-rotation" in names and rot != 0)
            or ("no-full-cover" in names and owners.buries(rot, ar, ac)))


def names_of(mask):
    return {r.name for r in dw.RESTRICTIONS if mask >> r.bit & 1}


class Restricted:
    """ref.play's restriction hook: the placements cut by ``forbid`` (whole when that leaves
    none, counted as a yield) and the placements in ``watch`` counted."""

    def __init__(self, forbid, watch):
        self.fb, self.wt = names_of(forbid), names_of(watch)
        self.owners = Owners()
        self.forbidden = self.yielded = 0

    def options(self, legal):
        left = [o for o in legal if not forbidden(self.fb, self.owners, o)]
        if left:
            return left
        self.yielded += 1
        return legal

    def placed(self, o):
        self.forbidden += forbidden(self.wt, self.owners, o)
        self.owners.place(*o[1:])

    def counts(self):
        return self.forbidden, self.yielded


def restricted_play(cards, rules, seed, game, policy, forbid, watch):
    """ref.play with the restricted seat's placements cut and its watched ones counted."""
    return ref.play(cards, rules, seed, game, policy, Restricted(forbid, watch))


def seat(policy, forbid=0, watch=0, arg=0, arg2=0, width=SEAT_WIDTH):
    s = np.zeros((1, width), dtype=np.int64)
    s[0, 0] = dw.POLICIES[policy]
    s[0, 1] = arg
    s[0, 2] = arg2
    if width > SEAT_WATCH:
        s[0, SEAT_FORBID] = forbid
        s[0, SEAT_WATCH] = watch
    return s


def run(p, seats, n, seed=8, first=0):
    out = np.zeros((n, WIDTH), dtype=np.int64)
    dw.play_games_serial(p, seats, np.int64(seed), np.int64(first), out)
    return out


def traced_places(p, seats, seed, g):
    one = np.zeros((1, WIDTH), dtype=np.int64)
    ev = np.zeros((64, layout.EVENT_WIDTH), dtype=np.int64)
    ev_n = np.zeros(1, dtype=np.int64)
    dw.trace_game(p, seats, np.int64(seed), np.int64(g), one, ev, ev_n)
    # place: card, rotation, row, col (from the Month Card's top-left), ..., slot
    return one[0], [(int(e[9]), int(e[3]), int(e[4]), int(e[5])) for e in ev[:ev_n[0]]
                    if e[0] == dw.E_PLACE]


def forbidden_taken(names, places):
    owners = Owners()
    bad = 0
    for o in places:
        bad += forbidden(names, owners, o)
        owners.place(*o[1:])
    return bad


# ---------------------------------------------------------------- declarations
def test_declarations():
    assert [(r.name, r.bit) for r in dw.RESTRICTIONS] == [("no-rotation", 0), ("no-full-cover", 1)]
    assert [c.name for c in dw.COUNTERS[-2:]] == ["restriction_forbidden", "restriction_yielded"]


# ---------------------------------------------------------------- hand-built positions
def restricted(b, mask):
    opts = np.empty(dw.MAX_OPTIONS, dtype=np.int64)
    n, y = dw.seat_placements(b.p, b.st, b.top, b.tm, opts, np.zeros(dw.H, dtype=np.int64),
                              np.int64(mask))
    return sorted((int(o) // (4 * dw.H * dw.W), int(o) // (dw.H * dw.W) % 4,
                   int(o) // dw.W % dw.H - b.r0, int(o) % dw.W - b.c0) for o in opts[:n]), y


def test_no_rotation_keeps_exactly_the_unturned_placements():
    b = Board(make_cards(), hand=[0, 2])                  # every cell is sun/plain
    legal = b.legal()
    left, y = restricted(b, BIT["no-rotation"])
    assert y == 0 and left == [o for o in legal if o[1] == 0] and len(left) < len(legal)


def test_no_full_cover_forbids_laying_a_card_exactly_on_another():
    # the rulebook's own permission, on the kernel's test board: after a card over JUL AUG SEP,
    # the second card exactly on top (six cells covered) is legal but forbidden by no-full-cover
    b = Board(make_cards(), hand=[0, 2])
    b.place(0, 0, -1, 0)
    legal = b.legal()
    assert (1, 0, -1, 0) in legal
    left, y = restricted(b, BIT["no-full-cover"])
    assert y == 0 and (1, 0, -1, 0) not in left
    owners = Owners()
    owners.place(0, -1, 0)
    assert left == [o for o in legal if not owners.buries(*o[1:])]
    assert any(o[2:] == (-2, 0) for o in left)            # half over it is still allowed
    both, _ = restricted(b, ALL)
    assert both == [o for o in left if o[1] == 0]


def test_the_restriction_yields_when_every_placement_is_forbidden():
    # offered only turned placements, no-rotation forbids them all: it yields, the list stays
    b = Board(make_cards(), hand=[0, 2])
    opts = np.empty(dw.MAX_OPTIONS, dtype=np.int64)
    n = dw.legal_placements(b.p, b.st, b.tm, opts, np.zeros(dw.H, dtype=np.int64))
    turned = np.array([o for o in opts[:n] if dw.opt_rot(o) != 0], dtype=np.int64)
    k, y = dw.restrict_placements(b.st, b.top, turned, len(turned), np.int64(BIT["no-rotation"]))
    assert (k, y) == (len(turned), 1)


# ---------------------------------------------------------------- whole games vs the reference
REF_CASES = [(d, pol, r) for d in (REF_DATES[0], REF_DATES[1], REF_DATES[4])
             for pol, r in (("random", "no-rotation"), ("random", "no-full-cover"), ("random", "ALL"))]
REF_CASES += [(REF_DATES[0], "greedy", "no-rotation"), (REF_DATES[2], "greedy", "no-full-cover")]


@pytest.mark.parametrize("date,policy,restriction", REF_CASES)
def test_restricted_games_agree_with_the_restricted_reference(date, policy, restriction):
    mask = ALL if restriction == "ALL" else BIT[restriction]
    other = ALL & ~mask or BIT["no-full-cover"]              # watch the rest (or the other)
    n = 120 if policy == "random" else 8
    p = params_for(RAW, **date)
    out = run(p, seat(policy, mask, other), n)
    for g in range(n):
        expect = restricted_play(RAW, ref_rules(date), 8, g, policy, mask, other)
        assert expect == out[g].tolist(), (date, g)


def test_solver_and_mc_seats_never_take_a_forbidden_placement():
    p = params_for(RAW, **REF_DATES[0])
    for name, mask in BIT.items():
        for pol, arg, arg2, games in (("solver", 300, 0, 6), ("mc", 2, dw.P_RANDOM, 2)):
            for g in range(games):
                _, places = traced_places(p, seat(pol, mask, 0, arg, arg2), 4, g)
                assert places and forbidden_taken({name}, places) == 0, (name, pol, g)
    # unrestricted, seats do turn cards and bury cards: the check had teeth
    turned = sum(forbidden_taken({"no-rotation"}, traced_places(p, seat("solver", arg=300), 4, g)[1])
                 for g in range(6))
    buried = sum(forbidden_taken({"no-full-cover"}, traced_places(p, seat("random"), 4, g)[1])
                 for g in range(40))
    assert turned > 0 and buried > 0


# ---------------------------------------------------------------- no restriction bits
def test_narrow_zero_and_meaningless_masks_play_identical_games():
    p = params_for(RAW, **REF_DATES[0])
    for pol, arg, n in (("random", 0, 200), ("greedy", 0, 30), ("solver", 300, 8)):
        narrow = run(p, seat(pol, arg=arg, width=4), n)
        zero = run(p, seat(pol, arg=arg), n)
        unused = run(p, seat(pol, forbid=1 << 20, arg=arg), n)   # no restriction has this bit
        assert (narrow == zero).all() and (narrow == unused).all(), pol
        assert (narrow[:, COL["restriction_forbidden"]] == 0).all()
        assert (narrow[:, COL["restriction_yielded"]] == 0).all()


def test_watch_bits_only_count():
    p = params_for(RAW, **REF_DATES[0])
    base = run(p, seat("random"), 200)
    watched = run(p, seat("random", watch=ALL), 200)
    keep = [j for j in range(WIDTH) if j != COL["restriction_forbidden"]]
    assert (base[:, keep] == watched[:, keep]).all()
    assert watched[:, COL["restriction_forbidden"]].sum() > 0


# ---------------------------------------------------------------- the sign of a one-sided effect
def test_no_rotation_lowers_the_solver_success_rate():
    # on the same deals, a solver that may never turn a card has at most the success of the
    # full solver on each deal it searches completely, and clearly less overall
    p = params_for(RAW, **REF_DATES[0])
    n = 60
    base = run(p, seat("solver", arg=2000), n, seed=3)
    cut = run(p, seat("solver", BIT["no-rotation"], arg=2000), n, seed=3)
    wb, wc = base[:, 2], cut[:, 2]
    assert wc.sum() < wb.sum(), (wb.sum(), wc.sum())
    d = wc - wb
    z = d.mean() / (d.std(ddof=1) / np.sqrt(n))
    assert z < -3, (wb.mean(), wc.mean(), z)
