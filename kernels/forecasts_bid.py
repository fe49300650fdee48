"""forecasts-bid: bid your tricks, trade in the Market, Diamonds trump (rulebook forecasts-bid.txt).

Each round: Investment, Deal, Bid, Market, Tricks, Scoring (phase functions below, in that
order). 4 players: 5 rounds of 10 tricks; 3 players: 4 rounds of 13; 2 players: the Rival
Station, 5 rounds of 10 with an automated third seat (the Rival) playing from its Rival Deck.
A tie for the lead plays one sudden-death round; still tied, the victory is shared.

Encodings (see kernels/cards.py): a card is ``suit * 13 + rank`` (Diamonds = suit 2 are
trumps), a hand or pile is a 64-bit mask. The whole game state is one flat int64 vector ``st``
(layout below, ``-1`` = none), so a search player can copy it and play it forward. Seats go
clockwise; seat 0 is the first dealer (RULINGS conventions); in the Rival Station seats 0 and 1
are the players and seat 2 is the Rival. The kernel recognises the Rival Station by the seat
row of policy ``rival`` (``n_seats(2) == 3``).

Randomness (kernels/rng.py): the deal of round r is a Fisher-Yates shuffle on the ``DEAL``
stream r; the Rival Deck's shuffle on the ``AUX`` stream r; each seat's random decisions on its
``SEAT`` stream, one ``below(n)`` per decision with n >= 2 options (a forced decision draws
nothing). The draw protocol per decision is in docs/games/forecasts-bid.md.

The search player ``mc`` (section "search player" below) samples what a seat cannot see, plays
every option forward to the end of the round (objectives 3 and 4: of the game, ``game_rest``) on
copies of ``st`` with the same phase functions, and draws only on its own ``SEARCH`` stream
(slot S + 2 + seat).
"""
from __future__ import annotations

import math

import numpy as np
from numba import prange

from . import arc, builds, ismcts, layout, race, rng
from ._jit import jit, jit_borrowing, pjit
from .cards import (
    DIAMONDS, FOLLOW_MASK, N_CARDS, N_RANKS, RANK_A, RANK_K, RANK_Q, SUIT_MASK,
    card_name, follow_or_any, highest_bit, ix, lowest_bit, nth_bit, popcount, rank_of,
    select_card, suit_of,
)
from .knobs import fill_knob_defaults, load_own_knob_row
from .layout import col_counter, col_decisions, col_flags, col_length, col_winners, record_event
from .spec import SEAT_FORBID, SEAT_WATCH, Counter, Event, Knob, Restriction, Rule

GAME_ID = "forecasts-bid"
VERSION = 2
PLAYER_COUNTS = (4, 3, 2)
LOWER_IS_BETTER = False
LENGTH_UNIT = "tricks"

# ---- rules (index = slot in params) ---------------------------------------------------------
R_MARKET, R_ROUND_CAP, R_RIVAL_CHECK = 0, 1, 2
MARKET_RULED, MARKET_OFF = 0, 1
RIVAL_CHECK_ROUND5, RIVAL_CHECK_FINAL = 0, 1
RULES = (
    Rule("market", R_MARKET, "ruled",
         "the Market phase: 'ruled' = Pass / Draw k / Buy k as ruled; 'off' = no Market phase",
         choices=("ruled", "off"),
         ruling="RULINGS forecasts-bid, The Market (switch): the rulebook names no actions"),
    Rule("round_cap", R_ROUND_CAP, 6,
         "safety cap on rounds played, sudden death included; reaching it ends the game as a "
         "timeout (the game itself never needs more than 6)", lo=1, hi=20,
         ruling="RULINGS conventions: every game carries a hard safety cap on length"),
    Rule("rival_check", R_RIVAL_CHECK, "round5",
         "Rival Station with a sudden-death round: 'round5' = the players tied above the Rival "
         "after round 5 have beaten it, the sudden death only decides between them; 'final' = "
         "the winner must also finish strictly above the Rival after the sudden death",
         choices=("round5", "final"),
         ruling="gap: the rulebook says 'out-score the Rival ... by the end of Round 5', RULINGS "
                "says 'finish strictly above'; they differ only after a sudden death"),
)

P_RANDOM, P_HEURISTIC, P_RIVAL, P_MC, P_TUNED, P_RACE, P_HALVE, P_SIFT, P_ISMCTS = 0, 1, 2, 3, 4, 5, 6, 7, 8


# ``rival`` is the Rival's automaton: only for the Rival's own seat row (``extra_seats``), never
# for a player seat (the kernel recognises the Rival Station by that code in the third seat row).
# ``tuned`` is the heuristic's decision rule with the seat's own knob values (KNOBS below).
POLICIES = {"random": P_RANDOM, "heuristic": P_HEURISTIC, "rival": P_RIVAL, "mc": P_MC,
            "tuned": P_TUNED, "race": P_RACE, "halve": P_HALVE, "sift": P_SIFT, "ismcts": P_ISMCTS}
FIXED_POLICIES = ("rival",)
# mc:BUDGET:ROLLOUT - samples per decision (every option is played forward from each sample)
# and the policy every seat follows inside a rollout
# race:BUDGET:ROLLOUT - the same search with the options raced (kernels/race.py, docs/search.md)
# halve:BUDGET:ROLLOUT - the same search by successive halving on common samples (kernels/race.py)
# mc:BUDGET:ROLLOUT:OBJECTIVE - what a sample is worth to the searching seat (issue #24):
# 0 = its Reputation change minus the other seats' mean change (the default, as before),
# 1 = its margin over the strongest other seat at the end of the round, 2 = its chance to win the
# game from the end-of-round standings; every one takes the samples' wins first in a round that
# can end the game; 3 = its win share at the end of the game: the rollouts play every later round
# too (OBJ_* below)
OBJECTIVES = ("0 round gain over the others' mean (default), 1 round margin over the strongest "
              "other seat, 2 win chance from the end-of-round standings, 3 win share at the end "
              "of the game (rollouts play every later round), 4 as 3 for Investment and as 0 for "
              "every other decision")
_OBJECTIVE_ARG = ("objective", 0, 0, 4, OBJECTIVES)
# sift:BUDGET:ROLLOUT:OBJECTIVE - race's search with schedule k of kernels/race.py (SIFT_*), given
# as OBJECTIVE = objective + 10 x k (k = 0, the default: sift:64:heuristic)
SIFT_OBJECTIVES = ("objective + 10 x schedule: the objective as mc's (0-4), the schedule one of "
                   "kernels/race.py's SIFT_* columns (0 = the default; docs/search.md, sift)")
POLICY_ARGS = {"mc": (("budget", 64, 1, 4096), ("rollout", "heuristic", None, None),
                      _OBJECTIVE_ARG),
               "race": (("budget", 64, 1, 4096), ("rollout", "heuristic", None, None),
                        _OBJECTIVE_ARG),
               "halve": (("budget", 64, 1, 4096), ("rollout", "heuristic", None, None),
                         _OBJECTIVE_ARG),
               "sift": (("budget", 64, 1, 4096), ("rollout", "heuristic", None, None),
                        ("objective", 0, 0, 10 * len(race.SIFT_FIRST) - 1, SIFT_OBJECTIVES)),
               # ismcts:SAMPLES:ROLLOUT:EXPLORE - samples per decision (each played from every
               # option: one tree iteration and one rollout each, as mc:SAMPLES), the rollout
               # policy, the UCB constant in hundredths below the root
               "ismcts": (("samples", 64, 1, 4096), ("rollout", "heuristic", None, None),
                          ("explore", 30, 0, 1000, "the UCB exploration constant in hundredths"))}


def check_seat(row) -> None:
    """A ``sift`` seat's third argument is objective + 10 x schedule: its last digit must be an
    objective (0-4)."""
    if row[0] == P_SIFT and row[3] % 10 > 4:
        raise ValueError(f"objective {row[3]} is not objective + 10 x schedule with an objective "
                         f"0-4 ({SIFT_OBJECTIVES})")

# ``tuned``: the heuristic's decision rule as named integer knobs (a seat row's knob columns,
# spec.SEAT_KNOBS + index); the defaults are the ``heuristic`` policy exactly. Estimates are in
# half-tricks ("halves"). docs/games/forecasts-bid.md, "tuned".
(K_SURE, K_LOW_TRUMP, K_KING, K_QUEEN, K_ROUND, K_CLEAR_HALVES, K_CLEAR_TRUMPS, K_CLEAR_SURE,
 K_EXT_SLACK, K_INVEST_SPEND, K_INVEST_REP, K_MARKET_TOL, K_MARKET_K, K_MARKET_BUY,
 K_FORCED_WIN, K_WANT_HIGH, K_SPOIL, K_LEAD_ACES, K_CLEAR_SEEN) = range(19)
KNOBS = (
    Knob("sure_halves", K_SURE, 2, 0, 6, "halves per sure trick (Diamond Q, K, A; side Aces)"),
    Knob("low_trump_halves", K_LOW_TRUMP, 1, 0, 4, "halves per Diamond below the Queen"),
    Knob("king_halves", K_KING, 1, 0, 4, "halves per side King with another card of its suit"),
    Knob("queen_halves", K_QUEEN, 0, 0, 4, "halves per side Queen with two more cards of its suit"),
    Knob("round_up", K_ROUND, 1, -4, 6, "bid = (halves + round_up) // 2, at least 0"),
    Knob("clear_halves", K_CLEAR_HALVES, 0, -1, 20,
         "Clear Skies (bid 0) when the estimate is at most this many halves ..."),
    Knob("clear_trumps", K_CLEAR_TRUMPS, 13, 0, 13, "... and the hand holds at most this many Diamonds ..."),
    Knob("clear_sure", K_CLEAR_SURE, 13, 0, 13, "... and at most this many sure tricks"),
    Knob("extended_slack", K_EXT_SLACK, 0, 0, 7,
         "an Extended bid (5, 7) needs sure tricks >= bid - slack, else one less"),
    Knob("invest_spend", K_INVEST_SPEND, 1, -1, 2, "invest when Market Spend is at most this (-1: never)"),
    Knob("invest_rep", K_INVEST_REP, 2, 1, 60, "... and Reputation is at least this"),
    Knob("market_tolerance", K_MARKET_TOL, 0, 0, 8,
         "Market: act only when the estimate is more than this many halves off 2 x bid"),
    Knob("market_cards", K_MARKET_K, 1, 1, 3, "cards per Draw / Buy (at most Market Spend)"),
    Knob("market_buy", K_MARKET_BUY, 1, 0, 1,
         "1 = Buy when the Market card it wants is an improvement (else Draw); 0 = always Draw"),
    Knob("forced_win_strongest", K_FORCED_WIN, 0, 0, 2,
         "ducking but every legal card wins: 0 = play the weakest, 1 = the strongest, "
         "2 = the strongest when last to play (the trick is lost anyway), else the weakest"),
    Knob("want_high", K_WANT_HIGH, 0, 0, 1,
         "wanting tricks, following, not last to play: 0 = the lowest card that beats the trick, "
         "1 = the highest"),
    Knob("spoil_slack", K_SPOIL, -1, -1, 4,
         "wanting tricks, but the trick's holder has made its bid exactly (this trick would make it "
         "miss): let it have the trick when the tricks still needed are at most the tricks left "
         "after this one minus this slack (-1: never)"),
    Knob("lead_side_aces", K_LEAD_ACES, 0, 0, 1,
         "wanting tricks and leading: 1 = cash a side Ace before the strongest card (a Diamond)"),
    Knob("clear_seen_halves", K_CLEAR_SEEN, 0, -4, 6,
         "halves added to the estimate for each Clear Skies bid already placed this round "
         "(those seats will duck, so more tricks come to the others)"),
)
NK = len(KNOBS)
KNOB_DEFAULTS = np.array([k.default for k in KNOBS], dtype=np.int64)

# ---- the game's numbers (rulebook sections 3-6) ---------------------------------------------
MAX_SEATS = 4
HAND_SIZE = (0, 0, 10, 13, 10)          # by human player count (2 = the Rival Station)
ROUNDS = (0, 0, 5, 4, 5)
DRAW_DECK_SIZE = (0, 0, 12, 13, 12)
# deal() deals 3 and 4 players with these sizes as constants (deal_fixed): hands and Draw Deck take
# all 52 cards
assert HAND_SIZE[4] == 10 and HAND_SIZE[3] == 13
assert all(p * HAND_SIZE[p] + DRAW_DECK_SIZE[p] == 52 for p in (3, 4))
MAX_DRAW_DECK = 13
SPEND_MAX = 3
REP_CAP = 60
RIVAL_BID = 4
RIVAL_START_REP = 20
RIVAL_DECK_SIZE = 22
EXTENDED_A, EXTENDED_B = 5, 7
CLEAR_SKIES = 0
CLEAR_SKIES_HIT = 5
STANDARD_MISS_PER_TRICK = 2
EXTENDED_MISS_PER_TRICK = 4
CLEAR_MISS_PER_TRICK = 2
EXTENDED_HIT_FACTOR = 2
INVEST_COST = 1
MAX_BID = 13
FULL_DECK = (np.int64(1) << np.int64(N_CARDS)) - np.int64(1)
ONE = np.int64(1)

# bid classes
CLASS_STANDARD, CLASS_EXTENDED, CLASS_CLEAR = 0, 1, 2
# Market actions (in the order they are offered)
A_PASS, A_DRAW, A_BUY = 0, 1, 2

# ---- state vector layout (one int64 array; -1 = none) ----------------------------------------
S_PLAYERS = 0        # human players: 2 (Rival Station), 3 or 4
S_SEATS = 1          # seat rows: players, +1 for the Rival
S_RIVAL = 2          # the Rival's seat, -1 without
S_HAND_SIZE = 3      # cards per hand = tricks per round
S_ROUNDS = 4         # regular rounds
S_MARKET_ON = 5      # 1 when the Market phase is played
S_ROUND = 6          # current round, 0-based; the sudden-death round is number S_ROUNDS
S_DEALER = 7
S_LEADER = 8         # seat leading the current trick
S_TRICK = 9          # current trick, 0-based
S_LED_SUIT = 10      # -1 until the trick is led
S_BEST_SEAT = 11     # seat holding the current trick, -1 before the lead
S_DECK_TOP = 12      # index in S_DRAW_DECK of the Draw Deck's top card
S_DECK_END = 13      # one past its bottom card
S_MARKET = 14        # mask: face-up Market pool
S_SCRAP = 15         # mask: Rival's scrap pile
S_SET_ASIDE = 16     # mask: cards unused this round (Rival Station: 10)
S_WON_PILE = 17      # mask: cards of completed tricks
S_RIVAL_TOP = 18     # index in S_RIVAL_DECK of the Rival Deck's top card
S_RIVAL_END = 19     # one past its bottom card
S_SUDDEN = 20        # 1 while the sudden-death round is played
S_CONTENDERS = 21    # mask of seats that can still win (all, then the tied leaders)
S_DECISIONS = 22     # decisions taken so far
S_TRICKS_PLAYED = 23  # tricks played so far (LENGTH)
S_FLIP_FIRST = 24    # the Rival's last flip: first card, -1 before any
S_FLIP_SECOND = 25   # ... and second card, -1 when it led (one card)
S_RIVAL_FINAL = 26   # 1: the Rival is checked again after a sudden death (rule rival_check)
S_HAND = 27          # + seat: hand mask
S_REP = S_HAND + MAX_SEATS         # + seat: Reputation
S_SPEND = S_REP + MAX_SEATS        # + seat: Market Spend
S_BID = S_SPEND + MAX_SEATS        # + seat: bid this round, -1 before the Bid phase
S_WON = S_BID + MAX_SEATS          # + seat: tricks won this round
S_PLAYED = S_WON + MAX_SEATS       # + seat: card played to the current trick, -1
S_POLICY = S_PLAYED + MAX_SEATS    # + seat: policy code (P_RANDOM, P_HEURISTIC, P_RIVAL)
S_DRAW_DECK = S_POLICY + MAX_SEATS  # 13 slots: the Draw Deck, top first
S_RIVAL_DECK = S_DRAW_DECK + MAX_DRAW_DECK  # 22 slots: the Rival Deck, top first
S_DECK = S_RIVAL_DECK + RIVAL_DECK_SIZE     # 52 slots: the shuffled deck of the current deal
S_COUNT = S_DECK + N_CARDS                  # the game's counters (COUNTERS order)

# stream slots: 0..S-1 the seats' decisions, then the round's DEAL and AUX streams, then
# (S + SLOT_SEARCH_OFFSET + s) seat s's SEARCH stream
SLOT_DEAL_OFFSET, SLOT_AUX_OFFSET, SLOT_SEARCH_OFFSET = 0, 1, 2

# ---- counters (index = column offset in the result row) -------------------------------------
C_BID = 0                                 # 14 counters: bids of value 0..13 (players only)
# per bid class: hits, misses, Reputation gained on hits, Reputation lost on misses (counters
# are non-negative sums, so the signed change is split in two)
C_STD_HIT, C_STD_MISS, C_STD_GAIN, C_STD_LOSS = 14, 15, 16, 17
C_EXT_HIT, C_EXT_MISS, C_EXT_GAIN, C_EXT_LOSS = 18, 19, 20, 21
C_CLR_HIT, C_CLR_MISS, C_CLR_GAIN, C_CLR_LOSS = 22, 23, 24, 25
C_PASS, C_DRAW, C_BUY, C_DRAWN, C_BOUGHT = 26, 27, 28, 29, 30
C_INVEST, C_INVEST_CHANCES = 31, 32
C_SUDDEN, C_RIVAL_HIT, C_RIVAL_ROUNDS = 33, 34, 35
C_SHARED = 36
C_MC_ROLLOUTS, C_MC_PLAYS = 37, 38
C_FORBIDDEN, C_YIELDED = 39, 40          # restricted play (issue #15), appended last
CLASS_BASE = (C_STD_HIT, C_EXT_HIT, C_CLR_HIT)   # by bid class
HIT, MISS, GAIN, LOSS = 0, 1, 2, 3              # offsets from a class's base
COUNTERS = tuple(Counter(f"bid_{b}", f"players' bids of {b}") for b in range(MAX_BID + 1)) + (
    Counter("standard_hits", "Standard bids (1-13 but 5, 7) made exactly"),
    Counter("standard_misses"),
    Counter("standard_gain", "Reputation scored by Standard hits (points as ruled, before the cap)"),
    Counter("standard_loss", "Reputation lost by Standard misses"),
    Counter("extended_hits", "Extended bids (5, 7) made exactly"),
    Counter("extended_misses"),
    Counter("extended_gain", "Reputation scored by Extended hits (before the cap)"),
    Counter("extended_loss", "Reputation lost by Extended misses"),
    Counter("clear_hits", "Clear Skies bids (0) made"),
    Counter("clear_misses"),
    Counter("clear_gain", "Reputation scored by Clear Skies hits (before the cap)"),
    Counter("clear_loss", "Reputation lost by Clear Skies misses"),
    Counter("market_pass", "players' Market actions: Pass"),
    Counter("market_draw", "players' Market actions: Draw k"),
    Counter("market_buy", "players' Market actions: Buy k"),
    Counter("cards_drawn", "cards taken from the Draw Deck (= discards of Draw actions)"),
    Counter("cards_bought", "cards taken from the Market (= discards of Buy actions)"),
    Counter("investments", "Reputation paid to reset Market Spend to 3"),
    Counter("investment_chances", "player-rounds in which Investment was allowed"),
    Counter("sudden_death", "games that needed a sudden-death round"),
    Counter("rival_hits", "rounds in which the Rival won exactly 4 tricks"),
    Counter("rival_rounds", "rounds the Rival played"),
    Counter("shared_victories", "games ending in a shared victory"),
    Counter("mc_rollouts", "rollouts played by search (mc) seats"),
    Counter("mc_rollout_plays", "card plays simulated inside those rollouts"),
    Counter("restriction_forbidden", "decisions at which a seat with a watch bit took an option in "
            "its watched set"),
    Counter("restriction_yielded", "decisions at which a restricted seat found every legal option "
            "forbidden"),
)
N_COUNTERS = len(COUNTERS)
# what every seat has observed this round, kept only by the build with search (play_one's
# ``search`` not None); all of it is public: a Buy takes chosen face-up cards, plays and the
# Rival's flips are face up
S_MKT_BUILT = S_COUNT + N_COUNTERS  # mask: the Market's cards shuffled into the Rival Deck
S_VOID = S_MKT_BUILT + 1           # + seat: suits the seat has shown void in (failed to follow)
S_KNOWN = S_VOID + MAX_SEATS       # + seat: cards it bought from the Market and still holds
S_MCARG = S_KNOWN + MAX_SEATS      # + 2 * seat: mc budget, rollout policy
# scratch, meaningful only inside one phase: the deal's 51 draws (deal), each seat's next draw
# (tricks_phase)
S_DRAWS = S_MCARG + 2 * MAX_SEATS
S_NEXT = S_DRAWS + N_CARDS
S_FORBID = S_NEXT + MAX_SEATS      # + seat: restriction bits it obeys (restricted play)
S_WATCH = S_FORBID + MAX_SEATS     # + seat: restriction bits only counted
S_KNOB = S_WATCH + MAX_SEATS       # + NK * seat: the seat's knobs (KNOBS; a heuristic seat: the defaults)
S_RACE = S_KNOB + NK * MAX_SEATS   # + seat: 1 when its search is raced (``race``), 2 by successive
                                   # halving (``halve``), SEARCH_SIFT + k sifted (``sift``), below 0
                                   # a tree search (``ismcts``); its S_POLICY is P_MC
S_MCOBJ = S_RACE + MAX_SEATS       # + seat: its search's objective (OBJ_MEAN .. OBJ_INVEST)
ST_SIZE = S_MCOBJ + MAX_SEATS

# ---- restrictions (restricted play, ``POLICY+RESTRICTION``; docs/games/forecasts-bid.md) -------
X_NO_INVEST, X_NO_MARKET, X_NO_BUY, X_NO_DRAW, X_BID_ZERO, X_NO_CLEAR, X_NO_EXTENDED = range(7)
RESTRICTIONS = (
    Restriction("no-invest", X_NO_INVEST, "never invest Reputation in Market Spend"),
    Restriction("no-market", X_NO_MARKET, "always Pass in the Market (no Draw, no Buy)"),
    Restriction("no-buy", X_NO_BUY, "never Buy from the Market"),
    Restriction("no-draw", X_NO_DRAW, "never Draw from the Draw Deck in the Market"),
    Restriction("bid-zero", X_BID_ZERO, "always bid 0 (Clear Skies)"),
    Restriction("no-clear-skies", X_NO_CLEAR, "never bid 0 (Clear Skies)"),
    Restriction("no-extended", X_NO_EXTENDED, "never make an Extended Forecast (bid 5 or 7)"),
)
BID_RESTRICTIONS = (1 << X_BID_ZERO) | (1 << X_NO_CLEAR) | (1 << X_NO_EXTENDED)
_S32 = np.uint64(32)

# ---- trace events -------------------------------------------------------------------------
(E_ROUND, E_INVEST, E_DEAL, E_DRAW_DECK, E_SET_ASIDE, E_BID, E_MARKET, E_RIVAL_DECK,
 E_RIVAL_ORDER, E_RIVAL_FLIP, E_PLAY, E_TRICK, E_SCORE, E_SUDDEN, E_RESULT) = range(1, 16)
E_CHECKPOINT = 16
RIVAL_ORDER_PER_EVENT = 6  # round + position + 6 cards = the 8 values of an event
_ACTIONS = ("pass", "draw", "buy")
EVENTS = (
    Event(E_ROUND, "round", ("round", "sudden_death")),
    Event(E_INVEST, "investment", ("round", "invest", "reputation", "spend")),
    Event(E_DEAL, "deal", ("round", "hand"), masks=("hand",)),
    Event(E_DRAW_DECK, "draw_deck", ("round", "cards", "size"), masks=("cards",)),
    Event(E_SET_ASIDE, "set_aside", ("round", "cards"), masks=("cards",)),
    Event(E_BID, "bid", ("round", "bid")),
    Event(E_MARKET, "market", ("round", "action", "asked", "taken", "discarded", "spend", "market"),
          masks=("taken", "discarded", "market"), words=(("action", _ACTIONS),)),
    Event(E_RIVAL_DECK, "rival_deck", ("round", "cards", "size"), masks=("cards",)),
    Event(E_RIVAL_ORDER, "rival_deck_order",
          ("round", "position") + tuple(f"card{i}" for i in range(RIVAL_ORDER_PER_EVENT)),
          cards=tuple(f"card{i}" for i in range(RIVAL_ORDER_PER_EVENT))),
    Event(E_RIVAL_FLIP, "rival_flip", ("round", "trick", "first", "second", "played", "scrapped"),
          cards=("first", "second", "played", "scrapped")),
    Event(E_PLAY, "play", ("round", "trick", "card"), cards=("card",)),
    Event(E_TRICK, "trick", ("round", "trick", "card", "tricks_won"), cards=("card",)),
    Event(E_SCORE, "round_score", ("round", "bid", "tricks", "points", "reputation", "spend")),
    Event(E_SUDDEN, "sudden_death", ("contenders",)),
    Event(E_RESULT, "final", ("score", "place", "winner", "sudden_death", "timeout")),
    arc.checkpoint_event(E_CHECKPOINT),   # Reputation after every round, sudden death included
)


def format_card(c: int) -> str:
    return "-" if c < 0 else card_name(c)


def n_seats(players: int, params) -> int:
    return 3 if players == 2 else players


def extra_seats(players: int, params) -> tuple:
    return ("rival",) if players == 2 else ()


def _worst_round() -> int:
    # the largest loss in one round: an Extended 7 missed by 7, plus one Investment
    return EXTENDED_MISS_PER_TRICK * EXTENDED_B + INVEST_COST


def score_range(players: int, params) -> tuple[int, int]:
    rounds = min(ROUNDS[players] + 1, int(params[R_ROUND_CAP]))
    return -rounds * _worst_round(), REP_CAP


def length_range(players: int, params) -> tuple[int, int]:
    cap = int(params[R_ROUND_CAP])
    t = HAND_SIZE[players]
    return min(ROUNDS[players], cap) * t, min(ROUNDS[players] + 1, cap) * t


def check(players: int, params) -> None:
    if players not in PLAYER_COUNTS:
        raise ValueError(f"forecasts-bid plays 2 (Rival Station), 3 or 4 players, not {players}")


# ---- small rules helpers ---------------------------------------------------------------------
@jit
def bid_class(bid):
    """Clear Skies (0), Extended (5 or 7) or Standard (any other positive bid)."""
    if bid == CLEAR_SKIES:
        return CLASS_CLEAR
    if bid == EXTENDED_A or bid == EXTENDED_B:
        return CLASS_EXTENDED
    return CLASS_STANDARD


@jit
def round_points(bid, won):
    """Reputation scored by a bid (Phase 6 and RULINGS 'Scoring')."""
    off = abs(won - bid)
    k = bid_class(bid)
    if k == CLASS_CLEAR:
        return CLEAR_SKIES_HIT if won == 0 else -CLEAR_MISS_PER_TRICK * won
    if k == CLASS_EXTENDED:
        return EXTENDED_HIT_FACTOR * bid if off == 0 else -EXTENDED_MISS_PER_TRICK * off
    return bid if off == 0 else -STANDARD_MISS_PER_TRICK * off


@jit
def add_reputation(rep, delta):
    """Reputation moves by delta, capped at 60 (the tracking cap); there is no floor."""
    r = rep + delta
    return REP_CAP if r > REP_CAP else r


@jit
def legal_plays(hand, led_suit):
    """Follow the led suit if able; void (or leading, led_suit = -1): any card, Diamonds too.
    No branch (hot in tricks): "no suit led" follows the empty mask (FOLLOW_MASK), a void keeps
    the whole hand."""
    follow = hand & FOLLOW_MASK[led_suit + 1]
    return follow | (hand & (np.int64(follow != 0) - 1))


@jit
def trick_strength(c, led_suit):
    """A card's strength in a trick: any Diamond above any card of the led suit above any other
    card, then by rank (off-suit sluffs never win: the led card already outranks them)."""
    su = c // N_RANKS
    return c - su * N_RANKS + N_RANKS * (np.int64(su == led_suit) + 2 * np.int64(su == DIAMONDS))


@jit
def beats(c, best, led_suit):
    """Does card c beat the card currently holding the trick? Highest Diamond, else highest led."""
    return trick_strength(c, led_suit) > trick_strength(best, led_suit)


@jit
def next_seat(st, s):
    """The seat to the left of s (clockwise); no division: this runs on every card."""
    t = s + 1
    return 0 if t == st[S_SEATS] else t


@jit
def seat_from_left(st, j):
    """The j-th seat clockwise from the dealer's left (j = 0: the dealer's left), 0 <= j < S."""
    t = st[S_DEALER] + 1 + j
    return t - st[S_SEATS] if t >= st[S_SEATS] else t


@jit
def is_rival(st, s):
    return s == st[S_RIVAL]


# ---- setup -----------------------------------------------------------------------------------
@jit
def init_game(st, players, market_on):
    """Setup: Market Spend on 3, Reputation 0 (the Rival: 20), seat 0 the first dealer.

    Every word of ``st`` is written: the blocks set below, and -1 (none) in the rest (the header's
    other fields, S_BID, S_PLAYED, the three decks, S_DRAWS and S_NEXT). The -1 blocks are filled
    one by one instead of ``st[:] = -1`` over the whole vector first (a 2.8 KB fill: ~2.9k of the
    ~39k instructions of a random 4-player game, as valgrind counts ``rep stosb``)."""
    for i in range(S_HAND):
        st[i] = -1
    for s in range(MAX_SEATS):
        st[ix(S_BID + s)] = -1
        st[ix(S_PLAYED + s)] = -1
    for i in range(S_DRAW_DECK, S_COUNT):       # the Draw Deck, the Rival Deck, the deck
        st[i] = -1
    for i in range(S_DRAWS, S_FORBID):          # the deal's draws, each seat's next draw
        st[i] = -1
    st[S_PLAYERS] = players
    st[S_RIVAL] = 2 if players == 2 else -1
    st[S_SEATS] = 3 if players == 2 else players
    st[S_HAND_SIZE] = HAND_SIZE[players]
    st[S_ROUNDS] = ROUNDS[players]
    st[S_MARKET_ON] = market_on
    st[S_ROUND] = 0
    st[S_DEALER] = 0
    st[S_SUDDEN] = 0
    st[S_CONTENDERS] = (1 << st[S_SEATS]) - 1
    st[S_DECISIONS] = 0
    st[S_TRICKS_PLAYED] = 0
    st[S_RIVAL_FINAL] = 0
    for i in range(N_COUNTERS):
        st[S_COUNT + i] = 0
    for s in range(MAX_SEATS):
        st[ix(S_POLICY + s)] = P_RANDOM
        st[ix(S_HAND + s)] = 0
        st[ix(S_REP + s)] = 0
        st[ix(S_SPEND + s)] = SPEND_MAX
        st[ix(S_WON + s)] = 0
    if players == 2:
        st[S_REP + 2] = RIVAL_START_REP
        st[S_POLICY + 2] = P_RIVAL
    st[S_MARKET] = 0
    st[S_SCRAP] = 0
    st[S_SET_ASIDE] = 0
    st[S_WON_PILE] = 0
    reset_tracking(st)
    for i in range(2 * MAX_SEATS):
        st[S_MCARG + i] = 0
    for i in range(MAX_SEATS):
        st[S_RACE + i] = 0
        st[S_MCOBJ + i] = 0
    for s in range(MAX_SEATS):
        st[ix(S_FORBID + s)] = 0
        st[ix(S_WATCH + s)] = 0
    fill_knob_defaults(st, S_KNOB, KNOB_DEFAULTS, MAX_SEATS, NK)


@jit
def reset_tracking(st):
    """A new deal: nothing shown void, no bought card held, no Market in a Rival Deck."""
    st[S_MKT_BUILT] = 0
    for s in range(MAX_SEATS):
        st[ix(S_VOID + s)] = 0
        st[ix(S_KNOWN + s)] = 0


# ---- Phase 1: Investment --------------------------------------------------------------------
@jit
def legal_invest(st, s):
    """At least 1 Reputation and Market Spend below 3 (the Rival never invests)."""
    return (not is_rival(st, s)) and st[ix(S_REP + s)] >= INVEST_COST and st[ix(S_SPEND + s)] < SPEND_MAX


@jit
def apply_invest(st, s):
    st[ix(S_REP + s)] -= INVEST_COST
    st[ix(S_SPEND + s)] = SPEND_MAX


# ---- Phase 2: The Deal ----------------------------------------------------------------------
@jit(inline='always')
def shuffle_step(st, i):
    """Step ``i`` of the deal's Fisher-Yates (for i = 51 .. 0): swap deck[i] with deck[j], j the
    draw of step i (S_DRAWS + 51 - i, 0 <= j <= i); returns deck[i], which no later step moves (each
    later step swaps positions below i), so it is the card at position i of the shuffled deck."""
    j = ix(st[ix(S_DRAWS + N_CARDS - 1 - i)])
    t = st[ix(S_DECK + i)]
    c = st[S_DECK + j]
    st[S_DECK + j] = t
    st[ix(S_DECK + i)] = c
    return c


@jit(inline='always')
def deal_fixed(st, S, h):
    """The shuffle and the dealing of a game without the Rival (3 or 4 players: hands, then the
    Draw Deck, take all 52 cards), ``S`` and ``h`` constants at the call: positions S * h .. 51
    are the Draw Deck (top first), position i < S * h goes to the seat (dealer + 1 + i) mod S.
    Each card goes where it belongs as its shuffle step fixes it (shuffle_step), from the top
    down: no second pass over the deck, the hands gathered in registers (``m0 .. m3``, by the
    position's place from the dealer's left, a constant once S is)."""
    nh = S * h
    for i in range(N_CARDS - 1, nh - 1, -1):
        st[ix(S_DRAW_DECK + i - nh)] = shuffle_step(st, i)
    m0 = np.int64(0)
    m1 = np.int64(0)
    m2 = np.int64(0)
    m3 = np.int64(0)
    for q in range(h - 1, -1, -1):
        i = q * S
        if S == 4:
            m3 |= ONE << shuffle_step(st, i + 3)
        m2 |= ONE << shuffle_step(st, i + 2)
        m1 |= ONE << shuffle_step(st, i + 1)
        m0 |= ONE << shuffle_step(st, i)     # step 0: the no-op swap of position 0 (its draw is 0)
    s = next_seat(st, st[S_DEALER])
    st[ix(S_HAND + s)] = m0
    s = next_seat(st, s)
    st[ix(S_HAND + s)] = m1
    s = next_seat(st, s)
    st[ix(S_HAND + s)] = m2
    if S == 4:
        s = next_seat(st, s)
        st[ix(S_HAND + s)] = m3
    st[S_DECK_END] = N_CARDS - nh
    st[S_SET_ASIDE] = 0


@jit
def deal(st, keys, ctrs, slot):
    """Shuffle the 52 cards; deal one at a time clockwise from the dealer's left; the next cards
    form the Draw Deck (top first); any rest is set aside (the Rival Station's 10).

    The shuffle is rng.shuffle's (for i = 51 .. 1 swap deck[i], deck[below(i + 1)]) with its 51
    draws taken first: they do not depend on the deck, so they are computed side by side (a 52nd,
    for i = 0, below(1) = 0 whatever the bits, completes the vector loop: not counted, ctrs
    advances by 51). Without the Rival (3 or 4 players) each card is dealt as the shuffle fixes
    it (deal_fixed, compiled for each player count); the Rival Station deals from the shuffled
    deck."""
    key = keys[slot]
    c0 = ctrs[slot]
    for d in range(N_CARDS):
        r = rng.bits(key, c0 + d) >> _S32
        st[S_DRAWS + d] = np.int64((r * np.uint64(N_CARDS - d)) >> _S32)
    ctrs[slot] = c0 + N_CARDS - 1
    for i in range(N_CARDS):
        st[S_DECK + i] = i
    S = st[S_SEATS]
    for s in range(S):
        st[ix(S_WON + s)] = 0
        st[ix(S_BID + s)] = -1
        st[ix(S_PLAYED + s)] = -1
    st[S_DECK_TOP] = 0
    st[S_MARKET] = 0
    st[S_SCRAP] = 0
    st[S_WON_PILE] = 0
    st[S_RIVAL_TOP] = 0
    st[S_RIVAL_END] = 0
    if st[S_RIVAL] < 0 and S == 4:
        deal_fixed(st, 4, 10)       # HAND_SIZE[4]: 40 cards dealt, a Draw Deck of 12
        return
    if st[S_RIVAL] < 0 and S == 3:
        deal_fixed(st, 3, 13)       # HAND_SIZE[3]: 39 cards dealt, a Draw Deck of 13
        return
    for i in range(N_CARDS - 1, 0, -1):
        shuffle_step(st, i)
    deck = st[S_DECK:S_DECK + N_CARDS]
    h = st[S_HAND_SIZE]
    s = next_seat(st, st[S_DEALER])
    for o in range(S):            # card i to seat (dealer + 1 + i) mod S: cards o, o + S, ...
        m = np.int64(0)
        for q in range(h):
            m |= ONE << deck[ix(o + q * S)]
        st[ix(S_HAND + s)] = m
        if is_rival(st, s):
            for q in range(h):
                st[S_RIVAL_DECK + q] = deck[ix(o + q * S)]    # the Rival's hand, in the order dealt
        s = next_seat(st, s)
    n_draw = DRAW_DECK_SIZE[st[S_PLAYERS]]
    for j in range(n_draw):
        st[S_DRAW_DECK + j] = deck[ix(S * h + j)]
    st[S_DECK_END] = n_draw
    aside = np.int64(0)
    for i in range(S * h + n_draw, N_CARDS):
        aside |= ONE << deck[ix(i)]
    st[S_SET_ASIDE] = aside


@jit
def draw_deck_mask(st):
    m = np.int64(0)
    for j in range(st[S_DECK_TOP], st[S_DECK_END]):
        m |= ONE << st[S_DRAW_DECK + j]
    return m


# ---- Phase 3: The Bid -----------------------------------------------------------------------
@jit
def max_bid(st):
    """Bids run 0 .. tricks in the round (10 or 13)."""
    return st[S_HAND_SIZE]


@jit
def apply_bid(st, s, b):
    st[ix(S_BID + s)] = b


# ---- Phase 4: The Market --------------------------------------------------------------------
@jit
def draw_deck_size(st):
    return st[S_DECK_END] - st[S_DECK_TOP]


@jit
def legal_market(st, s):
    """Bit mask of the offered actions: Pass always; Draw / Buy when at least one card could be
    taken (Market Spend >= 1 and the Draw Deck / the Market not empty)."""
    m = ONE << A_PASS
    if is_rival(st, s):
        return m
    if st[ix(S_SPEND + s)] >= 1:
        if draw_deck_size(st) > 0:
            m |= ONE << A_DRAW
        if st[S_MARKET] != 0:
            m |= ONE << A_BUY
    return m


@jit
def cards_available(st, action):
    if action == A_DRAW:
        return draw_deck_size(st)
    return popcount(st[S_MARKET])


@jit
def k_max(st, s, action):
    """The largest k of seat s's Draw k / Buy k that takes k cards: min(Market Spend, cards
    available). A larger k takes the same cards: the same action, not offered again."""
    n = cards_available(st, action)
    spend = st[ix(S_SPEND + s)]
    return spend if spend < n else n


@jit
def cards_taken(st, action, k):
    """Resource limits: take k, or what is there when fewer cards are available."""
    n = cards_available(st, action)
    return k if k < n else n


@jit
def apply_draw(st, s):
    """Draw k: take the Draw Deck's top card into hand, paying 1 Market Spend; returns it."""
    c = st[S_DRAW_DECK + st[S_DECK_TOP]]
    st[S_DRAW_DECK + st[S_DECK_TOP]] = -1
    st[S_DECK_TOP] += 1
    st[ix(S_HAND + s)] |= ONE << c
    st[ix(S_SPEND + s)] -= 1
    return c


@jit
def apply_buy(st, s, c):
    """Buy k: take one face-up card c from the Market, paying 1 Market Spend."""
    st[S_MARKET] &= ~(ONE << c)
    st[ix(S_HAND + s)] |= ONE << c
    st[ix(S_SPEND + s)] -= 1


@jit
def apply_discard(st, s, c):
    """After taking, discard the same number of cards from hand face up into the Market."""
    st[ix(S_HAND + s)] &= ~(ONE << c)
    st[S_MARKET] |= ONE << c


# ---- the Rival Deck (Rival Station) ---------------------------------------------------------
def _build_rival_deck(st, keys, ctrs, slot):
    """Post-Market consolidation: the Draw Deck (top first) then the Market (card order) are
    shuffled on the round's AUX stream and stacked under the Rival's 10 dealt cards. The shuffle
    is rng.shuffle's Fisher-Yates (the same draws) on the state's own cells: a slice of the state
    is a new array object, which a function that counts references counts up and down."""
    r = st[S_RIVAL]
    base = S_RIVAL_DECK + st[S_HAND_SIZE]
    n = 0
    for j in range(st[S_DECK_TOP], st[S_DECK_END]):
        st[base + n] = st[S_DRAW_DECK + j]
        st[S_DRAW_DECK + j] = -1
        n += 1
    m = st[S_MARKET]
    while m:
        st[base + n] = lowest_bit(m)
        m &= m - 1
        n += 1
    for i in range(n - 1, 0, -1):
        j = rng.below(keys, ctrs, slot, i + 1)
        t = st[base + i]
        st[base + i] = st[base + j]
        st[base + j] = t
    st[S_DECK_TOP] = 0
    st[S_DECK_END] = 0
    st[S_MARKET] = 0
    st[S_HAND + r] = 0        # the Rival's hand is now the top of its deck
    st[S_RIVAL_TOP] = 0
    st[S_RIVAL_END] = st[S_HAND_SIZE] + n


# one body, two builds: the game's own (a call) and the rollouts' (inlined there, session 24)
build_rival_deck = jit(_build_rival_deck)
build_rival_deck_in_place = jit(inline='always')(_build_rival_deck)


@jit
def rival_deck_at(st, i):
    """Card at position i of the Rival Deck (0 = top), -1 past its end."""
    return st[S_RIVAL_DECK + i] if i < st[S_RIVAL_END] else -1


@jit
def rival_flip(st):
    c = st[S_RIVAL_DECK + st[S_RIVAL_TOP]]
    st[S_RIVAL_DECK + st[S_RIVAL_TOP]] = -1
    st[S_RIVAL_TOP] += 1
    return c


@jit
def rival_choose(first, second, led_suit):
    """The Rival follows with one of two flipped cards: (1) the higher card of the led suit;
    (2) else the higher Diamond; (3) else the higher card; equal ranks: the first flipped."""
    f_led = suit_of(first) == led_suit
    s_led = suit_of(second) == led_suit
    if f_led or s_led:
        if f_led and s_led:
            return first if first > second else second
        return first if f_led else second
    f_tr = suit_of(first) == DIAMONDS
    s_tr = suit_of(second) == DIAMONDS
    if f_tr or s_tr:
        if f_tr and s_tr:
            return first if first > second else second
        return first if f_tr else second
    return first if rank_of(first) >= rank_of(second) else second


# ---- Phase 5: Tricks ------------------------------------------------------------------------
@jit
def apply_play(st, s, c):
    """Put card c (from seat s) into the trick; the first card sets the led suit."""
    st[ix(S_HAND + s)] &= ~(ONE << c)
    st[ix(S_PLAYED + s)] = c
    if st[S_LED_SUIT] < 0:
        st[S_LED_SUIT] = suit_of(c)
        st[S_BEST_SEAT] = s
    elif beats(c, st[S_PLAYED + st[S_BEST_SEAT]], st[S_LED_SUIT]):
        st[S_BEST_SEAT] = s


@jit
def start_trick(st, leader):
    st[S_LEADER] = leader
    st[S_LED_SUIT] = -1
    st[S_BEST_SEAT] = -1
    for s in range(st[S_SEATS]):
        st[ix(S_PLAYED + s)] = -1


@jit
def finish_trick(st):
    """The winner collects the trick and leads the next; returns the winner."""
    pile = np.int64(0)
    for s in range(st[S_SEATS]):
        pile |= ONE << st[ix(S_PLAYED + s)]
    return collect_trick(st, st[S_BEST_SEAT], pile)


@jit(inline='always')
def collect_trick(st, w, pile):
    """Seat ``w`` collects the trick whose cards are ``pile`` and leads the next; returns ``w``
    (finish_trick's work, for tricks_phase, which gathers the pile as the cards fall)."""
    st[ix(S_WON + w)] += 1
    st[S_WON_PILE] |= pile
    st[S_TRICK] += 1
    st[S_TRICKS_PLAYED] += 1
    return w


# ---- the end of the game --------------------------------------------------------------------
@jit
def leaders(st, among):
    """Mask of the seats in ``among`` with the highest Reputation."""
    best = np.int64(-(1 << 40))
    for s in range(st[S_SEATS]):
        if (among >> s) & 1 and st[ix(S_REP + s)] > best:
            best = st[ix(S_REP + s)]
    m = 0
    for s in range(st[S_SEATS]):
        if (among >> s) & 1 and st[ix(S_REP + s)] == best:
            m |= 1 << s
    return m


@jit
def rival_beaten(st, humans):
    """Rival Station: does some seat of ``humans`` finish strictly above the Rival?"""
    r = st[S_RIVAL]
    for s in range(st[S_SEATS]):
        if (humans >> s) & 1 and st[ix(S_REP + s)] > st[S_REP + r]:
            return True
    return False


@jit
def outcome(st):
    """(winners mask, sudden death needed) once the regular rounds or the sudden death are over.

    The highest Reputation among the contenders wins; a tie for the lead after the regular
    rounds plays one sudden-death round among all, where only the tied can win; still tied:
    shared. Rival Station: unless a player finishes strictly above the Rival, the Rival wins
    (after a sudden death only with rival_check = 'final': the tied players beat it in round 5).
    """
    contenders = st[S_CONTENDERS]
    r = st[S_RIVAL]
    if r >= 0:
        contenders &= ~(1 << r)
        check = st[S_SUDDEN] == 0 or st[S_RIVAL_FINAL] == 1
        if check and not rival_beaten(st, contenders):
            return np.int64(1 << r), False
    top = leaders(st, contenders)
    if popcount(top) > 1 and st[S_SUDDEN] == 0:
        return np.int64(top), True
    return np.int64(top), False


# ---- policies -----------------------------------------------------------------------------
@jit
def strength(c):
    """Heuristic card order: any Diamond above any other card, then by rank; suit breaks ties."""
    r = rank_of(c)
    su = suit_of(c)
    return ((r + N_RANKS) if su == DIAMONDS else r) * 4 + su


SIDE_MASK = SUIT_MASK[0] | SUIT_MASK[1] | SUIT_MASK[3]     # every card but the Diamonds
RANK_BITS = np.int64((1 << N_RANKS) - 1)


@jit
def side_ranks(side):
    """13-bit mask of the ranks present in ``side`` (a mask without Diamonds)."""
    return (side | (side >> N_RANKS) | (side >> (3 * N_RANKS))) & RANK_BITS


@jit
def weakest(mask):
    """The card of ``mask`` with the least strength (-1 if empty): its lowest side-suit rank,
    of the lowest suit holding that rank; with only Diamonds, the lowest Diamond."""
    side = mask & SIDE_MASK
    if side:
        r = lowest_bit(side_ranks(side))
        if (side >> r) & 1:
            return r
        if (side >> (N_RANKS + r)) & 1:
            return N_RANKS + r
        return 3 * N_RANKS + r
    if mask:
        return lowest_bit(mask)
    return -1


@jit
def strongest(mask):
    """The card of ``mask`` with the greatest strength (-1 if empty): its highest Diamond; with
    no Diamond, its highest side-suit rank, of the highest suit holding that rank."""
    trumps = mask & SUIT_MASK[DIAMONDS]
    if trumps:
        return highest_bit(trumps)
    if mask:
        r = highest_bit(side_ranks(mask))
        if (mask >> (3 * N_RANKS + r)) & 1:
            return 3 * N_RANKS + r
        if (mask >> (N_RANKS + r)) & 1:
            return N_RANKS + r
        return r
    return -1


# The rollouts' trick loop (rollout_tricks) plays about a million cards a game of a search seat
# and picks most of them with these two: there they are inlined (the same Python functions, a
# second dispatcher), a separate call each elsewhere. Inlined at every call site they cost 14 s
# of compile and 5% of random play (session 21); in the loop alone, 3% of a sift seat's time
# (session 23).
strongest_inline = jit(inline='always')(strongest.py_func)
weakest_inline = jit(inline='always')(weakest.py_func)


HIGH_TRUMP_MASK = np.int64(0)
for _r in (RANK_Q, RANK_K, RANK_A):
    HIGH_TRUMP_MASK |= np.int64(1) << np.int64(DIAMONDS * N_RANKS + _r)
ACE_MASK = np.int64(0)
KING_MASK = np.int64(0)
for _s in range(4):
    if _s != DIAMONDS:
        ACE_MASK |= np.int64(1) << np.int64(_s * N_RANKS + RANK_A)
        KING_MASK |= np.int64(1) << np.int64(_s * N_RANKS + RANK_K)


QUEEN_MASK = np.int64(0)
for _s in range(4):
    if _s != DIAMONDS:
        QUEEN_MASK |= np.int64(1) << np.int64(_s * N_RANKS + RANK_Q)


@jit
def estimate_k(hand, kn, b):
    """(estimated half-tricks, sure tricks) with the knob row ``kn[b:b + NK]``: Q K A of
    Diamonds and side Aces are sure tricks (sure_halves each); a lower Diamond low_trump_halves;
    a side King with another card of its suit king_halves; a side Queen with two more cards of
    its suit queen_halves."""
    sure = popcount(hand & HIGH_TRUMP_MASK) + popcount(hand & ACE_MASK)
    low_trumps = popcount(hand & SUIT_MASK[DIAMONDS] & ~HIGH_TRUMP_MASK)
    kings = 0
    queens = 0
    for su in range(4):
        if su != DIAMONDS:
            n = popcount(hand & SUIT_MASK[su])
            if hand & KING_MASK & SUIT_MASK[su] and n >= 2:
                kings += 1
            if hand & QUEEN_MASK & SUIT_MASK[su] and n >= 3:
                queens += 1
    halves = (kn[b + K_SURE] * sure + kn[b + K_LOW_TRUMP] * low_trumps + kn[b + K_KING] * kings
              + kn[b + K_QUEEN] * queens)
    return halves, sure


@jit
def estimate(hand):
    """The heuristic's estimate (the default knobs): sure tricks two halves each; a lower
    Diamond, or a side King with another card of its suit, is half a trick."""
    return estimate_k(hand, KNOB_DEFAULTS, 0)


@jit
def knob_bid(hand, top, kn, b, zeros):
    """The bid by the knob row ``kn[b:]``: Clear Skies for a weak hand (clear_halves,
    clear_trumps, clear_sure), else the estimate rounded (round_up); an Extended bid (5, 7)
    only when at most extended_slack of it is not sure tricks, else one less."""
    halves, sure = estimate_k(hand, kn, b)
    halves += kn[b + K_CLEAR_SEEN] * zeros
    if (halves <= kn[b + K_CLEAR_HALVES] and sure <= kn[b + K_CLEAR_SURE]
            and popcount(hand & SUIT_MASK[DIAMONDS]) <= kn[b + K_CLEAR_TRUMPS]):
        return np.int64(CLEAR_SKIES)
    x = (halves + kn[b + K_ROUND]) // 2
    x = x if x > 0 else 0
    x = x if x < top else top
    if bid_class(x) == CLASS_EXTENDED and sure < x - kn[b + K_EXT_SLACK]:
        x -= 1
    return x


@jit
def heuristic_bid(hand, top):
    """Bid the estimate (half-tricks rounded up); an Extended bid (5, 7) only when all of it is
    sure tricks ("firm"), else one less: knob_bid with the default knobs."""
    return knob_bid(hand, top, KNOB_DEFAULTS, 0, 0)


@jit
def seat_bid(st, s, top):
    """A heuristic or tuned seat's bid, by its knob row."""
    zeros = 0
    if st[S_KNOB + NK * s + K_CLEAR_SEEN] != 0:
        for o in range(st[S_SEATS]):
            if o != s and st[S_BID + o] == CLEAR_SKIES:
                zeros += 1
    return knob_bid(st[ix(S_HAND + s)], top, st, S_KNOB + NK * s, zeros)


@jit
def heuristic_invest(st, s):
    """Invest when Market Spend is at most invest_spend and Reputation at least invest_rep
    (defaults: Spend 1 or 0, Reputation stays positive after paying)."""
    b = S_KNOB + NK * s
    return st[ix(S_SPEND + s)] <= st[b + K_INVEST_SPEND] and st[ix(S_REP + s)] >= st[b + K_INVEST_REP]


@jit
def heuristic_card(st, s, legal):
    """Win tricks until the bid is reached, then duck: lowest winning card when wanting,
    highest losing card when ducking; leads its strongest card when wanting, weakest when not.
    A tuned seat's knobs (defaults: exactly this) add: spoil_slack, want_high, lead_side_aces,
    and forced_win_strongest for a duck that every legal card would win (KNOBS)."""
    b = S_KNOB + NK * s
    want = st[ix(S_WON + s)] < st[ix(S_BID + s)]
    if st[S_LED_SUIT] < 0:
        if want:
            if st[b + K_LEAD_ACES] and legal & ACE_MASK:
                return strongest(legal & ACE_MASK)
            return strongest(legal)
        return weakest(legal)
    # the cards that beat the one holding the trick (a card of the led suit or a Diamond): a
    # higher card of its suit, and any Diamond when it is not one
    best = st[S_PLAYED + st[S_BEST_SEAT]]
    bsu = suit_of(best)
    winners = legal & SUIT_MASK[bsu] & ~((ONE << (best + 1)) - 1)
    if bsu != DIAMONDS:
        winners |= legal & SUIT_MASK[DIAMONDS]
    losers = legal & ~winners
    if want:
        if winners:
            slack = st[b + K_SPOIL]
            if slack >= 0 and losers:
                h = st[S_BEST_SEAT]
                left = st[S_HAND_SIZE] - st[S_TRICK] - 1     # tricks after this one
                if (st[S_WON + h] == st[S_BID + h]
                        and st[ix(S_BID + s)] - st[ix(S_WON + s)] <= left - slack):
                    return strongest(losers)
            if st[b + K_WANT_HIGH] and next_seat(st, s) != st[S_LEADER]:
                return strongest(winners)
            return weakest(winners)
        return weakest(legal)
    if losers:
        return strongest(losers)
    fw = st[b + K_FORCED_WIN]
    if fw == 1 or (fw == 2 and next_seat(st, s) == st[S_LEADER]):
        return strongest(legal)
    return weakest(legal)


# ---- restricted play: what a seat's forbid / watch bits leave ----------------------------------
@jit(inline='always')
def bids_left(bits, H):
    """Bit mask of the bids 0 .. H that the restriction ``bits`` leave (bit b = bid b)."""
    m = (ONE << (H + 1)) - 1
    if bits & (1 << X_BID_ZERO):
        m &= ONE
    if bits & (1 << X_NO_CLEAR):
        m &= ~ONE
    if bits & (1 << X_NO_EXTENDED):
        m &= ~((ONE << EXTENDED_A) | (ONE << EXTENDED_B))
    return m


@jit(inline='always')
def actions_left(bits, offered):
    """The offered Market actions (bit mask) that the restriction ``bits`` leave; Pass stays."""
    if bits & (1 << X_NO_MARKET):
        offered &= ~((ONE << A_DRAW) | (ONE << A_BUY))
    if bits & (1 << X_NO_BUY):
        offered &= ~(ONE << A_BUY)
    if bits & (1 << X_NO_DRAW):
        offered &= ~(ONE << A_DRAW)
    return offered


@jit(inline='always')
def allowed_bids(st, s, H):
    """Seat s's bids as a bit mask: all of 0 .. H cut by its bid restrictions; when they forbid
    every bid the restriction yields (all of them, counted)."""
    full = (ONE << (H + 1)) - 1
    f = st[ix(S_FORBID + s)] & BID_RESTRICTIONS
    if f == 0:
        return full
    m = bids_left(f, H)
    if m == 0:
        st[S_COUNT + C_YIELDED] += 1
        return full
    return m


@jit(inline='always')
def nearest_bid(allowed, want, H):
    """The heuristic's best remaining bid: the allowed bid nearest its own, the lower on a tie."""
    for d in range(H + 1):
        if want - d >= 0 and (allowed >> (want - d)) & 1:
            return want - d
        if want + d <= H and (allowed >> (want + d)) & 1:
            return want + d
    return want


@jit(inline='always')
def restricted_bid(st, keys, ctrs, s, H):
    """A restricted random or heuristic player's bid among those left (random: one draw over
    them, none when one is left; heuristic: the nearest to its own)."""
    allowed = allowed_bids(st, s, H)
    if st[ix(S_POLICY + s)] == P_HEURISTIC:
        return nearest_bid(allowed, seat_bid(st, s, H), H)
    n = popcount(allowed)
    return nth_bit(allowed, rng.below(keys, ctrs, s, n) if n > 1 else 0)


@jit(inline='always')
def watch_invest(st, s, yes):
    """Count an Investment that a watched no-invest would forbid."""
    if yes and (st[ix(S_WATCH + s)] >> X_NO_INVEST) & 1:
        st[S_COUNT + C_FORBIDDEN] += 1


@jit(inline='always')
def watch_bid(st, s, b, H):
    """Count a bid that a watched bid restriction would forbid."""
    w = st[ix(S_WATCH + s)] & BID_RESTRICTIONS
    if w != 0 and not (bids_left(w, H) >> b) & 1:
        st[S_COUNT + C_FORBIDDEN] += 1


@jit(inline='always')
def watch_action(st, s, action):
    """Count a Market action that a watched Market restriction would forbid."""
    w = st[ix(S_WATCH + s)]
    if w != 0 and action != A_PASS and actions_left(w, ONE << action) == 0:
        st[S_COUNT + C_FORBIDDEN] += 1


# ---- one seat's turn in each phase -----------------------------------------------------------
# One spelling of every phase, for both builds of play_one and for the search player's rollouts.
# ``search`` is None in the build without the search player (and in rollouts, where no seat
# searches): Numba prunes every ``search is not None`` branch from that build at compile time.
# ``j0`` is the first seat (from the dealer's left) still to act: 0 in a game, the seat after the
# deciding one in a rollout. The phases are inlined into play_one, which is compiled without
# reference counting (jit_borrowing), so they use the state arrays and inlined helpers freely.
@jit
def pick(st, keys, ctrs, s, n):
    """One random decision of seat s among n options, counted: one below(n) if n >= 2, else 0."""
    st[S_DECISIONS] += 1
    if n <= 1:
        return 0
    return rng.below(keys, ctrs, s, n)


@jit
def bid_choice(st, keys, ctrs, s):
    """A random or heuristic player's bid, counted (step-by-step play in tests)."""
    return bid_choice_inline(st, keys, ctrs, s)


@jit(inline='always')
def bid_choice_inline(st, keys, ctrs, s):
    """bid_choice inlined into bid_phase (a call passes each array as 7 words: ~60 instructions
    per bid, measured)."""
    if st[ix(S_FORBID + s)] & BID_RESTRICTIONS:
        st[S_DECISIONS] += 1
        return restricted_bid(st, keys, ctrs, s, max_bid(st))
    if st[ix(S_POLICY + s)] == P_HEURISTIC:
        st[S_DECISIONS] += 1
        return seat_bid(st, s, max_bid(st))
    return pick(st, keys, ctrs, s, max_bid(st) + 1)


@jit(inline='always')
def invest_phase(st, keys, ctrs, ev, ev_n, j0, search):
    """Investment from seat ``j0`` on: each player allowed to invest decides (one decision)."""
    rec = ev.shape[0] > 0
    S = st[S_SEATS]
    s = st[S_DEALER] + j0
    for j in range(j0, S):
        s += 1
        if s >= S:
            s -= S
        if not legal_invest(st, s):
            continue
        st[S_COUNT + C_INVEST_CHANCES] += 1
        st[S_DECISIONS] += 1
        if (st[ix(S_FORBID + s)] >> X_NO_INVEST) & 1:
            yes = np.int64(0)           # one option left: no draw, no search
        elif search is not None and st[ix(S_POLICY + s)] == P_MC:
            yes = mc_invest(st, keys, ctrs, s, j)
        elif st[ix(S_POLICY + s)] == P_HEURISTIC:
            yes = np.int64(1) if heuristic_invest(st, s) else np.int64(0)
        else:
            yes = rng.below(keys, ctrs, s, 2)
        watch_invest(st, s, yes)
        if yes:
            apply_invest(st, s)
            st[S_COUNT + C_INVEST] += 1
        if rec:
            record_event(ev, ev_n, E_INVEST, s, st[S_ROUND], yes, st[ix(S_REP + s)], st[ix(S_SPEND + s)])


@jit(inline='always')
def bid_phase(st, keys, ctrs, ev, ev_n, j0, search):
    """The Bid from seat ``j0`` on: each player bids 0 .. H (one decision, a random bid always
    draws); the Rival's bid is 4 and is not counted."""
    rec = ev.shape[0] > 0
    S = st[S_SEATS]
    H = max_bid(st)
    s = st[S_DEALER] + j0
    for j in range(j0, S):
        s += 1
        if s >= S:
            s -= S
        if is_rival(st, s):
            b = np.int64(RIVAL_BID)
        else:
            if search is not None and st[ix(S_POLICY + s)] == P_MC:
                st[S_DECISIONS] += 1
                b = mc_bid(st, keys, ctrs, s, j)
            else:
                b = bid_choice_inline(st, keys, ctrs, s)   # counts the decision
            watch_bid(st, s, b, H)
            st[ix(S_COUNT + C_BID + b)] += 1
        apply_bid(st, s, b)
        if rec:
            record_event(ev, ev_n, E_BID, s, st[S_ROUND], b)


@jit
def heuristic_action(hand, market, bid, offered, kn, b):
    """The heuristic's Market action (Pass, Draw or Buy; k is the caller's) and the side it
    discards from (True: its strongest card), by the knob row ``kn[b:]``. With its estimate more
    than market_tolerance halves off its bid it moves toward it: too many half-tricks, it would
    swap its strongest card for the weakest Market card; too few, its weakest for the strongest
    Market card; it Buys when that card is an improvement, else Draws."""
    action = A_PASS
    shed_strong = False
    if popcount(offered) > 1:
        halves, _ = estimate_k(hand, kn, b)
        target = 2 * bid
        if abs(halves - target) > kn[b + K_MARKET_TOL]:
            shed_strong = halves > target
            want_take = -1      # the Market card it buys (-1: the Draw Deck's top)
            if (offered >> A_BUY) & 1 and kn[b + K_MARKET_BUY]:
                if shed_strong:
                    c = weakest(market)
                    if strength(c) < strength(strongest(hand)):
                        want_take = c
                else:
                    c = strongest(market)
                    if strength(c) > strength(weakest(hand)):
                        want_take = c
            if want_take >= 0:
                action = A_BUY
            elif (offered >> A_DRAW) & 1:
                action = A_DRAW
    return action, shed_strong


@jit(inline='always')
def market_turn(st, keys, ctrs, s, ev, ev_n):
    """A random or heuristic seat's Market action: Pass, Draw k or Buy k (the action with its k is
    one decision), then as many discards as cards taken (market_finish), counted and recorded
    (market_book). A restricted seat chooses among the actions its restrictions leave (Pass
    always stays). A random seat draws once, uniformly over the distinct actions in the order
    Pass, Draw 1 .. Draw k_max, Buy 1 .. Buy k_max (mc's order)."""
    offered = legal_market(st, s)
    if st[ix(S_FORBID + s)] != 0:
        offered = actions_left(st[ix(S_FORBID + s)], offered)
    heur = st[ix(S_POLICY + s)] == P_HEURISTIC
    k = 0
    shed_strong = False     # heuristic: discard its strongest (True) or weakest card
    st[S_DECISIONS] += 1
    if heur:
        action, shed_strong = heuristic_action(st[ix(S_HAND + s)], st[S_MARKET], st[ix(S_BID + s)],
                                               offered, st, S_KNOB + NK * s)
        if action != A_PASS:
            k = min(st[S_KNOB + NK * s + K_MARKET_K], k_max(st, s, action))
    else:
        nd = k_max(st, s, A_DRAW) if (offered >> A_DRAW) & 1 else 0
        nb = k_max(st, s, A_BUY) if (offered >> A_BUY) & 1 else 0
        x = rng.below(keys, ctrs, s, 1 + nd + nb) if nd + nb > 0 else 0
        if x == 0:
            action = A_PASS
        elif x <= nd:
            action = A_DRAW
            k = x
        else:
            action = A_BUY
            k = x - nd
    watch_action(st, s, action)
    taken = 0
    taken_mask = np.int64(0)
    discarded = np.int64(0)
    if action != A_PASS:
        taken = cards_taken(st, action, k)
        taken_mask, discarded = market_finish(st, keys, ctrs, s, action, taken, 0, 0, shed_strong)
    market_book(st, s, action, k, taken, taken_mask, discarded, ev, ev_n)


@jit(inline='always')
def market_finish(st, keys, ctrs, s, action, taken, n_taken, n_disc, shed_strong):
    """The rest of seat s's Draw / Buy of ``taken`` cards once ``n_taken`` are taken and
    ``n_disc`` discarded: Draw takes the top cards; a random seat picks each Market card and each
    discard uniformly (one below(n) each), the heuristic takes the strongest Market card and
    discards its weakest card (the weakest and its strongest when ``shed_strong``), each counted
    as a decision. Returns (cards taken, cards discarded) as masks."""
    heur = st[ix(S_POLICY + s)] == P_HEURISTIC
    taken_mask = np.int64(0)
    discarded = np.int64(0)
    for i in range(n_taken, taken):
        if action == A_DRAW:
            c = apply_draw(st, s)
        else:
            mk = st[S_MARKET]
            st[S_DECISIONS] += 1
            if heur:
                c = weakest(mk) if shed_strong else strongest(mk)
            else:
                n = popcount(mk)
                c = select_card(mk, rng.below(keys, ctrs, s, n) if n > 1 else 0)
            apply_buy(st, s, c)
        taken_mask |= ONE << c
    for i in range(n_disc, taken):
        hand = st[ix(S_HAND + s)]
        st[S_DECISIONS] += 1
        if heur:
            c = strongest(hand) if shed_strong else weakest(hand)
        else:
            n = popcount(hand)
            c = select_card(hand, rng.below(keys, ctrs, s, n) if n > 1 else 0)
        apply_discard(st, s, c)
        discarded |= ONE << c
    return taken_mask, discarded


@jit(inline='always')
def market_book(st, s, action, k, taken, taken_mask, discarded, ev, ev_n):
    """Count a finished Market action and record its event."""
    if action == A_PASS:
        st[S_COUNT + C_PASS] += 1
    elif action == A_DRAW:
        st[S_COUNT + C_DRAW] += 1
        st[S_COUNT + C_DRAWN] += taken
    else:
        st[S_COUNT + C_BUY] += 1
        st[S_COUNT + C_BOUGHT] += taken
    if ev.shape[0] > 0:
        record_event(ev, ev_n, E_MARKET, s, st[S_ROUND], action, k, taken_mask, discarded,
                     st[ix(S_SPEND + s)], st[S_MARKET])


@jit(inline='always')
def market_phase(st, keys, ctrs, ev, ev_n, j0, search):
    """The Market from seat ``j0`` on: one action per player (the Rival always Passes: no
    action, nothing counted). With search, the cards a seat bought and kept are noted as known."""
    S = st[S_SEATS]
    s = st[S_DEALER] + j0
    for j in range(j0, S):
        s += 1
        if s >= S:
            s -= S
        if is_rival(st, s):
            continue
        before = st[S_MARKET]
        if search is not None and st[ix(S_POLICY + s)] == P_MC:
            mc_market_turn(st, keys, ctrs, s, j, ev, ev_n)
        else:
            market_turn(st, keys, ctrs, s, ev, ev_n)
        if search is not None:    # cards bought (taken face up) and not discarded again: s holds them
            st[ix(S_KNOWN + s)] |= before & ~st[S_MARKET]


@jit
def rival_play(st, s):
    """The Rival's card: leading, the top card of its deck; following, flip two and keep one by
    its priority order, the other to the scrap pile. Records the flip in S_FLIP_FIRST/SECOND."""
    first = rival_flip(st)
    second = -1
    c = first
    if st[S_LED_SUIT] >= 0:
        second = rival_flip(st)
        c = rival_choose(first, second, st[S_LED_SUIT])
        st[S_SCRAP] |= ONE << (second if c == first else first)
    st[S_FLIP_FIRST] = first
    st[S_FLIP_SECOND] = second
    st[ix(S_HAND + s)] |= ONE << c      # momentarily in hand, so apply_play can take it
    return c


@jit
def seat_play(st, keys, ctrs, s):
    """The card a random or heuristic seat s plays to the current trick (the Rival flips from its
    deck), counted: the trick phase's choice, for step-by-step play (tests)."""
    if is_rival(st, s):
        return rival_play(st, s)
    legal = legal_plays(st[ix(S_HAND + s)], st[S_LED_SUIT])
    if st[ix(S_POLICY + s)] == P_HEURISTIC:
        st[S_DECISIONS] += 1
        return heuristic_card(st, s, legal)
    return select_card(legal, pick(st, keys, ctrs, s, popcount(legal)))


# table: TRICK_STRENGTH[led * N_CARDS + c] = trick_strength(c, led) for led 0..3 (the one formula,
# evaluated in Python at import: the trick phase looks strengths up instead of computing them)
TRICK_STRENGTH = np.array([trick_strength.py_func(c, led) for led in range(4) for c in range(N_CARDS)],
                          dtype=np.int64)


@jit(inline='always')
def trick_choice(st, keys, ctrs, s, legal, heur, led, best_seat, search, plain):
    """The card non-Rival seat s plays from ``legal`` (the trick in progress: ``led``, its
    holder ``best_seat``; -1 before the lead): the heuristic (a bit of ``heur`` per heuristic
    seat), mc with search, else a random card: rng.below(keys, ctrs, s, n) from the prefetched
    draw (S_NEXT) when n >= 2, without a branch: with n = 1 the index is 0 and the counter stays
    (the same next draw). ``plain`` (a constant): every seat is random, nothing asked."""
    if not plain and (heur >> s) & 1:
        st[S_LED_SUIT] = led
        st[S_BEST_SEAT] = best_seat
        return heuristic_card(st, s, legal)
    elif search is not None and st[ix(S_POLICY + s)] == P_MC:
        st[S_LED_SUIT] = led
        st[S_BEST_SEAT] = best_seat
        return mc_play(st, keys, ctrs, s)
    n = popcount(legal)
    k = np.int64((np.uint64(st[ix(S_NEXT + s)]) * np.uint64(n)) >> _S32)
    ctr = ctrs[ix(s)] + np.int64(n > 1)
    ctrs[ix(s)] = ctr
    st[ix(S_NEXT + s)] = np.int64(rng.bits(keys[ix(s)], ctr) >> _S32)
    return select_card(legal, k)


@jit(inline='always')
def trick_card(st, keys, ctrs, s, follow, led, best_seat, j, rival, heur, search, last, plain):
    """Seat ``s``'s card, the ``j``-th of the trick in progress (``led`` -1 and ``follow`` 0 for
    the lead; else the led suit and its cards; ``best_seat`` holds the trick): the Rival flips,
    on the round's last trick (``last``) the one card left is played, any other seat chooses
    among its legal cards (trick_choice); the card leaves the hand (noted for the search) and is
    returned. Inlined at the lead and in the followers' loop of play_trick. ``plain`` (a
    constant, play_trick's): no Rival, every seat random, and S_PLAYED written only on the last
    trick (nothing reads it before: no heuristic, no search, no events)."""
    if not plain and s == rival:
        st[S_LED_SUIT] = led
        c = rival_play(st, s)
        st[ix(S_HAND + s)] &= ~(ONE << c)
    else:
        hand = st[ix(S_HAND + s)]
        if last:
            c = lowest_bit(hand)
        else:
            c = trick_choice(st, keys, ctrs, s, follow_or_any(hand, follow), heur, led,
                             best_seat, search, plain)
        st[ix(S_HAND + s)] = hand & ~(ONE << c)
        if search is not None:
            note_play(st, s, c, j, led)
    if not plain or last:
        st[ix(S_PLAYED + s)] = c
    return c


@jit(inline='always')
def play_trick(st, keys, ctrs, ev, ev_n, search, t, leader, S, rival, heur, last, plain):
    """Trick ``t``, led by ``leader``: one card per seat clockwise, the winner collects it
    (collect_trick) and is returned. ``last`` (a constant; only in the build without search):
    the round's last trick, where every hand holds one card, so no seat is asked: the heuristic
    would play its only legal card, and a random seat draws nothing for a forced play
    (rng.below with n = 1, the protocol), so its next draw stays as it is. The lead is played
    apart from the followers (no "first card?" test per card); the trick's events are recorded
    once it is complete (every field they read is as it was at its card: S_PLAYED, and the Rival's
    flip, S_FLIP_FIRST/SECOND, which only its own card writes). ``plain`` (a constant; only
    without search): no Rival, no heuristic seat, no events; the trick's fields (S_LEADER,
    S_LED_SUIT, S_BEST_SEAT, S_PLAYED), which nothing reads between the tricks then, are written
    on the round's last trick only, so the phase ends with the same state."""
    if search is not None:
        start_trick(st, leader)
    elif not plain or last:
        st[S_LEADER] = leader
    s = leader
    c = trick_card(st, keys, ctrs, s, 0, -1, -1, 0, rival, heur, search, last, plain)
    pile = ONE << c             # the trick's cards
    led = np.int64(ix(c) // np.uint64(N_RANKS))
    follow = SUIT_MASK[ix(led)]  # the led suit's cards
    row = led * N_CARDS         # TRICK_STRENGTH's row of the led suit
    best_seat = s
    best_str = TRICK_STRENGTH[ix(row + c)]
    for j in range(1, S):
        s += 1
        if s == S:
            s = 0
        c = trick_card(st, keys, ctrs, s, follow, led, best_seat, j, rival, heur, search, last,
                       plain)
        pile |= ONE << c
        x = TRICK_STRENGTH[ix(row + c)]
        if x > best_str:
            best_str = x
            best_seat = s
    if not plain or last:
        st[S_LED_SUIT] = led
        st[S_BEST_SEAT] = best_seat
    if not plain and ev.shape[0] > 0:
        s = leader
        for j in range(S):
            c = st[ix(S_PLAYED + s)]
            if s == rival:
                first = st[S_FLIP_FIRST]
                second = st[S_FLIP_SECOND]
                scrapped = -1 if second < 0 else (second if c == first else first)
                record_event(ev, ev_n, E_RIVAL_FLIP, s, st[S_ROUND], t, first, second, c,
                             scrapped)
            record_event(ev, ev_n, E_PLAY, s, st[S_ROUND], t, c)
            s += 1
            if s == S:
                s = 0
    w = collect_trick(st, best_seat, pile)
    if not plain and ev.shape[0] > 0:
        record_event(ev, ev_n, E_TRICK, w, st[S_ROUND], t, st[S_PLAYED + w], st[S_WON + w])
    return w


@jit(inline='always')
def tricks_phase(st, keys, ctrs, ev, ev_n, search):
    """The round's tricks from trick ``S_TRICK`` (led by ``S_LEADER``, no card played yet: trick
    0 in a game, a later one in a rollout) to the last: each trick is start_trick, one card per
    seat clockwise from the leader, finish_trick; the winner leads the next (play_trick).

    A card is played as seat_play chooses it and apply_play plays it, with the trick in progress
    (led suit, holder, its strength: TRICK_STRENGTH) kept in local variables and a random seat's
    next draw computed one ahead (S_NEXT): measured, apply_play's reads of the state on every
    card cost 20-30% of random play. The state fields a policy reads (S_LED_SUIT, S_BEST_SEAT,
    S_PLAYED) are written before it reads them, and every field is as apply_play leaves it when
    finish_trick collects the trick (the trick's cards are gathered in a local mask). The seats'
    policies are read once (``heur``: a bit per heuristic seat); state indices that cannot be
    negative are unsigned (``ix``); every card of a seat other than the Rival is one decision,
    counted once for the phase. Without search nothing reads the state between the cards but the
    policies above, so start_trick's resets (every S_PLAYED, S_LED_SUIT, S_BEST_SEAT to -1: all
    written again before the trick ends) are left to the build with search, and the last trick
    (one card in every hand) asks no seat (play_trick's ``last``). With search, a search seat's
    card comes from mc_play and what each play shows is noted (note_play)."""
    S = st[S_SEATS]
    H = st[S_HAND_SIZE]
    rival = st[S_RIVAL]
    leader = st[S_LEADER]
    t0 = st[S_TRICK]
    heur = 0
    for s in range(S):      # each seat's next draw, computed ahead of the decision that uses it
        st[ix(S_NEXT + s)] = np.int64(rng.bits(keys[s], ctrs[s]) >> _S32)
        if st[ix(S_POLICY + s)] == P_HEURISTIC:
            heur |= 1 << s
    if search is None and heur == 0 and rival < 0 and ev.shape[0] == 0:
        # every seat random, no Rival, nothing recorded (play_trick's ``plain``)
        for t in range(t0, H - 1):
            leader = play_trick(st, keys, ctrs, ev, ev_n, search, t, leader, S, -1, 0, False, True)
        if t0 < H:
            play_trick(st, keys, ctrs, ev, ev_n, search, H - 1, leader, S, -1, 0, True, True)
    elif search is None:
        for t in range(t0, H - 1):
            leader = play_trick(st, keys, ctrs, ev, ev_n, search, t, leader, S, rival, heur, False,
                                False)
        if t0 < H:
            play_trick(st, keys, ctrs, ev, ev_n, search, H - 1, leader, S, rival, heur, True, False)
    else:
        for t in range(t0, H):
            leader = play_trick(st, keys, ctrs, ev, ev_n, search, t, leader, S, rival, heur, False,
                                False)
    if t0 < H:
        st[S_DECISIONS] += (H - t0) * (S - 1 if rival >= 0 else S)


@jit(inline='always')
def scoring_phase(st, ev, ev_n):
    """Compare tricks won with the bid; the Reputation change is capped at 60."""
    S = st[S_SEATS]
    for s in range(S):
        b = st[ix(S_BID + s)]
        w = st[ix(S_WON + s)]
        pts = round_points(b, w)
        st[ix(S_REP + s)] = add_reputation(st[ix(S_REP + s)], pts)
        if is_rival(st, s):
            st[S_COUNT + C_RIVAL_ROUNDS] += 1
            if w == b:
                st[S_COUNT + C_RIVAL_HIT] += 1
        else:
            base = CLASS_BASE[bid_class(b)]
            if w == b:
                st[ix(S_COUNT + base + HIT)] += 1
                st[ix(S_COUNT + base + GAIN)] += pts
            else:
                st[ix(S_COUNT + base + MISS)] += 1
                st[ix(S_COUNT + base + LOSS)] -= pts
        if ev.shape[0] > 0:
            record_event(ev, ev_n, E_SCORE, s, st[S_ROUND], b, w, pts, st[ix(S_REP + s)],
                         st[ix(S_SPEND + s)])


@jit(inline='always')
def round_start(st, ev, ev_n):
    """The round's dealer: seat 0 first, then clockwise (sudden death continues the rotation).
    A round after the regular ones is the sudden death (end_of_round asked for it): it is
    counted here, when it is played, so a game that round_cap ends first does not count it."""
    rnd = st[S_ROUND]
    S = st[S_SEATS]
    st[S_DEALER] = rnd % S
    if rnd == st[S_ROUNDS]:
        st[S_SUDDEN] = 1
        st[S_COUNT + C_SUDDEN] = 1
        if ev.shape[0] > 0:
            record_event(ev, ev_n, E_SUDDEN, -1, st[S_CONTENDERS])
    if ev.shape[0] > 0:
        record_event(ev, ev_n, E_ROUND, st[S_DEALER], rnd, st[S_SUDDEN])


@jit(inline='always')
def deal_phase(st, keys, ctrs, ev, ev_n, deal_key):
    """The Deal from the round's DEAL stream (``deal_key``: the game's rng.kind_key of DEAL, so
    the round's key is one index_key: rng.stream_key's value)."""
    S = st[S_SEATS]
    rnd = st[S_ROUND]
    deal_slot = S + SLOT_DEAL_OFFSET
    keys[deal_slot] = rng.index_key(deal_key, rnd)
    ctrs[deal_slot] = 0
    deal(st, keys, ctrs, deal_slot)
    if ev.shape[0] > 0:
        for s in range(S):
            record_event(ev, ev_n, E_DEAL, s, rnd, st[ix(S_HAND + s)])
        record_event(ev, ev_n, E_DRAW_DECK, -1, rnd, draw_deck_mask(st), draw_deck_size(st))
        if st[S_SET_ASIDE] != 0:
            record_event(ev, ev_n, E_SET_ASIDE, -1, rnd, st[S_SET_ASIDE])


@jit(inline='always')
def rival_deck_phase(st, keys, ctrs, ev, ev_n, aux_key):
    """Rival Station, after the Market: the Rival Deck, shuffled on the round's AUX stream
    (``aux_key``: the game's rng.kind_key of AUX)."""
    S = st[S_SEATS]
    rnd = st[S_ROUND]
    r = st[S_RIVAL]
    aux_slot = S + SLOT_AUX_OFFSET
    keys[aux_slot] = rng.index_key(aux_key, rnd)
    ctrs[aux_slot] = 0
    build_rival_deck(st, keys, ctrs, aux_slot)
    if ev.shape[0] > 0:
        m = np.int64(0)
        for i in range(st[S_RIVAL_END]):
            m |= ONE << st[S_RIVAL_DECK + i]
        record_event(ev, ev_n, E_RIVAL_DECK, r, rnd, m, st[S_RIVAL_END])
        for p in range(0, st[S_RIVAL_END], RIVAL_ORDER_PER_EVENT):
            record_event(ev, ev_n, E_RIVAL_ORDER, r, rnd, p, rival_deck_at(st, p),
                         rival_deck_at(st, p + 1), rival_deck_at(st, p + 2),
                         rival_deck_at(st, p + 3), rival_deck_at(st, p + 4),
                         rival_deck_at(st, p + 5))


@jit(inline='always')
def first_trick(st):
    """Before the tricks: the dealer's left leads trick 0."""
    st[S_TRICK] = 0
    start_trick(st, next_seat(st, st[S_DEALER]))


@jit(inline='always')
def play_round(st, keys, ctrs, ev, ev_n, deal_key, aux_key, search):
    """One round: Investment, Deal, Bid, Market, Tricks, Scoring; with search (``search`` not
    None) what the seats observe is noted for the search seats. ``deal_key``, ``aux_key``: the
    game's DEAL and AUX kind keys (rng.kind_key)."""
    round_start(st, ev, ev_n)
    invest_phase(st, keys, ctrs, ev, ev_n, 0, search)
    deal_phase(st, keys, ctrs, ev, ev_n, deal_key)
    if search is not None:
        reset_tracking(st)
    bid_phase(st, keys, ctrs, ev, ev_n, 0, search)
    if st[S_MARKET_ON]:
        market_phase(st, keys, ctrs, ev, ev_n, 0, search)
    if st[S_RIVAL] >= 0:
        if search is not None:
            st[S_MKT_BUILT] = st[S_MARKET]
        rival_deck_phase(st, keys, ctrs, ev, ev_n, aux_key)
    first_trick(st)
    tricks_phase(st, keys, ctrs, ev, ev_n, search)
    scoring_phase(st, ev, ev_n)

# ---- search player (mc) -------------------------------------------------------------------
# What an mc seat may use: its own hand; every bid; the Market's face-up cards and every Market
# action (a Buy takes chosen face-up cards, so who holds a bought card is public until it is
# discarded or played; cards drawn with Draw k are unseen); every card played and by whom (so
# which led suits a player has shown void in; a void player may sluff or trump freely, so no
# other suit is implied); the Rival's flipped cards (both are flipped face up, so the face-down
# scrap pile is known too) and which Market cards went into its deck; hand, Draw Deck and Rival
# Deck sizes; Reputation and Market Spend of every seat. It may not use: other hands, the Draw
# Deck order, the Rival Deck order, the 10 set-aside cards at 2p, anything of a round not dealt
# yet. The observations are public, so one block (S_MKT_BUILT ..) serves every mc seat.
D_INVEST, D_BID, D_ACTION, D_PICK, D_DISCARD, D_PLAY = 0, 1, 2, 3, 4, 5
PH_INVEST, PH_BID, PH_MARKET, PH_TRICKS = 0, 1, 2, 3
# where a hidden card can be: the seats' hands 0..3, then these
L_DRAW, L_ASIDE, L_RHAND, L_RLOW = MAX_SEATS, MAX_SEATS + 1, MAX_SEATS + 2, MAX_SEATS + 3
N_LOC = MAX_SEATS + 4
# determinize's ``cap`` array: the room of each place (N_LOC), then what every sample of one
# decision shares, computed on its first sample (CAP_DONE 0 in a new search's array, _search_arrays):
# the hidden cards' count, the cards of void suits, the allowed places, the Market cards still in
# the Rival Deck, and from CAP_CARDS the hidden cards in card order
CAP_M, CAP_VCARDS, CAP_ALLOW, CAP_BUILT, CAP_DONE = N_LOC, N_LOC + 1, N_LOC + 2, N_LOC + 3, N_LOC + 4
CAP_CARDS = N_LOC + 5
CAP_SIZE = CAP_CARDS + N_CARDS
DET_ATTEMPTS = 16       # fresh shuffles before the void constraints are dropped for a sample
MAX_OPTIONS = 2 * MAX_DRAW_DECK + 1


@jit(inline='always')
def note_play(st, s, c, j, led):
    """What seat s's play c (the j-th card of a trick whose led suit is ``led``) shows: a player
    who does not follow the led suit has none of it; a bought card it played is no longer in its
    hand."""
    if not is_rival(st, s):
        if j > 0 and suit_of(c) != led:
            st[ix(S_VOID + s)] |= ONE << led
        st[ix(S_KNOWN + s)] &= ~(ONE << c)


# tables: SUIT_OF[c] = c // N_RANKS; FOLLOW_OF[c] = the cards of c's suit (a lookup instead of a
# signed division and a wrapped index)
SUIT_OF = np.array([c // N_RANKS for c in range(N_CARDS)], dtype=np.int64)
FOLLOW_OF = np.array([SUIT_MASK[c // N_RANKS] for c in range(N_CARDS)], dtype=np.int64)


@jit
def _loc_allows(st, L, su, relax):
    return L >= MAX_SEATS or relax or not ((st[S_VOID + L] >> su) & 1)


@jit_borrowing   # allocates nothing; its caller (a search) owns every array
def determinize(st, me, dst, cards, loc, low, cap, room, keys, ctrs, slot):
    """dst = st with everything seat ``me`` cannot see re-dealt, from stream ``slot``.

    Kept: me's hand, everything face up or public, the cards other players are known to hold
    (bought from the Market). Re-dealt: every other card, shuffled, to the other players' hands
    (at their sizes, never a suit the player has shown void in), the Draw Deck (at its size, in
    the shuffled order), the set-aside cards (2p) and the Rival's cards: before the Rival Deck
    is built its dealt hand (in a random deal order); after, the unflipped part of its 10 dealt
    cards, and the unflipped part below them, which also holds the Market cards that went in (a
    shuffle). Cards of a suit someone showed void in are placed first, each to an allowed place
    with probability in proportion to the room left there; the rest fill the remaining room in
    shuffled order. A dead end reshuffles; after DET_ATTEMPTS the voids are ignored.

    ``dst`` must already hold st's live blocks (init_search copies them once per decision): the
    places written here are the same on every sample (every other hand, the Draw Deck from its
    top, the set-aside cards, the Rival's hand or unflipped deck), and nothing else writes
    ``dst`` between samples (rollouts play on a copy), so no copy a sample is needed."""
    S = st[S_SEATS]
    r = st[S_RIVAL]
    H = st[S_HAND_SIZE]
    built_deck = r >= 0 and st[S_RIVAL_END] > 0
    top = st[S_RIVAL_TOP]
    low_start = top if top > H else H
    if cap[CAP_DONE] == 0:      # the decision's first sample: what every sample of it shares
        visible = st[S_HAND + me] | st[S_MARKET] | st[S_WON_PILE] | st[S_SCRAP]
        for s in range(S):
            if st[ix(S_PLAYED + s)] >= 0:
                visible |= ONE << st[ix(S_PLAYED + s)]
        known = np.int64(0)
        for o in range(S):
            if o != me:
                known |= st[S_KNOWN + o]
        built = st[S_MKT_BUILT] & ~visible          # Market cards still in the Rival Deck
        hidden = FULL_DECK & ~visible & ~known & ~built
        for L in range(N_LOC):
            cap[L] = 0
        voidable = 0
        for o in range(S):
            if o != me and o != r:
                cap[o] = popcount(st[S_HAND + o]) - popcount(st[S_KNOWN + o])
                voidable |= st[S_VOID + o]
        cap[L_DRAW] = draw_deck_size(st)
        cap[L_ASIDE] = popcount(st[S_SET_ASIDE])
        if r >= 0:
            if built_deck:
                cap[L_RHAND] = H - top if top < H else 0
                cap[L_RLOW] = st[S_RIVAL_END] - low_start - popcount(built)
            else:
                cap[L_RHAND] = popcount(st[S_HAND + r])
        m = 0
        h = hidden
        while h:
            cap[CAP_CARDS + m] = lowest_bit(h)
            h &= h - 1
            m += 1
        vcards = np.int64(0)        # the cards of the suits some seat showed void in
        for su in range(4):
            if (voidable >> su) & 1:
                vcards |= SUIT_MASK[su]
        allow = np.int64(0)         # 8 bits a suit: the places (_loc_allows) a card of it may go to
        if vcards:
            for su in range(4):
                for L in range(N_LOC):
                    if _loc_allows(st, L, su, False):
                        allow |= ONE << (8 * su + L)
        cap[CAP_M] = m
        cap[CAP_VCARDS] = vcards
        cap[CAP_ALLOW] = allow
        cap[CAP_BUILT] = built
        cap[CAP_DONE] = 1
    m = cap[CAP_M]
    vcards = cap[CAP_VCARDS]
    allow = cap[CAP_ALLOW]
    built = cap[CAP_BUILT]
    for i in range(m):          # the hidden cards in card order, as every sample starts them
        cards[i] = cap[CAP_CARDS + i]
    for attempt in range(DET_ATTEMPTS + 1):
        if m > 1:               # rng.shuffle's permutation and counter, its draws computed first
            rng.shuffle_batched(cards, m, keys, ctrs, slot, low)    # (low: free until written below)
        if attempt == DET_ATTEMPTS:     # relax: the voids are ignored
            allow = np.int64(-1)
        roomy = 0               # bit L: place L has room left
        for L in range(N_LOC):
            room[L] = cap[L]
            if cap[L] > 0:
                roomy |= 1 << L
        ok = True
        for i in range(m if vcards else 0):    # (no void suit: every card fills in order below)
            if not ((vcards >> cards[i]) & 1):
                continue
            al = (allow >> (8 * SUIT_OF[ix(cards[i])])) & roomy    # allowed places with room
            tot = 0
            b = al
            while b:
                tot += room[ix(lowest_bit(b))]
                b &= b - 1
            if tot == 0:
                ok = False
                break
            x = rng.below(keys, ctrs, slot, tot) if tot > 1 else 0
            b = al
            while b:            # the places in order, each with probability room / tot
                L = lowest_bit(b)
                if x < room[ix(L)]:
                    loc[i] = L
                    room[ix(L)] -= 1
                    if room[ix(L)] == 0:
                        roomy &= ~(1 << L)
                    break
                x -= room[ix(L)]
                b &= b - 1
        if ok:
            break
    # write the sample: a card of a void suit where it was placed above, every other card to the
    # first place with room left, in shuffled order
    for o in range(S):
        if o != me and o != r:
            dst[S_HAND + o] = st[S_KNOWN + o]
    for i in range(RIVAL_DECK_SIZE):
        if not (built_deck and top <= i < st[S_RIVAL_END]):
            dst[S_RIVAL_DECK + i] = -1
    if r >= 0 and not built_deck:
        dst[S_HAND + r] = 0
    dst[S_SET_ASIDE] = 0
    nd = st[S_DECK_TOP]
    nr = 0
    nl = 0
    fill = 0
    left = room[0]              # room left at place ``fill`` (the last place takes any overflow)
    for i in range(m):
        c = cards[ix(i)]
        if (vcards >> c) & 1:
            L = loc[ix(i)]
        else:
            while left == 0 and fill < N_LOC - 1:
                fill += 1
                left = room[ix(fill)]
            L = fill
            left -= 1
        if L < MAX_SEATS:
            dst[ix(S_HAND + L)] |= ONE << c
        elif L == L_DRAW:
            dst[S_DRAW_DECK + nd] = c
            nd += 1
        elif L == L_ASIDE:
            dst[S_SET_ASIDE] |= ONE << c
        elif L == L_RHAND:
            if built_deck:
                dst[S_RIVAL_DECK + top + nr] = c
            else:
                dst[S_HAND + r] |= ONE << c
                dst[S_RIVAL_DECK + nr] = c
            nr += 1
        else:
            low[nl] = c
            nl += 1
    if built_deck:
        b = built
        while b:
            low[nl] = lowest_bit(b)
            b &= b - 1
            nl += 1
        if nl > 1:
            rng.shuffle_batched(low, nl, keys, ctrs, slot, loc)     # (loc: read above, free now)
        for i in range(nl):
            dst[S_RIVAL_DECK + low_start + i] = low[i]


# table: BEATS[c] = the cards that beat c when c holds a trick (c is then of the led suit or a
# Diamond): a higher card of its suit, and any Diamond when c is not one. So a card x beats the
# holder h exactly when (BEATS[h] >> x) & 1, as trick_strength orders them, and the heuristic's
# winners are legal & BEATS[h] (heuristic_card's two lines).
BEATS = np.array([(SUIT_MASK[c // N_RANKS] & ~((1 << (c + 1)) - 1))
                  | (0 if c // N_RANKS == DIAMONDS else SUIT_MASK[DIAMONDS]) for c in range(N_CARDS)],
                 dtype=np.int64)


@jit(inline='always')
def heuristic_rollout(st):
    """Whether a rollout's players are on the heuristic (rollout ``heuristic`` or ``tuned``; the
    other rollout policy is random): _sample_state puts every player on one policy."""
    return st[S_POLICY + (1 if st[S_RIVAL] == 0 else 0)] == P_HEURISTIC


@jit(inline='always')
def rollout_tricks(st, keys, ctrs):
    """A heuristic rollout's tricks (round_rest, game_rest): the round's tricks played on from
    the state, the trick in progress first (its cards played so far in S_PLAYED, the rest -1),
    as tricks_phase and trick_rest play them when every seat but the Rival is on the heuristic
    with one knob row (_sample_state makes every rollout so), with heuristic_card's rule inlined
    and specialised: the knobs read once, the trick's holder kept as its card and the mask of
    the cards that beat it (BEATS), the holder's seat compared with the leader instead of
    next_seat, a single legal card played without the rule (each of its branches picks a card
    of a non-empty part of the legal cards). Same cards, same state fields a later phase reads (hands, S_WON, S_WON_PILE,
    S_TRICK, S_TRICKS_PLAYED, S_LEADER, S_PLAYED, the Rival's deck, scrap and flips), the same
    decisions counted; nothing recorded; S_NEXT is not drawn (no random seat reads it)."""
    S = st[S_SEATS]
    H = st[S_HAND_SIZE]
    rival = st[S_RIVAL]
    kb = S_KNOB + NK * (1 if rival == 0 else 0)     # a player's knob row: every one is the same
    lead_aces = st[kb + K_LEAD_ACES]
    slack = st[kb + K_SPOIL]
    want_high = st[kb + K_WANT_HIGH]
    fw = st[kb + K_FORCED_WIN]
    leader = st[S_LEADER]
    led = st[S_LED_SUIT]
    best_seat = st[S_BEST_SEAT]
    best = np.int64(-1)
    beat = np.int64(0)
    follow = np.int64(0)
    pile = np.int64(0)
    j0 = 0
    if led >= 0:                # a trick in progress: its cards so far
        best = st[ix(S_PLAYED + best_seat)]
        beat = BEATS[ix(best)]
        follow = SUIT_MASK[ix(led)]
        for o in range(S):
            c = st[ix(S_PLAYED + o)]
            if c >= 0:
                pile |= ONE << c
                j0 += 1
    decisions = 0
    for t in range(st[S_TRICK], H):
        st[S_LEADER] = leader
        s = leader + j0
        if s >= S:
            s -= S
        for j in range(j0, S):
            if s == rival:
                st[S_LED_SUIT] = led
                c = rival_play(st, s)
                st[ix(S_HAND + s)] &= ~(ONE << c)
            else:
                decisions += 1
                hand = st[ix(S_HAND + s)]
                legal = hand & follow
                if legal == 0:
                    legal = hand
                won = st[ix(S_WON + s)]
                bid = st[ix(S_BID + s)]
                if legal & (legal - 1) == 0:    # one legal card: every rule plays it
                    c = lowest_bit(legal)
                elif j == 0:
                    if won < bid:
                        if lead_aces and legal & ACE_MASK:
                            c = strongest_inline(legal & ACE_MASK)
                        else:
                            c = strongest_inline(legal)
                    else:
                        c = weakest_inline(legal)
                else:
                    winners = legal & beat
                    losers = legal & ~winners
                    if won < bid:
                        if winners:
                            c = -1
                            if slack >= 0 and losers:
                                if (st[ix(S_WON + best_seat)] == st[ix(S_BID + best_seat)]
                                        and bid - won <= H - t - 1 - slack):
                                    c = strongest_inline(losers)
                            if c < 0:
                                if want_high and j != S - 1:
                                    c = strongest_inline(winners)
                                else:
                                    c = weakest_inline(winners)
                        else:
                            c = weakest_inline(legal)
                    elif losers:
                        c = strongest_inline(losers)
                    elif fw == 1 or (fw == 2 and j == S - 1):
                        c = strongest_inline(legal)
                    else:
                        c = weakest_inline(legal)
                st[ix(S_HAND + s)] = hand & ~(ONE << c)
            st[ix(S_PLAYED + s)] = c
            pile |= ONE << c
            if j == 0:
                led = SUIT_OF[ix(c)]
                follow = FOLLOW_OF[ix(c)]
                best_seat = s
                best = c
                beat = BEATS[ix(c)]
            elif (beat >> c) & 1:
                best_seat = s
                best = c
                beat = BEATS[ix(c)]
            s += 1
            if s == S:
                s = 0
        st[S_LED_SUIT] = led
        st[S_BEST_SEAT] = best_seat
        leader = collect_trick(st, best_seat, pile)
        led = -1
        follow = np.int64(0)
        pile = np.int64(0)
        j0 = 0
    st[S_DECISIONS] += decisions


@jit(inline='always')
def rollout_scoring(st):
    """scoring_phase in a rollout: the Reputation changes only (a rollout's counters and events
    are never read: the search values a rollout by the Reputation, outcome by it too)."""
    for s in range(st[S_SEATS]):
        st[ix(S_REP + s)] = add_reputation(st[ix(S_REP + s)],
                                           round_points(st[ix(S_BID + s)], st[ix(S_WON + s)]))


@jit(inline='always')
def cards_in_trick(st):
    """How many cards the trick in progress holds (S_PLAYED entries not -1)."""
    k = 0
    for s in range(st[S_SEATS]):
        if st[ix(S_PLAYED + s)] >= 0:
            k += 1
    return k


@jit(inline='always')
def trick_rest(st, keys, ctrs):
    """A rollout resumed mid-trick: the trick in progress played out card by card (seat_play,
    apply_play: the decisions and draws of tricks_phase) and collected, the next trick started.
    Returns the cards played."""
    S = st[S_SEATS]
    k0 = cards_in_trick(st)
    s = st[S_LEADER] + k0
    if s >= S:
        s -= S
    for j in range(k0, S):
        apply_play(st, s, seat_play(st, keys, ctrs, s))
        s = next_seat(st, s)
    w = st[S_BEST_SEAT]
    finish_trick(st)
    start_trick(st, w)
    return S - k0


@jit(inline='always')
def round_to_tricks(st, phase, j, keys, ctrs, ev, ev_n):
    """The round's phases before its tricks, from seat ``j`` (from the dealer's left) of
    ``phase`` (PH_INVEST, PH_BID or PH_MARKET) on, with the game's own phase functions
    (``search`` None), up to its first trick (first_trick); streams as round_rest's."""
    S = st[S_SEATS]
    if phase == PH_INVEST:
        invest_phase(st, keys, ctrs, ev, ev_n, j, None)
        deal(st, keys, ctrs, S + SLOT_DEAL_OFFSET)
        phase = PH_BID
        j = 0
    if phase == PH_BID:
        bid_phase(st, keys, ctrs, ev, ev_n, j, None)
        j = 0
    if st[S_MARKET_ON]:
        market_phase(st, keys, ctrs, ev, ev_n, j, None)
    if st[S_RIVAL] >= 0:
        build_rival_deck_in_place(st, keys, ctrs, S + SLOT_AUX_OFFSET)
    first_trick(st)


@jit(inline='always')    # into _option_value (no reference counting there: jit_borrowing)
def round_rest(st, phase, j, keys, ctrs, ev, ev_n):
    """Play the round on to its scoring from seat ``j`` (from the dealer's left) of ``phase``
    with the game's own phase functions (``search`` None: no seat searches in a rollout);
    streams: seats 0..S-1, S the deal, S + 1 the Rival Deck shuffle. Returns the card plays
    simulated."""
    S = st[S_SEATS]
    plays = 0
    if phase != PH_TRICKS:
        round_to_tricks(st, phase, j, keys, ctrs, ev, ev_n)
    elif heuristic_rollout(st):     # a card decision: the trick in progress, then the rest
        plays += S - cards_in_trick(st) + S * (st[S_HAND_SIZE] - st[S_TRICK] - 1)
        rollout_tricks(st, keys, ctrs)
        rollout_scoring(st)
        return plays
    else:
        plays += trick_rest(st, keys, ctrs)
    if st[S_TRICK] < st[S_HAND_SIZE]:
        plays += S * (st[S_HAND_SIZE] - st[S_TRICK])
        if heuristic_rollout(st):
            rollout_tricks(st, keys, ctrs)
        else:
            tricks_phase(st, keys, ctrs, ev, ev_n, None)
    rollout_scoring(st)
    return plays


@jit_borrowing   # allocates nothing; its caller (mc_search) owns every array
def game_rest(st, keys, ctrs, ev, ev_n):
    """After a rollout's round is scored (round_rest): play every later round to the end of the
    game as play_one does (end_of_round's test, a sudden death among the tied after the regular
    rounds), every seat on the rollout's policies (``search`` None), and return the card plays
    simulated. The round cap is not applied: the rules never need more than one sudden death.
    Streams: the seats' slots go on; each later round r deals from rng.index_key(the sample's
    deal key, r) and (2p) shuffles the Rival Deck from rng.index_key(its aux key, r), so every
    option of a sample sees the same later deals (common random numbers) and none of them is the
    game's own deal (the sample's keys come from the searching seat's SEARCH stream). The
    sample's keys are restored before returning (the next option starts from them)."""
    S = st[S_SEATS]
    deal_slot = S + SLOT_DEAL_OFFSET
    aux_slot = S + SLOT_AUX_OFFSET
    kd = keys[deal_slot]
    ka = keys[aux_slot]
    plays = 0
    while True:
        st[S_ROUND] += 1
        if st[S_ROUND] >= st[S_ROUNDS]:
            winners, sudden = outcome(st)
            if not sudden:
                break
            st[S_CONTENDERS] = winners
        round_start(st, ev, ev_n)
        invest_phase(st, keys, ctrs, ev, ev_n, 0, None)
        keys[deal_slot] = rng.index_key(kd, st[S_ROUND])
        ctrs[deal_slot] = 0
        deal(st, keys, ctrs, deal_slot)
        bid_phase(st, keys, ctrs, ev, ev_n, 0, None)
        if st[S_MARKET_ON]:
            market_phase(st, keys, ctrs, ev, ev_n, 0, None)
        if st[S_RIVAL] >= 0:
            keys[aux_slot] = rng.index_key(ka, st[S_ROUND])
            ctrs[aux_slot] = 0
            build_rival_deck_in_place(st, keys, ctrs, aux_slot)
        first_trick(st)
        plays += S * st[S_HAND_SIZE]
        if heuristic_rollout(st):
            rollout_tricks(st, keys, ctrs)
        else:
            tricks_phase(st, keys, ctrs, ev, ev_n, None)
        rollout_scoring(st)
    keys[deal_slot] = kd
    keys[aux_slot] = ka
    return plays


@jit(inline='always')
def apply_option(st, me, dkind, opt, shed, taken, done, keys, ctrs):
    """Apply option ``opt`` of seat ``me``'s decision ``dkind`` to ``st`` (a sample), with me's
    own rest of a Market turn by its rollout policy; returns the phase the round goes on from.
    Market: ``shed`` (the heuristic's discard side), ``taken`` (cards the action takes),
    ``done`` (cards already taken / discarded)."""
    phase = PH_MARKET
    if dkind == D_INVEST:
        if opt:
            apply_invest(st, me)
        phase = PH_INVEST
    elif dkind == D_BID:
        apply_bid(st, me, opt)
        phase = PH_BID
    elif dkind == D_ACTION:
        action = opt // 4
        if action != A_PASS:
            market_finish(st, keys, ctrs, me, action, cards_taken(st, action, opt % 4), 0, 0, shed)
    elif dkind == D_PICK:
        apply_buy(st, me, opt)
        market_finish(st, keys, ctrs, me, A_BUY, taken, done + 1, 0, shed)
    elif dkind == D_DISCARD:
        apply_discard(st, me, opt)
        market_finish(st, keys, ctrs, me, A_BUY, taken, taken, done + 1, shed)
    else:
        apply_play(st, me, opt)
        phase = PH_TRICKS
    return phase


@jit(inline='always')    # into _option_value: one call a rollout, not three
def play_option(st, me, dkind, opt, j, shed, taken, done, keys, ctrs, ev, ev_n):
    """Apply option ``opt`` of seat ``me``'s decision ``dkind`` to ``st`` (a sample:
    apply_option) and play the round on; returns card plays. ``j``: me's place from the
    dealer's left."""
    phase = apply_option(st, me, dkind, opt, shed, taken, done, keys, ctrs)
    return round_rest(st, phase, j + 1, keys, ctrs, ev, ev_n)


# The state's blocks a search copies once a decision (st -> det, init_search; determinize then
# rewrites only what it re-deals): all but the Deal's scratch (S_DECK, S_DRAWS: deal() writes both
# before it reads them) and the knob rows (the same in every sample and rollout of one decision:
# init_search sets them once). A rollout (det -> sim) copies fewer (copy_rollout).
# the block order the three copies rely on (each range below is one block run, none overlap)
assert S_DECK <= S_COUNT and S_COUNT + N_COUNTERS <= S_MCARG <= S_DRAWS <= S_NEXT <= S_FORBID <= S_KNOB


@jit(inline='always')
def copy_rollout(src, dst):
    """copy_live for a rollout (det -> sim), without the counters and the seats' settings:
    the game's counters are only ever added to, never read by a rule or a policy (they go to the
    result row at the game's end), and a rollout's are thrown away, so a rollout may count on
    from whatever sim holds; the settings (S_MCARG, S_FORBID, S_WATCH, S_RACE, S_MCOBJ) are
    written only when a game starts (init_game, play_one), so init_search copies them to sim
    once per decision."""
    for i in range(S_DECK):
        dst[i] = src[i]
    for i in range(S_COUNT + N_COUNTERS, S_MCARG):
        dst[i] = src[i]
    for i in range(S_NEXT, S_FORBID):
        dst[i] = src[i]


@jit(inline='always')
def copy_settings(src, dst):
    """The blocks copy_live copies and copy_rollout leaves, but the counters: the seats' settings
    (S_MCARG, S_FORBID, S_WATCH, S_RACE, S_MCOBJ)."""
    for i in range(S_MCARG, S_DRAWS):
        dst[i] = src[i]
    for i in range(S_FORBID, S_KNOB):
        dst[i] = src[i]
    for i in range(S_KNOB + NK * MAX_SEATS, ST_SIZE):
        dst[i] = src[i]


@jit(inline='always')
def copy_live(src, dst):
    """Copy the state's blocks but S_DECK, S_DRAWS and S_KNOB from ``src`` to ``dst``: what a
    rollout copies, the counters and the seats' settings (one list of blocks, in the two
    functions above, so the three cannot drift apart)."""
    copy_rollout(src, dst)
    for i in range(S_COUNT, S_COUNT + N_COUNTERS):
        dst[i] = src[i]
    copy_settings(src, dst)


@jit(inline='always')
def init_search(st, me, det, sim):
    """A search decision's sample and rollout states, the blocks copy_live leaves: the knob rows
    (every seat but the Rival on me's row, the Rival's as in ``st``), no deck (S_DECK -1, what
    the searching seat cannot see) and no Deal draws (S_DRAWS 0); and the sample state's live
    blocks from ``st`` (determinize writes only what it re-deals)."""
    copy_live(st, det)
    r = st[S_RIVAL]
    for o in range(MAX_SEATS):
        src = S_KNOB + NK * (o if o == r else me)
        for k in range(NK):
            det[S_KNOB + NK * o + k] = st[src + k]
    for i in range(N_CARDS):
        det[S_DECK + i] = -1
        det[S_DRAWS + i] = 0
    for i in range(S_DECK, S_COUNT):
        sim[i] = det[i]
    for i in range(S_DRAWS, S_NEXT):
        sim[i] = det[i]
    for i in range(S_KNOB, S_KNOB + NK * MAX_SEATS):
        sim[i] = det[i]
    copy_settings(st, sim)      # (copy_rollout leaves them)


@jit_borrowing   # allocates nothing; its caller (a search) owns every array
def _sample_state(st, me, dkind, det, cards, loc, low, cap, room, keys, ctrs, slot, rkeys):
    """One sample of seat ``me``'s decision into ``det`` (what me cannot see re-dealt; an
    Investment: the state as it is), every seat but the Rival on me's rollout policy with me's
    knob row, and the sample's rollout stream keys ``rkeys`` (one draw of ``slot``)."""
    S = st[S_SEATS]
    rpol = st[S_MCARG + 2 * me + 1]
    # an Investment comes before the deal: det stays st as it is (init_search copied it)
    if dkind != D_INVEST:
        determinize(st, me, det, cards, loc, low, cap, room, keys, ctrs, slot)
    for o in range(S):          # every seat on the rollout policy (me's knob row: init_search)
        if o != det[S_RIVAL]:
            det[S_POLICY + o] = P_HEURISTIC if rpol == P_TUNED else rpol
    base = rng.bits(keys[slot], ctrs[slot])
    ctrs[slot] += 1
    for p in range(S + 2):
        rkeys[p] = rng.bits(base, p)


# The search's objective (mc:B:ROLLOUT:OBJECTIVE, S_MCOBJ; issue #24 "fix the reference so that
# strong means strong"). Every one takes the samples' wins first in a round that can end the game.
# OBJ_MEAN: (S - 1) x own Reputation change minus the other seats' changes (S times its gain over
#   their mean change): the search as it was, the default.
# OBJ_LEAD: own Reputation minus the highest other seat's (Rival included) at the end of the
#   round: the margin to the leader, or over the nearest threat when ahead.
# OBJ_WIN: its chance to win the game from the end-of-round standings, WIN_SCALE x P; in a round
#   that can end the game (no rounds left to estimate over) the wins, then OBJ_LEAD's margin.
# OBJ_GAME: the horizon is the end of the game (game_rest: every later round is played out with
#   new deals from the sample's streams); a sample is worth its win units at the game's end
#   (layout.SHARE_UNIT per win, shared by a tie as the game shares it, after the sudden death),
#   ties between options broken by OBJ_LEAD's margin at the game's end. It sees what the round
#   horizon cannot: Investment's worth in later rounds' Markets (issue #24).
# OBJ_INVEST: OBJ_GAME for the Investment decision (the one whose worth lies in later rounds'
#   Markets), OBJ_MEAN for every other decision.
OBJ_MEAN, OBJ_LEAD, OBJ_WIN, OBJ_GAME, OBJ_INVEST = 0, 1, 2, 3, 4
# S_RACE: how a search seat spends its budget (0: flat, every option on every sample)
SEARCH_RACE, SEARCH_HALVE, SEARCH_SIFT = 1, 2, 3
WIN_SCALE = 1 << 16
# The win-chance model: each seat's Reputation change over the K rounds still to play after this
# one is independent normal with mean mu_o x K and standard deviation sd_o x sqrt(K): a player
# mu 0, sd ROUND_SD[players]; the Rival mu RIVAL_DRIFT (its mean change a round relative to a
# player's), sd RIVAL_SD. P(win) = P(own total above every other seat's) =
# E_z[prod_o Phi((gap_o + (mu_me - mu_o) K + sd_me sqrt(K) z) / (sd_o sqrt(K)))], z standard
# normal (8-point Gauss-Hermite). The constants are the spread and drift of one seat's Reputation
# change a round under the trained `tuned` players (strong play at kernel speed; measured, not
# fitted to the search's strength): docs/search.md, "The search's objective".
ROUND_SD = (0.0, 0.0, 4.65, 5.75, 5.34)   # by human players (2: the Rival Station)
RIVAL_SD = 3.89
RIVAL_DRIFT = -1.84
_GH_Z, _GH_W = np.polynomial.hermite_e.hermegauss(8)
GH_Z = np.ascontiguousarray(_GH_Z, dtype=np.float64)
GH_W = np.ascontiguousarray(_GH_W / np.sqrt(2.0 * np.pi), dtype=np.float64)


@jit(inline='always')
def game_horizon(st, me, dkind):
    """Whether seat ``me``'s search of a ``dkind`` decision rolls out to the end of the game."""
    obj = st[S_MCOBJ + me]
    return obj == OBJ_GAME or (obj == OBJ_INVEST and dkind == D_INVEST)


@jit
def lead_margin(sim, me):
    """Seat ``me``'s Reputation minus the highest other seat's (the Rival's too)."""
    S = sim[S_SEATS]
    best = np.int64(-(1 << 30))
    for o in range(S):
        if o != me and sim[S_REP + o] > best:
            best = sim[S_REP + o]
    return sim[S_REP + me] - best


@jit
def win_chance(sim, me, k):
    """WIN_SCALE x the chance that ``me`` finishes above every other seat after ``k`` >= 1 more
    rounds, from the Reputation in ``sim`` (the model above), rounded to an integer."""
    S = sim[S_SEATS]
    r = sim[S_RIVAL]
    root = np.sqrt(np.float64(k))
    sd_p = ROUND_SD[sim[S_PLAYERS]] * root
    sd_me = RIVAL_SD * root if me == r else sd_p
    mu_me = RIVAL_DRIFT * k if me == r else 0.0
    p = 0.0
    for i in range(GH_Z.shape[0]):
        q = GH_W[i]
        for o in range(S):
            if o != me:
                sd_o = RIVAL_SD * root if o == r else sd_p
                mu_o = RIVAL_DRIFT * k if o == r else 0.0
                x = (sim[S_REP + me] - sim[S_REP + o] + mu_me - mu_o + sd_me * GH_Z[i]) / sd_o
                q *= 0.5 * math.erfc(-x * 0.7071067811865476)
        p += q
    return np.int64(p * WIN_SCALE + 0.5)


@jit(inline='always')
def gain_over_others(st, sim, o):
    """(S - 1) x seat o's Reputation change from ``st`` to ``sim`` minus the other seats' changes
    (S times its gain over their mean change): OBJ_MEAN's value, and ismcts' credit."""
    S = st[S_SEATS]
    v = 0
    for q in range(S):
        d = sim[S_REP + q] - st[S_REP + q]
        v += (S - 1) * d if q == o else -d
    return v


@jit(inline='always')    # into _sample_values
def _option_value(st, det, sim, me, dkind, opt, j, shed, taken, done, rkeys, rctrs, ev, ev_n, final):
    """(value, win units, card plays) of option ``opt`` on the sample ``det`` (played on in
    ``sim``): value = me's objective (S_MCOBJ: OBJ_MEAN, (S - 1) x me's Reputation change minus
    the other seats' changes; OBJ_LEAD; OBJ_WIN, its margin in a round that can end the game); win units
    (a round that can end the game, ``final``): layout.SHARE_UNIT per win, shared by a tie. On the
    game horizon (OBJ_GAME; OBJ_INVEST at an Investment) the rollout goes on to the end of the
    game (game_rest): the wins at its end, and its margin there as the value."""
    S = st[S_SEATS]
    copy_rollout(det, sim)
    for p in range(S + 2):
        rctrs[p] = 0
    plays = play_option(sim, me, dkind, opt, j, shed, taken, done, rkeys, rctrs, ev, ev_n)
    obj = st[S_MCOBJ + me]
    v = 0
    if game_horizon(st, me, dkind):   # on to the end of the game: its wins, then the margin
        plays += game_rest(sim, rkeys, rctrs, ev, ev_n)
        w, _ = outcome(sim)
        units = 0
        if (w >> me) & 1:
            units = layout.SHARE_UNIT // popcount(w)
        return lead_margin(sim, me), units, plays
    if obj == OBJ_MEAN or obj == OBJ_INVEST:
        v = gain_over_others(st, sim, me)
    elif obj == OBJ_LEAD or final:
        v = lead_margin(sim, me)
    else:
        v = win_chance(sim, me, st[S_ROUNDS] - st[S_ROUND] - 1)
    units = 0
    if final:
        w, _ = outcome(sim)     # a tie for the lead: a share (before its sudden death)
        if (w >> me) & 1:
            units = layout.SHARE_UNIT // popcount(w)
    return v, units, plays


@jit_borrowing   # allocates nothing; its caller (a search) owns every array
def _sample_values(st, det, sim, me, dkind, opts, n_opt, alive, j, shed, taken, done, rkeys, rctrs,
                   ev, ev_n, final, vals, units):
    """_option_value of every option ``i`` still running (``alive[i]``) on the sample ``det``:
    its value into ``vals[i]``, its win units into ``units[i]`` (the others keep theirs); returns
    the card plays simulated. One call a sample, not one a rollout (a call passes each array as
    7 words)."""
    plays = 0
    for i in range(n_opt):
        if alive[i]:
            v, u, p = _option_value(st, det, sim, me, dkind, opts[i], j, shed, taken, done, rkeys,
                                    rctrs, ev, ev_n, final)
            vals[i] = v
            units[i] = u
            plays += p
    return plays


@jit(inline='always')
def _search_arrays(S):
    """The working arrays of one search decision (mc_search, race_search, halve_search): the
    re-dealt and the rollout state, _sample_state's card buffers, the rollout streams' keys and
    counters, and an empty event log (rollouts record nothing)."""
    return (np.empty(ST_SIZE, dtype=np.int64), np.empty(ST_SIZE, dtype=np.int64),
            np.empty(N_CARDS, dtype=np.int64), np.empty(N_CARDS, dtype=np.int64),
            np.empty(N_CARDS, dtype=np.int64), np.zeros(CAP_SIZE, dtype=np.int64),
            np.empty(N_LOC, dtype=np.int64), np.empty(S + 2, dtype=np.uint64),
            np.zeros(S + 2, dtype=np.int64), np.zeros((0, layout.EVENT_WIDTH), dtype=np.int64),
            np.zeros(1, dtype=np.int64))


@jit
def mc_search(st, me, dkind, opts, n_opt, j, shed, taken, done, keys, ctrs, slot):
    """Index of the best of ``opts[:n_opt]`` for seat ``me``: over its budget of samples, the
    sum of the sample values of its objective (S_MCOBJ; OBJ_MEAN: (S - 1) x its Reputation change
    this round minus the other seats' changes, S times its lead over their mean change; OBJ_LEAD,
    OBJ_WIN, OBJ_GAME, OBJ_INVEST above); in a round that can end the game (on the game horizon:
    in every round), first the win units
    it takes in the samples (layout.SHARE_UNIT per win, shared by a tie for the lead). Each sample re-deals what me cannot see once and plays
    every option forward from it (common random numbers: the same rollout streams too); ties go
    to the earlier option. Draws only on stream ``slot`` (me's SEARCH stream). A ``race`` seat
    races the options instead (``race_search``)."""
    if st[S_RACE + me] < 0:
        return ismcts_search(st, me, dkind, opts, n_opt, j, shed, taken, done, keys, ctrs, slot)
    if st[S_RACE + me] == SEARCH_HALVE:
        return halve_search(st, me, dkind, opts, n_opt, j, shed, taken, done, keys, ctrs, slot)
    if st[S_RACE + me] >= SEARCH_SIFT:
        return sift_search(st, me, dkind, opts, n_opt, j, shed, taken, done, keys, ctrs, slot)
    if st[S_RACE + me]:
        return race_search(st, me, dkind, opts, n_opt, j, shed, taken, done, keys, ctrs, slot)
    S = st[S_SEATS]
    budget = st[S_MCARG + 2 * me]
    total = np.zeros(n_opt, dtype=np.int64)
    # a round whose scoring can end the game (the last regular round, the sudden death): the
    # samples' win units come first, so an option that wins the game in every sample is taken
    final = (st[S_SUDDEN] == 1 or st[S_ROUND] == st[S_ROUNDS] - 1
             or game_horizon(st, me, dkind))
    wins = np.zeros(n_opt, dtype=np.int64)
    alive = np.ones(n_opt, dtype=np.int64)      # every option on every sample
    vals = np.empty(n_opt, dtype=np.int64)
    units = np.empty(n_opt, dtype=np.int64)
    det, sim, cards, loc, low, cap, room, rkeys, rctrs, ev, ev_n = _search_arrays(S)
    init_search(st, me, det, sim)
    plays = 0
    for _ in range(budget):
        _sample_state(st, me, dkind, det, cards, loc, low, cap, room, keys, ctrs, slot, rkeys)
        plays += _sample_values(st, det, sim, me, dkind, opts, n_opt, alive, j, shed, taken, done,
                                rkeys, rctrs, ev, ev_n, final, vals, units)
        for i in range(n_opt):
            total[i] += vals[i]
            wins[i] += units[i]
    st[S_COUNT + C_MC_ROLLOUTS] += budget * n_opt
    st[S_COUNT + C_MC_PLAYS] += plays
    best = 0
    for i in range(1, n_opt):
        if wins[i] > wins[best] or (wins[i] == wins[best] and total[i] > total[best]):
            best = i
    return best


# ismcts (kernels/ismcts.py; docs/search.md, "Information-set MCTS"): a tree per decision over the
# rest of the round from it. The root's children are the decision's options (by index), each
# played on every one of SAMPLES samples as mc plays them (a flat root on common samples: the
# same sample and rollout streams for every option; UCB at the root, a sample an iteration, lost
# -0.14 to mc:64 at its cost, docs/search.md); after the root's option the phases before the tricks (the other seats' bids, the Market) are played by
# the rollout policy as mc's rollouts play them, and every seat's card plays are nodes (the
# Rival's flips are not decisions and make none). A node is credited with its mover's value:
# ISMCTS_UNIT x (S - 1) x (its Reputation change this round minus the other seats' mean
# change), and in a round that can end the game ISMCTS_UNIT x (S - 1) x ISMCTS_WIN more for a
# win (shared by a tie: ISMCTS_UNIT = 12 keeps every share an integer); the UCB constant is
# explore / 100 on rewards / (ISMCTS_UNIT x (S - 1) x ISMCTS_SCALE), so 10 Reputation over the
# others' mean is one unit, as 10 round points are in forecasts-cubes' tree.
# S_RACE holds -(1 + explore) for an ismcts seat (any negative value: ismcts).
ISMCTS_UNIT = 12
ISMCTS_SCALE = 10
ISMCTS_WIN = 30      # a win in a round that can end the game, in Reputation over the others' mean


@jit(_nrt=True)    # allocates its tree and working arrays (as mc_search)
def ismcts_search(st, me, dkind, opts, n_opt, j, shed, taken, done, keys, ctrs, slot):
    """Index of seat ``me``'s option among ``opts[:n_opt]`` (at most 63) by single-observer
    ISMCTS over the rest of the round: S_MCARG samples of what me cannot see (mc's sampler,
    every seat on me's rollout policy), each played once from every option in turn (an
    iteration): a walk down the option's subtree (the phases before the tricks by the rollout
    policy, then every seat's cards as nodes, legal in this sample), one node added, the round
    played out as mc's rollouts play it, and every node on the path credited with its mover's
    value (ISMCTS_* above). The decision: the option with the most reward (every option has the
    same visits; kernels/ismcts.most_visited, ties to the earlier option). Draws only on stream
    ``slot``."""
    S = st[S_SEATS]
    iterations = st[S_MCARG + 2 * me] * n_opt
    tree = ismcts.new_tree(iterations)
    path = np.zeros(S * st[S_HAND_SIZE] + 2, dtype=np.int64)
    res = np.zeros(S, dtype=np.int64)
    det, sim, cards, loc, low, cap, room, rkeys, rctrs, ev, ev_n = _search_arrays(S)
    init_search(st, me, det, sim)
    plays = _ismcts_iterations(st, me, dkind, opts, n_opt, j, shed, taken, done, keys, ctrs, slot,
                               iterations, tree, path, res, det, sim, cards, loc, low, cap, room,
                               rkeys, rctrs, ev, ev_n)
    st[S_COUNT + C_MC_ROLLOUTS] += iterations
    st[S_COUNT + C_MC_PLAYS] += plays
    return ismcts.most_visited(tree)


@jit_borrowing   # allocates nothing; ismcts_search owns every array (no reference counting here)
def _ismcts_iterations(st, me, dkind, opts, n_opt, j, shed, taken, done, keys, ctrs, slot,
                       iterations, tree, path, res, det, sim, cards, loc, low, cap, room, rkeys,
                       rctrs, ev, ev_n):
    """ismcts_search's iterations; returns the card plays simulated."""
    S = st[S_SEATS]
    H = st[S_HAND_SIZE]
    c_explore = (-st[S_RACE + me] - 1) / 100.0
    scale = ISMCTS_UNIT * (S - 1) * ISMCTS_SCALE
    final = st[S_SUDDEN] == 1 or st[S_ROUND] == st[S_ROUNDS] - 1
    n_nodes = 1
    rival = st[S_RIVAL]
    plays = 0
    for it in range(iterations):
        i_opt = it % n_opt
        if i_opt == 0:          # a new sample, for every option in turn (common random numbers)
            _sample_state(st, me, dkind, det, cards, loc, low, cap, room, keys, ctrs, slot, rkeys)
        copy_rollout(det, sim)
        for p in range(S + 2):
            rctrs[p] = 0
        heur = heuristic_rollout(sim)
        node, n_nodes, new = ismcts.select(tree, n_nodes, ismcts.ROOT, ONE << i_opt, me, c_explore,
                                           scale, keys, ctrs, slot)
        path[0] = node
        depth = 1
        phase = apply_option(sim, me, dkind, opts[tree[node, ismcts.ACT]], shed, taken, done,
                             rkeys, rctrs)
        if phase != PH_TRICKS:
            round_to_tricks(sim, phase, j + 1, rkeys, rctrs, ev, ev_n)
        while not new and sim[S_TRICK] < H:
            k0 = cards_in_trick(sim)
            if k0 == S:             # a complete trick: its winner leads the next
                start_trick(sim, finish_trick(sim))
                continue
            s = sim[S_LEADER] + k0
            if s >= S:
                s -= S
            if s == rival:
                apply_play(sim, s, rival_play(sim, s))
                plays += 1
                continue
            legal = legal_plays(sim[ix(S_HAND + s)], sim[S_LED_SUIT])
            prefer = heuristic_card(sim, s, legal) if heur else -1
            node, n_nodes, new = ismcts.select(tree, n_nodes, node, legal, s, c_explore, scale,
                                               keys, ctrs, slot, prefer)
            path[depth] = node
            depth += 1
            apply_play(sim, s, tree[node, ismcts.ACT])
            plays += 1
        if sim[S_TRICK] < H:
            plays += round_rest(sim, PH_TRICKS, 0, rkeys, rctrs, ev, ev_n)
        else:
            rollout_scoring(sim)
        for o in range(S):
            res[o] = ISMCTS_UNIT * gain_over_others(st, sim, o)
        if final:
            w, _ = outcome(sim)     # a tie for the lead: a share (before its sudden death)
            for o in range(S):
                if (w >> o) & 1:
                    res[o] += ISMCTS_UNIT * (S - 1) * ISMCTS_WIN // popcount(w)
        ismcts.backup(tree, path, depth, res)
    return plays


# A race's per-sample value in a round that can end the game: win units first (|value| < 2^15
# for any seat count, so a win unit outweighs the Reputation part of one sample)
WIN_WEIGHT = 1 << 16


@jit
def race_search(st, me, dkind, opts, n_opt, j, shed, taken, done, keys, ctrs, slot):
    """``mc_search`` for a ``race`` seat (kernels/race.py): the options run on common samples
    (one re-deal and the same rollout streams for every option), and an option the leader
    clearly beats stops being sampled; the value of a sample is the flat search's value, plus
    WIN_WEIGHT x its win units in a round that can end the game."""
    return raced_search(st, me, dkind, opts, n_opt, j, shed, taken, done, keys, ctrs, slot, -1)


@jit
def sift_search(st, me, dkind, opts, n_opt, j, shed, taken, done, keys, ctrs, slot):
    """``mc_search`` for a ``sift`` seat: race_search's race (common samples, the same sample
    values and stream counters) with its options dropped by schedule S_RACE - SEARCH_SIFT
    (``race.prune_sift``: no equivalence drop in the default schedule, which compares from the
    16th sample and never drops in a round that can end the game)."""
    return raced_search(st, me, dkind, opts, n_opt, j, shed, taken, done, keys, ctrs, slot,
                        st[S_RACE + me] - SEARCH_SIFT)


@jit
def raced_search(st, me, dkind, opts, n_opt, j, shed, taken, done, keys, ctrs, slot, k):
    """The race of ``race_search`` (``k`` < 0: ``race.prune``'s rule) and ``sift_search`` (sift
    schedule ``k`` >= 0: ``race.prune_sift``): the same samples, values and stream counters."""
    S = st[S_SEATS]
    budget = st[S_MCARG + 2 * me]
    final = (st[S_SUDDEN] == 1 or st[S_ROUND] == st[S_ROUNDS] - 1
             or game_horizon(st, me, dkind))
    alive, total, Sd, Qd = race.new_race(n_opt)
    Hd = np.zeros((budget if k >= 0 else 0, n_opt), dtype=np.int64)   # a sift race's samples
    vals = np.zeros(n_opt, dtype=np.int64)
    units = np.zeros(n_opt, dtype=np.int64)
    det, sim, cards, loc, low, cap, room, rkeys, rctrs, ev, ev_n = _search_arrays(S)
    init_search(st, me, det, sim)
    plays = 0
    rollouts = 0
    base = ctrs[slot]
    left = n_opt
    m = 0
    while left > 1 and m < budget:
        ctrs[slot] = base + m * race.STRIDE
        _sample_state(st, me, dkind, det, cards, loc, low, cap, room, keys, ctrs, slot, rkeys)
        plays += _sample_values(st, det, sim, me, dkind, opts, n_opt, alive, j, shed, taken, done,
                                rkeys, rctrs, ev, ev_n, final, vals, units)
        for i in range(n_opt):
            if alive[i]:
                vals[i] += WIN_WEIGHT * units[i]
                rollouts += 1
        m += 1
        if k < 0:
            race.record(vals, alive, total, Sd, Qd, n_opt)
            left = race.prune(alive, total, Sd, Qd, n_opt, m, budget)
        else:
            race.record_sample(vals, alive, total, Hd, m - 1, n_opt)
            left = race.prune_sift(alive, total, Hd, n_opt, m, k, final)
    ctrs[slot] = base + budget * race.STRIDE
    st[S_COUNT + C_MC_ROLLOUTS] += rollouts
    st[S_COUNT + C_MC_PLAYS] += plays
    return race.leader(alive, total, n_opt)


@jit
def halve_search(st, me, dkind, opts, n_opt, j, shed, taken, done, keys, ctrs, slot):
    """``mc_search`` for a ``halve`` seat (kernels/race.py, successive halving): about budget x
    n_opt rollouts in ceil(log2 n_opt) rounds; in each, every option still running is played on
    the round's new common samples (one re-deal and the same rollout streams for every option),
    then the better half by total stays. A sample's value is race_search's (the flat search's
    value, plus WIN_WEIGHT x its win units in a round that can end the game). Sample ``m``
    starts at counter base + m x race.STRIDE of stream ``slot``, as in the race."""
    S = st[S_SEATS]
    budget = st[S_MCARG + 2 * me]
    final = (st[S_SUDDEN] == 1 or st[S_ROUND] == st[S_ROUNDS] - 1
             or game_horizon(st, me, dkind))
    alive, total, _, _ = race.new_race(n_opt)
    vals = np.zeros(n_opt, dtype=np.int64)
    units = np.zeros(n_opt, dtype=np.int64)
    det, sim, cards, loc, low, cap, room, rkeys, rctrs, ev, ev_n = _search_arrays(S)
    init_search(st, me, det, sim)
    plays = 0
    rollouts = 0
    base = ctrs[slot]
    rounds = race.halving_rounds(n_opt)
    left = n_opt
    m = 0
    while left > 1:
        for _ in range(race.halving_samples(budget, n_opt, left, rounds)):
            ctrs[slot] = base + m * race.STRIDE
            _sample_state(st, me, dkind, det, cards, loc, low, cap, room, keys, ctrs, slot, rkeys)
            plays += _sample_values(st, det, sim, me, dkind, opts, n_opt, alive, j, shed, taken,
                                    done, rkeys, rctrs, ev, ev_n, final, vals, units)
            for i in range(n_opt):
                if alive[i]:
                    total[i] += vals[i] + WIN_WEIGHT * units[i]
                    rollouts += 1
            m += 1
        left = race.halve(alive, total, n_opt)
    ctrs[slot] = base + m * race.STRIDE
    st[S_COUNT + C_MC_ROLLOUTS] += rollouts
    st[S_COUNT + C_MC_PLAYS] += plays
    return race.leader(alive, total, n_opt)


# The search player's entry points (mc_invest, mc_bid, mc_market_turn, mc_play) allocate their
# working arrays, so they turn reference counting on explicitly (``_nrt=True``): Numba would
# otherwise compile them with the ``_nrt=False`` of play_one, their caller (jit_borrowing).


@jit
def search_slot(st, s):
    return st[S_SEATS] + SLOT_SEARCH_OFFSET + s


@jit(_nrt=True)
def mc_invest(st, keys, ctrs, s, j):
    """Investment by search: options no (first), yes (the phase counts the decision)."""
    opts = np.zeros(2, dtype=np.int64)
    opts[1] = 1
    return opts[mc_search(st, s, D_INVEST, opts, 2, j, False, 0, 0, keys, ctrs, search_slot(st, s))]


@jit(_nrt=True)
def mc_bid(st, keys, ctrs, s, j):
    """The bid by search: options 0 .. H in that order, those a restricted seat has left (the
    phase counts the decision)."""
    H = max_bid(st)
    opts = np.empty(H + 1, dtype=np.int64)
    n = _mask_options(allowed_bids(st, s, H), opts)
    if n == 1:
        return opts[0]
    return opts[mc_search(st, s, D_BID, opts, n, j, False, 0, 0, keys, ctrs, search_slot(st, s))]


@jit
def _mask_options(mask, opts):
    n = 0
    m = mask
    while m:
        opts[n] = lowest_bit(m)
        m &= m - 1
        n += 1
    return n


@jit(_nrt=True)
def mc_market_turn(st, keys, ctrs, s, j, ev, ev_n):
    """A search seat's Market action, each part by search: the action with its k as one choice
    (Pass, Draw 1 .. Draw min(Spend, Draw Deck), Buy 1 .. Buy min(Spend, Market), in that order;
    a k that could not be taken in full is not offered: it would take what a smaller k takes),
    then each Market card bought (ascending card code), then each discard (ascending card code).
    Counts the decisions the other policies count (the action with its k, each card taken by
    Buy, each discard)."""
    slot = search_slot(st, s)
    opts = np.empty(MAX_OPTIONS + N_CARDS, dtype=np.int64)
    halves, _ = estimate_k(st[ix(S_HAND + s)], st, S_KNOB + NK * s)
    shed = halves > 2 * st[ix(S_BID + s)]       # the rollout policy's side, for rollouts of this turn
    st[S_DECISIONS] += 1
    n = 1
    opts[0] = A_PASS * 4
    left = actions_left(st[ix(S_FORBID + s)], legal_market(st, s))
    for a in (A_DRAW, A_BUY):
        if not (left >> a) & 1:
            continue            # forbidden to this seat (never offered actions take no card)
        for k in range(1, k_max(st, s, a) + 1):
            opts[n] = a * 4 + k
            n += 1
    best = opts[0]
    if n > 1:
        best = opts[mc_search(st, s, D_ACTION, opts, n, j, shed, 0, 0, keys, ctrs, slot)]
    action = best // 4
    k = best % 4
    watch_action(st, s, action)
    taken = 0
    taken_mask = np.int64(0)
    discarded = np.int64(0)
    if action != A_PASS:
        taken = cards_taken(st, action, k)
        for i in range(taken):
            if action == A_DRAW:
                c = apply_draw(st, s)
            else:
                st[S_DECISIONS] += 1
                n = _mask_options(st[S_MARKET], opts)
                c = opts[0]
                if n > 1:
                    c = opts[mc_search(st, s, D_PICK, opts, n, j, shed, taken, i, keys, ctrs, slot)]
                apply_buy(st, s, c)
            taken_mask |= ONE << c
        for i in range(taken):
            st[S_DECISIONS] += 1
            n = _mask_options(st[ix(S_HAND + s)], opts)
            c = opts[mc_search(st, s, D_DISCARD, opts, n, j, shed, taken, i, keys, ctrs, slot)]
            apply_discard(st, s, c)
            discarded |= ONE << c
    market_book(st, s, action, k, taken, taken_mask, discarded, ev, ev_n)


@jit
def distinct_plays(st, s, legal):
    """``legal`` without the cards that play exactly like a lower legal card of their suit: a
    card whose every card ranked between it and the next lower legal card of its suit is out of
    play (seat s's own hand, completed tricks, the Rival's scrap pile, the current trick, and
    the Market when there is no Rival: its cards never come back in the round) wins and loses
    exactly the same tricks, whoever holds what is unseen. The lowest of each run is kept."""
    dead = st[ix(S_HAND + s)] | st[S_WON_PILE] | st[S_SCRAP]
    if st[S_RIVAL] < 0:
        dead |= st[S_MARKET]
    for o in range(st[S_SEATS]):
        if st[S_PLAYED + o] >= 0:
            dead |= ONE << st[S_PLAYED + o]
    out = np.int64(0)
    prev = -1
    m = legal
    while m:
        c = lowest_bit(m)
        m &= m - 1
        same = prev >= 0 and prev // N_RANKS == c // N_RANKS
        if same:
            between = ((ONE << c) - 1) & ~((ONE << (prev + 1)) - 1)
            same = (between & ~dead) == 0
        if not same:
            out |= ONE << c
        prev = c
    return out


@jit(_nrt=True)
def mc_play(st, keys, ctrs, s):
    """A search seat's card: the legal cards in ascending card code (a single one is played;
    the phase counts the decision). A ``halve`` seat searches only the distinct ones
    (``distinct_plays``)."""
    legal = legal_plays(st[ix(S_HAND + s)], st[S_LED_SUIT])
    if st[ix(S_RACE + s)] == SEARCH_HALVE or (st[ix(S_RACE + s)] >= SEARCH_SIFT
                                           and race.SIFT_DISTINCT[st[ix(S_RACE + s)] - SEARCH_SIFT]):
        legal = distinct_plays(st, s, legal)
    if popcount(legal) == 1:
        return lowest_bit(legal)
    opts = np.empty(N_CARDS, dtype=np.int64)
    n = _mask_options(legal, opts)
    return opts[mc_search(st, s, D_PLAY, opts, n, 0, False, 0, 0, keys, ctrs, search_slot(st, s))]


# ---- one game --------------------------------------------------------------------------------
@jit(inline='always')
def new_game(params, seats, seed, g, st, keys, ctrs, search):
    """Set up game ``g`` in the buffers ``st``, ``keys``, ``ctrs`` (any earlier content is
    overwritten): the seats' SEAT streams (and an mc seat's SEARCH stream), counters at 0.
    The keys are derived in stages (rng.game_key once: the same keys as rng.stream_key); returns
    the game key."""
    S = seats.shape[0]
    players = S
    if S == 3 and seats[2, 0] == P_RIVAL:
        players = 2
    for i in range(keys.shape[0]):
        keys[i] = 0
        ctrs[i] = 0
    gkey = rng.game_key(seed, g)
    seat_key = rng.kind_key(gkey, rng.SEAT)
    for s in range(S):
        keys[s] = rng.index_key(seat_key, s)
    init_game(st, players, 1 if params[R_MARKET] == MARKET_RULED else 0)
    st[S_RIVAL_FINAL] = 1 if params[R_RIVAL_CHECK] == RIVAL_CHECK_FINAL else 0
    for s in range(S):
        if seats.shape[1] > SEAT_WATCH:
            st[ix(S_FORBID + s)] = seats[s, SEAT_FORBID]
            st[ix(S_WATCH + s)] = seats[s, SEAT_WATCH]
        if s != st[S_RIVAL]:
            # a tuned seat plays the heuristic's rule with its own knob row; an mc seat keeps
            # the knob row of its rollout policy (tuned: its row's knob columns)
            pol = seats[s, 0]
            if search is not None and pol == P_RACE:    # the same search player, raced
                pol = P_MC
                st[ix(S_RACE + s)] = SEARCH_RACE
            elif search is not None and pol == P_HALVE:  # the same search player, by halving
                pol = P_MC
                st[ix(S_RACE + s)] = SEARCH_HALVE
            elif search is not None and pol == P_SIFT:   # raced, conservative schedule
                pol = P_MC
                st[ix(S_RACE + s)] = SEARCH_SIFT + seats[s, 3] // 10
            elif search is not None and pol == P_ISMCTS:  # a tree search (ismcts_search)
                pol = P_MC
                st[ix(S_RACE + s)] = -1 - seats[s, 3]
            st[ix(S_POLICY + s)] = P_HEURISTIC if pol == P_TUNED else pol
            # init_game wrote the defaults: only a seat with its own row loads it (a call and a
            # copy for every seat cost ~230 instructions, measured)
            p_mc = ((seats[s, 0] if (seats[s, 0] == P_RACE or seats[s, 0] == P_HALVE
                                     or seats[s, 0] == P_SIFT or seats[s, 0] == P_ISMCTS)
                     else P_MC)
                    if search is not None else -1)
            load_own_knob_row(seats, s, NK, P_TUNED, p_mc, st, S_KNOB + NK * s)
            if search is not None and pol == P_MC:
                st[S_MCARG + 2 * s] = seats[s, 1]
                st[S_MCARG + 2 * s + 1] = seats[s, 2]
                if seats.shape[1] > 3 and seats[s, 0] != P_ISMCTS:   # ismcts: OBJ_MEAN's form
                    st[ix(S_MCOBJ + s)] = seats[s, 3] % 10
                keys[S + SLOT_SEARCH_OFFSET + s] = rng.index_key(rng.kind_key(gkey, rng.SEARCH), s)
    return gkey


@jit(inline='always')
def end_of_round(st, ev, ev_n):
    """After a round: (game over, winners). A tie for the lead after the regular rounds starts
    the sudden-death round among the tied."""
    st[S_ROUND] += 1
    if st[S_ROUND] < st[S_ROUNDS]:
        return False, np.int64(0)
    winners, sudden = outcome(st)
    if not sudden:
        return True, winners
    st[S_CONTENDERS] = winners      # round_start begins the sudden death, unless round_cap ends it
    return False, np.int64(0)


@jit
def end_game(st, winners, timeout, out, row, ev, ev_n):
    """Write the game's row (no winner after a timeout) and record the final events."""
    if timeout:
        winners = np.int64(0)
    if popcount(winners) > 1:
        st[S_COUNT + C_SHARED] = 1
    write_result(st, winners, timeout, out, row)
    if ev.shape[0] > 0:
        for s in range(st[S_SEATS]):
            record_event(ev, ev_n, E_RESULT, s, st[ix(S_REP + s)], out[row, st[S_SEATS] + s],
                         (winners >> s) & 1, st[S_SUDDEN], 1 if timeout else 0)


@jit
def game_buffers(S):
    """State vector and stream slots for one game at a time (seats, DEAL, AUX, SEARCH)."""
    return (np.empty(ST_SIZE, dtype=np.int64), np.empty(2 * S + SLOT_SEARCH_OFFSET, dtype=np.uint64),
            np.empty(2 * S + SLOT_SEARCH_OFFSET, dtype=np.int64))


@jit_borrowing   # allocates nothing; its callers own every array (measured: +10% random play)
def play_one(params, seats, seed, g, out, row, ev, ev_n, st, keys, ctrs, search):
    """Play game ``g`` into ``out[row]`` in the caller's buffers (game_buffers); record events
    into ``ev`` when it has rows.

    ``search`` is None when no seat is ``mc``: Numba then prunes every search branch at compile
    time, so random and heuristic play run without the search player's code and bookkeeping;
    any array selects the build with search (kernels/builds.py)."""
    gkey = new_game(params, seats, seed, g, st, keys, ctrs, search)
    deal_key = rng.kind_key(gkey, rng.DEAL)
    aux_key = rng.kind_key(gkey, rng.AUX)
    cap = params[R_ROUND_CAP]
    timeout = False
    winners = np.int64(0)
    # game arc (issue #16): a checkpoint after every round, standing = Reputation (the Rival's too)
    abase = layout.col_arc(seats.shape[0], N_COUNTERS)
    arc.reset(out, row, abase, seats.shape[0])
    while True:
        if st[S_ROUND] >= cap:
            timeout = True
            break
        play_round(st, keys, ctrs, ev, ev_n, deal_key, aux_key, search)
        arc.checkpoint_inline(out, row, abase, seats.shape[0], st, S_REP, False, ev, ev_n, E_CHECKPOINT)
        done, winners = end_of_round(st, ev, ev_n)
        if done:
            break
    end_game(st, winners, timeout, out, row, ev, ev_n)


@jit
def write_result(st, winners, timeout, out, row):
    """Every column of the row: Reputation, places (winners first, then by Reputation; ties
    share), winners, length, flags, decisions, counters."""
    S = st[S_SEATS]
    place_keys = st[S_DECK:S_DECK + S]      # the deck block is free once the game is over
    for s in range(S):
        out[row, s] = st[ix(S_REP + s)]
        # winners above everyone: REP_CAP bounds every Reputation from above
        place_keys[s] = st[ix(S_REP + s)] + (4 * REP_CAP * 1000 if (winners >> s) & 1 else 0)
    layout.places_from_keys(place_keys, S, row, out)
    out[row, col_winners(S)] = winners
    out[row, col_length(S)] = st[S_TRICKS_PLAYED]
    out[row, col_flags(S)] = layout.FLAG_TIMEOUT if timeout else 0
    out[row, col_decisions(S)] = st[S_DECISIONS]
    for i in range(N_COUNTERS):
        out[row, col_counter(S, i)] = st[S_COUNT + i]


# ---- bulk play and trace ----------------------------------------------------------------------
# Two builds of play_one: ``search`` None (no mc seat; every search branch pruned at compile time)
# or an array. The entry points choose in Python (kernels/builds.py), so a run compiles only the
# build it needs.


@jit(inline='always')
def _play_range(params, seats, seed, first_game, out, lo, hi, ev, ev_n, search):
    """Play games ``first_game + i`` into rows ``i`` in [lo, hi) in one set of buffers."""
    st, keys, ctrs = game_buffers(seats.shape[0])
    for i in range(lo, hi):
        play_one(params, seats, seed, first_game + i, out, i, ev, ev_n, st, keys, ctrs, search)


@pjit
def _play_games(params, seats, seed, first_game, out, search):
    ev, ev_n = layout.no_events()   # not np.zeros here: each would be a parallel region
    n = out.shape[0]
    bs, nb = layout.game_blocks(n)
    for b in prange(nb):
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
    _play_games, _play_games_serial, _trace_game, (P_MC, P_RACE, P_HALVE, P_SIFT, P_ISMCTS))

def derived_metrics(sums: dict, games: int, players: int, params) -> dict:
    """Per-variant rates from the integer counter sums (NaN where nothing was counted)."""
    def rate(a, b):
        return a / b if b else float("nan")

    bids = sum(sums[f"bid_{b}"] for b in range(MAX_BID + 1))
    m = {}
    for cls in ("standard", "extended", "clear"):
        n = sums[f"{cls}_hits"] + sums[f"{cls}_misses"]
        m[f"{cls}_share"] = rate(n, bids)
        m[f"{cls}_hit_rate"] = rate(sums[f"{cls}_hits"], n)
        m[f"{cls}_mean_rep_change"] = rate(sums[f"{cls}_gain"] - sums[f"{cls}_loss"], n)
    for b in range(MAX_BID + 1):
        m[f"bid_{b}_share"] = rate(sums[f"bid_{b}"], bids)
    m["mean_bid"] = rate(sum(b * sums[f"bid_{b}"] for b in range(MAX_BID + 1)), bids)
    actions = sums["market_pass"] + sums["market_draw"] + sums["market_buy"]
    for a in ("pass", "draw", "buy"):
        m[f"market_{a}_rate"] = rate(sums[f"market_{a}"], actions)
    m["cards_drawn_per_draw"] = rate(sums["cards_drawn"], sums["market_draw"])
    m["cards_bought_per_buy"] = rate(sums["cards_bought"], sums["market_buy"])
    m["investment_rate"] = rate(sums["investments"], sums["investment_chances"])
    m["investments_per_game"] = rate(sums["investments"], games)
    m["sudden_death_rate"] = rate(sums["sudden_death"], games)
    m["shared_victory_rate"] = rate(sums["shared_victories"], games)
    if players == 2:
        m["rival_hit_rate"] = rate(sums["rival_hits"], sums["rival_rounds"])
    return m
