"""forecasts-bid restricted play (issue #15): ``no-invest``, ``no-market``, ``no-buy``, ``no-draw``,
``bid-zero``, ``no-clear-skies``, ``no-extended``.

Seat rows are hand-built 6 wide ``[policy, arg0, arg1, arg2, forbid, watch]``. Whole restricted
games are checked against the plain-Python statement (tests/reference/forecasts_bid_ref.py)
whose Investment, Bid and Market decisions are cut here the way docs/games/forecasts-bid.md
says, so a restricted random seat must make the reference's one uniform draw over what is left
and the heuristic the reference's remaining choice.
"""
import numpy as np
import pytest

from tests.helpers import without_arc

from kernels import forecasts_bid as fb
from kernels import layout
from kernels.spec import SEAT_FORBID, SEAT_WATCH, SEAT_WIDTH
from tests.reference import forecasts_bid_ref as ref
from tests.test_forecasts_bid_games import params_of

BIT = {r.name: 1 << r.bit for r in fb.RESTRICTIONS}
COL = {c.name: i for i, c in enumerate(fb.COUNTERS)}
EXTENDED = (5, 7)


def names_of(mask):
    return {r.name for r in fb.RESTRICTIONS if mask >> r.bit & 1}


def bid_forbidden(names, b):
    return (("bid-zero" in names and b != 0) or ("no-clear-skies" in names and b == 0)
            or ("no-extended" in names and b in EXTENDED))


def action_forbidden(names, a):
    return (("no-market" in names and a != "pass") or ("no-buy" in names and a == "buy")
            or ("no-draw" in names and a == "draw"))


class RestrictedRef(ref.Game):
    """The reference game with each seat's Investment, Bid and Market options cut by its forbid
    mask (every option kept when the cut would leave none) and its watched choices counted."""

    def __init__(self, seed, g, players, policies, forbid, watch, **kw):
        super().__init__(seed, g, players, list(policies) + (["rival"] if players == 2 else []), **kw)
        S = self.seats
        self.forbid = [names_of(forbid[s]) if s < len(forbid) else set() for s in range(S)]
        self.watch = [names_of(watch[s]) if s < len(watch) else set() for s in range(S)]

    def invest(self, s):
        """Investment of seat s (its chance is given): True to invest."""
        fb_ = self.forbid[s]
        if "no-invest" in fb_:
            self.decisions += 1                      # one option left: no draw
            yes = False
        elif self.policies[s] == "heuristic":
            self.decisions += 1
            yes = self.spend[s] <= 1 and self.rep[s] > 1
        else:
            yes = self.choose(s, 2) == 1
        self.count["restriction_forbidden"] += yes and "no-invest" in self.watch[s]
        return yes

    def bid(self, s, hand, h):
        options = [b for b in range(h + 1) if not bid_forbidden(self.forbid[s], b)]
        if not options:
            self.count["restriction_yielded"] += 1
            options = list(range(h + 1))
        if self.policies[s] == "heuristic":
            self.decisions += 1
            want = ref.heuristic_bid(hand, h)
            b = min(options, key=lambda x: (abs(x - want), x))   # nearest allowed, lower on ties
        else:
            b = options[self.choose(s, len(options))]
        self.count["restriction_forbidden"] += bid_forbidden(self.watch[s], b)
        return b

    def market_offered(self, s, draw_deck, market):
        offered = super().market_offered(s, draw_deck, market)
        return [a for a in offered if not action_forbidden(self.forbid[s], a)]   # pass stays

    def market_chosen(self, s, action):
        self.count["restriction_forbidden"] += action_forbidden(self.watch[s], action)


def seats_of(players, policies, forbid=(), watch=(), width=SEAT_WIDTH):
    S = fb.n_seats(players, None)
    seats = np.zeros((S, width), dtype=np.int64)
    for s, p in enumerate(policies):
        name, *args = p.split(":")
        seats[s, 0] = fb.POLICIES[name]
        if name in ("mc", "ismcts"):
            seats[s, 1] = int(args[0])
            seats[s, 2] = fb.POLICIES[args[1]]
    if players == 2:
        seats[2, 0] = fb.POLICIES["rival"]
    if width > SEAT_WATCH:
        for s, m in enumerate(forbid):
            seats[s, SEAT_FORBID] = m
        for s, m in enumerate(watch):
            seats[s, SEAT_WATCH] = m
    return seats


def run(players, seats, n, seed=97, first=0, market=True):
    out = np.zeros((n, layout.out_width(seats.shape[0], fb.N_COUNTERS)), dtype=np.int64)
    fb.play_games_serial(params_of(market), seats, np.int64(seed), np.int64(first), out)
    return out


def trace(players, seats, seed, g):
    out = np.zeros((1, layout.out_width(seats.shape[0], fb.N_COUNTERS)), dtype=np.int64)
    ev = np.zeros((4000, layout.EVENT_WIDTH), dtype=np.int64)
    ev_n = np.zeros(1, dtype=np.int64)
    fb.trace_game(params_of(), seats, np.int64(seed), np.int64(g), out, ev, ev_n)
    return out[0], ev[:ev_n[0]]


def choices(ev, s):
    """Seat s's traced choices as (kind, value): ("invest", 0/1), ("bid", b), ("market", action)."""
    out = []
    for e in ev:
        if int(e[1]) != s:
            continue
        if e[0] == fb.E_INVEST:
            out.append(("invest", int(e[3])))
        elif e[0] == fb.E_BID:
            out.append(("bid", int(e[3])))
        elif e[0] == fb.E_MARKET:
            out.append(("market", ("pass", "draw", "buy")[int(e[3])]))
    return out


def is_forbidden(names, choice):
    kind, v = choice
    if kind == "invest":
        return "no-invest" in names and v == 1
    if kind == "bid":
        return bid_forbidden(names, v)
    return action_forbidden(names, v)


def col(S, name):
    return layout.col_counter(S, COL[name])


# ---- declarations ------------------------------------------------------------------------------
def test_declarations():
    assert [r.name for r in fb.RESTRICTIONS] == ["no-invest", "no-market", "no-buy", "no-draw",
                                                 "bid-zero", "no-clear-skies", "no-extended"]
    assert [r.bit for r in fb.RESTRICTIONS] == list(range(7))
    assert [c.name for c in fb.COUNTERS[-2:]] == ["restriction_forbidden", "restriction_yielded"]


# ---- whole games against the restricted reference ------------------------------------------------
REF_CASES = [
    (4, ["random"] * 4, "no-invest"), (4, ["random"] * 4, "no-market"), (4, ["random"] * 4, "no-buy"),
    (4, ["random"] * 4, "no-draw"), (4, ["random"] * 4, "bid-zero"), (3, ["random"] * 3, "no-clear-skies"),
    (3, ["random"] * 3, "no-extended"), (2, ["random"] * 2, "no-buy+no-extended"),
    (4, ["heuristic"] * 4, "no-invest"), (4, ["heuristic"] * 4, "no-buy"), (4, ["heuristic"] * 4, "no-draw"),
    (3, ["heuristic"] * 3, "bid-zero"), (3, ["heuristic"] * 3, "no-clear-skies"),
    (4, ["heuristic", "random", "heuristic", "random"], "no-extended+no-market"),
    (2, ["heuristic", "random"], "no-invest+no-draw"),
    (4, ["random", "heuristic"] * 2, "bid-zero+no-clear-skies"),        # every bid forbidden: yields
]


def mask_of(text):
    return sum(BIT[n] for n in text.split("+"))


@pytest.mark.parametrize("players,pols,restriction", REF_CASES)
def test_restricted_games_agree_with_the_restricted_reference(players, pols, restriction):
    m = mask_of(restriction)
    forbid = [m] + [0] * (players - 1)              # seat 0 restricted, seat 1 watched
    watch = [0, m] + [0] * (players - 2)
    n = 120 if pols[0] == "random" else 60
    out = run(players, seats_of(players, pols, forbid, watch), n, first=300)
    for i in range(n):
        expect = RestrictedRef(97, 300 + i, players, pols, forbid, watch).play()
        assert expect == without_arc(out[i], fb.N_COUNTERS).tolist(), (restriction, i)


def test_a_restriction_that_forbids_every_bid_yields_and_plays_the_base_games():
    pols = ["random", "heuristic", "random", "heuristic"]
    base = run(4, seats_of(4, pols), 200)
    m = BIT["bid-zero"] | BIT["no-clear-skies"]
    both = run(4, seats_of(4, pols, [m, 0, 0, 0]), 200)
    y = col(4, "restriction_yielded")
    keep = [j for j in range(base.shape[1]) if j != y]
    assert (base[:, keep] == both[:, keep]).all()
    # one yield per bid of seat 0: one a round (a sudden death adds a round)
    rounds = fb.ROUNDS[4] + base[:, col(4, "sudden_death")]
    assert (both[:, y] == rounds).all()


# ---- traces: a restricted seat never takes a forbidden option --------------------------------------
@pytest.mark.parametrize("players,pols", [(4, ["random", "heuristic", "random", "heuristic"]),
                                          (3, ["heuristic", "random", "random"]),
                                          (2, ["random", "heuristic"])])
def test_a_restricted_seat_never_takes_a_forbidden_option(players, pols):
    for r in fb.RESTRICTIONS:
        seen = 0
        for s in range(players):
            forbid = [1 << r.bit if t == s else 0 for t in range(players)]
            for g in range(8):
                _, ev = trace(players, seats_of(players, pols, forbid), 5, g)
                mine = choices(ev, s)
                assert mine and not any(is_forbidden({r.name}, c) for c in mine), (r.name, s, g)
                seen += sum(is_forbidden({r.name}, c) for t in range(players) if t != s
                            for c in choices(ev, t))
        assert seen > 0, r.name          # the others did take it: the check had teeth


@pytest.mark.parametrize("search", ["mc:3:random", "ismcts:4:random"])
def test_mc_restricted_never_takes_a_forbidden_option(search):
    m = BIT["no-market"] | BIT["no-extended"] | BIT["no-invest"]
    taken = []
    for g in range(2):
        _, ev = trace(3, seats_of(3, [search, "heuristic", "random"], [m, 0, 0]), 9, g)
        taken += choices(ev, 0)
    assert taken and not any(is_forbidden(names_of(m), c) for c in taken)


# ---- no restriction bits: bit-identical play ------------------------------------------------------
@pytest.mark.parametrize("players", [4, 3, 2])
def test_narrow_zero_and_meaningless_masks_play_identical_games(players):
    pols = (["random", "heuristic"] * 2)[:players]
    narrow = run(players, seats_of(players, pols, width=4), 150)
    zero = run(players, seats_of(players, pols), 150)
    unused = run(players, seats_of(players, pols, [1 << 20] * players), 150)
    assert (narrow == zero).all() and (narrow == unused).all()
    assert (without_arc(narrow, fb.N_COUNTERS)[:, -2:] == 0).all()  # the restriction counters


def test_no_invest_in_a_game_without_a_market_changes_nothing():
    # market = off: Market Spend never falls below 3, so Investment is never offered
    pols = ["random", "heuristic", "random", "heuristic"]
    base = run(4, seats_of(4, pols), 150, market=False)
    cut = run(4, seats_of(4, pols, [BIT["no-invest"] | BIT["no-market"]] * 4), 150, market=False)
    assert (base == cut).all()


def test_watch_bits_only_count():
    pols = ["random", "heuristic", "random", "heuristic"]
    base = run(4, seats_of(4, pols), 60)
    every = sum(BIT[n] for n in ("no-invest", "no-market", "no-extended"))
    watched = run(4, seats_of(4, pols, watch=[every] * 4), 60)
    c = col(4, "restriction_forbidden")
    keep = [j for j in range(base.shape[1]) if j != c]
    assert (base[:, keep] == watched[:, keep]).all()
    for g in range(8):
        _, ev = trace(4, seats_of(4, pols, watch=[every] * 4), 97, g)
        n = sum(is_forbidden(names_of(every), ch) for s in range(4) for ch in choices(ev, s))
        assert watched[g, c] == n
    assert watched[:, c].sum() > 0


# ---- the sign of an effect on a clearly one-sided case ------------------------------------------
def test_a_random_seat_without_extended_bids_wins_more():
    # a random seat's tricks average H / S = 2.5 of 10 at 4p; its two Extended bids, 5 and 7, are
    # its worst (a miss costs 4 a trick off there, 2 elsewhere, and they sit 2.5 and 4.5 above
    # the mean), so cutting them raises the mean of a uniform bid over what is left. Same deals,
    # seat 0 restricted vs not, paired by deal: its win share must rise.
    n = 800
    pols = ["random"] * 4
    base = run(4, seats_of(4, pols), n, seed=12)
    cut = run(4, seats_of(4, pols, [BIT["no-extended"], 0, 0, 0]), n, seed=12)
    w = layout.col_winners(4)

    def share(out):
        return np.array([(int(m) & 1) / max(1, bin(int(m)).count("1")) for m in out[:, w]])

    d = share(cut) - share(base)
    z = d.mean() / (d.std(ddof=1) / np.sqrt(n))
    assert z > 3, (share(base).mean(), share(cut).mean(), z)
