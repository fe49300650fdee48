"""forecasts-cubes: a trick game that pushes nine Hot/Cold cubes (rulebook forecasts-cubes.txt).

Rounds: deal, secret forecasts, ``tricks_per_round`` tricks (the winner moves a cube in the
winning card's colour direction), round scoring. Four rounds, then tie-breakers. ``play_one``
reads as the rulebook: setup_game, then per round deal_round, forecast_phase, tricks_phase
(play_trick with each seat's card_choice, then cube_move_phase with the Weather Advisory) and
score_round, then end_of_game.

Encodings (see kernels/cards.py): cards are French cards without J, Q, K (40 cards); a hand
is a 64-bit mask. Buckets: HOT = 0, NEUTRAL = 1, COLD = 2. Forecasts: F_HOT = 0, F_COLD = 1.
The winning card is always of the led suit (there are no trumps), so a trick's colour is
the led suit's colour. The rulebook's suit tie-break order never applies: a trick has one
highest card of the led suit.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import prange

from . import arc, builds, ismcts, layout, race, rng
from ._jit import jit, jit_borrowing, pjit

# Speed notes (CPU-time A/B on one thread, bit-identical results; benchmarks/RESULTS.md):
# - small rule functions are inlined at the Numba level (inline='always'); where reference
#   counting is on (the search player's rollouts) the ones in a loop take scalars, not arrays: an
#   inlined function's array arguments cost a reference-count round trip on every call (~20% of
#   random play when play_one had it on);
# - play_one, with its phases inlined, is compiled without reference counting (jit_borrowing):
#   it allocates nothing, so the phases take the working arrays (``State``) freely;
# - play_one is compiled twice, with and without the search player (``search`` None);
# - the working arrays are allocated once per block of games, stream keys share their prefix,
#   the deal's 39 shuffle draws are computed before the swaps (rng.shuffle_batched), a random
#   seat's card draw has no branch on the number of legal cards, and in the tricks each seat's
#   next random bits are computed one draw ahead (``nxt``).
from .cards import (
    FOLLOW_MASK, HEARTS, DIAMONDS, N_CARDS, N_RANKS, RANK_10, RANK_A, SUIT_MASK,
    card_name, follow_or_any, highest_bit, ix, lowest_bit, nth_bit, popcount, rank_of,
    select_card, suit_of,
)
from .knobs import fill_knob_defaults, load_own_knob_row
from .layout import col_counter, col_decisions, col_flags, col_length, col_winners, record_event
from .rng import _S32
from .spec import SEAT_FORBID, SEAT_WATCH, Counter, Event, Knob, Restriction, Rule

GAME_ID = "forecasts-cubes"
VERSION = 4  # 2: the heuristic leads its highest-ranked card of its colour (was: highest code);
# 3: random draws once over all cube moves (was: Advisory first), every policy takes a winning last move
# 4: a search's re-deal with no void shown deals its shuffle out in order (the same distribution,
# other draws: search seats' games differ from version 3's on the same seed; other play unchanged)
PLAYER_COUNTS = (3, 4)
LOWER_IS_BETTER = False
LENGTH_UNIT = "tricks"

# ---- rules (index = slot in params) ---------------------------------------------------------
R_ADVISORY, R_TRICKS, R_ROUNDS = 0, 1, 2
RULES = (
    Rule("advisory", R_ADVISORY, False,
         "optional Weather Advisory: once per game a trick winner moves two cubes",
         ruling="rulebook optional rule; RULINGS: only offered with 2+ cubes in the source"),
    Rule("tricks_per_round", R_TRICKS, 10,
         "tricks played each round (at most the hand size: 10 at 4p, 13 at 3p)", lo=1, hi=13,
         ruling="RULINGS (switch): 10 at both counts, as the text says"),
    Rule("rounds", R_ROUNDS, 4, "rounds in a game", lo=1, hi=12, ruling="rulebook: 4 rounds"),
)

P_RANDOM, P_HEURISTIC, P_MC, P_TUNED, P_RACE, P_ISMCTS, P_SIFT = 0, 1, 2, 3, 4, 5, 6
# ``tuned`` is the heuristic's decision rule with the seat's own knob values (KNOBS below)
POLICIES = {"random": P_RANDOM, "heuristic": P_HEURISTIC, "mc": P_MC, "tuned": P_TUNED, "race": P_RACE,
            "ismcts": P_ISMCTS, "sift": P_SIFT}
# mc:BUDGET:ROLLOUT - rollouts per option (determinisations shared across options) and the
# policy every seat follows inside a rollout
# mc:BUDGET:ROLLOUT:OBJECTIVE - what a sample is worth to the searching seat (OBJ_* below)
OBJECTIVES = ("0 own round points (default), 1 own round points minus the other seats' mean, "
              "2 as 1, and in the game's last round its win share first")
POLICY_ARGS = {"mc": (("budget", 64, 1, 4096), ("rollout", "heuristic", None, None),
                      ("objective", 0, 0, 2, OBJECTIVES)),
               "race": (("budget", 64, 1, 4096), ("rollout", "heuristic", None, None)),
               # sift:BUDGET:ROLLOUT:SCHEDULE - race's search on common samples with its drop rule,
               # and whether interchangeable cards are one option, by schedule k of kernels/race.py
               # (SIFT_*; 0: z 3 from sample 16, no equivalence drop, every card searched):
               # forecasts-bid's sift, issue #26, session 21
               "sift": (("budget", 64, 1, 4096), ("rollout", "heuristic", None, None),
                        ("schedule", 0, 0, len(race.SIFT_Z) - 1,
                         "kernels/race.py's SIFT_* column (0 = the default; docs/search.md, sift)")),
               # ismcts:SAMPLES:ROLLOUT:EXPLORE - samples per decision (each played from every
               # option: one tree iteration and one rollout each, as mc:SAMPLES), the rollout
               # policy, the UCB constant in hundredths below the root
               "ismcts": (("samples", 64, 1, 4096), ("rollout", "heuristic", None, None),
                          ("explore", 30, 0, 1000, "the UCB exploration constant in hundredths"))}

# ``tuned``: the heuristic's decision rule as named integer knobs (a seat row's knob columns,
# spec.SEAT_KNOBS + index); the defaults are the ``heuristic`` policy exactly.
# docs/games/forecasts-cubes.md, "tuned". The forecast knobs' ranges keep the forecast a function
# of the hand (30-70% Hot over random hands at every corner, tests/test_train_fitness.py): with
# a bias of +-40 or only aces weighing, the trainer found "one colour whatever the hand", and a
# table of such seats ties every game (issue #24; the game is colour-symmetric, so a fixed colour
# is a convention shared with the table, not play).
(K_FC_BIAS, K_FC_MIN, K_FC_COUNT, K_WIN_CHEAP, K_SLUFF_HIGH, K_LEAD_LOW, K_ADV_GAIN, K_ADV_ROUND,
 K_TIEBREAK, K_FC_FLIP) = range(10)
KNOBS = (
    Knob("forecast_bias", K_FC_BIAS, 0, -6, 6,
         "forecast Hot when red weight - black weight + bias >= 0 (a card's weight: its strength, "
         "2 = 1 ... 10 = 9, A = 10, plus forecast_card_weight)"),
    Knob("forecast_min_strength", K_FC_MIN, 1, -8, 8,
         "only cards of at least this strength weigh (0 and 1: every card); negative: cards of at "
         "least -this weigh and the forecast is contrary, the colour that weighs less (the other "
         "hands hold the colour this one lacks)"),
    Knob("forecast_card_weight", K_FC_COUNT, 0, 0, 10, "weight per card, added to its strength"),
    Knob("win_cheap", K_WIN_CHEAP, 0, 0, 1,
         "winning a trick of its colour: 0 = with its highest card of the suit, 1 = its lowest winning card"),
    Knob("sluff_high", K_SLUFF_HIGH, 0, 0, 1,
         "void in the led suit: shed 0 = its lowest-ranked card of the other colour, 1 = its highest"),
    Knob("lead_low", K_LEAD_LOW, 0, 0, 1, "leading: 0 = its highest card of its colour, 1 = its lowest"),
    Knob("advisory_gain", K_ADV_GAIN, 1, -4, 4,
         "play the Advisory only when the double move gains at least this many round points over "
         "every single (<= 0: also when it gains nothing or loses up to -gain)"),
    Knob("advisory_round", K_ADV_ROUND, 0, 0, 12, "... and only from this round on (0 = the first)"),
    Knob("move_tiebreak", K_TIEBREAK, 0, 0, 1,
         "moves worth the same round points: 0 = the first, 1 = the one leaving fewer cubes in the "
         "bucket opposite its forecast"),
    Knob("forecast_flip", K_FC_FLIP, 0, 0, 50,
         "in this percentage of rounds forecast the other colour than the rule above gives (drawn "
         "from the seat's own stream, only when > 0): a mixed forecast, so that 'always forecast "
         "Hot' or 'always Cold' gains nothing against a table of this policy (the win condition "
         "rewards differing from the table; docs/games/forecasts-cubes.md)"),
)
NK = len(KNOBS)
KNOB_DEFAULTS = np.array([k.default for k in KNOBS], dtype=np.int64)

# ---- restrictions (policy modifiers ``POLICY+NAME``: bits of a seat row's forbid mask) ----------
RX_NO_ADVISORY, RX_ALWAYS_ADVISORY, RX_HOT_ONLY, RX_COLD_ONLY = range(4)
RESTRICTIONS = (
    Restriction("no-advisory", RX_NO_ADVISORY, "never play the Weather Advisory (move one cube)"),
    Restriction("always-advisory", RX_ALWAYS_ADVISORY,
                "play the Weather Advisory at the first chance (the first trick won with a double move offered)"),
    Restriction("hot-only", RX_HOT_ONLY, "always forecast Hot"),
    Restriction("cold-only", RX_COLD_ONLY, "always forecast Cold"),
)

# ---- constants ----------------------------------------------------------------------------
HOT, NEUTRAL, COLD = 0, 1, 2
F_HOT, F_COLD = 0, 1
CUBES_START = (4, 1, 4)
N_CUBES = 9
# rulebook Setup: "Remove all Jacks, Queens, and Kings from the deck" (40 cards left), "Shuffle
# the remaining cards and deal: 4 players: 10 cards each; 3 players: 13 cards each"
HAND_SIZE = (0, 0, 0, 13, 10)           # by player count
MAX_HAND = max(HAND_SIZE)
DECK_MASK = np.int64(0)
for _s in range(4):
    for _r in range(N_RANKS):
        if _r <= RANK_10 or _r == RANK_A:
            DECK_MASK |= np.int64(1) << np.int64(_s * N_RANKS + _r)
DECK = np.array([c for c in range(N_CARDS) if (int(DECK_MASK) >> c) & 1], dtype=np.int64)
DECK_SIZE = len(DECK)                   # 40: A, 2..10 in four suits
RED_MASK = SUIT_MASK[HEARTS] | SUIT_MASK[DIAMONDS]

# ---- counters (index = column offset in the result row) -------------------------------------
(C_ADV_USES, C_ADV_USER_SHARE, C_ADV_USER_SEATS, C_CORRECT, C_HOT_FORECASTS, C_HOT_CORRECT,
 C_COLD_FORECASTS, C_COLD_CORRECT, C_ROUND_HOT, C_ROUND_NEUTRAL, C_ROUND_COLD, C_ROUNDS,
 C_NO_MOVE) = range(13)
C_MC_ROLLOUTS, C_MC_PLAYS = 13, 14
C_FINAL_HOT = 15                        # 10 counters: rounds ending with k Hot cubes, k = 0..9
COUNTERS = (
    Counter("advisory_uses", "Weather Advisories played"),
    Counter("advisory_user_share", "win share (x60) of seats that used their Advisory"),
    Counter("advisory_user_seats", "seat-games in which the Advisory was used"),
    Counter("correct_forecasts", "forecasts that earned the winning-bucket bonus"),
    Counter("hot_forecasts"), Counter("hot_correct"),
    Counter("cold_forecasts"), Counter("cold_correct"),
    Counter("round_hot", "sum over rounds of Hot cubes at round end"),
    Counter("round_neutral"), Counter("round_cold"),
    Counter("rounds"),
    Counter("no_move_tricks", "tricks won with no legal cube move"),
    Counter("mc_rollouts", "rollouts played by search (mc) seats"),
    Counter("mc_rollout_plays", "card plays simulated inside those rollouts"),
) + tuple(Counter(f"final_hot_{k}", f"rounds ending with {k} Hot cubes") for k in range(10)) + (
    Counter("restriction_forbidden",
            "decisions at which a seat with a watch bit took an option in its watched set"),
    Counter("restriction_yielded",
            "decisions at which a restricted seat found every legal option forbidden"),
)
C_RX_FORBIDDEN, C_RX_YIELDED = C_FINAL_HOT + 10, C_FINAL_HOT + 11
N_COUNTERS = len(COUNTERS)

# ---- trace events -------------------------------------------------------------------------
E_DEAL, E_FORECAST, E_PLAY, E_TRICK, E_MOVE, E_NO_MOVE, E_ADVISORY_CHOICE, E_ROUND, E_CUBES, E_FINAL = range(1, 11)
E_CHECKPOINT = 11
_BUCKETS = ("Hot", "Neutral", "Cold")
EVENTS = (
    Event(E_DEAL, "deal", ("round", "hand", "leader"), masks=("hand",)),
    Event(E_FORECAST, "forecast", ("round", "forecast"), words=(("forecast", ("Hot", "Cold")),)),
    Event(E_PLAY, "play", ("round", "trick", "card"), cards=("card",)),
    Event(E_TRICK, "trick", ("round", "trick", "card"), cards=("card",)),
    Event(E_MOVE, "cube_move", ("round", "trick", "from", "to", "cubes", "advisory", "hot", "neutral"),
          words=(("from", _BUCKETS), ("to", _BUCKETS))),
    Event(E_NO_MOVE, "no_cube_move", ("round", "trick")),
    Event(E_ADVISORY_CHOICE, "advisory_choice", ("round", "trick", "use")),
    Event(E_ROUND, "round_score", ("round", "forecast", "points", "correct", "total"),
          words=(("forecast", ("Hot", "Cold")),)),
    Event(E_CUBES, "cubes", ("round", "hot", "neutral", "cold")),
    Event(E_FINAL, "final", ("score", "place", "correct", "advisory_unused", "winner")),
    arc.checkpoint_event(E_CHECKPOINT),   # standing = running score, after every round
)


def format_card(c: int) -> str:
    return card_name(c)


def n_seats(players: int, params) -> int:
    return players


def extra_seats(players: int, params) -> tuple:
    return ()


def score_range(players: int, params) -> tuple[int, int]:
    return 0, (N_CUBES + 1) * int(params[R_ROUNDS])


def length_range(players: int, params) -> tuple[int, int]:
    n = int(params[R_ROUNDS]) * int(params[R_TRICKS])
    return n, n


def check(players: int, params) -> None:
    hand = HAND_SIZE[players]
    if int(params[R_TRICKS]) > hand:
        raise ValueError(f"rule tricks_per_round: {int(params[R_TRICKS])} is more than the "
                         f"{hand}-card hand at {players} players (valid: 1..{hand})")


# ---- rules as small functions ----------------------------------------------------------------
@jit(inline='always')
def legal_plays(hand, led_suit):
    """Follow suit if able; otherwise (or when leading, led_suit = -1) any card. No branch: the
    follow mask of "no suit led" is empty (FOLLOW_MASK), and a void keeps the whole hand."""
    follow = hand & FOLLOW_MASK[led_suit + 1]
    return follow | (hand & (np.int64(follow != 0) - 1))


@jit(inline='always')
def beats(c, best, led_suit):
    """Does card ``c`` beat ``best``, the card holding a trick led in ``led_suit``? The highest
    card of the led suit wins (no trumps)."""
    return suit_of(c) == led_suit and c > best


@jit(inline='always')
def trick_winner(cards, leader, players):
    """Seat that played the highest card of the led suit (``cards[seat]``)."""
    led = suit_of(cards[leader])
    best = leader
    for s in range(players):
        if beats(cards[s], cards[best], led):
            best = s
    return best


@jit(inline='always')
def move_source(red, option):
    """Cube moves: option 0 takes from the far bucket to Neutral, option 1 from Neutral onward.

    Red (toward Hot): 0 = Cold -> Neutral, 1 = Neutral -> Hot.
    Black (toward Cold): 0 = Hot -> Neutral, 1 = Neutral -> Cold.
    """
    if option == 0:
        return COLD if red else HOT
    return NEUTRAL


@jit(inline='always')
def move_dest(red, option):
    if option == 0:
        return NEUTRAL
    return HOT if red else COLD


@jit(inline='always')
def apply_cube_move(hot, neutral, cold, red, size, option):
    """(hot, neutral, cold) after ``size`` cubes (2: the Weather Advisory) move one step from
    move_source to move_dest. On scalars: it runs in the hot loop (below)."""
    src = move_source(red, option)
    dst = move_dest(red, option)
    hot += (size if dst == HOT else 0) - (size if src == HOT else 0)
    neutral += (size if dst == NEUTRAL else 0) - (size if src == NEUTRAL else 0)
    cold += (size if dst == COLD else 0) - (size if src == COLD else 0)
    return hot, neutral, cold


# The rules below come in two spellings: on scalars (used by play_one's hot loop: an inlined
# function that takes arrays costs a reference-count round trip per call, measured ~20% of
# random play) and on the ``cubes`` array (tests, search rollouts), the latter calling the former.
@jit(inline='always')
def legal_cube_moves(hot, neutral, cold, red, size):
    """Bit mask of legal options (bit 0, bit 1) for moving ``size`` cubes from one bucket."""
    far = cold if red else hot
    return (1 if far >= size else 0) | (2 if neutral >= size else 0)


@jit(inline='always')
def legal_cube_moves_in(cubes, red, size):
    return legal_cube_moves(cubes[HOT], cubes[NEUTRAL], cubes[COLD], red, size)


@jit(inline='always')
def points(hot, cold, forecast):
    """(points, correct): cubes in the forecast bucket, +1 when it beats the opposite bucket."""
    mine = hot if forecast == F_HOT else cold
    other = cold if forecast == F_HOT else hot
    if mine > other:
        return mine + 1, 1
    return mine, 0


@jit(inline='always')
def round_points(cubes, forecast):
    return points(cubes[HOT], cubes[COLD], forecast)


# ---- heuristic pieces ----------------------------------------------------------------------
@jit
def _strength(c):
    """Rank strength 1..10 in this deck: 2 = 1, ..., 10 = 9, A = 10."""
    r = rank_of(c)
    return 10 if r == RANK_A else r + 1


# A colour's forecast weight without a loop over its cards: STRENGTH_AT_LEAST[x] holds the deck's
# cards of strength >= x (x = 0..11), STRENGTH_PLANE[k] those whose strength has bit k set
# (strengths are 1..10: four planes), so the sum of the strengths of the cards in a mask is four
# popcounts (a search draws every other seat's forecast from its sampled hand, once a sample)
_at_least = np.zeros(12, dtype=np.int64)
_plane = np.zeros(4, dtype=np.int64)
for _c in DECK:
    _x = 10 if _c % N_RANKS == RANK_A else _c % N_RANKS + 1
    _at_least[:_x + 1] |= np.int64(1) << np.int64(_c)
    for _k in range(4):
        if (_x >> _k) & 1:
            _plane[_k] |= np.int64(1) << np.int64(_c)
STRENGTH_AT_LEAST = _at_least
STRENGTH_PLANE = _plane


@jit(inline='always')
def _weight(m, card_weight):
    """Sum over the cards of ``m`` of their strength + ``card_weight``."""
    return (popcount(m & STRENGTH_PLANE[0]) + 2 * popcount(m & STRENGTH_PLANE[1])
            + 4 * popcount(m & STRENGTH_PLANE[2]) + 8 * popcount(m & STRENGTH_PLANE[3])
            + card_weight * popcount(m))


@jit
def knob_forecast(hand, bias, min_strength, card_weight):
    """Hot when the red cards outweigh the black ones (ties: Hot), by the forecast knobs: a
    card of strength >= min_strength weighs its strength + card_weight; bias is added to red.
    min_strength < 0: cards of strength >= -min_strength weigh, and the forecast is the other
    colour (contrary; ties: Cold), so bias > 0 still leans Hot. (``knob_forecast_by_card`` is
    the same rule card by card, the reference it is tested against.)"""
    contrary = min_strength < 0
    lo = -min_strength if contrary else min_strength
    m = hand & STRENGTH_AT_LEAST[min(max(lo, 0), 11)]
    red = _weight(m & RED_MASK, card_weight)
    black = _weight(m & ~RED_MASK, card_weight)
    if contrary:
        return F_HOT if black + bias > red else F_COLD
    return F_HOT if red + bias >= black else F_COLD


@jit
def knob_forecast_by_card(hand, bias, min_strength, card_weight):
    """knob_forecast card by card (what it was until session 24)."""
    contrary = min_strength < 0
    lo = -min_strength if contrary else min_strength
    red = bias if not contrary else 0
    black = 0 if not contrary else bias
    h = hand
    while h:
        c = lowest_bit(h)
        h &= h - 1
        x = _strength(c)
        if x >= lo:
            if (RED_MASK >> c) & 1:
                red += x + card_weight
            else:
                black += x + card_weight
    if contrary:
        return F_HOT if black > red else F_COLD
    return F_HOT if red >= black else F_COLD


@jit
def heuristic_forecast(hand):
    return knob_forecast(hand, 0, 1, 0)


@jit(inline='always')
def heuristic_card(hand, legal, led_suit, best_card, forecast, win_cheap=0, sluff_high=0, lead_low=0):
    """Win tricks whose colour pushes toward the forecast, lose the others (the knobs win_cheap,
    sluff_high, lead_low choose among the cards that do it; 0 = the heuristic)."""
    want_red = forecast == F_HOT
    fav_mask = RED_MASK if want_red else ~RED_MASK
    if led_suit < 0:
        fav = legal & fav_mask
        if fav:
            return _lowest_rank(fav) if lead_low else _highest_rank(fav)
        return _lowest_rank(legal)
    follow = legal & SUIT_MASK[led_suit]
    if follow:
        led_red = led_suit == HEARTS or led_suit == DIAMONDS
        if led_red == want_red:
            top = highest_bit(follow)
            if top > best_card:
                if win_cheap:
                    return lowest_bit(follow & ~((np.int64(2) << best_card) - 1))
                return top
            return lowest_bit(follow)
        below_best = follow & ((np.int64(1) << best_card) - 1)
        if below_best:
            return highest_bit(below_best)
        return lowest_bit(follow)
    unfav = legal & ~fav_mask
    if unfav:
        return _highest_rank(unfav) if sluff_high else _lowest_rank(unfav)
    return _lowest_rank(legal)


# A card's rank is its place in its suit's 13 bits, so the ranks present in a mask are its four
# suit segments OR-ed together, and the cards of rank r are the mask shifted by r at the four suit
# offsets (RANK_COLUMN: bits 0, 13, 26, 39): the lowest of those is the lowest suit index.
RANK_COLUMN = np.int64(1 | (1 << N_RANKS) | (1 << (2 * N_RANKS)) | (1 << (3 * N_RANKS)))
_RANKS13 = np.int64((1 << N_RANKS) - 1)


@jit(inline='always')
def _ranks_present(mask):
    return (mask | (mask >> N_RANKS) | (mask >> (2 * N_RANKS)) | (mask >> (3 * N_RANKS))) & _RANKS13


@jit(inline='always')
def _highest_rank(mask):
    """The card of highest rank in ``mask`` (lowest suit index on equal rank; ``mask`` != 0):
    no loop over the suits (a loop over the cards with a division each cost about a tenth of a
    search rollout; a loop over the four suits, until session 24, several instructions a suit)."""
    r = highest_bit(_ranks_present(mask))
    return lowest_bit((mask >> r) & RANK_COLUMN) + r


@jit(inline='always')
def _lowest_rank(mask):
    """The card of lowest rank in ``mask`` (lowest suit index on equal rank; ``mask`` != 0)."""
    r = lowest_bit(_ranks_present(mask))
    return lowest_bit((mask >> r) & RANK_COLUMN) + r


@jit
def heuristic_move_n(hot, neutral, cold, red, forecast, singles, doubles):
    """Best (size, option) among the legal moves (masks of options, see ``legal_cube_moves``) by
    the round points it leaves this seat; a double only when it gains over every single."""
    return knob_move_n(hot, neutral, cold, red, forecast, singles, doubles, 1, 0)


@jit
def knob_move_n(hot, neutral, cold, red, forecast, singles, doubles, adv_gain, tiebreak):
    """heuristic_move_n by the knobs: a double only when it gains at least ``adv_gain`` round
    points over every single (any double when no single is left); ``tiebreak`` 1: among equal
    points, fewer cubes in the bucket opposite the forecast. Values are points x 16 + tie key."""
    best_size = 0
    best_opt = -1
    best_val = -1
    for size in range(1, 3):
        m = singles if size == 1 else doubles
        for option in range(2):
            if (m >> option) & 1:
                h, _, c = apply_cube_move(hot, neutral, cold, red, size, option)
                v, _ = points(h, c, forecast)
                v *= 16
                if tiebreak:
                    v += N_CUBES - (c if forecast == F_HOT else h)
                if size == 2 and singles != 0:
                    v -= (adv_gain - 1) * 16
                if v > best_val:
                    best_val = v
                    best_size = size
                    best_opt = option
    return best_size, best_opt


@jit(inline='always')
def knob_move_fast(hot, neutral, cold, red, forecast, singles, doubles, adv_gain, tiebreak):
    """knob_move_n's answer, computed straight when no double is legal (the rollouts' common
    case, inlined there): one single left is the move; of two singles option 1 is taken only
    when it is worth strictly more (knob_move_n keeps the first of equal values). With a double
    legal it is knob_move_n. ``singles`` != 0 when ``doubles`` is 0 (as restrict_moves leaves it)."""
    if doubles == 0:
        if singles != 3:
            return 1, singles >> 1
        h0, _, c0 = apply_cube_move(hot, neutral, cold, red, 1, 0)
        h1, _, c1 = apply_cube_move(hot, neutral, cold, red, 1, 1)
        v0, _ = points(h0, c0, forecast)
        v1, _ = points(h1, c1, forecast)
        v0 *= 16
        v1 *= 16
        if tiebreak:
            v0 += N_CUBES - (c0 if forecast == F_HOT else h0)
            v1 += N_CUBES - (c1 if forecast == F_HOT else h1)
        return 1, 1 if v1 > v0 else 0
    return knob_move_n(hot, neutral, cold, red, forecast, singles, doubles, adv_gain, tiebreak)


# The heuristic's single move as a table, for the rollouts' common case (no double legal to the
# winner, no restriction): MOVE_NEXT[((tiebreak * 2 + forecast) * 2 + red) * 100 + hot * 10 + cold]
# is the cubes after it, hot * 16 + cold (unchanged when no single is legal). Built in plain Python
# by the rule knob_move_fast computes (the higher of the two singles' round points x 16, plus the
# tie-break key, the first on equal values); tests/test_forecasts_cubes_mc.py checks every entry
# against knob_move_n.
def _move_next_table():
    table = np.zeros(2 * 2 * 2 * 100, dtype=np.int64)
    for tiebreak in range(2):
        for forecast in (F_HOT, F_COLD):
            for red in range(2):
                for hot in range(N_CUBES + 1):
                    for cold in range(N_CUBES + 1 - hot):
                        neutral = N_CUBES - hot - cold
                        far = cold if red else hot
                        best, after = None, (hot, cold)
                        for option in range(2):
                            if (far if option == 0 else neutral) < 1:
                                continue
                            h, c = hot, cold
                            if option == 0:     # the far bucket to Neutral
                                h, c = (h, c - 1) if red else (h - 1, c)
                            else:               # Neutral to Hot (red) or Cold (black)
                                h, c = (h + 1, c) if red else (h, c + 1)
                            mine, other = (h, c) if forecast == F_HOT else (c, h)
                            v = (mine + (1 if mine > other else 0)) * 16
                            if tiebreak:
                                v += N_CUBES - other
                            if best is None or v > best:
                                best, after = v, (h, c)
                        i = ((tiebreak * 2 + forecast) * 2 + red) * 100 + hot * 10 + cold
                        table[i] = after[0] * 16 + after[1]
    return table


MOVE_NEXT = _move_next_table()


@jit(inline='always')
def heuristic_move(cubes, red, forecast, can_double):
    singles = legal_cube_moves_in(cubes, red, 1)
    doubles = legal_cube_moves_in(cubes, red, 2) if can_double else 0
    return heuristic_move_n(cubes[HOT], cubes[NEUTRAL], cubes[COLD], red, forecast, singles, doubles)


@jit(inline='always')
def nth_move(singles, doubles, k):
    """(size, option) of the k-th legal cube move, in the order single option 0, single option 1,
    double option 0, double option 1 (the random player's one draw over all of them)."""
    ns = popcount(singles)
    if k < ns:
        return 1, nth_bit(singles, k)
    return 2, nth_bit(doubles, k - ns)


@jit(inline='always')
def standing_key(score, correct, unused_adv):
    """The end of the game's order as one number (_finish_into): the score, then correct forecasts
    (at most 12, below 16), then an unused Weather Advisory (0 or 1; 0 without the optional rule)."""
    return (score * 16 + correct) * 2 + unused_adv


@jit(inline='always')
def end_share(hot, cold, me, score, correct, adv_left, forecast, advisory_on, P, spent):
    """Seat ``me``'s share of the win (layout.SHARE_UNIT // the seats level on top; 0 when another
    seat is ahead) if the game ended when this round is scored with ``hot`` / ``cold`` cubes:
    ``score`` and ``correct`` are the totals before the round, ``adv_left`` the Advisories still
    held, ``spent``: ``me`` spends its Advisory on the move being weighed."""
    top = -1
    n_top = 0
    mine = -1
    for s in range(P):
        pts, ok = points(hot, cold, forecast[s])
        unused = adv_left[s] if advisory_on and not (s == me and spent) else 0
        k = standing_key(score[s] + pts, correct[s] + ok, unused)
        if s == me:
            mine = k
        if k > top:
            top = k
            n_top = 1
        elif k == top:
            n_top += 1
    return layout.SHARE_UNIT // n_top if mine == top else 0


@jit
def winning_moves(hot, neutral, cold, red, singles, doubles, w, score, correct, adv_left, forecast,
                  advisory_on, P):
    """The game's last cube move: (singles, doubles) cut down to the moves that give seat ``w``
    the largest win share (a sole win before a 2-way tie, ...), when some move wins at all;
    otherwise the legal moves unchanged. RULINGS: every policy takes an immediate game-winning
    action when one is offered. ``score`` and ``correct`` are the totals before this round."""
    best_share = 0
    keep_s = 0
    keep_d = 0
    for size in range(1, 3):
        m = singles if size == 1 else doubles
        for option in range(2):
            if not (m >> option) & 1:
                continue
            h, _, c = apply_cube_move(hot, neutral, cold, red, size, option)
            share = end_share(h, c, w, score, correct, adv_left, forecast, advisory_on, P,
                              size == 2)
            if share > best_share:
                best_share = share
                keep_s = 0
                keep_d = 0
            if share == best_share and share > 0:
                if size == 1:
                    keep_s |= 1 << option
                else:
                    keep_d |= 1 << option
    if best_share == 0:
        return singles, doubles
    return keep_s, keep_d


# ---- restrictions as small functions (scalars only: they run in the hot loop) -------------------
@jit(inline='always')
def forbidden_forecasts(mask):
    """Forecasts (bit F_HOT, bit F_COLD) that restriction bits ``mask`` forbid."""
    return (((mask >> RX_HOT_ONLY) & 1) << F_COLD) | (((mask >> RX_COLD_ONLY) & 1) << F_HOT)


@jit(inline='always')
def restrict_moves(mask, singles, doubles):
    """(singles, doubles, yielded): the cube moves left to a seat with restriction bits ``mask``.
    When every offered move is forbidden the restriction yields (all are left, yielded = 1)."""
    s2 = singles
    d2 = doubles
    if (mask >> RX_NO_ADVISORY) & 1:
        d2 = 0
    if (mask >> RX_ALWAYS_ADVISORY) & 1 and doubles != 0:
        s2 = 0
    if s2 == 0 and d2 == 0:
        return singles, doubles, 1
    return s2, d2, 0


@jit(inline='always')
def move_forbidden(mask, doubles, size):
    """Whether moving ``size`` cubes is an option restriction bits ``mask`` forbid."""
    if size == 2:
        return (mask >> RX_NO_ADVISORY) & 1
    return (mask >> RX_ALWAYS_ADVISORY) & 1 if doubles != 0 else 0



@jit(inline='always')
def adv_gain_at(kn, kb, rnd):
    """The advisory_gain knob of row ``kn[kb:]`` in round ``rnd`` (before advisory_round: more
    than any double can gain, so only a seat left with doubles alone plays one)."""
    return kn[kb + K_ADV_GAIN] if rnd >= kn[kb + K_ADV_ROUND] else np.int64(99)


# ---- search player (mc) -------------------------------------------------------------------
@jit(inline='always')
def _searches(pol):
    """Whether a seat on ``pol`` searches (``mc``; ``race``, ``sift``: the same search, raced;
    ``ismcts``)."""
    return pol == P_MC or pol == P_RACE or pol == P_ISMCTS or pol == P_SIFT


# What an mc seat may use: its own hand, its own forecast, every card played this round and by
# whom (so which suits a seat has shown void in), the cubes, hand sizes, who holds an unused
# Advisory. What it may not: other hands, other forecasts (secret), the undealt card at 3p.
# Hidden cards are re-dealt per sample from the seat's SEARCH stream; other seats' forecasts
# are what the heuristic would choose from their sampled original hands.

@jit(inline='always')
def _choose_move(pol, hot, neutral, cold, red, forecast_w, singles, doubles, keys, ctrs, slot,
                 adv_gain, tiebreak):
    """(size, option) for a random or heuristic mover (knobs ``adv_gain``, ``tiebreak``); draws
    on stream ``slot``."""
    if pol == P_HEURISTIC:  # its best among the moves given (a restriction may have cut them)
        return knob_move_fast(hot, neutral, cold, red, forecast_w, singles, doubles, adv_gain,
                              tiebreak)
    n = popcount(singles) + popcount(doubles)
    return nth_move(singles, doubles, rng.below(keys, ctrs, slot, n) if n > 1 else 0)


# inlined in _option_value and the ISMCTS loop (docs/architecture.md, "Inline what runs once a
# rollout"); allocates nothing, its caller (a search) owns every array
@jit_borrowing(inline='always')
def _rollout(hands, cubes, forecast, adv_left, advisory_on, P, t, n_tricks, leader, played, k,
             led_suit, best_card, pol, keys, ctrs, slot, me, forbid, kn, kb, rnd):
    """Play the round on from trick ``t`` (``k`` cards already in it, ``played`` by seat) with
    every seat on ``pol`` (the heuristic's rule with the knob row ``kn[kb:kb + NK]``, round
    ``rnd``); seat ``me``'s cube moves obey its restriction bits ``forbid``.

    Works on the arrays it is given (the caller passes copies): ``hands``, ``cubes`` and
    ``adv_left`` end as the round ends; ``played`` is only read. Returns card plays simulated.
    """
    plays = 0
    # what does not change in a rollout is read once: the knobs, and the cubes are scalars until
    # the end (each was a load per card or trick: the arrays may alias, so the compiler keeps them)
    win_cheap = kn[kb + K_WIN_CHEAP]
    sluff_high = kn[kb + K_SLUFF_HIGH]
    lead_low = kn[kb + K_LEAD_LOW]
    gain = adv_gain_at(kn, kb, rnd)
    tiebreak = kn[kb + K_TIEBREAK]
    hot, neutral, cold = cubes[HOT], cubes[NEUTRAL], cubes[COLD]
    # the seat to play and the trick's winner so far are counted along, not derived per card (a
    # division by P per card and trick_winner's division by 13 per seat were about a tenth of a
    # rollout's instructions); the same seats, cards and winners
    w = leader
    if k > 0:                   # resumed inside a trick: who holds it (best_card is unique)
        for kk in range(k):
            o = leader + kk
            if o >= P:
                o -= P
            if played[ix(o)] == best_card:
                w = o
    while t < n_tricks:
        s = leader + k
        if s >= P:
            s -= P
        follow = FOLLOW_MASK[ix(led_suit + 1)]
        for kk in range(k, P):
            h = hands[ix(s)]
            legal = h & follow          # legal_plays(h, led_suit), with the trick's follow mask
            if legal == 0:
                legal = h
            if legal & (legal - 1) == 0:    # one legal card (the last trick, a lone card of the
                c = lowest_bit(legal)       # led suit): every policy plays it, with no draw
            elif pol == P_HEURISTIC:
                c = heuristic_card(h, legal, led_suit, best_card, forecast[ix(s)], win_cheap,
                                   sluff_high, lead_low)
            else:
                c = select_card(legal, rng.below(keys, ctrs, slot, popcount(legal)))
            hands[ix(s)] = h & ~(np.int64(1) << c)
            plays += 1
            if kk == 0:
                led_suit = suit_of(c)
                follow = FOLLOW_MASK[ix(led_suit + 1)]
                best_card = c
                w = s
            elif (follow >> c) & 1 and c > best_card:      # beats(c, best_card, led_suit)
                best_card = c
                w = s
            s += 1
            if s == P:
                s = 0
        red = led_suit == HEARTS or led_suit == DIAMONDS
        if pol == P_HEURISTIC and tiebreak >> 1 == 0 and not (advisory_on and adv_left[w] == 1) \
                and not (w == me and forbid != 0):
            # no double, no restriction: the heuristic's single move from the table (the same
            # move as below; a tenth of a search seat's instructions were this move's code)
            e = MOVE_NEXT[ix(((tiebreak * 2 + forecast[w]) * 2 + red) * 100 + hot * 10 + cold)]
            hot = e >> 4
            cold = e & 15
            neutral = N_CUBES - hot - cold
        else:
            singles = legal_cube_moves(hot, neutral, cold, red, 1)
            if singles:
                doubles = (legal_cube_moves(hot, neutral, cold, red, 2)
                           if (advisory_on and adv_left[w] == 1) else 0)
                if w == me and forbid != 0:
                    singles, doubles, _ = restrict_moves(forbid, singles, doubles)
                size, option = _choose_move(pol, hot, neutral, cold, red, forecast[w], singles,
                                            doubles, keys, ctrs, slot, gain, tiebreak)
                hot, neutral, cold = apply_cube_move(hot, neutral, cold, red, size, option)
                if size == 2:
                    adv_left[w] = 0
        leader = w
        t += 1
        k = 0
        led_suit = -1
        best_card = -1
    cubes[HOT], cubes[NEUTRAL], cubes[COLD] = hot, neutral, cold
    return plays


@jit_borrowing   # allocates nothing; its caller (a search) owns every array
def _determinize(me, hands, seen, voids, P, keys, ctrs, slot, out_hands, scratch):
    """Re-deal every card ``me`` has not seen: each other seat keeps its hand size and gets no
    card of a suit it has shown void in (the last attempts drop that constraint if it cannot be
    met); at 3 players the spare card may stay undealt. Reads only ``hands[me]`` and sizes.
    ``scratch``: 2 x DECK_SIZE + P long, the shuffle's cards, the seats' places left, then the
    batched shuffle's draws."""
    my_hand = hands[me]
    n = 0
    h_all = DECK_MASK & ~my_hand & ~seen
    h = h_all
    while h:
        scratch[n] = lowest_bit(h)
        h &= h - 1
        n += 1
    cap = DECK_SIZE     # scratch[cap + o]: seat o's places left
    # No seat to deal to has shown void in a suit among the hidden cards: then the per-card seat
    # draws below give every split of the cards into the seats' sizes the same chance (the seats'
    # positions in the shuffled order are drawn apart from the cards in them), and so does the
    # shuffle dealt out in order, with one draw a card fewer (the same distribution, not the same
    # draws)
    present = 0
    for su in range(4):
        if h_all & SUIT_MASK[su]:
            present |= np.int64(1) << su
    clash = 0
    for o in range(P):
        if o != me and hands[o] != 0:
            clash |= voids[o] & present
    if clash == 0:
        rng.shuffle_batched(scratch, n, keys, ctrs, slot, scratch[cap + P:])
        i = 0
        for o in range(P):
            out_hands[o] = 0
            if o != me:
                for _ in range(popcount(hands[o])):
                    out_hands[o] |= np.int64(1) << scratch[i]
                    i += 1
        out_hands[me] = my_hand
        return
    el = cap + P        # scratch[el + su]: bit o set when seat o may still get a card of suit su
    for attempt in range(24):
        rng.shuffle(scratch, n, keys, ctrs, slot)
        total = 0
        for o in range(P):
            out_hands[o] = 0
            scratch[cap + o] = 0 if o == me else popcount(hands[o])
            total += scratch[cap + o]
        spare = n - total
        # the seats a card may go to, as a bit mask per suit (room left, and not void in the
        # suit before the last attempts): a card's count of them is a popcount and its j-th one a
        # bit select, not two loops over the seats; the same seats in the same order, the same
        # draws (before session 24 both loops tested every seat for every card)
        for su in range(4):
            m = np.int64(0)
            for o in range(P):
                if scratch[cap + o] > 0 and (attempt >= 20 or not ((voids[o] >> su) & 1)):
                    m |= np.int64(1) << o
            scratch[el + su] = m
        ok = True
        for i in range(n):
            su = suit_of(scratch[i])
            m = scratch[el + su]
            ne = popcount(m)
            tot = ne + (1 if spare > 0 else 0)
            if tot == 0:
                ok = False
                break
            j = rng.below(keys, ctrs, slot, tot) if tot > 1 else 0
            if j == ne:
                spare -= 1
                continue
            o = nth_bit(m, j)
            out_hands[o] |= np.int64(1) << scratch[i]
            scratch[cap + o] -= 1
            if scratch[cap + o] == 0:       # full: no more cards of any suit
                off = ~(np.int64(1) << o)
                for s2 in range(4):
                    scratch[el + s2] &= off
        if ok:
            break
    out_hands[me] = my_hand


@jit(inline='always')
def mixed_forecast(f, flip, keys, ctrs, slot):
    """Forecast ``f``, or the other colour in ``flip`` percent of calls (knob forecast_flip),
    drawn from stream ``slot`` only when ``flip`` > 0 (so flip 0 leaves every stream as it was)."""
    if flip > 0 and rng.below(keys, ctrs, slot, 100) < flip:
        return 1 - f
    return f


@jit_borrowing(inline='always')   # allocates nothing; inlined in the searches' sample loops
def _sample_hidden(me, hands, seen, voids, round_played, P, keys, ctrs, slot, det, scratch, f2, kn, kb):
    """One sample: re-deal the hidden cards into ``det`` and give every other seat the
    forecast its rule makes from its sampled original hand (``f2``)."""
    _determinize(me, hands, seen, voids, P, keys, ctrs, slot, det, scratch)
    for o in range(P):
        if o != me:
            f2[o] = mixed_forecast(knob_forecast(det[o] | round_played[o], kn[kb + K_FC_BIAS],
                                                 kn[kb + K_FC_MIN], kn[kb + K_FC_COUNT]),
                                   kn[kb + K_FC_FLIP], keys, ctrs, slot)


@jit(inline='always')
def _follow(c, k, led_suit, best_card):
    """(led suit, best card) of a trick after card ``c`` is played ``k``-th into it."""
    if k == 0:
        return suit_of(c), c
    if beats(c, best_card, led_suit):
        return led_suit, c
    return led_suit, best_card


@jit
def _sample_arrays(P, round_played):
    """A search decision's working arrays: a sample's hands (det), the shuffle's scratch, the
    rollout's copies of hands, cubes, forecasts, Advisories and the trick (h2, c2, f2, a2, p2),
    and the cards seen this round (what ``_determinize`` must not re-deal)."""
    seen = np.int64(0)
    for o in range(P):
        seen |= round_played[o]
    return (np.zeros(P, dtype=np.int64), np.zeros(2 * DECK_SIZE + P, dtype=np.int64),
            np.zeros(P, dtype=np.int64),
            np.zeros(3, dtype=np.int64), np.zeros(P, dtype=np.int64), np.zeros(P, dtype=np.int64),
            np.zeros(P, dtype=np.int64), seen)


# Inlined in its callers, with _rollout inlined in it: a call passed every argument on the stack
# (an array is 7 words), about 250 instructions a call, and the two calls a rollout cost more than
# a tenth of a search seat's time (benchmarks/RESULTS.md, session 24). At most 30 arguments: a
# Python call with more is compiled as f(*args), which Numba cannot inline.
@jit_borrowing(inline='always')   # allocates nothing; its caller (a search) owns every array
def _option_value(kind, me, opt, det, f2, h2, c2, a2, p2, cubes, forecast, adv_left, advisory_on, P, t,
                  n_tricks, leader, played, k, led_suit, best_card, red, rpol, keys, ctrs, slot,
                  forbid, kn, kb, rnd):
    """(``me``'s round points after option ``opt`` on the sample ``det``/``f2``, the round played
    on by ``rpol``; card plays simulated) (works on the scratch arrays h2, c2, a2, p2)."""
    for o in range(P):
        h2[o] = det[o]
        a2[o] = adv_left[o]
        p2[o] = played[o]
        if o == me:
            f2[o] = forecast[o]
    for b in range(3):
        c2[b] = cubes[b]
    tt, ld, kk, ls, bc = t, leader, k, led_suit, best_card
    if kind == 0:
        f2[me] = opt
    elif kind == 1:
        h2[me] &= ~(np.int64(1) << opt)
        p2[me] = opt
        ls, bc = _follow(opt, kk, ls, bc)
        kk += 1
    else:
        size = opt // 2
        c2[HOT], c2[NEUTRAL], c2[COLD] = apply_cube_move(c2[HOT], c2[NEUTRAL], c2[COLD], red, size,
                                                         opt % 2)
        if size == 2:
            a2[me] = 0
        tt += 1
        ld = me
        kk = 0
        ls = -1
        bc = -1
    plays = _rollout(h2, c2, f2, a2, advisory_on, P, tt, n_tricks, ld, p2, kk, ls, bc, rpol, keys,
                     ctrs, slot, me, forbid, kn, kb, rnd)
    pts, _ = round_points(c2, f2[me])
    return pts, plays


# The search's objective (mc:B:ROLLOUT:OBJECTIVE; issue #24, session 22). A round's points are what
# the heuristic plays for, but the game is won by the highest total: a cube move that gives every
# Hot forecaster a point gains nothing over the other Hot forecasters.
# OBJ_OWN: own round points (the default, mc as before).
# OBJ_MEAN: (P - 1) x own round points minus the other seats' (their sampled forecasts), i.e.
#   P - 1 times its gain over the others' mean.
# OBJ_WIN: OBJ_MEAN, but in the game's last round WIN_UNIT x its win share at the game's end
#   (end_share: layout.SHARE_UNIT / the number of seats sharing the win, by the rulebook's
#   tie-breaks) first.
OBJ_OWN, OBJ_MEAN, OBJ_WIN = 0, 1, 2
WIN_UNIT = np.int64(1) << 12      # above any OBJ_MEAN value (|value| <= 2 x (P - 1) x 10)


@jit(inline='always')
def _objective(obj, me, pts, c2, f2, a2, P, score, correct, advisory_on, last_round):
    """A sample's worth to seat ``me`` whose round points are ``pts``, from the rollout's end
    state (cubes ``c2``, forecasts ``f2``, Advisories left ``a2``) and the standings before the
    round (``score``, ``correct``): OBJ_* above."""
    if obj == OBJ_OWN:
        return pts
    rel = np.int64(0)
    for o in range(P):
        p, _ = points(c2[HOT], c2[COLD], f2[o])
        rel += (P - 1) * p if o == me else -p
    if obj == OBJ_MEAN or not last_round:
        return rel
    return end_share(c2[HOT], c2[COLD], me, score, correct, a2, f2, advisory_on, P,
                     False) * WIN_UNIT + rel


@jit_borrowing   # allocates nothing; _mc_choose owns every array
def _mc_samples(total, kind, me, options, n_opt, hands, cubes, forecast, adv_left, advisory_on, P, t,
                n_tricks, leader, played, k, led_suit, best_card, voids, round_played, red, budget,
                rpol, keys, ctrs, slot, mcstat, forbid, kn, kb, rnd, score, correct, last_round, obj,
                det, scratch, h2, c2, f2, a2, p2, seen):
    """``_mc_choose``'s samples: adds each option's worth (objective ``obj``) on every sample to
    ``total``. Its own function, compiled without reference counting: called from ``_mc_choose``
    (which allocates, so counts references) each rollout cost a count up and down of its ~15
    array arguments (an atomic instruction each): with the per-sample functions also compiled
    without counting, a mc:64 table is 1.64x cheaper (benchmarks/RESULTS.md, session 22)."""
    for _ in range(budget):
        _sample_hidden(me, hands, seen, voids, round_played, P, keys, ctrs, slot, det, scratch, f2,
                       kn, kb)
        for i in range(n_opt):
            v, plays = _option_value(kind, me, options[i], det, f2, h2, c2, a2, p2, cubes,
                                     forecast, adv_left, advisory_on, P, t, n_tricks, leader,
                                     played, k, led_suit, best_card, red, rpol, keys, ctrs, slot,
                                     forbid, kn, kb, rnd)
            mcstat[0] += 1
            mcstat[1] += plays
            total[i] += _objective(obj, me, v, c2, f2, a2, P, score, correct, advisory_on,
                                   last_round)


@jit(_nrt=True)    # allocates: called from play_one, compiled without reference counting
def _mc_choose(kind, me, options, n_opt, hands, cubes, forecast, adv_left, advisory_on, P, t,
               n_tricks, leader, played, k, led_suit, best_card, voids, round_played, red,
               budget, rpol, keys, ctrs, slot, mcstat, forbid, kn, kb, rnd, score, correct,
               last_round, pol=P_MC, explore=0):
    """Index of the best of ``n_opt`` options by mean round points over ``budget`` samples
    (an ``mc`` seat: by its objective ``explore``, OBJ_* above, from the standings ``score``,
    ``correct`` and whether this is the game's ``last_round``).

    kind 0: forecast (options = F_HOT/F_COLD); 1: card (options = cards); 2: cube move
    (options = size * 2 + option). Each sample re-deals hidden cards once and plays every
    option forward from it (common random numbers); ties go to the earlier option. ``me``'s
    moves in the rollouts obey its restriction bits ``forbid``. The rollout policy ``rpol``
    (tuned: the heuristic's rule) uses the knob row ``kn[kb:kb + NK]`` (round ``rnd``), also for
    the other seats' sampled forecasts. ``pol``: the seat's search player, ``race``
    (``_race_choose``) or ``ismcts`` (``_ismcts_choose``: ``budget`` samples, UCB constant
    ``explore`` / 100) instead of ``mc``; ``sift`` (``_race_choose`` by sift schedule ``explore``).
    """
    if pol == P_ISMCTS:
        return _ismcts_choose(kind, me, options, n_opt, hands, cubes, forecast, adv_left, advisory_on,
                              P, t, n_tricks, leader, played, k, led_suit, best_card, voids,
                              round_played, red, budget, explore, rpol, keys, ctrs, slot, mcstat,
                              forbid, kn, kb, rnd)
    if rpol == P_TUNED:
        rpol = P_HEURISTIC
    if pol == P_RACE or pol == P_SIFT:
        sched = explore if pol == P_SIFT else -1
        return _race_choose(kind, me, options, n_opt, hands, cubes, forecast, adv_left, advisory_on,
                            P, t, n_tricks, leader, played, k, led_suit, best_card, voids,
                            round_played, red, budget, rpol, keys, ctrs, slot, mcstat, forbid, kn,
                            kb, rnd, sched)
    total = np.zeros(n_opt, dtype=np.int64)
    det, scratch, h2, c2, f2, a2, p2, seen = _sample_arrays(P, round_played)
    _mc_samples(total, kind, me, options, n_opt, hands, cubes, forecast, adv_left, advisory_on, P,
                t, n_tricks, leader, played, k, led_suit, best_card, voids, round_played, red,
                budget, rpol, keys, ctrs, slot, mcstat, forbid, kn, kb, rnd, score, correct,
                last_round, explore, det, scratch, h2, c2, f2, a2, p2, seen)
    best = 0
    for i in range(1, n_opt):
        if total[i] > total[best]:
            best = i
    return best


@jit
def _equivalent_cards(options, n_opt, hand, seen, alive):
    """Mark dead each card option that is interchangeable with the option before it: the same
    suit, and every card ranked between them is in ``hand`` or already played (``seen``), so
    nobody can tell them apart in a trick. ``options`` are in ascending card order."""
    known = hand | seen
    for i in range(1, n_opt):
        a = options[i - 1]
        b = options[i]
        if suit_of(a) == suit_of(b):
            between = ((np.int64(1) << b) - 1) & ~((np.int64(1) << (a + 1)) - 1)
            if between & ~known == 0:
                alive[i] = 0


@jit
def _race_choose(kind, me, options, n_opt, hands, cubes, forecast, adv_left, advisory_on, P, t,
                 n_tricks, leader, played, k, led_suit, best_card, voids, round_played, red,
                 budget, rpol, keys, ctrs, slot, mcstat, forbid, kn, kb, rnd, sched):
    """``_mc_choose`` for the ``race`` player (kernels/race.py): interchangeable cards are
    played once, and options the leader clearly beats on common samples stop being sampled.
    ``sched`` >= 0: a ``sift`` seat, whose drops follow sift schedule ``sched``
    (``race.prune_sift``; the values are round points and no round ends the game by itself, so
    ``final`` is never set), interchangeable cards played once only if its SIFT_DISTINCT says so;
    -1: ``race.prune``."""
    alive, total, S, Q = race.new_race(n_opt)
    H = np.zeros((budget if sched >= 0 else 0, n_opt), dtype=np.int64)   # a sift race's samples
    vals = np.zeros(n_opt, dtype=np.int64)
    det, scratch, h2, c2, f2, a2, p2, seen = _sample_arrays(P, round_played)
    if kind == 1 and (sched < 0 or race.SIFT_DISTINCT[sched]):
        _equivalent_cards(options, n_opt, hands[me], seen, alive)
    base = ctrs[slot]
    _race_samples(kind, me, options, n_opt, hands, cubes, forecast, adv_left, advisory_on, P, t,
                  n_tricks, leader, played, k, led_suit, best_card, voids, round_played, red,
                  budget, rpol, keys, ctrs, slot, mcstat, forbid, kn, kb, rnd, sched, alive, total,
                  S, Q, H, vals, det, scratch, h2, c2, f2, a2, p2, seen, base)
    ctrs[slot] = base + budget * race.STRIDE
    return race.leader(alive, total, n_opt)


@jit_borrowing   # allocates nothing; _race_choose owns every array (as _mc_samples)
def _race_samples(kind, me, options, n_opt, hands, cubes, forecast, adv_left, advisory_on, P, t,
                  n_tricks, leader, played, k, led_suit, best_card, voids, round_played, red,
                  budget, rpol, keys, ctrs, slot, mcstat, forbid, kn, kb, rnd, sched, alive, total,
                  S, Q, H, vals, det, scratch, h2, c2, f2, a2, p2, seen, base):
    """``_race_choose``'s samples, until one option is left or ``budget`` samples."""
    left = race.running(alive, n_opt)
    m = 0
    while left > 1 and m < budget:
        ctrs[slot] = base + m * race.STRIDE
        _sample_hidden(me, hands, seen, voids, round_played, P, keys, ctrs, slot, det, scratch, f2,
                       kn, kb)
        c0 = ctrs[slot]
        for i in range(n_opt):
            if alive[i]:
                ctrs[slot] = c0
                vals[i], plays = _option_value(kind, me, options[i], det, f2, h2, c2, a2, p2,
                                               cubes, forecast, adv_left, advisory_on, P, t,
                                               n_tricks, leader, played, k, led_suit, best_card,
                                               red, rpol, keys, ctrs, slot, forbid, kn, kb, rnd)
                mcstat[0] += 1
                mcstat[1] += plays
        m += 1
        if sched >= 0:
            race.record_sample(vals, alive, total, H, m - 1, n_opt)
            left = race.prune_sift(alive, total, H, n_opt, m, sched, False)
        else:
            race.record(vals, alive, total, S, Q, n_opt)
            left = race.prune(alive, total, S, Q, n_opt, m, budget)


# ismcts (kernels/ismcts.py): a flat root (every option on every sample, as mc) and below each
# option a tree over the rest of the round, every seat's card plays and cube moves in it (a UCB
# root with a fresh sample an iteration, the first build, lost about 0.025 to mc:64 at its cost;
# docs/search.md); action codes in one 64-bit mask: cards 0..51, forecasts
# _FC_CODE + F_HOT / F_COLD, cube moves _MOVE_CODE + size * 2 + option.
_FC_CODE = 52
_MOVE_CODE = 56
_POINTS_SCALE = float(N_CUBES + 1)     # the most round points a seat can make


@jit
def _tree_moves(c2, a2, w, red, advisory_on, me, forbid):
    """Winner ``w``'s legal cube moves as action codes (restricted when ``w`` is ``me``)."""
    singles = legal_cube_moves_in(c2, red, 1)
    if singles == 0:
        return np.int64(0)
    doubles = legal_cube_moves_in(c2, red, 2) if (advisory_on and a2[w] == 1) else 0
    if w == me and forbid != 0:
        singles, doubles, _ = restrict_moves(forbid, singles, doubles)
    return (np.int64(singles) << (_MOVE_CODE + 2)) | (np.int64(doubles) << (_MOVE_CODE + 4))


@jit(_nrt=True)    # allocates (as _mc_choose)
def _ismcts_choose(kind, me, options, n_opt, hands, cubes, forecast, adv_left, advisory_on, P, t,
                   n_tricks, leader, played, k, led_suit, best_card, voids, round_played, red,
                   samples, explore, rpol, keys, ctrs, slot, mcstat, forbid, kn, kb, rnd):
    """Index of ``me``'s option by single-observer ISMCTS over the rest of the round (kinds and
    options as ``_mc_choose``) below a flat root: ``samples`` determinisations
    (``_sample_hidden``), each played from every option in turn (common random numbers, as
    ``mc``: one iteration an option), the option's subtree walked by UCB (``explore`` / 100,
    rewards = round points / 10) with every seat's card plays and cube moves as nodes, then
    played out by ``rpol`` as the flat search's rollouts; a node is credited with its mover's
    round points. The decision: the option with the most reward (equal visits; ties to the
    earlier). ``me``'s moves obey ``forbid``."""
    if rpol == P_TUNED:
        rpol = P_HEURISTIC
    iterations = samples * n_opt
    tree = ismcts.new_tree(iterations)
    path = np.zeros((P + 1) * n_tricks + 2, dtype=np.int64)
    pts = np.zeros(P, dtype=np.int64)
    det, scratch, h2, c2, f2, a2, p2, seen = _sample_arrays(P, round_played)
    codes = np.zeros(n_opt, dtype=np.int64)
    for i in range(n_opt):
        codes[i] = (options[i] if kind == 1 else _FC_CODE + options[i] if kind == 0
                    else _MOVE_CODE + options[i])
    _ismcts_iterations(kind, me, n_opt, cubes, forecast, adv_left, advisory_on, P, t, n_tricks,
                       leader, played, k, led_suit, best_card, voids, round_played, red, explore,
                       rpol, keys, ctrs, slot, mcstat, forbid, kn, kb, rnd, iterations, tree, path,
                       pts, det, scratch, h2, c2, f2, a2, p2, seen, codes, hands)
    a = ismcts.most_visited(tree)
    code = a if kind == 1 else a - _FC_CODE if kind == 0 else a - _MOVE_CODE
    for i in range(n_opt):
        if options[i] == code:
            return i
    return 0


@jit_borrowing   # allocates nothing; _ismcts_choose owns every array (as _mc_samples)
def _ismcts_iterations(kind, me, n_opt, cubes, forecast, adv_left, advisory_on, P, t, n_tricks,
                       leader, played, k, led_suit, best_card, voids, round_played, red, explore,
                       rpol, keys, ctrs, slot, mcstat, forbid, kn, kb, rnd, iterations, tree, path,
                       pts, det, scratch, h2, c2, f2, a2, p2, seen, codes, hands):
    """``_ismcts_choose``'s ``iterations`` tree walks, each with its rollout and backup."""
    n_nodes = 1
    c_explore = explore / 100.0
    for it in range(iterations):
        i_opt = it % n_opt
        if i_opt == 0:          # a new sample, played from every option in turn
            _sample_hidden(me, hands, seen, voids, round_played, P, keys, ctrs, slot, det, scratch,
                           f2, kn, kb)
        for o in range(P):
            h2[o] = det[o]
            a2[o] = adv_left[o]
            p2[o] = played[o]
        f2[me] = forecast[me]
        for b in range(3):
            c2[b] = cubes[b]
        tt, ld, kk, ls, bc, rd = t, leader, k, led_suit, best_card, red
        mv = kind == 2                 # a cube move is due (by w)
        w = me
        node = ismcts.ROOT
        depth = 0
        while tt < n_tricks:
            prefer = -1                 # the rollout policy's choice (expanded first)
            if node == ismcts.ROOT:     # the flat root: this iteration's option
                legal = np.int64(1) << codes[i_opt]
                mover = me
            elif mv:
                legal = _tree_moves(c2, a2, w, rd, advisory_on, me, forbid)
                mover = w
                if legal == 0:          # no legal cube move: the next trick (public, no node)
                    mv = False
                    ld, tt, kk, ls, bc = w, tt + 1, 0, -1, -1
                    continue
                if rpol == P_HEURISTIC:
                    size, option = knob_move_n(c2[HOT], c2[NEUTRAL], c2[COLD], rd, f2[w],
                                               (legal >> (_MOVE_CODE + 2)) & 3,
                                               (legal >> (_MOVE_CODE + 4)) & 3,
                                               adv_gain_at(kn, kb, rnd), kn[kb + K_TIEBREAK])
                    prefer = _MOVE_CODE + size * 2 + option
            else:
                mover = (ld + kk) % P
                legal = legal_plays(h2[mover], ls)
                if rpol == P_HEURISTIC:
                    prefer = heuristic_card(h2[mover], legal, ls, bc, f2[mover], kn[kb + K_WIN_CHEAP],
                                            kn[kb + K_SLUFF_HIGH], kn[kb + K_LEAD_LOW])
            node, n_nodes, new = ismcts.select(tree, n_nodes, node, legal, mover, c_explore,
                                               _POINTS_SCALE, keys, ctrs, slot, prefer)
            path[depth] = node
            depth += 1
            a = tree[node, ismcts.ACT]
            if a >= _MOVE_CODE:
                size = (a - _MOVE_CODE) // 2
                c2[HOT], c2[NEUTRAL], c2[COLD] = apply_cube_move(c2[HOT], c2[NEUTRAL], c2[COLD], rd,
                                                                 size, (a - _MOVE_CODE) % 2)
                if size == 2:
                    a2[w] = 0
                mv = False
                ld, tt, kk, ls, bc = w, tt + 1, 0, -1, -1
            elif a >= _FC_CODE:
                f2[me] = a - _FC_CODE
            else:
                h2[mover] &= ~(np.int64(1) << a)
                p2[mover] = a
                ls, bc = _follow(a, kk, ls, bc)
                kk += 1
                if kk == P:             # the trick is complete: its winner moves next
                    w = trick_winner(p2, ld, P)
                    rd = ls == HEARTS or ls == DIAMONDS
                    mv = True
            if new:
                break
        if tt < n_tricks:               # a cube move still due (kk = P) is the rollout's first step
            mcstat[1] += _rollout(h2, c2, f2, a2, advisory_on, P, tt, n_tricks, ld, p2, kk, ls, bc,
                                  rpol, keys, ctrs, slot, me, forbid, kn, kb, rnd)
        mcstat[0] += 1
        for o in range(P):
            pts[o], _ = round_points(c2, f2[o])
        ismcts.backup(tree, path, depth, pts)


@jit(_nrt=True)    # (as _mc_choose)
def _mc_move(w, red, singles, doubles, hands, cubes, forecast, adv_left, advisory_on, P, t, n_tricks,
             played, voids, round_played, seats, keys, ctrs, options, mcstat, kn, rnd, score,
             correct, last_round):
    """A search seat's cube move, as size * 2 + option (kept out of line: the hot loop stays lean)."""
    fb = seats[w, SEAT_FORBID] if seats.shape[1] > SEAT_WATCH else 0
    n = 0
    for size in range(1, 3):
        m = singles if size == 1 else doubles
        for option in range(2):
            if (m >> option) & 1:
                options[n] = size * 2 + option
                n += 1
    return options[_mc_choose(2, w, options, n, hands, cubes, forecast, adv_left, advisory_on, P,
                              t, n_tricks, w, played, 0, -1, -1, voids, round_played, red,
                              seats[w, 1], seats[w, 2], keys, ctrs, P + 1 + w, mcstat,
                              fb, kn, NK * w, rnd, score, correct, last_round, seats[w, 0],
                              seats[w, 3])]


# ---- one game --------------------------------------------------------------------------------
# The working arrays of one game, allocated once per block of games (``_play_range``) and reset
# by ``play_one``: per-game allocations cost ~10% of random play.
State = namedtuple("State", (
    "keys",           # uint64: 0..P-1 the seats' streams, P the deal, P+1+s seat s's search stream
    "ctrs",           # their counters
    "voids",          # suits each seat has shown void in (search build)
    "round_played",   # cards each seat played this round (search build)
    "mcstat",         # rollouts, rollout card plays
    "options",        # a search seat's options
    "hands", "forecast", "score", "correct",
    "adv_left",       # 1 while the seat holds its Weather Advisory
    "used_adv",       # 1 once it has played it
    "played",         # the card each seat played to the current trick
    "cubes",          # HOT, NEUTRAL, COLD
    "deck", "draws",  # the deal's deck and its shuffle draws
    "nxt",            # uint64: each seat's next draw (top 32 bits), computed one draw ahead
    "tkeys",          # the tie-break keys of the end of the game
    "kn",             # each seat's knob row (NK values per seat)
))


@jit
def _draw_ahead(keys, ctrs, nxt, s, n):
    """rng.below(keys, ctrs, s, n) for a stream whose next 32 bits are kept in ``nxt[s]``."""
    r = nxt[s]
    c = ctrs[s] + 1
    ctrs[s] = c
    nxt[s] = rng.bits(keys[s], c) >> _S32
    return np.int64((r * np.uint64(n)) >> _S32)


@jit
def new_state(P):
    """The working arrays of one game at a time; the knob rows hold the defaults (setup_game
    loads a seat's own row over them each game: nothing else writes them)."""
    kn = np.empty(NK * P, dtype=np.int64)
    fill_knob_defaults(kn, 0, KNOB_DEFAULTS, P, NK)
    return State(np.zeros(2 * P + 1, dtype=np.uint64), np.zeros(2 * P + 1, dtype=np.int64),
                 np.zeros(P, dtype=np.int64), np.zeros(P, dtype=np.int64),
                 np.zeros(2, dtype=np.int64), np.zeros(MAX_HAND, dtype=np.int64),
                 np.zeros(P, dtype=np.int64), np.zeros(P, dtype=np.int64),
                 np.zeros(P, dtype=np.int64), np.zeros(P, dtype=np.int64),
                 np.zeros(P, dtype=np.int64), np.zeros(P, dtype=np.int64),
                 np.zeros(P, dtype=np.int64), np.zeros(3, dtype=np.int64),
                 DECK.copy(), np.zeros(DECK_SIZE, dtype=np.int64),
                 np.zeros(P, dtype=np.uint64), np.zeros(P, dtype=np.int64),
                 kn)


# The phases of play_one, in the rulebook's order. Each is inlined into play_one, which is compiled
# without reference counting (jit_borrowing): the phases take the state's arrays freely. ``search``
# is play_one's: None in the build without the search player, where Numba prunes every
# ``search is not None`` branch at compile time. Counters go straight into the game's row.
@jit(inline='always')
def count(out, row, P, counter, n):
    out[row, col_counter(P, counter)] += n


@jit(inline='always')
def setup_game(params, seats, seed, g, st, search):
    """Setup: every seat's streams and knob row, scores 0, one Weather Advisory each (optional
    rule). Returns the key the rounds' deals derive from."""
    P = seats.shape[0]
    advisory_on = params[R_ADVISORY] != 0
    gkey = rng.game_key(seed, g)
    seat_key = rng.kind_key(gkey, rng.SEAT)
    for s in range(P):
        st.keys[s] = rng.index_key(seat_key, s)
        st.ctrs[s] = 0
        if search is not None and _searches(seats[s, 0]):
            st.keys[P + 1 + s] = rng.stream_key(seed, g, rng.SEARCH, s)
            st.ctrs[P + 1 + s] = 0
        st.score[s] = 0
        st.correct[s] = 0
        st.adv_left[s] = 1 if advisory_on else 0
        st.used_adv[s] = 0
        # the defaults are in st.kn from new_state: only a seat with its own row loads it (a
        # call and a copy for every seat cost ~160 instructions, measured)
        load_own_knob_row(seats, s, NK, P_TUNED, seats[s, 0] if _searches(seats[s, 0]) else P_MC,
                          st.kn, NK * s)
    st.mcstat[0] = 0
    st.mcstat[1] = 0
    return rng.kind_key(gkey, rng.DEAL)


@jit(inline='always')
def deal_round(P, rnd, deal_key, st, ev, ev_n, search):
    """Setup of a round: 4 cubes in Hot, 1 in Neutral, 4 in Cold; the 40 cards shuffled and dealt
    (13 each at 3 players, 10 at 4). The deal is a pure function of (seed, game, round)."""
    st.keys[P] = rng.index_key(deal_key, rnd)
    st.ctrs[P] = 0
    for i in range(DECK_SIZE):
        st.deck[i] = DECK[i]
    rng.shuffle_batched(st.deck, DECK_SIZE, st.keys, st.ctrs, P, st.draws)
    hand_size = HAND_SIZE[P]
    for s in range(P):
        h = np.int64(0)
        for i in range(s * hand_size, (s + 1) * hand_size):
            h |= np.int64(1) << st.deck[ix(i)]
        st.hands[s] = h
        if ev.shape[0] > 0:
            record_event(ev, ev_n, E_DEAL, s, rnd, h, rnd % P)
    st.cubes[HOT] = CUBES_START[0]
    st.cubes[NEUTRAL] = CUBES_START[1]
    st.cubes[COLD] = CUBES_START[2]
    if search is not None:
        for s in range(P):
            st.voids[s] = 0
            st.round_played[s] = 0


@jit(inline='always')
def forecast_phase(params, seats, rnd, st, out, row, ev, ev_n, search):
    """Make Forecasts: each seat secretly chooses Hot or Cold after seeing its hand (a restriction
    may leave it one: no draw, no search)."""
    P = seats.shape[0]
    wide = seats.shape[1] > SEAT_WATCH     # restriction masks present (spec.SEAT_WIDTH rows)
    kn = st.kn
    for s in range(P):
        pol = seats[s, 0]
        fb = seats[s, SEAT_FORBID] if wide else 0
        left = 3 & ~forbidden_forecasts(fb)     # forecasts left: bit F_HOT, bit F_COLD
        if left == 0:                           # hot-only + cold-only: the restriction yields
            count(out, row, P, C_RX_YIELDED, 1)
            left = 3
        if left != 3:
            st.forecast[s] = F_HOT if left == 1 << F_HOT else F_COLD
        elif pol == P_RANDOM:
            st.forecast[s] = rng.below(st.keys, st.ctrs, s, 2)
        elif search is None or not _searches(pol):     # heuristic, tuned: by the seat's knob row
            kb = NK * s
            st.forecast[s] = mixed_forecast(knob_forecast(st.hands[s], kn[kb + K_FC_BIAS],
                                                          kn[kb + K_FC_MIN], kn[kb + K_FC_COUNT]),
                                            kn[kb + K_FC_FLIP], st.keys, st.ctrs, s)
        else:
            st.options[0] = F_HOT
            st.options[1] = F_COLD
            st.forecast[s] = st.options[_mc_choose(
                0, s, st.options, 2, st.hands, st.cubes, st.forecast, st.adv_left,
                params[R_ADVISORY] != 0, P, 0, params[R_TRICKS], rnd % P, st.played, 0, -1, -1,
                st.voids, st.round_played, False, seats[s, 1], seats[s, 2], st.keys, st.ctrs,
                P + 1 + s, st.mcstat, fb, kn, NK * s, rnd, st.score, st.correct,
                rnd == params[R_ROUNDS] - 1, pol, seats[s, 3])]
        if wide and (forbidden_forecasts(seats[s, SEAT_WATCH]) >> st.forecast[s]) & 1:
            count(out, row, P, C_RX_FORBIDDEN, 1)
        if ev.shape[0] > 0:
            record_event(ev, ev_n, E_FORECAST, s, rnd, st.forecast[s])


@jit(inline='always')
def card_choice(params, seats, s, h, legal, k, t, leader, led_suit, best_card, rnd, st, search):
    """Seat ``s``'s card among ``legal`` (its hand ``h``), ``k`` cards into trick ``t``.

    random: rng.below(keys, ctrs, s, n) when n >= 2, from the draw computed ahead (``st.nxt``)
    and without a branch on n: with one legal card the index is 0 and the counter stays (no draw
    is taken); heuristic, tuned: the seat's knobs (with one legal card it plays it); mc, race: by
    search."""
    us = ix(s)
    pol = seats[us, 0]
    n = popcount(legal)
    if pol == P_RANDOM:
        r = st.nxt[us]
        ctr = st.ctrs[us] + np.int64(n > 1)
        st.ctrs[us] = ctr
        st.nxt[us] = rng.bits(st.keys[us], ctr) >> _S32
        return select_card(legal, np.int64((r * np.uint64(n)) >> _S32))
    if search is None or not _searches(pol):
        kn = st.kn
        kb = NK * s
        return heuristic_card(h, legal, led_suit, best_card, st.forecast[s], kn[kb + K_WIN_CHEAP],
                              kn[kb + K_SLUFF_HIGH], kn[kb + K_LEAD_LOW])
    if n == 1:
        return lowest_bit(legal)
    n = 0
    m = legal
    while m:
        st.options[n] = lowest_bit(m)
        m &= m - 1
        n += 1
    P = seats.shape[0]
    fb = seats[s, SEAT_FORBID] if seats.shape[1] > SEAT_WATCH else 0
    return st.options[_mc_choose(1, s, st.options, n, st.hands, st.cubes, st.forecast, st.adv_left,
                                 params[R_ADVISORY] != 0, P, t, params[R_TRICKS], leader, st.played,
                                 k, led_suit, best_card, st.voids, st.round_played, False,
                                 seats[s, 1], seats[s, 2], st.keys, st.ctrs, P + 1 + s, st.mcstat,
                                 fb, st.kn, NK * s, rnd, st.score, st.correct,
                                 rnd == params[R_ROUNDS] - 1, pol, seats[s, 3])]


@jit(inline='always')
def play_trick(params, seats, t, leader, rnd, st, out, row, ev, ev_n, search):
    """Trick ``t``: the leader leads any card, play goes clockwise, each seat follows suit if able
    (legal_plays); the highest card of the led suit wins (beats). Returns (winner, led suit)."""
    P = seats.shape[0]
    rec = ev.shape[0] > 0
    led_suit = -1
    follow = np.int64(0)    # the led suit's cards (none before the lead)
    best_card = -1
    w = leader
    s = leader
    for k in range(P):
        h = st.hands[ix(s)]
        c = card_choice(params, seats, s, h, follow_or_any(h, follow), k, t, leader, led_suit,
                        best_card, rnd, st, search)
        if search is not None:  # what a search seat may know: shown voids, cards played this round
            if k > 0 and suit_of(c) != led_suit:
                st.voids[s] |= 1 << led_suit
            st.round_played[s] |= np.int64(1) << c
        st.hands[ix(s)] = h & ~(np.int64(1) << c)
        if search is not None or rec:
            st.played[s] = c
        if k == 0:
            led_suit = suit_of(c)
            follow = SUIT_MASK[ix(led_suit)]
            best_card = c
        elif (follow >> c) & 1 and c > best_card:     # beats(c, best_card, led_suit), without
            best_card = c                               # suit_of's division per card
            w = s
        if rec:
            record_event(ev, ev_n, E_PLAY, s, rnd, t, c)
        s += 1
        if s == P:
            s = 0
    if rec:
        record_event(ev, ev_n, E_TRICK, w, rnd, t, st.played[w])
    return w, led_suit


@jit(inline='always')
def cube_move_choice(params, seats, w, red, singles, doubles, final, t, rnd, st, search):
    """(size, option): the winner's cube move among ``singles`` / ``doubles`` (masks of options).

    random: one draw over every move left (as _choose_move); mc, race: by search, but not the
    game's last move (its round points are exact) unless the seat's objective looks at the other
    seats' points too; heuristic, tuned: knob_move_n by the seat's knobs."""
    pol = seats[w, 0]
    n = popcount(singles) + popcount(doubles)
    if pol == P_RANDOM:
        return nth_move(singles, doubles,
                        _draw_ahead(st.keys, st.ctrs, st.nxt, w, n) if n > 1 else 0)
    if search is not None and _searches(pol) and n > 1 and (
            not final or (pol == P_MC and seats[w, 3] != OBJ_OWN)):
        pick = _mc_move(w, red, singles, doubles, st.hands, st.cubes, st.forecast, st.adv_left,
                        params[R_ADVISORY] != 0, seats.shape[0], t, params[R_TRICKS], st.played,
                        st.voids, st.round_played, seats, st.keys, st.ctrs, st.options, st.mcstat,
                        st.kn, rnd, st.score, st.correct, rnd == params[R_ROUNDS] - 1)
        return pick // 2, pick % 2
    # adv_gain_at spelled out: an inlined helper taking an array costs reference counting where
    # play_one's own reference counting is on (the rollouts; docs/architecture.md)
    kb = NK * w
    gain = st.kn[kb + K_ADV_GAIN] if rnd >= st.kn[kb + K_ADV_ROUND] else np.int64(99)
    return knob_move_n(st.cubes[HOT], st.cubes[NEUTRAL], st.cubes[COLD], red, st.forecast[w],
                       singles, doubles, gain, st.kn[kb + K_TIEBREAK])


@jit(inline='always')
def apply_advisory(w, st, out, row, P):
    """Weather Advisory: the winner discards it (once per game) to move two cubes."""
    st.adv_left[w] = 0
    st.used_adv[w] = 1
    count(out, row, P, C_ADV_USES, 1)


@jit(inline='always')
def cube_move_phase(params, seats, w, led_suit, t, rnd, st, out, row, ev, ev_n, search):
    """Adjusting the Temperature: the trick's winner moves one cube a step in the winning colour's
    direction (red toward Hot, black toward Cold; legal_cube_moves), or two from one bucket to
    the same bucket with the Weather Advisory (optional rule; RULINGS: offered only with 2+
    cubes in the source); no legal move: no cube moves. A restriction may cut the moves; the
    game's last move takes a winning move when there is one (RULINGS)."""
    P = seats.shape[0]
    rec = ev.shape[0] > 0
    wide = seats.shape[1] > SEAT_WATCH
    cubes = st.cubes
    red = led_suit == HEARTS or led_suit == DIAMONDS
    singles = legal_cube_moves(cubes[HOT], cubes[NEUTRAL], cubes[COLD], red, 1)
    if singles == 0:
        count(out, row, P, C_NO_MOVE, 1)
        if rec:
            record_event(ev, ev_n, E_NO_MOVE, w, rnd, t)
        return
    doubles = 0
    if params[R_ADVISORY] != 0 and st.adv_left[w] == 1:
        doubles = legal_cube_moves(cubes[HOT], cubes[NEUTRAL], cubes[COLD], red, 2)
    # what the winner's restriction leaves (unrestricted: sing = singles, doub = doubles)
    sing = singles
    doub = doubles
    if wide and seats[w, SEAT_FORBID] != 0:
        sing, doub, y = restrict_moves(seats[w, SEAT_FORBID], singles, doubles)
        count(out, row, P, C_RX_YIELDED, y)
    final = rnd == params[R_ROUNDS] - 1 and t == params[R_TRICKS] - 1
    if final:
        sing, doub = winning_moves(cubes[HOT], cubes[NEUTRAL], cubes[COLD], red, sing, doub, w,
                                   st.score, st.correct, st.adv_left, st.forecast,
                                   params[R_ADVISORY] != 0, P)
    size, option = cube_move_choice(params, seats, w, red, sing, doub, final, t, rnd, st, search)
    if wide and move_forbidden(seats[w, SEAT_WATCH], doubles, size):
        count(out, row, P, C_RX_FORBIDDEN, 1)
    if doubles != 0 and rec:
        record_event(ev, ev_n, E_ADVISORY_CHOICE, w, rnd, t, 1 if size == 2 else 0)
    cubes[HOT], cubes[NEUTRAL], cubes[COLD] = apply_cube_move(cubes[HOT], cubes[NEUTRAL],
                                                              cubes[COLD], red, size, option)
    if size == 2:
        apply_advisory(w, st, out, row, P)
    if rec:
        record_event(ev, ev_n, E_MOVE, w, rnd, t, move_source(red, option), move_dest(red, option),
                     size, 1 if size == 2 else 0, cubes[HOT], cubes[NEUTRAL])


@jit(inline='always')
def tricks_phase(params, seats, rnd, st, out, row, ev, ev_n, search):
    """Play Tricks: ``tricks_per_round`` tricks, the round's first led by seat ``round mod P``,
    then by the last winner; after each the winner moves cubes."""
    # each seat's next 32 random bits are computed one draw ahead (st.nxt), off the path of the
    # decision that uses them
    for s in range(seats.shape[0]):
        st.nxt[s] = rng.bits(st.keys[s], st.ctrs[s]) >> _S32
    leader = rnd % seats.shape[0]
    for t in range(params[R_TRICKS]):
        w, led_suit = play_trick(params, seats, t, leader, rnd, st, out, row, ev, ev_n, search)
        cube_move_phase(params, seats, w, led_suit, t, rnd, st, out, row, ev, ev_n, search)
        leader = w


@jit(inline='always')
def score_round(P, rnd, st, out, row, ev, ev_n):
    """Scoring the Round: forecasts revealed; +1 per cube in the forecast bucket, +1 more when it
    holds more cubes than the opposite one (points). A checkpoint of the game arc follows."""
    cubes = st.cubes
    for s in range(P):
        pts, ok = points(cubes[HOT], cubes[COLD], st.forecast[s])
        st.score[s] += pts
        st.correct[s] += ok
        is_hot = 1 - st.forecast[s]   # F_HOT = 0, F_COLD = 1
        count(out, row, P, C_HOT_FORECASTS, is_hot)
        count(out, row, P, C_COLD_FORECASTS, 1 - is_hot)
        count(out, row, P, C_HOT_CORRECT, ok * is_hot)
        count(out, row, P, C_COLD_CORRECT, ok * (1 - is_hot))
        count(out, row, P, C_CORRECT, ok)
        if ev.shape[0] > 0:
            record_event(ev, ev_n, E_ROUND, s, rnd, st.forecast[s], pts, ok, st.score[s])
    count(out, row, P, C_ROUNDS, 1)
    count(out, row, P, C_ROUND_HOT, cubes[HOT])
    count(out, row, P, C_ROUND_NEUTRAL, cubes[NEUTRAL])
    count(out, row, P, C_ROUND_COLD, cubes[COLD])
    count(out, row, P, C_FINAL_HOT + cubes[HOT], 1)
    if ev.shape[0] > 0:
        record_event(ev, ev_n, E_CUBES, -1, rnd, cubes[HOT], cubes[NEUTRAL], cubes[COLD])
    # game arc (issue #16): a checkpoint after every round, standing = running score
    arc.checkpoint_inline(out, row, layout.col_arc(P, N_COUNTERS), P, st.score, 0, False, ev, ev_n,
                          E_CHECKPOINT)


@jit(inline='always')
def end_of_game(params, P, st, out, row, ev, ev_n):
    """End of Game: the highest total score wins; ties: most correct forecasts, then an unused
    Weather Advisory, then a shared victory (_finish_into). Length and decisions are counted
    here, not in the hot loop: every round has its tricks, every forecast and every card is a
    decision, and so is every trick's cube move but where no move was legal."""
    tricks = params[R_ROUNDS] * params[R_TRICKS]
    out[row, col_length(P)] = tricks
    out[row, col_decisions(P)] = ((params[R_ROUNDS] + tricks) * P + tricks
                                  - out[row, col_counter(P, C_NO_MOVE)])
    _finish_into(st.score, st.correct, st.adv_left, st.used_adv, params[R_ADVISORY] != 0, P, out,
                 row, ev, ev_n, st.tkeys)
    count(out, row, P, C_MC_ROLLOUTS, st.mcstat[0])
    count(out, row, P, C_MC_PLAYS, st.mcstat[1])


@jit_borrowing   # allocates nothing; its caller (_play_range) owns every array
def play_one(params, seats, seed, g, out, row, ev, ev_n, st, search):
    """Play game ``g`` into ``out[row]`` (every column written) in the working arrays ``st``
    (new_state); record events when ``ev`` has rows.

    ``search`` is None when no seat is ``mc``: Numba then prunes every search branch at compile
    time, so random and heuristic play run without the search player's code and bookkeeping
    (measured: ~30% faster); any array selects the build with search.
    """
    P = seats.shape[0]
    out[row, :] = 0
    deal_key = setup_game(params, seats, seed, g, st, search)
    for rnd in range(params[R_ROUNDS]):
        deal_round(P, rnd, deal_key, st, ev, ev_n, search)
        forecast_phase(params, seats, rnd, st, out, row, ev, ev_n, search)
        tricks_phase(params, seats, rnd, st, out, row, ev, ev_n, search)
        score_round(P, rnd, st, out, row, ev, ev_n)
    end_of_game(params, P, st, out, row, ev, ev_n)


@jit
def _finish(score, correct, adv_left, used_adv, advisory_on, P, out, row, ev, ev_n):
    """Highest score wins; ties: most correct forecasts, then an unused Advisory, then shared."""
    _finish_into(score, correct, adv_left, used_adv, advisory_on, P, out, row, ev, ev_n,
                 np.empty(P, dtype=np.int64))


@jit
def _finish_into(score, correct, adv_left, used_adv, advisory_on, P, out, row, ev, ev_n, keys):
    """``_finish`` with a caller-owned buffer for the tie-break keys."""
    for s in range(P):
        keys[s] = standing_key(score[s], correct[s], adv_left[s] if advisory_on else 0)
        out[row, s] = score[s]
    best = keys[0]      # (no keys.max(): Numba's max allocates, play_one counts no references)
    for s in range(1, P):
        if keys[s] > best:
            best = keys[s]
    mask = 0
    n_win = 0
    for s in range(P):
        if keys[s] == best:
            mask |= 1 << s
            n_win += 1
    out[row, col_winners(P)] = mask
    out[row, col_flags(P)] = 0
    layout.places_from_keys(keys, P, row, out)
    for s in range(P):
        if used_adv[s]:
            out[row, col_counter(P, C_ADV_USER_SEATS)] += 1
            if (mask >> s) & 1:
                out[row, col_counter(P, C_ADV_USER_SHARE)] += layout.SHARE_UNIT // n_win
        if ev.shape[0] > 0:
            record_event(ev, ev_n, E_FINAL, s, score[s], out[row, P + s], correct[s],
                         adv_left[s] if advisory_on else 0, (mask >> s) & 1)


# ---- bulk play and trace ----------------------------------------------------------------------
# Two builds of play_one: ``search`` None (no mc seat; every search branch pruned at compile time)
# or an array. The entry points choose in Python, so a run compiles only the build it needs
# (the search build roughly doubles the cold compile).


@jit(inline='always')
def _play_range(params, seats, seed, first_game, out, lo, hi, ev, ev_n, search):
    """Play games ``first_game + i`` into rows ``i`` in [lo, hi) with one working state."""
    state = new_state(seats.shape[0])
    for i in range(lo, hi):
        play_one(params, seats, seed, first_game + i, out, i, ev, ev_n, state, search)


@pjit
def _play_games(params, seats, seed, first_game, out, search):
    n = out.shape[0]
    bs, nb = layout.game_blocks(n)
    for b in prange(nb):
        ev = np.zeros((0, layout.EVENT_WIDTH), dtype=np.int64)
        ev_n = np.zeros(1, dtype=np.int64)
        _play_range(params, seats, seed, first_game, out, b * bs, min(n, (b + 1) * bs), ev, ev_n,
                    search)


@jit
def _play_games_serial(params, seats, seed, first_game, out, search):
    ev = np.zeros((0, layout.EVENT_WIDTH), dtype=np.int64)
    ev_n = np.zeros(1, dtype=np.int64)
    _play_range(params, seats, seed, first_game, out, 0, out.shape[0], ev, ev_n, search)


@jit
def _trace_game(params, seats, seed, game_index, out, ev, ev_n, search):
    _play_range(params, seats, seed, game_index, out[:1], 0, 1, ev, ev_n, search)


play_games, play_games_serial, trace_game = builds.entry_points(
    _play_games, _play_games_serial, _trace_game, (P_MC, P_RACE, P_ISMCTS, P_SIFT))


def derived_metrics(sums: dict, games: int, players: int, params) -> dict:
    """Per-variant metrics from the integer counter sums."""
    seat_games = games * players
    rounds = max(sums["rounds"], 1)
    forecasts = max(rounds * players, 1)
    m = {
        "advisory_use_rate": sums["advisory_uses"] / seat_games if seat_games else 0.0,
        "correct_forecast_rate": sums["correct_forecasts"] / forecasts,
        "hot_forecast_share": sums["hot_forecasts"] / forecasts,
        "hot_success": sums["hot_correct"] / max(sums["hot_forecasts"], 1),
        "cold_success": sums["cold_correct"] / max(sums["cold_forecasts"], 1),
        "final_hot_mean": sums["round_hot"] / rounds,
        "final_neutral_mean": sums["round_neutral"] / rounds,
        "final_cold_mean": sums["round_cold"] / rounds,
        "no_move_rate": sums["no_move_tricks"] / max(rounds * int(params[R_TRICKS]), 1),
    }
    if int(params[R_ADVISORY]):
        users = sums["advisory_user_seats"]
        user_share = sums["advisory_user_share"] / layout.SHARE_UNIT
        non_users = seat_games - users
        m["advisory_user_win_share"] = user_share / users if users else float("nan")
        m["advisory_nonuser_win_share"] = (games - user_share) / non_users if non_users else float("nan")
        m["advisory_effect"] = m["advisory_user_win_share"] - m["advisory_nonuser_win_share"]
    for k in range(N_CUBES + 1):
        m[f"final_hot_{k}_share"] = sums[f"final_hot_{k}"] / rounds
    return m
