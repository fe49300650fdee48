"""pgc's ``tuned`` policy (issue #24): the heuristic's decision rule with every number a knob.

* ``tuned`` with the default knobs plays exactly the heuristic (whole result arrays, every
  player count and variant, restricted seats, narrow seat arrays, mc rollouts);
* each knob moves play the way its help says, on hand-built positions whose values are worked
  out by hand below from the heuristic's documented rule (value = w_cards * cards shed - w_units
  * melds left - w_strength * rank steps shed + w_points * points shed + w_end if the play ends
  the trick, + the type's bonus; docs/search.md "tuned: knobs");
* knobs anywhere in their bounds play legal games: every traced game is replayed through the
  plain-Python statement of the rules (tests/reference/pgc_ref.py), which must accept every
  action and reach the same result row;
* results are the same for any threads and chunks.
"""
import numba
import numpy as np
import pytest

from kernels import layout, pgc
from kernels.spec import MAX_KNOBS, SEAT_WIDTH
from tests import helpers
from tests.helpers import without_arc
from tests.reference import pgc_ref
from tests.test_pgc_games import ODD_RULES, VARIANTS, ref_row
from tests.test_pgc_rules import decode, params, state
from tests.test_restrictions_pgc import trace, traced_actions

DEFAULTS = {k.name: k.default for k in pgc.KNOBS}


def knob_row(**over):
    return helpers.knob_row(pgc, **over)


def seats_of(policies, knobs=None, forbid=None, width=SEAT_WIDTH):
    return helpers.tuned_seats(pgc, policies, knobs, forbid, width)


def knob_vectors(seed, n):
    return helpers.knob_vectors(pgc, seed, n)


CASES = [(v, P) for v, (counts, _) in VARIANTS.items() for P in counts] + [("odd", 2), ("odd", 4), ("odd", 6)]


def rules_of(variant):
    return ODD_RULES if variant == "odd" else VARIANTS[variant][1]


def run(p, seats, n, seed=2026, first=300, serial=True):
    out = np.full((n, layout.out_width(seats.shape[0], pgc.N_COUNTERS)), -7, dtype=np.int64)
    (pgc.play_games_serial if serial else pgc.play_games)(p, seats, np.int64(seed), np.int64(first), out)
    return out


def test_declarations():
    assert pgc.POLICIES["tuned"] == pgc.P_TUNED and pgc.P_TUNED not in (pgc.P_RANDOM, pgc.P_HEURISTIC, pgc.P_MC)
    assert len(pgc.KNOBS) <= MAX_KNOBS
    assert sorted(k.index for k in pgc.KNOBS) == list(range(len(pgc.KNOBS)))
    assert len({k.name for k in pgc.KNOBS}) == len(pgc.KNOBS)
    for k in pgc.KNOBS:
        assert k.lo <= k.default <= k.hi and k.help


# ---- default knobs are the heuristic --------------------------------------------------------
@pytest.mark.parametrize("variant,P", CASES)
def test_default_knobs_play_exactly_the_heuristic(variant, P):
    p = params(**rules_of(variant))
    heur = run(p, seats_of(["heuristic"] * P), 120)
    assert (run(p, seats_of(["tuned"] * P, [DEFAULTS] * P), 120) == heur).all()
    mixed = ["heuristic", "random", "heuristic", "random", "heuristic", "random"][:P]
    tuned_mixed = ["tuned" if x == "heuristic" else x for x in mixed]
    assert (run(p, seats_of(tuned_mixed, [DEFAULTS] * P), 120) == run(p, seats_of(mixed), 120)).all()


@pytest.mark.parametrize("width", [4, 6])
def test_narrow_seat_arrays_play_tuned_as_the_heuristic(width):
    p = params()
    heur = run(p, seats_of(["heuristic", "random", "heuristic", "random"], width=width), 80)
    assert (run(p, seats_of(["tuned", "random", "tuned", "random"], width=width), 80) == heur).all()


@pytest.mark.parametrize("mask", [1 << pgc.X_NO_OVERWRITE, 1 << pgc.X_NO_RUNS | 1 << pgc.X_NO_ADD])
def test_default_knobs_restricted_play_the_restricted_heuristic(mask):
    p = params()
    forbid = [mask, 0, mask, 0]
    heur = run(p, seats_of(["heuristic", "random", "heuristic", "heuristic"], forbid=forbid), 80)
    tuned = run(p, seats_of(["tuned", "random", "tuned", "heuristic"], [DEFAULTS] * 4, forbid=forbid), 80)
    assert (tuned == heur).all()


def test_mc_with_tuned_rollouts_at_default_knobs_is_mc_with_heuristic_rollouts():
    p = params()
    a = run(p, seats_of(["mc:2:heuristic", "heuristic", "heuristic"]), 6)
    b = run(p, seats_of(["mc:2:tuned", "heuristic", "heuristic"], [DEFAULTS, None, None]), 6)
    assert (a == b).all()
    # other knobs reach the rollouts: the same deals then play differently
    c = run(p, seats_of(["mc:2:tuned", "heuristic", "heuristic"],
                        [dict(w_strength=-5, w_end=-200, min_response=0), None, None]), 6)
    assert not (c == a).all()


def test_a_sample_gives_every_seat_the_searching_seats_knob_row():
    st = pgc.new_state(4)
    mine = knob_row(w_cards=3, near_out=9, danger_cards=5)
    pgc.load_knobs(st, seats_of(["mc:4:tuned", "tuned", "heuristic", "random"],
                                [mine, dict(w_units=99), None, None]))
    rows = lambda s: s[pgc.KNOB:pgc.KNOB + 4 * MAX_KNOBS].reshape(4, MAX_KNOBS)
    assert (rows(st)[0] == mine).all() and rows(st)[1, pgc.K_W_UNITS] == 99
    assert (rows(st)[2] == pgc.KNOB_DEFAULTS).all() and (rows(st)[3] == pgc.KNOB_DEFAULTS).all()
    dst = np.empty(pgc.STATE_SIZE, dtype=np.int64)
    keys = np.zeros(1, dtype=np.uint64)
    pgc.determinize(st, 0, keys, np.zeros(1, dtype=np.int64), 0, dst, np.empty(pgc.MAX_DECK, dtype=np.int64))
    assert (rows(dst) == mine).all()
    # an mc seat whose rollouts play the heuristic carries the defaults, whatever its columns hold
    pgc.load_knobs(st, seats_of(["mc:4:heuristic", "tuned", "heuristic", "random"], [mine] * 4))
    assert (rows(st)[0] == pgc.KNOB_DEFAULTS).all() and (rows(st)[1] == mine).all()


# ---- each knob moves play the way its help says (values worked out by hand) --------------------
def choose(st, **knobs):
    """The tuned choice of the seat to act with these knob overrides."""
    seat = int(st[pgc.S_TO_ACT])
    st = st.copy()
    st[pgc.KNOB + seat * MAX_KNOBS: pgc.KNOB + (seat + 1) * MAX_KNOBS] = knob_row(**knobs)
    acts = np.zeros(pgc.MAX_ACTIONS, dtype=np.int64)
    n = pgc.legal_actions(st, params(), acts)
    return decode(acts[pgc.heuristic_choice(st, params(), acts, n)])


OTHERS = [[2, 3, 7, 7, 9, 11], [2, 3, 7, 7, 9, 11], [2, 3, 7, 7, 9, 11]]


def test_overwrite_and_add_bonuses():
    # On a single 4, holding 1 1 4 9: Add 4 (set 4-4) is worth 10 - 20*2 - 3 = -33 (melds left
    # 1, 9), Overwrite 9 is 10 - 20*2 - 7 = -37 (left 1, 4); the heuristic Adds.
    st = state(4, [[1, 1, 4, 9]] + OTHERS, central=[4])
    assert choose(st) == ("add", (4, 4))
    assert choose(st, overwrite_bonus=5) == ("overwrite", (9,))      # -32 > -33
    assert choose(st, add_bonus=-5) == ("overwrite", (9,))           # -38 < -37
    assert choose(st, overwrite_bonus=-500, add_bonus=-500, min_response=-100) == ("pass",)
    assert choose(st, min_response=-30) == ("pass",)                 # best -33 < -30
    assert choose(st, min_response=-33) == ("add", (4, 4))


def test_single_add_below_left_and_cost():
    # The same position: on a single 4 (rank index 3), holding 1 1 4 9, the heuristic Adds 4 (-33
    # against Overwrite 9's -37, above); the Add would leave 3 cards (1 1 9).
    st = state(4, [[1, 1, 4, 9]] + OTHERS, central=[4])
    assert choose(st, single_add_below=13) == ("add", (4, 4))                 # no cost: no change
    assert choose(st, single_add_below=4, single_add_cost=5) == ("overwrite", (9,))   # -38 < -37
    assert choose(st, single_add_below=4, single_add_cost=3) == ("add", (4, 4))       # -36 > -37
    assert choose(st, single_add_below=3, single_add_cost=5) == ("add", (4, 4))   # 4 not below rank 3
    assert choose(st, single_add_below=13, single_add_cost=5) == ("overwrite", (9,))
    assert choose(st, single_add_below=4, single_add_left=3, single_add_cost=5) == ("add", (4, 4))
    assert choose(st, single_add_below=4, single_add_left=2, single_add_cost=5) == ("overwrite", (9,))
    # a cost, not a refusal: with no Overwrite held (nothing above 4 but a second 4) the seat still
    # Adds (4-4-4: 20 - 20*1 - 6 = -6, less 500), unless min_response makes it pass
    st = state(4, [[1, 1, 4, 4]] + OTHERS, central=[4])
    assert choose(st) == ("add", (4, 4, 4))
    assert choose(st, single_add_below=4, single_add_cost=500) == ("add", (4, 4, 4))
    assert choose(st, single_add_below=4, single_add_cost=500, min_response=-100) == ("pass",)
    assert choose(st, min_response=-100) == ("add", (4, 4, 4))
    # not a single: onto a pair 4-4 the Add (a set of three) costs nothing
    st = state(4, [[1, 1, 4, 9]] + OTHERS, central=[4, 4])
    assert choose(st, single_add_below=13, single_add_cost=1000, min_response=-100) == ("add", (4, 4, 4))
    # nor onto a run: on 2-3, holding 4 9 12 15 (no lower run to Overwrite with), Add 4 makes 2-3-4
    st = state(4, [[4, 9, 12, 15]] + OTHERS, central=[2, 3])
    assert choose(st, single_add_below=13, single_add_cost=1000, min_response=-100) == ("add", (2, 3, 4))
    # going out is worth GO_OUT_VALUE whatever the knobs: on a single 4 holding one 4
    st = state(4, [[4]] + OTHERS, central=[4])
    assert choose(st, single_add_below=13, single_add_cost=1000) == ("add", (4, 4))


def test_eight_lead_left_and_cost():
    # Leading, holding 7 8 13 (rank indices 5, 6, 10; melds now 3 - 1 consecutive pair = 2), by
    # the heuristic's rule: run 7-8 = 20 - 20*1 - 11 + 100 (its 8 ends the trick) = 89, single 8 =
    # 10 - 20*2 - 6 + 100 = 64, single 13 = 10 - 20*1 - 10 = -20, single 7 = 10 - 20*2 - 5 = -35.
    st = state(4, [[7, 8, 13]] + OTHERS)
    assert choose(st) == ("lead", (7, 8))
    assert choose(st, eight_lead_left=0) == ("lead", (7, 8))                      # no cost: off
    assert choose(st, eight_lead_cost=108) == ("lead", (7, 8))                    # -19 > -20
    assert choose(st, eight_lead_cost=110) == ("lead", (13,))                     # -21 < -20
    assert choose(st, eight_lead_cost=200) == ("lead", (13,))
    # 7-8 leaves 1 card: with eight_lead_left 1 it costs nothing, the single 8 (2 left) still does
    assert choose(st, eight_lead_left=1, eight_lead_cost=1000) == ("lead", (7, 8))
    # Leads only: responding, an Overwrite or Add that puts an 8 costs nothing
    for hand, central in (([8, 9, 13], [7]), ([8, 12, 13], [5]), ([1, 8], [4])):
        st = state(4, [hand] + OTHERS, central=central)
        assert choose(st, eight_lead_cost=1000) == choose(st)
    # a cost, not a refusal: holding 8 8 8 8 every Lead puts an 8 and leaves cards (8: 10 - 20 -
    # 6 + 100 = 84, 8-8: 88, 8-8-8: 30 - 20 - 18 + 100 = 92); each costs the same, 8-8-8 is led
    st = state(4, [[8, 8, 8, 8]] + OTHERS)
    assert choose(st, eight_lead_cost=1000) == choose(st) == ("lead", (8, 8, 8))


def test_last_lead_top_and_run():
    # Leading from the last hand (4 players: no second hand), holding 2 3 12 (rank indices 1, 2,
    # 9; melds now 3 - 1 consecutive pair = 2), by the heuristic's rule: run 2-3 = 20 - 20*1 - 3
    # = -3, single 12 = 10 - 20*1 - 9 = -19, single 2 = 10 - 20*2 - 1 = -31, single 3 = -32.
    st = state(4, [[2, 3, 12]] + OTHERS)
    assert choose(st) == ("lead", (2, 3))
    # last_lead_top t adds t x the top rank index: run 2-3 -3 + 2t, single 12 -19 + 9t; equal at
    # t = 16/7, so 2 keeps the run (1 > -1) and 3 leads the 12 (8 > 3)
    assert choose(st, last_lead_top=2) == ("lead", (2, 3))
    assert choose(st, last_lead_top=3) == ("lead", (12,))
    # negative: -50 makes run 2-3 -103, single 2 -31 - 50 = -81, single 3 -132, single 12 -469
    assert choose(st, last_lead_top=-50) == ("lead", (2,))
    # last_lead_run r is added to the run only: -3 + r against the single 12's -19
    assert choose(st, last_lead_run=-15) == ("lead", (2, 3))        # -18 > -19
    assert choose(st, last_lead_run=-17) == ("lead", (12,))         # -20 < -19
    assert choose(st, last_lead_run=-16) == ("lead", (12,))         # -19 = -19: first in order (singles first)
    assert choose(st, last_lead_run=300) == ("lead", (2, 3))
    # together: run -3 + 2*1 - 10 = -11, single 12 -19 + 9 = -10
    assert choose(st, last_lead_top=1, last_lead_run=-10) == ("lead", (12,))
    # 2 players: only from the last hand. Seat 0's second hand still waits: no effect at all
    st2 = state(2, [[2, 3, 12], [2, 3, 7, 7, 9, 11]], reserve=[[1, 1, 4], None])
    assert choose(st2) == ("lead", (2, 3))
    assert choose(st2, last_lead_top=50, last_lead_run=-300) == ("lead", (2, 3))
    # ... picked up (only the opponent's waits): the knobs apply as at 4 players
    st3 = state(2, [[2, 3, 12], [2, 3, 7, 7, 9, 11]], reserve=[None, [1, 1, 4]])
    assert choose(st3, last_lead_top=3) == ("lead", (12,))
    assert choose(st3, last_lead_run=-17) == ("lead", (12,))
    # Leads only: responding (on a single 1, holding 2 3 12) the knobs change nothing
    for central in ([1], [11]):
        st = state(4, [[2, 3, 12]] + OTHERS, central=central)
        assert choose(st, last_lead_top=50, last_lead_run=300) == choose(st)
        assert choose(st, last_lead_top=-50, last_lead_run=-300) == choose(st)


def answer_chance(st, numbers):
    """lead_answer_chance of seat 0 leading ``numbers`` (seat 1 next)."""
    from tests.test_pgc_rules import action
    return pgc.lead_answer_chance(st, action("lead", numbers), 0, 1)


def test_lead_answer_chance_by_hand():
    # 2 players, seat 0 holds 1 1 4 9 (its last hand), nothing played: the unseen cards are the
    # 48 others (2 ones, 3 fours, 3 nines, 4 of every other number).
    # Seat 1 holds 3 cards. Single 9: an Add uses a 9 (3 unseen) or an 8 (4; 9-11 is no run),
    # an Overwrite any 11-15 (20): 27 cards, so 1 - C(21, 3) / C(48, 3) = 1 - 1330 / 17296.
    st = state(2, [[1, 1, 4, 9], [2, 3, 5]])
    assert answer_chance(st, [9]) == pytest.approx(1 - 1330 / 17296)
    # Set 1-1 (2 cards <= 3): the third 1 (2 unseen) and every higher number with 2+ unseen (46):
    # all 48, so certain
    assert answer_chance(st, [1, 1]) == pytest.approx(1.0)
    # Seat 1 holds 1 card: a pair cannot be Overwritten by it, only Added to (2 of 48)
    st1 = state(2, [[1, 1, 4, 9], [2]])
    assert answer_chance(st1, [1, 1]) == pytest.approx(2 / 48)
    assert answer_chance(st1, [9]) == pytest.approx(27 / 48)
    # Run 4-5 from 4 5 9 9: Adds use a 3 (4 unseen; 5-7 is no run). One card: that is all, 4 / 48;
    # two cards: an Overwrite too, any unseen number above 4 (3 fives, 4 sevens, eights, 2 nines,
    # 20 of 11-15 = 33), so 37 cards: 1 - C(11, 2) / C(48, 2)
    st = state(2, [[4, 5, 9, 9], [2]])
    assert answer_chance(st, [4, 5]) == pytest.approx(4 / 48)
    st = state(2, [[4, 5, 9, 9], [2, 3]])
    assert answer_chance(st, [4, 5]) == pytest.approx(1 - 55 / 1128)
    # Cards played this round are seen: 3 threes played leave 1 unseen of 45
    st[pgc.PLAYED + pgc.RANK_OF_NUMBER[3]] = 3
    st2 = st.copy()
    st2[pgc.N_HELD + 1] = 1
    assert answer_chance(st2, [4, 5]) == pytest.approx(1 / 45)


def test_session25_last_lead_knobs():
    # 4 players (every hand is the last), seat 0 leads from 1 1 4 8 9, seat 1 (next) holds 6
    hand = [1, 1, 4, 8, 9]
    st = state(4, [hand] + OTHERS)
    base = choose(st)
    assert choose(st, last_lead_set=300) == ("lead", (1, 1))
    assert choose(st, last_lead_set=-300)[1] != (1, 1)
    assert len(choose(st, last_lead_single=300)[1]) == 1
    assert len(choose(st, last_lead_single=-300)[1]) > 1
    # keep8: +200 per 8 kept after the Lead makes every Lead without the 8 worth 200 more; -200
    # makes the Leads that play it (8, 8-9) the best
    assert 8 not in choose(st, last_lead_keep8=200)[1]
    assert 8 in choose(st, last_lead_keep8=-200)[1]
    # bigger: seat 1 holds 1 card; a Lead of 2+ cards cannot be Overwritten by it
    st1 = state(4, [hand, [2], [2, 3, 7, 7, 9, 11], [2, 3, 7, 7, 9, 11]])
    assert len(choose(st1, last_lead_bigger=300)[1]) > 1
    assert len(choose(st1, last_lead_bigger=-300)[1]) == 1
    # answer: x the chance. Against a 1-card next seat a 2-card Lead is answered only by an Add
    # (1-1: 2 of the 47 unseen cards; 8-9: the 4 sevens), a single 9 by 26 (9s, 8s, 11-15): -300
    # leads 2 cards, +300 a single
    assert len(choose(st1, last_lead_answer=-300)[1]) == 2
    assert len(choose(st1, last_lead_answer=300)[1]) == 1
    # answer_near adds to answer when the next seat is in its last hand with at most 3 cards
    # (seat 1, 1 card): answer 0 + near -300 plays as answer -300; with 6 cards it is inert
    assert choose(st1, last_lead_answer_near=-300) == choose(st1, last_lead_answer=-300)
    assert choose(st, last_lead_answer_near=-300) == base
    # units / units_left: melds still needed after the Lead (1 1 4 8 9 needs 4 - 1 = 3): -100 a
    # meld leads a Lead that leaves 2, and of those (1-1, 8-9, the single 4) a 2-card one, which
    # sheds more; +100 leads one that leaves 3
    units = {(1, 1): 2, (8, 9): 2, (1,): 3, (4,): 2, (8,): 3, (9,): 3}
    assert choose(st, last_lead_units=-100)[1] in ((1, 1), (8, 9))
    assert choose(st, last_lead_units_left=-100)[1] in ((1, 1), (8, 9))
    assert units[choose(st, last_lead_units=100)[1]] == 3
    # 2 players: nothing while the seat's own second hand still waits
    st2 = state(2, [hand, [2, 3, 7]], reserve=[[1, 1, 4], None])
    for kn in ("last_lead_set", "last_lead_single", "last_lead_units", "last_lead_units_left",
               "last_lead_keep8", "last_lead_answer", "last_lead_answer_near", "last_lead_bigger"):
        assert choose(st2, **{kn: 300 if kn not in ("last_lead_units", "last_lead_units_left") else 100}) == choose(st2)
        assert choose(st2, **{kn: -300 if kn not in ("last_lead_units", "last_lead_units_left") else -100}) == choose(st2)
    # Leads only: responding on a single 2, nothing changes
    st3 = state(4, [hand] + OTHERS, central=[2])
    assert choose(st3, last_lead_set=300, last_lead_answer=-300, last_lead_bigger=300) == choose(st3)


def test_strong_cards_near_out_and_danger():
    # On a single 12, holding 1 3 5 9 14: only Overwrite 14 or Pass. 14 is strong (rank index 11
    # >= 10) and 4 cards would be left (> 3): kept, so the heuristic passes.
    hands = [[1, 3, 5, 9, 14], [7, 7, 9, 11, 12], [2, 2, 3, 7, 9], [2, 3, 7, 7, 9]]
    st = state(4, hands, central=[12])
    assert choose(st) == ("pass",)
    assert choose(st, strong_rank=12) == ("overwrite", (14,))       # 14 no longer counts as strong
    assert choose(st, near_out=4) == ("overwrite", (14,))           # 4 left is near enough out
    assert choose(st, danger_cards=4) == ("pass",)                  # every opponent holds 5
    hands[2] = [2, 2]
    st = state(4, hands, central=[12])
    assert choose(st) == ("pass",)
    assert choose(st, danger_cards=2) == ("overwrite", (14,))       # seat 2 is two cards from out
    assert choose(st, danger_cards=1) == ("pass",)


def test_danger_ignores_a_2p_opponent_with_its_second_hand_waiting():
    st = state(2, [[1, 3, 5, 9, 14], [2]], central=[12], reserve=[None, [7] * 4 + [11] * 4 + [4] * 4])
    assert choose(st, danger_cards=3) == ("pass",)


def test_keep_melds():
    # On a single 3, holding 1 1 5 5: the only play is Overwrite 5, which splits the pair 5-5.
    st = state(4, [[1, 1, 5, 5]] + OTHERS, central=[3])
    assert choose(st) == ("pass",)
    assert choose(st, keep_melds=0) == ("overwrite", (5,))


def test_points_and_strength_when_leading():
    # Leading from 1 15: lead 1 = 10 - 20 - 0 = -10, lead 15 = 10 - 20 - 12 = -22.
    st = state(4, [[1, 15]] + OTHERS)
    assert choose(st) == ("lead", (1,))
    assert choose(st, w_points=10) == ("lead", (15,))     # stand-in points 1 vs 3: 0 vs 8
    assert choose(st, w_strength=-1) == ("lead", (15,))   # -10 vs 2
    assert choose(st, w_strength=0) == ("lead", (1,))     # -10 vs -10: the first in order


def test_lead_cards():
    # Leading from 1 14 14: single 1 = 10 - 20 - 0 = -10, pair 14 = 20 - 20 - 22 = -22.
    st = state(4, [[1, 14, 14]] + OTHERS)
    assert choose(st) == ("lead", (1,))
    assert choose(st, lead_cards=20) == ("lead", (14, 14))   # 10 vs 18


def test_w_end():
    # Leading from 1 8 15: an 8 ends the trick (Rule of 8's): 10 - 40 - 6 + 100 = 64.
    st = state(4, [[1, 8, 15]] + OTHERS)
    assert choose(st) == ("lead", (8,))
    assert choose(st, w_end=0) == ("lead", (1,))           # -36 vs 1's -30


def test_units_and_cards():
    # Leading from 2 3 13: run 2-3 = 20 - 20 - 3 = -3; single 2 = 10 - 40 - 1 = -31.
    st = state(4, [[2, 3, 13]] + OTHERS)
    assert choose(st) == ("lead", (2, 3))
    # no value on cards or melds left: the weakest single (strength 1 vs 3 for the run)
    assert choose(st, w_cards=0, w_units=0) == ("lead", (2,))


# ---- any knobs play legal games ---------------------------------------------------------------
class Replay(pgc_ref.Game):
    """The reference game with every seat's choices read from the kernel's trace: the reference
    asserts each one is among its legal actions."""

    def __init__(self, rules, players, seed, game, taken):
        super().__init__(rules, players, ["replay"] * players, seed, game)
        self.taken = [list(reversed(t)) for t in taken]

    def choose_random(self, seat, acts):
        return self.taken[seat].pop()


@pytest.mark.parametrize("variant,P", [("base", 2), ("base", 3), ("overwrite", 4), ("odd", 5),
                                       ("short", 6), ("extra-deal", 3), ("points20", 2)])
def test_knobs_in_bounds_play_legal_games(variant, P):
    rules = rules_of(variant)
    p = params(**rules)
    rows = knob_vectors(P, 4)
    for g in range(6):
        knobs = [rows[(g + s) % len(rows)] for s in range(P)]
        seats = seats_of(["tuned"] * P, knobs)
        if g % 3 == 2:
            seats[0, 4] = 1 << pgc.X_NO_ADD             # a restricted tuned seat too
        row, ev = trace(p, seats, 7, 40 + g)
        rep = Replay(rules, P, 7, 40 + g, [traced_actions(ev, s) for s in range(P)])
        if g % 3 == 2:
            assert all(a[0] != "add" for a in traced_actions(ev, 0))
        assert ref_row(rep.play()) == without_arc(row, pgc.N_COUNTERS).tolist()
        assert all(not t for t in rep.taken)


# ---- determinism ----------------------------------------------------------------------------------
def test_threads_chunks_and_serial_agree():
    p = params()
    seats = seats_of(["tuned"] * 4, knob_vectors(11, 2)[:4])
    ref = run(p, seats, 96, serial=True)
    threads = numba.get_num_threads()
    try:
        for th in sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)}):
            numba.set_num_threads(th)
            assert (run(p, seats, 96, serial=False) == ref).all()
    finally:
        numba.set_num_threads(threads)
    chunks = np.vstack([run(p, seats, 40, first=300), run(p, seats, 56, first=340)])
    assert (chunks == ref).all()
