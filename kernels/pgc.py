"""pgc ("Five Three Five"): a meld-climbing shedding game for 2-6 players (rulebook pgc.txt).

The rulebook copy is damaged; ``docs/games/pgc.md`` lists every ruling taken from RULINGS.md
and every gap switch. Summary: each round the players shed their hands by Leading,
Overwriting or Adding to the Central Meld (or Passing); the first to empty their hand ends
the round and every other player scores the points of the cards they still hold. The game
ends after a round in which someone reaches ``target`` points (2 players: after two rounds,
"two hands"); the fewest points wins, ties share.

Encodings
---------
* A card is its rank index ``r`` in 0..12 for the numbers ``NUMBER[r]`` = 1-5, 7-9, 11-15
  (there is no 6 or 10). Higher index = stronger single. Two ranks are consecutive when
  their numbers differ by one (``NEXT_OK``): 5-7 and 9-11 are not.
* A hand is 13 counts (copies of each rank) inside the flat game state ``st``.
* A meld is ``(kind, low, size)``: SINGLE (size 1), SET (``size`` copies of rank ``low``) or
  RUN (ranks ``low .. low+size-1``).
* An action is one int: ``type | kind << 2 | low << 4 | size << 8`` (``pack_action``); for an
  Add, ``(kind, low, size)`` is the Central Meld it *results in* (the cards played are the
  difference), so each distinct Add is one action. PASS is ``A_PASS``.
* Trace card ids: ``rank * 4 + copy`` (copy 0..3), so a multiset of cards is the bit mask
  with bit ``rank * 4 + copy`` set for the first ``min(count, 4)`` copies and a 5th copy (5-6
  players) goes to a separate ``fifth`` mask (bit ``rank * 4``); a single card field holds
  ``rank * 4``. ``format_card(id)`` writes ``NUMBER[id // 4]``, so lists come out sorted.
"""
from __future__ import annotations

import math

import numpy as np
from numba import prange

from . import arc, builds, layout, rng
from ._jit import jit, jit_borrowing, pjit
from .cards import lowest_bit, popcount
from .knobs import fill_knob_defaults, load_knob_row
from .layout import col_counter, col_decisions, col_flags, col_length, col_winners, record_event
from .spec import (MAX_KNOBS, SEAT_FORBID, SEAT_WATCH, Counter, Event, Knob,
                   Restriction, Rule)

GAME_ID = "pgc"
VERSION = 2                 # 2 (session 25): the last-hand Lead knobs and mc SCOPE; a v1 worker cannot play them
PLAYER_COUNTS = (2, 3, 4, 5, 6)
LOWER_IS_BETTER = True
LENGTH_UNIT = "turns"      # one turn = one decision: a Lead, Overwrite, Add or Pass

# ---- rules (index = slot in params) ---------------------------------------------------------
(R_POINTS, R_RUN_ORDER, R_PASS_LOCKS, R_EIGHT, R_NEXT_LEAD, R_TARGET, R_TWO_P_END,
 R_OVERWRITE_UP, R_EXTRA_DEAL, R_MAX_ROUNDS, R_RANDOM_WIN) = range(11)
POINTS_TABLES = ("standin", "flat", "face")
PT_STANDIN, PT_FLAT, PT_FACE = 0, 1, 2
RUN_LOW, RUN_HIGH = 0, 1
EIGHT_CLEAR, EIGHT_NONE = 0, 1
LEAD_ROTATE, LEAD_WINNER = 0, 1
END_TWO_HANDS, END_TARGET = 0, 1
WIN_GAME, WIN_ROUND, WIN_OFF = 0, 1, 2
RULES = (
    Rule("points", R_POINTS, "standin",
         "card points table: standin = 1-5 one point, 7-9 two, 11-15 three (a STAND-IN: the "
         "printed values are lost); flat = 1 per card; face = the card's number",
         choices=POINTS_TABLES,
         ruling="RULINGS pgc (switch): stand-in table 1/2/3; reports must say it is a stand-in"),
    Rule("run_order", R_RUN_ORDER, "low",
         "run strength: low = the lower run is stronger (2-3-4 beats 3-4-5); high = the higher",
         choices=("low", "high"), ruling="RULINGS pgc (switch, confirmed): the lower run wins"),
    Rule("pass_locks_out", R_PASS_LOCKS, True,
         "a player who passes is out until the trick ends (false: may play again; the trick "
         "then ends when all other players pass in a row)",
         ruling="RULINGS pgc (switch, confirmed)"),
    Rule("eight_rule", R_EIGHT, "clear",
         "Rule of 8's: clear = a Lead, Overwrite or Add putting an 8 into the Central Meld ends "
         "the trick and that player leads next; none = 8 is an ordinary card",
         choices=("clear", "none"), ruling="RULINGS pgc (switch): the 8-cut convention"),
    Rule("next_lead", R_NEXT_LEAD, "rotate",
         "first lead of later rounds: rotate = clockwise from seat 0; winner = who went out",
         choices=("rotate", "winner"), ruling="RULINGS pgc (switch)"),
    Rule("target", R_TARGET, 20, "the game ends after a round in which someone has this many "
         "points (Shorter Game: 10)", lo=1, hi=200, ruling="rulebook: 20; Shorter Game 10"),
    Rule("two_player_end", R_TWO_P_END, "two-hands",
         "2 players only: two-hands = exactly two rounds, fewest total wins; target = play to "
         "`target` like 3-6 players (PGC 20 Points)", choices=("two-hands", "target"),
         ruling="RULINGS pgc: 2p base game is two hands = two rounds"),
    Rule("overwrite_up", R_OVERWRITE_UP, False,
         "PGC Overwrite: an Overwrite may also use a larger meld (any 2-3 cards beat a single, "
         "any 3 cards beat 2), and then the type may change", ruling="rulebook variant"),
    Rule("extra_deal", R_EXTRA_DEAL, False, "Extra Card Deal (3 players only): 16 cards each",
         ruling="rulebook variant; RULINGS pgc: 16 each, 4 undealt"),
    Rule("max_rounds", R_MAX_ROUNDS, 100, "safety cap on rounds: a game reaching it without "
         "ending is a timeout with no winner", lo=1, hi=1000,
         ruling="RULINGS conventions: hard safety cap"),
    Rule("random_win", R_RANDOM_WIN, "game",
         "what the random policy always takes when offered: game = a play that goes out and "
         "thereby ends the game with this seat among the winners; round = any play that goes "
         "out; off = nothing (pure uniform)", choices=("game", "round", "off"),
         ruling="gap: RULINGS conventions make every policy take an immediate game-winning "
                "action; in pgc only going out can end the game, and it wins only when the "
                "scoring that follows ends the game with this seat fewest"),
)

P_RANDOM, P_HEURISTIC, P_MC, P_TUNED = 0, 1, 2, 3
POLICIES = {"random": P_RANDOM, "heuristic": P_HEURISTIC, "mc": P_MC, "tuned": P_TUNED}
# mc:BUDGET:ROLLOUT:SCOPE - samples per decision (each sample's re-deal is shared by every option),
# the policy every seat follows inside a rollout, and which turns are searched: 0 every turn, 1
# only the seat's last hand (2p: once its second hand is picked up; at 3-6 players every hand is
# the last, so 1 = 0), its earlier turns played by the rollout policy (issue #24, session 25: the
# search's 2p first-hand turns are weaker than tuned's and its last-hand turns stronger)
SCOPE_ALL, SCOPE_LAST_HAND = 0, 1
POLICY_ARGS = {"mc": (("budget", 64, 1, 4096), ("rollout", "heuristic", None, None),
                      ("scope", 0, 0, 1, "0 every turn, 1 the last hand only"))}

# ---- cards ----------------------------------------------------------------------------------
N_RANKS = 13
NUMBER = np.array([1, 2, 3, 4, 5, 7, 8, 9, 11, 12, 13, 14, 15], dtype=np.int64)
RANK_OF_NUMBER = {int(n): r for r, n in enumerate(NUMBER)}
EIGHT = 6                                   # rank index of the number 8
ID_SLOTS = 4                                # trace card id = rank * ID_SLOTS + copy (0..3)
# NEXT_OK[r] = 1 when rank r+1 is the next number after rank r (no 6 or 10 in the deck)
NEXT_OK = np.array([int(r + 1 < N_RANKS and NUMBER[r + 1] == NUMBER[r] + 1)
                    for r in range(N_RANKS)], dtype=np.int64)
# points per rank, one row per table (POINTS_TABLES order)
POINTS = np.array([
    [1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3],
    [1] * N_RANKS,
    list(NUMBER),
], dtype=np.int64)

# deal chart by player count: copies of each rank, cards per hand, hands per player
COPIES = np.array([0, 0, 4, 4, 4, 5, 5], dtype=np.int64)
HAND_SIZE = np.array([0, 0, 12, 13, 12, 12, 10], dtype=np.int64)
EXTRA_DEAL_HAND = 16
TWO_P_HANDS = 2                             # 2 players: two hands each, the second set aside
TWO_HANDS_ROUNDS = 2                        # 2p base game: "two hands" = two rounds
MAX_DECK = 65
MAX_PLAYERS = 6

# ---- melds and actions -----------------------------------------------------------------------
K_SINGLE, K_SET, K_RUN = 0, 1, 2
KIND_NAMES = ("single", "set", "run")
MAX_PLAY = 3                                # a Lead or Overwrite plays 1-3 cards; an Add 1-3
MAX_MELD = 5                                # the Central Meld holds at most 5 cards
FULL_RUN = 5                                # an Add making a 5-card run ends the trick
NO_OVERWRITE_FROM = 4                       # no Overwrite onto a Central Meld of 4+ cards
A_LEAD, A_OVERWRITE, A_ADD, A_PASS = 0, 1, 2, 3
ACTION_NAMES = ("lead", "overwrite", "add", "pass")
MAX_ACTIONS = 96
ALL_RANKS = (1 << N_RANKS) - 1
# LINKS: bit r set when ranks r and r+1 are consecutive numbers
LINKS = sum(1 << _r for _r in range(N_RANKS) if NEXT_OK[_r])
# RUN_STARTS[size]: bit ``low`` set when ranks low .. low+size-1 are consecutive numbers
RUN_STARTS = np.zeros(MAX_MELD + 1, dtype=np.int64)
for _size in range(2, MAX_MELD + 1):
    for _low in range(N_RANKS - _size + 1):
        if all(NEXT_OK[_r] for _r in range(_low, _low + _size - 1)):
            RUN_STARTS[_size] |= 1 << _low


@jit(inline="always")
def pack_action(typ, kind, low, size):
    return typ | (kind << 2) | (low << 4) | (size << 8)


@jit(inline="always")
def act_type(a):
    return a & 3


@jit(inline="always")
def act_kind(a):
    return (a >> 2) & 3


@jit(inline="always")
def act_low(a):
    return (a >> 4) & 15


@jit(inline="always")
def act_size(a):
    return a >> 8


# trick-end causes (0 = the trick goes on)
T_ON, T_PASSES, T_FULL_SET, T_FULL_RUN, T_EIGHT, T_OUT = 0, 1, 2, 3, 4, 5
CAUSE_NAMES = ("on", "passes", "full_set", "full_run", "eight", "out")

# ---- flat game state ------------------------------------------------------------------------
S_PLAYERS = 0       # number of players
S_ROUND = 1         # current round, 0-based
S_TO_ACT = 2        # seat to act
S_LAST = 3          # last seat to play a card to the Central Meld this trick (-1 none)
S_C_KIND = 4        # Central Meld kind (-1 = empty)
S_C_LOW = 5         # Central Meld low rank (-1 = empty)
S_C_SIZE = 6        # Central Meld size (0 = empty)
S_N_PASSED = 7      # players locked out by a pass this trick
S_PASS_RUN = 8      # passes in a row since the last play (pass_locks_out = false)
S_OUT = 9           # seat that went out this round (-1 = round goes on)
S_COPIES = 10       # copies of each rank in the deck (4 or 5)
PASSED = 16         # [PASSED + seat]: 1 when locked out this trick
SCORE = PASSED + MAX_PLAYERS            # [SCORE + seat]: points so far
N_HELD = SCORE + MAX_PLAYERS            # [N_HELD + seat]: cards in the hand in play
RESERVE_ON = N_HELD + MAX_PLAYERS       # [RESERVE_ON + seat]: 1 while the 2p second hand waits
KNOB = RESERVE_ON + MAX_PLAYERS         # [KNOB + seat*MAX_KNOBS + k]: the seat's heuristic knobs
HAND = KNOB + MAX_PLAYERS * MAX_KNOBS   # [HAND + seat*13 + rank]: counts of the hand in play
RESERVE = HAND + MAX_PLAYERS * N_RANKS  # [RESERVE + seat*13 + rank]: the 2p second hand
PLAYED = RESERVE + MAX_PLAYERS * N_RANKS   # [PLAYED + rank]: copies played this round (public)
STATE_SIZE = PLAYED + N_RANKS

# ---- counters (index = column offset in the result row) -------------------------------------
(C_ROUNDS, C_TRICKS, C_PLAYS, C_LEAD, C_OVERWRITE, C_ADD, C_PASS, C_END_PASSES, C_END_FULL_SET,
 C_END_FULL_RUN, C_END_EIGHT, C_END_OUT, C_POINTS_LEFT, C_NONWINNERS, C_PICKUPS,
 C_OVERWRITE_UP) = range(16)
C_OUT_FIRST = 16                            # 6 counters: rounds in which seat s went out first
C_MC_ROLLOUTS, C_MC_PLAYS = 22, 23          # search (mc) seats' work, appended after the rest
C_FORBIDDEN, C_YIELDED = 24, 25             # restricted play (issue #15), appended last
COUNTERS = (
    Counter("rounds", "rounds played"),
    Counter("tricks", "tricks played (each starts with a Lead)"),
    Counter("plays", "card plays: Leads + Overwrites + Adds"),
    Counter("act_lead", "Lead actions"),
    Counter("act_overwrite", "Overwrite actions"),
    Counter("act_add", "Add actions"),
    Counter("act_pass", "Pass actions"),
    Counter("end_passes", "tricks ended by all but one passing"),
    Counter("end_full_set", "tricks ended by an Add completing a set (4, or 5 at 5-6p)"),
    Counter("end_full_run", "tricks ended by an Add completing a 5-card run"),
    Counter("end_eight", "tricks ended by the Rule of 8's"),
    Counter("end_out", "tricks cut short by a player going out (no other cause)"),
    Counter("points_left", "points scored by non-winners of rounds (sum)"),
    Counter("nonwinner_rounds", "(round, player who did not go out) pairs"),
    Counter("pickups", "2p: second hands picked up"),
    Counter("overwrite_up", "Overwrites with a larger meld (PGC Overwrite)"),
) + tuple(Counter(f"out_first_seat{s}", f"rounds in which seat {s} went out") for s in range(6)) + (
    Counter("mc_rollouts", "rollouts played by search (mc) seats (one per sample and option)"),
    Counter("mc_rollout_plays", "turns (Leads, Overwrites, Adds, Passes) simulated in those rollouts"),
    Counter("restriction_forbidden", "decisions at which a seat with a watch bit took an option in "
            "its watched set"),
    Counter("restriction_yielded", "decisions at which a restricted seat found every legal option "
            "forbidden"),
)
N_COUNTERS = len(COUNTERS)

# ---- restrictions (restricted play, ``POLICY+RESTRICTION``; docs/games/pgc.md) -----------------
X_NO_OVERWRITE, X_NO_ADD, X_NO_RUNS, X_NO_BIG_SETS = range(4)
BIG_SET = 4                                 # no-sets-of-4+: a set of this many cards or more
RESTRICTIONS = (
    Restriction("no-overwrite", X_NO_OVERWRITE, "never Overwrite the Central Meld"),
    Restriction("no-add", X_NO_ADD, "never Add to the Central Meld"),
    Restriction("no-runs", X_NO_RUNS, "never play a run: no Lead, Overwrite or Add whose meld "
                "is a run (an Add turning a single into a run included)"),
    Restriction("no-sets-of-4+", X_NO_BIG_SETS, "never make a set of 4 or more cards (an Add "
                "onto a set; this forgoes the full-set trick end)"),
)

# ---- trace events -------------------------------------------------------------------------
(E_ROUND, E_DEAL, E_PLAY, E_PASS, E_TRICK, E_PICKUP, E_OUT, E_SCORE, E_FINAL) = range(1, 10)
E_CHECKPOINT = 10
_ACTION_WORDS = ("action", ACTION_NAMES)
_KIND_WORDS = ("kind", KIND_NAMES)
EVENTS = (
    Event(E_ROUND, "round", ("round", "leader")),
    Event(E_DEAL, "deal", ("round", "hand_no", "cards", "fifth", "n_cards"),
          masks=("cards", "fifth")),
    Event(E_PLAY, "play", ("action", "cards", "kind", "low", "size", "left", "choice", "options"),
          masks=("cards",), cards=("low",), words=(_ACTION_WORDS, _KIND_WORDS)),
    Event(E_PASS, "pass", ("choice", "options")),
    Event(E_TRICK, "trick_end", ("round", "cause", "next_leader"),
          words=(("cause", CAUSE_NAMES),)),
    Event(E_PICKUP, "pickup", ("round", "cards", "fifth", "n_cards"), masks=("cards", "fifth")),
    Event(E_OUT, "out", ("round",)),
    Event(E_SCORE, "round_score", ("round", "points", "total", "cards_left")),
    Event(E_FINAL, "final", ("score", "place", "winner", "timeout")),
    arc.checkpoint_event(E_CHECKPOINT),   # standing = running points (fewest best), every round
)


def format_card(c: int) -> str:
    """Cards are written as their numbers: trace card id ``rank * 4 + copy``."""
    return str(int(NUMBER[int(c) // ID_SLOTS]))


def n_seats(players: int, params) -> int:
    return players


def extra_seats(players: int, params) -> tuple:
    return ()


def _hand_size(players: int, params) -> int:
    if players == 3 and int(params[R_EXTRA_DEAL]):
        return EXTRA_DEAL_HAND
    return int(HAND_SIZE[players])


def _fixed_rounds(players: int, params) -> int:
    """Rounds of a fixed-length game (2p two hands), 0 when the game plays to ``target``."""
    if players == 2 and int(params[R_TWO_P_END]) == END_TWO_HANDS:
        return TWO_HANDS_ROUNDS
    return 0


def _max_round_points(players: int, params) -> int:
    """The most points one player can be left holding at a round's end."""
    cards = _hand_size(players, params) * (TWO_P_HANDS if players == 2 else 1)
    per_rank = sorted(POINTS[int(params[R_POINTS])].tolist(), reverse=True)
    copies = int(COPIES[players])
    total = 0
    for p in per_rank:
        take = min(copies, cards)
        total += take * p
        cards -= take
    return total


def _max_game_rounds(players: int, params) -> int:
    """Rounds a game can last: every non-winner scores >= 1 point a round, so playing to T
    ends by round n(T-1)/(n-1) + 1; capped by ``max_rounds``."""
    cap = int(params[R_MAX_ROUNDS])
    fixed = _fixed_rounds(players, params)
    if fixed:
        return min(cap, fixed)
    t = int(params[R_TARGET])
    return min(cap, (players * (t - 1)) // (players - 1) + 1)


def score_range(players: int, params) -> tuple[int, int]:
    per = _max_round_points(players, params)
    rounds = _max_game_rounds(players, params)
    if _fixed_rounds(players, params):
        return 0, rounds * per
    return 0, min(rounds * per, int(params[R_TARGET]) - 1 + per)


def length_range(players: int, params) -> tuple[int, int]:
    """Turns: every turn plays >= 1 card or passes, and at most players-1 passes come between
    two plays, so a round has at most players * (cards dealt) turns."""
    dealt = _hand_size(players, params) * players * (TWO_P_HANDS if players == 2 else 1)
    return 1, _max_game_rounds(players, params) * players * dealt


def check(players: int, params) -> None:
    if players not in PLAYER_COUNTS:
        raise ValueError(f"pgc plays 2-6 players, not {players}")
    if int(params[R_EXTRA_DEAL]) and players != 3:
        raise ValueError(f"rule extra_deal: the Extra Card Deal is a 3-player variant, not {players}")


REPORT_NOTES = (
    "pgc card points: the default table (points = standin: 1-5 one point, 7-9 two, 11-15 three) "
    "is a STAND-IN; the printed values are lost from every rulebook copy (RULINGS.md, pgc).",
)


def report_notes(players: int, params) -> dict:
    """Labels a report must print next to this game's results (strings, not metrics)."""
    table = POINTS_TABLES[int(params[R_POINTS])]
    return {"points_table": "stand-in (1-5: 1, 7-9: 2, 11-15: 3; printed values unknown)"
            if table == "standin" else table}


# ---- melds ---------------------------------------------------------------------------------
@jit(inline="always")
def meld_count(kind, low, size, r):
    """Copies of rank ``r`` in the meld (kind, low, size)."""
    if kind == K_RUN:
        return 1 if low <= r < low + size else 0
    return size if r == low else 0


@jit(inline="always")
def meld_top(kind, low, size):
    """Highest rank index in the meld."""
    return low + size - 1 if kind == K_RUN else low


@jit(inline="always")
def full_set_size(st):
    """A set reaching this size (every copy in the deck: 4, or 5 at 5-6p) ends the trick."""
    return st[S_COPIES]


@jit(inline="always")
def played_count(st, a, r):
    """Copies of rank ``r`` the action's player puts down."""
    kind = act_kind(a)
    low = act_low(a)
    size = act_size(a)
    n = meld_count(kind, low, size, r)
    if act_type(a) == A_ADD:
        n -= meld_count(st[S_C_KIND], st[S_C_LOW], st[S_C_SIZE], r)
    return n


@jit(inline="always")
def played_total(st, a):
    if act_type(a) == A_ADD:
        return act_size(a) - st[S_C_SIZE]
    return act_size(a)


@jit(inline="always")
def puts_eight(st, a):
    """Does the play put a new 8 into the Central Meld (Rule of 8's)?"""
    kind = act_kind(a)
    low = act_low(a)
    if not (low <= EIGHT <= meld_top(kind, low, act_size(a))):
        return False
    return played_count(st, a, EIGHT) > 0


@jit(inline="always")
def trick_end_cause(st, params, a):
    """Does the play ``a`` end the trick by itself (full set, full run, Rule of 8's)?"""
    typ = act_type(a)
    if typ == A_PASS:
        return T_ON
    if typ == A_ADD:
        if act_kind(a) == K_SET and act_size(a) == full_set_size(st):
            return T_FULL_SET
        if act_kind(a) == K_RUN and act_size(a) == FULL_RUN:
            return T_FULL_RUN
    if params[R_EIGHT] == EIGHT_CLEAR and puts_eight(st, a):
        return T_EIGHT
    return T_ON


# ---- legal actions, in the canonical order the random policy draws from ----------------------
# Order: Lead or Overwrite candidates, then Add candidates, then Pass. Within Lead, Overwrite
# and Add, melds go by kind (single, set, run), then low rank ascending, then size ascending.
@jit(inline="always")
def rank_masks(st, seat):
    """(held, pairs, triples): bit ``r`` set when ``seat`` holds >= 1, >= 2, >= 3 of rank r."""
    base = HAND + seat * N_RANKS
    m1 = 0
    m2 = 0
    m3 = 0
    for r in range(N_RANKS):
        c = st[base + r]
        if c >= 1:
            m1 |= 1 << r
            if c >= 2:
                m2 |= 1 << r
                if c >= 3:
                    m3 |= 1 << r
    return m1, m2, m3


@jit(inline="always")
def run_starts(held, size):
    """Bit ``low`` set when the run of ``size`` from ``low`` exists and is held."""
    m = RUN_STARTS[size]
    for k in range(size):
        m &= held >> k
    return m


@jit(inline="always")
def overwrite_lows(st, params, kind, size):
    """Bit ``low`` set when a (kind, low, size) meld may Overwrite the Central Meld: same kind,
    same size, stronger (singles and sets: the higher number; runs: the lower run, or the
    higher with ``run_order = high``); PGC Overwrite also any larger meld. Never onto 4+."""
    c_size = st[S_C_SIZE]
    if c_size >= NO_OVERWRITE_FROM:
        return 0
    if size == c_size and kind == st[S_C_KIND]:
        c_low = st[S_C_LOW]
        if kind == K_RUN and params[R_RUN_ORDER] == RUN_LOW:
            return (1 << c_low) - 1                      # lower runs are stronger
        return ALL_RANKS & ~((1 << (c_low + 1)) - 1)     # higher numbers are stronger
    if params[R_OVERWRITE_UP] != 0 and size > c_size:
        return ALL_RANKS
    return 0


@jit(inline="always")
def emit(acts, n, typ, kind, m1, m2, m3):
    """Append (typ, kind, low, size) for every bit ``low`` of m<size>, low then size ascending."""
    u = m1 | m2 | m3
    while u:
        low = lowest_bit(u)
        u &= u - 1
        if (m1 >> low) & 1:
            acts[n] = pack_action(typ, kind, low, 1)
            n += 1
        if (m2 >> low) & 1:
            acts[n] = pack_action(typ, kind, low, 2)
            n += 1
        if (m3 >> low) & 1:
            acts[n] = pack_action(typ, kind, low, 3)
            n += 1
    return n


@jit
def meld_options(st, params, seat, typ, acts, n):
    """Lead (``typ`` A_LEAD: any single, set of 2-3 or run of 2-3 held) or Overwrite (``typ``
    A_OVERWRITE: the held melds ``overwrite_lows`` allows), appended in canonical order."""
    held, pairs, triples = rank_masks(st, seat)
    runs2 = run_starts(held, 2)
    runs3 = run_starts(held, 3)
    if typ == A_OVERWRITE:
        held &= overwrite_lows(st, params, K_SINGLE, 1)
        pairs &= overwrite_lows(st, params, K_SET, 2)
        triples &= overwrite_lows(st, params, K_SET, 3)
        runs2 &= overwrite_lows(st, params, K_RUN, 2)
        runs3 &= overwrite_lows(st, params, K_RUN, 3)
    n = emit(acts, n, typ, K_SINGLE, held, 0, 0)
    n = emit(acts, n, typ, K_SET, 0, pairs, triples)
    return emit(acts, n, typ, K_RUN, 0, runs2, runs3)


@jit
def add_options(st, seat, acts, n):
    """Add 1-3 cards so the Central Meld grows and is still one meld (a set of equal numbers or
    a run of consecutive numbers), at most 5 cards; a set at most every copy in the deck."""
    c_kind = st[S_C_KIND]
    c_low = st[S_C_LOW]
    c_size = st[S_C_SIZE]
    base = HAND + seat * N_RANKS
    # sets: the Central Meld is a single or a set of rank c_low
    if c_kind != K_RUN:
        top = min(c_size + MAX_PLAY, full_set_size(st), MAX_MELD, c_size + st[base + c_low])
        for size in range(c_size + 1, top + 1):
            acts[n] = pack_action(A_ADD, K_SET, c_low, size)
            n += 1
    # runs: the Central Meld is a single or a run, kept inside the new run; the held
    # consecutive numbers just below and just above it can extend it
    if c_kind != K_SET:
        c_top = meld_top(c_kind, c_low, c_size)
        down = 0
        while (c_low - down - 1 >= 0 and NEXT_OK[c_low - down - 1]
               and st[base + c_low - down - 1] > 0):
            down += 1
        up = 0
        while NEXT_OK[c_top + up] and st[base + c_top + up + 1] > 0:
            up += 1
        for low in range(c_low - down, c_low + 1):
            for high in range(c_top, c_top + up + 1):
                size = high - low + 1
                if size > c_size and size - c_size <= MAX_PLAY and size <= MAX_MELD:
                    acts[n] = pack_action(A_ADD, K_RUN, low, size)
                    n += 1
    return n


@jit
def legal_actions(st, params, acts):
    """All distinct legal actions of the seat to act, in canonical order; returns how many."""
    seat = st[S_TO_ACT]
    if st[S_C_SIZE] == 0:
        return meld_options(st, params, seat, A_LEAD, acts, 0)
    n = 0
    if st[S_C_SIZE] < NO_OVERWRITE_FROM:
        n = meld_options(st, params, seat, A_OVERWRITE, acts, 0)
    n = add_options(st, seat, acts, n)
    acts[n] = A_PASS
    return n + 1


# ---- applying one action ---------------------------------------------------------------------
@jit(inline="always")
def next_seat(st, params, seat):
    """The next seat clockwise that may act (skipping locked-out seats)."""
    P = st[S_PLAYERS]
    s = (seat + 1) % P
    if params[R_PASS_LOCKS] != 0:
        while st[PASSED + s] != 0:
            s = (s + 1) % P
    return s


@jit
def clear_trick(st, leader):
    """Clear the Central Meld; ``leader`` leads the next trick."""
    P = st[S_PLAYERS]
    st[S_C_KIND] = -1
    st[S_C_LOW] = -1
    st[S_C_SIZE] = 0
    st[S_LAST] = -1
    st[S_N_PASSED] = 0
    st[S_PASS_RUN] = 0
    for s in range(P):
        st[PASSED + s] = 0
    st[S_TO_ACT] = leader


@jit(inline="always")
def all_but_one_passed(st, params):
    P = st[S_PLAYERS]
    if params[R_PASS_LOCKS] != 0:
        return st[S_N_PASSED] >= P - 1
    return st[S_PASS_RUN] >= P - 1


@jit
def pick_up_reserve(st, seat):
    """2 players: the first hand is empty, so the set-aside second hand is picked up at once."""
    base = HAND + seat * N_RANKS
    res = RESERVE + seat * N_RANKS
    held = 0
    for r in range(N_RANKS):
        st[base + r] = st[res + r]
        st[res + r] = 0
        held += st[base + r]
    st[N_HELD + seat] = held
    st[RESERVE_ON + seat] = 0


@jit
def apply_pass(st, params):
    """Pass: locked out until the trick ends (``pass_locks_out``); when all but one player
    have passed, the trick ends and the last player to have played leads."""
    seat = st[S_TO_ACT]
    if st[PASSED + seat] == 0:
        st[PASSED + seat] = 1
        st[S_N_PASSED] += 1
    st[S_PASS_RUN] += 1
    if all_but_one_passed(st, params):
        clear_trick(st, st[S_LAST])
        return T_PASSES
    st[S_TO_ACT] = next_seat(st, params, seat)
    return T_ON


@jit
def take_played_cards(st, seat, a):
    """Remove the cards the play puts down from ``seat``'s hand."""
    base = HAND + seat * N_RANKS
    kind = act_kind(a)
    low = act_low(a)
    shed = played_total(st, a)
    if kind == K_RUN:
        # every rank of the new run not already in the Central Meld (a run or a single)
        is_add = act_type(a) == A_ADD
        c_low = st[S_C_LOW] if is_add else N_RANKS
        c_top = meld_top(st[S_C_KIND], c_low, st[S_C_SIZE]) if is_add else -1
        for r in range(low, low + act_size(a)):
            if r < c_low or r > c_top:
                st[base + r] -= 1
                st[PLAYED + r] += 1
    else:
        st[base + low] -= shed
        st[PLAYED + low] += shed
    st[N_HELD + seat] -= shed


@jit
def apply_play(st, params, a):
    """Lead, Overwrite or Add: the cards go to the Central Meld. A play that completes a set
    or run or puts down an 8 ends the trick and its player leads next; emptying the last hand
    ends the round (2p: emptying the first hand picks up the second at once)."""
    seat = st[S_TO_ACT]
    cause = trick_end_cause(st, params, a)     # read before the Central Meld changes
    take_played_cards(st, seat, a)
    st[S_C_KIND] = act_kind(a)
    st[S_C_LOW] = act_low(a)
    st[S_C_SIZE] = act_size(a)
    st[S_LAST] = seat
    st[S_PASS_RUN] = 0
    if st[N_HELD + seat] == 0:
        if st[RESERVE_ON + seat] != 0:
            pick_up_reserve(st, seat)
        else:
            st[S_OUT] = seat
            return cause if cause != T_ON else T_OUT
    if cause != T_ON:
        clear_trick(st, seat)
    else:
        st[S_TO_ACT] = next_seat(st, params, seat)
    return cause


@jit
def apply_action(st, params, a):
    """The seat to act takes action ``a``. Returns the trick-end cause (T_ON if the trick goes
    on); going out sets ``st[S_OUT]``."""
    if act_type(a) == A_PASS:
        return apply_pass(st, params)
    return apply_play(st, params, a)


@jit(inline="always")
def goes_out(st, a):
    """Does the play empty the player's last hand (ending the round)?"""
    seat = st[S_TO_ACT]
    return (act_type(a) != A_PASS and st[RESERVE_ON + seat] == 0
            and played_total(st, a) == st[N_HELD + seat])


@jit
def points_held(st, params, seat):
    """Points of the cards ``seat`` still holds (2p: both hands)."""
    table = params[R_POINTS]
    pts = 0
    for r in range(N_RANKS):
        pts += (st[HAND + seat * N_RANKS + r] + st[RESERVE + seat * N_RANKS + r]) * POINTS[table, r]
    return pts


@jit
def game_over_after(st, params, fixed_rounds, target, new_scores):
    """Does the game end after the current round with these totals?"""
    if fixed_rounds > 0:
        return st[S_ROUND] + 1 >= fixed_rounds
    for s in range(st[S_PLAYERS]):
        if new_scores[s] >= target:
            return True
    return False


@jit
def going_out_wins_game(st, params, fixed_rounds, target, tmp):
    """If the seat to act went out now, would the game end with it among the fewest points?"""
    P = st[S_PLAYERS]
    me = st[S_TO_ACT]
    for s in range(P):
        tmp[s] = st[SCORE + s] + (0 if s == me else points_held(st, params, s))
    if not game_over_after(st, params, fixed_rounds, target, tmp):
        return False
    for s in range(P):
        if tmp[s] < tmp[me]:
            return False
    return True


# ---- restricted play ---------------------------------------------------------------------------
@jit(inline="always")
def forbidden_bits(a):
    """Restriction bits (``1 << X_...``) that forbid action ``a``; a Pass is never forbidden."""
    typ = act_type(a)
    if typ == A_PASS:
        return 0
    m = 0
    if typ == A_OVERWRITE:
        m |= 1 << X_NO_OVERWRITE
    elif typ == A_ADD:
        m |= 1 << X_NO_ADD
    kind = act_kind(a)
    if kind == K_RUN:
        m |= 1 << X_NO_RUNS
    elif kind == K_SET and act_size(a) >= BIG_SET:
        m |= 1 << X_NO_BIG_SETS
    return m


@jit
def restrict_actions(acts, n, forbid):
    """Drop the actions ``forbid`` forbids, canonical order kept; returns (count, yielded). When
    every legal action is forbidden the restriction yields and ``acts`` stays whole. (In pgc
    that cannot happen: a responder may always Pass and a leader always has a single.)"""
    k = 0
    for i in range(n):
        if forbidden_bits(acts[i]) & forbid == 0:
            k += 1
    if k == 0:
        return n, 1
    k = 0
    for i in range(n):
        a = acts[i]
        if forbidden_bits(a) & forbid == 0:
            acts[k] = a
            k += 1
    return k, 0


@jit(inline="always")
def seat_masks(seats, s):
    """(forbid, watch) restriction masks of seat ``s``; (0, 0) in a seats array without them."""
    if seats.shape[1] > SEAT_WATCH:
        return seats[s, SEAT_FORBID], seats[s, SEAT_WATCH]
    return np.int64(0), np.int64(0)


# ---- policies ------------------------------------------------------------------------------
@jit
def random_choice(st, params, acts, n, keys, ctrs, fixed_rounds, target, tmp):
    """One ``below`` draw on the acting seat's stream: uniform over the going-out actions when
    ``random_win`` says to take them, else uniform over all ``n`` legal actions."""
    return random_choice_on(st, params, acts, n, keys, ctrs, st[S_TO_ACT], fixed_rounds, target, tmp)


@jit(inline="always")
def random_choice_on(st, params, acts, n, keys, ctrs, slot, fixed_rounds, target, tmp):
    """``random_choice`` drawing on stream ``slot`` (the seat's own in a game; a search seat's
    SEARCH stream inside its rollouts)."""
    seat = st[S_TO_ACT]
    mode = params[R_RANDOM_WIN]
    if mode != WIN_OFF and st[RESERVE_ON + seat] == 0 and st[N_HELD + seat] <= MAX_MELD:
        n_out = 0
        for i in range(n):
            if goes_out(st, acts[i]):
                n_out += 1
        if n_out > 0 and (mode == WIN_ROUND or going_out_wins_game(st, params, fixed_rounds,
                                                                    target, tmp)):
            k = rng.below(keys, ctrs, slot, n_out)
            for i in range(n):
                if goes_out(st, acts[i]):
                    if k == 0:
                        return i
                    k -= 1
    return rng.below(keys, ctrs, slot, n)


# ---- heuristic and tuned ------------------------------------------------------------------------
# The heuristic scores each play (value = w_cards * cards shed - w_units * units left - w_strength *
# strength shed, + w_end when the play ends the trick) and takes the best; responding, it refuses a
# play that breaks a set or run it needs or spends a strong card early, and passes when it refuses
# every play. ``tuned`` is the same rule with every number a knob (KNOBS, a seat's knob columns);
# the defaults are the heuristic's, so a ``heuristic`` seat plays the default knob row.
GO_OUT_VALUE = 1_000_000
# COMB[n, k] = n choose k (0 when k > n), as a float: lead_answer_chance's hypergeometric chance
COMB = np.array([[float(math.comb(n, k)) for k in range(MAX_DECK + 1)] for n in range(MAX_DECK + 1)])
REFUSED = -(1 << 40)
(K_W_CARDS, K_W_UNITS, K_W_STRENGTH, K_W_END, K_W_POINTS, K_STRONG_RANK, K_NEAR_OUT, K_KEEP_MELDS,
 K_OVERWRITE_BONUS, K_ADD_BONUS, K_LEAD_CARDS, K_MIN_RESPONSE, K_DANGER_CARDS, K_SINGLE_ADD_BELOW,
 K_SINGLE_ADD_LEFT, K_SINGLE_ADD_COST, K_EIGHT_LEAD_LEFT, K_EIGHT_LEAD_COST, K_LAST_LEAD_TOP,
 K_LAST_LEAD_RUN, K_LAST_LEAD_SET, K_LAST_LEAD_SINGLE, K_LAST_LEAD_UNITS, K_LAST_LEAD_UNITS_LEFT,
 K_LAST_LEAD_KEEP8, K_LAST_LEAD_ANSWER, K_LAST_LEAD_ANSWER_NEAR, K_LAST_LEAD_BIGGER) = range(28)
KNOBS = (
    Knob("w_cards", K_W_CARDS, 10, 0, 100, "value per card a play sheds"),
    Knob("w_units", K_W_UNITS, 20, 0, 100, "cost per meld the hand still needs after the play "
         "(distinct numbers held minus consecutive pairs): higher keeps sets and runs together"),
    Knob("w_strength", K_W_STRENGTH, 1, -10, 20, "cost per rank step of the cards shed (rank index "
         "0 = 1 .. 12 = 15): higher sheds weak cards first and keeps strong ones; negative the reverse"),
    Knob("w_end", K_W_END, 100, -200, 500, "bonus for a play that ends the trick by itself (full set, "
         "full run, Rule of 8's), so its player leads next"),
    Knob("w_points", K_W_POINTS, 0, -50, 100, "value per card point shed (the points table): higher "
         "dumps the cards that would score against the seat"),
    Knob("strong_rank", K_STRONG_RANK, 10, 0, 13, "responding, refuse a play whose top card has this "
         "rank index or more (10 = 13, 14, 15) while more than near_out cards would be left: kept to "
         "win back the lead (13 = keep nothing)"),
    Knob("near_out", K_NEAR_OUT, 3, 0, 16, "with at most this many cards left after a play, strong "
         "cards may be spent when responding"),
    Knob("keep_melds", K_KEEP_MELDS, 1, 0, 1, "1: responding, refuse a play that breaks a set or "
         "leaves more melds to play (unless it ends the trick); 0: allow it"),
    Knob("overwrite_bonus", K_OVERWRITE_BONUS, 0, -500, 500, "added to an Overwrite's value "
         "(negative: Overwrite less, below min_response: never)"),
    Knob("add_bonus", K_ADD_BONUS, 0, -500, 500, "added to an Add's value"),
    Knob("lead_cards", K_LEAD_CARDS, 0, -50, 50, "added per card led: higher leads sets and runs "
         "rather than singles"),
    Knob("min_response", K_MIN_RESPONSE, -5000, -5000, 1000, "responding, pass unless the best play "
         "is worth at least this (-5000: play whenever a play is not refused)"),
    Knob("danger_cards", K_DANGER_CARDS, 0, 0, 12, "when an opponent holds at most this many cards "
         "(its last hand), strong cards are no longer kept (0: off)"),
    # session 15 (docs/search.md, "pgc 2p: a rule for when to Add"): committed files made before
    # these three leave them out and take the defaults (optional), which switch the rule off
    Knob("single_add_below", K_SINGLE_ADD_BELOW, 0, 0, 13, "an Add onto a single whose rank index is "
         "below this (5 = numbers 1-5) costs single_add_cost while more than single_add_left cards "
         "would be left, so the seat Overwrites the low single instead (0: off)", optional=True),
    Knob("single_add_left", K_SINGLE_ADD_LEFT, 0, 0, 24, "with at most this many cards left after "
         "the Add (the hand in play), single_add_below no longer costs anything", optional=True),
    Knob("single_add_cost", K_SINGLE_ADD_COST, 0, 0, 1000, "what single_add_below subtracts from "
         "such an Add's value", optional=True),
    # session 16 (docs/search.md, "Issue #24, session 16"): the search keeps its 8s (Rule of 8's
    # stoppers) while its hand is long and leads them near the end; optional and off by default
    Knob("eight_lead_left", K_EIGHT_LEAD_LEFT, 0, 0, 24, "a Lead that puts an 8 into the Central "
         "Meld costs eight_lead_cost while more than this many cards would be left in the hand in "
         "play, so the seat keeps its 8s to end a trick later", optional=True),
    Knob("eight_lead_cost", K_EIGHT_LEAD_COST, 0, 0, 1000, "what eight_lead_left subtracts from such "
         "a Lead's value (0: off)", optional=True),
    # session 17 (docs/search.md, "Issue #24, session 17"): the search's better Leads are in the
    # last hand (2p: once the second hand is picked up), where it leads higher melds and fewer
    # runs; optional and off by default (at 3-6 players every hand is the last)
    Knob("last_lead_top", K_LAST_LEAD_TOP, 0, -50, 50, "a Lead from the seat's last hand (2p: its "
         "second hand picked up) gains this per rank index of its top card (0 = 1 .. 12 = 15): "
         "positive leads higher melds (0: off)", optional=True),
    Knob("last_lead_run", K_LAST_LEAD_RUN, 0, -300, 300, "added to a Lead of a run from the seat's "
         "last hand: negative leads sets and singles rather than runs (0: off)", optional=True),
    # session 25 (docs/search.md, "Issue #24, session 25"): a last-hand Lead rule fitted to the
    # values the search gives every Lead option (not only to its pick), then raced by train;
    # optional and off by default
    Knob("last_lead_set", K_LAST_LEAD_SET, 0, -300, 300, "added to a Lead of a set from the seat's "
         "last hand (0: off)", optional=True),
    Knob("last_lead_single", K_LAST_LEAD_SINGLE, 0, -300, 300, "added to a Lead of a single from the "
         "seat's last hand (0: off)", optional=True),
    Knob("last_lead_units", K_LAST_LEAD_UNITS, 0, -100, 100, "a last-hand Lead gains this per meld "
         "the hand still needs after it (added to -w_units' cost; 0: off)", optional=True),
    Knob("last_lead_units_left", K_LAST_LEAD_UNITS_LEFT, 0, -100, 100, "a last-hand Lead gains this "
         "x the melds still needed x the cards left after it / 10 (0: off)", optional=True),
    Knob("last_lead_keep8", K_LAST_LEAD_KEEP8, 0, -200, 200, "a last-hand Lead gains this per 8 the "
         "hand keeps after it (Rule of 8's stoppers; 0: off)", optional=True),
    Knob("last_lead_answer", K_LAST_LEAD_ANSWER, 0, -300, 300, "a last-hand Lead gains this x the "
         "chance that the next seat's hand, drawn from the cards the seat cannot see, holds a card "
         "that could answer it (lead_answer_chance; negative: lead what is hard to answer; 0: off)",
         optional=True),
    Knob("last_lead_answer_near", K_LAST_LEAD_ANSWER_NEAR, 0, -300, 300, "added to last_lead_answer "
         "when the next seat is in its last hand with at most 3 cards (0: off)", optional=True),
    Knob("last_lead_bigger", K_LAST_LEAD_BIGGER, 0, -300, 300, "added to a last-hand Lead of more "
         "cards than the next seat holds in play, which it cannot Overwrite (0: off)", optional=True),
)
KNOB_DEFAULTS = np.zeros(MAX_KNOBS, dtype=np.int64)
for _k in KNOBS:
    KNOB_DEFAULTS[_k.index] = _k.default


@jit
def load_knobs(st, seats):
    """Each seat's knob row in ``st`` (``knobs.load_knob_row``)."""
    for s in range(seats.shape[0]):
        load_knob_row(seats, s, KNOB_DEFAULTS, P_TUNED, P_MC, st, KNOB + s * MAX_KNOBS)


@jit(inline="always")
def units_of(held):
    """Melds a hand roughly still needs: distinct numbers held minus pairs of consecutive
    numbers both held (``held`` = bit mask of ranks held)."""
    return popcount(held) - popcount(held & (held >> 1) & LINKS)


@jit
def heuristic_value(st, params, a, held, units_now, responding, danger, fit=True):
    """Score of a play by the acting seat's knob row; REFUSED when it refuses the play
    (``danger``: an opponent is near out, strong cards are not kept). ``fit``: add
    last_lead_fit's terms to a last-hand Lead (heuristic_choice passes False when every one of
    its knobs is 0, found once a decision)."""
    seat = st[S_TO_ACT]
    if goes_out(st, a):
        return GO_OUT_VALUE
    kb = KNOB + seat * MAX_KNOBS
    base = HAND + seat * N_RANKS
    table = params[R_POINTS]
    shed = 0
    strength = 0
    pts = 0
    top = -1
    splits_set = False
    after = held
    low = act_low(a)
    for r in range(low, meld_top(act_kind(a), low, act_size(a)) + 1):
        k = played_count(st, a, r)
        if k > 0:
            shed += k
            strength += k * r
            pts += k * POINTS[table, r]
            top = r
            if k < st[base + r]:
                splits_set = True
            else:
                after &= ~(1 << r)
    units_after = units_of(after)
    cause = trick_end_cause(st, params, a)
    if responding and cause == T_ON:
        if st[kb + K_KEEP_MELDS] != 0 and (units_after > units_now or splits_set):
            return REFUSED                          # would break a set or run it needs
        if (not danger and top >= st[kb + K_STRONG_RANK]
                and st[N_HELD + seat] - shed > st[kb + K_NEAR_OUT]):
            return REFUSED                          # keep strong cards to win back the lead
    v = (st[kb + K_W_CARDS] * shed - st[kb + K_W_UNITS] * units_after
         - st[kb + K_W_STRENGTH] * strength + st[kb + K_W_POINTS] * pts)
    if cause != T_ON:
        v += st[kb + K_W_END]                       # the trick ends and it leads next
    typ = act_type(a)
    if typ == A_OVERWRITE:
        v += st[kb + K_OVERWRITE_BONUS]
    elif typ == A_ADD:
        v += st[kb + K_ADD_BONUS]
        if (st[S_C_KIND] == K_SINGLE and st[S_C_LOW] < st[kb + K_SINGLE_ADD_BELOW]
                and st[N_HELD + seat] - shed > st[kb + K_SINGLE_ADD_LEFT]):
            v -= st[kb + K_SINGLE_ADD_COST]         # rather Overwrite a low single early on
    elif typ == A_LEAD:
        v += st[kb + K_LEAD_CARDS] * shed
        if cause == T_EIGHT and st[N_HELD + seat] - shed > st[kb + K_EIGHT_LEAD_LEFT]:
            v -= st[kb + K_EIGHT_LEAD_COST]         # keep the 8 to end a trick later
        if st[RESERVE_ON + seat] == 0:              # the last hand (always at 3-6 players)
            v += st[kb + K_LAST_LEAD_TOP] * top
            if act_kind(a) == K_RUN:
                v += st[kb + K_LAST_LEAD_RUN]
            if fit:
                v += last_lead_fit(st, params, a, seat, shed, units_after)
    return v


@jit(inline="always")
def last_lead_fit_on(st, seat):
    """Is any of last_lead_fit's eight knobs set in ``seat``'s row? (Every file but 2p's: no.)"""
    kb = KNOB + seat * MAX_KNOBS
    return (st[kb + K_LAST_LEAD_SET] | st[kb + K_LAST_LEAD_SINGLE] | st[kb + K_LAST_LEAD_UNITS]
            | st[kb + K_LAST_LEAD_UNITS_LEFT] | st[kb + K_LAST_LEAD_KEEP8] | st[kb + K_LAST_LEAD_ANSWER]
            | st[kb + K_LAST_LEAD_ANSWER_NEAR] | st[kb + K_LAST_LEAD_BIGGER]) != 0


@jit(inline="always")
def last_lead_fit(st, params, a, seat, shed, units_after):
    """Session 25's eight last-hand Lead knobs (docs/search.md, "Issue #24, session 25") for the
    Lead ``a`` of ``seat`` shedding ``shed`` cards and leaving ``units_after`` melds to play."""
    kb = KNOB + seat * MAX_KNOBS
    answer = st[kb + K_LAST_LEAD_ANSWER]
    near = st[kb + K_LAST_LEAD_ANSWER_NEAR]
    bigger = st[kb + K_LAST_LEAD_BIGGER]
    kind = act_kind(a)
    v = 0
    if kind == K_SET:
        v += st[kb + K_LAST_LEAD_SET]
    elif kind == K_SINGLE:
        v += st[kb + K_LAST_LEAD_SINGLE]
    left = st[N_HELD + seat] - shed
    v += (st[kb + K_LAST_LEAD_UNITS] * units_after
          + st[kb + K_LAST_LEAD_UNITS_LEFT] * units_after * left // 10
          + st[kb + K_LAST_LEAD_KEEP8] * (st[HAND + seat * N_RANKS + EIGHT] - played_count(st, a, EIGHT)))
    if answer != 0 or near != 0 or bigger != 0:
        nxt = next_seat(st, params, seat)
        if shed > st[N_HELD + nxt]:
            v += bigger
        if st[RESERVE_ON + nxt] == 0 and st[N_HELD + nxt] <= 3:
            answer += near
        v += int(round(answer * lead_answer_chance(st, a, seat, nxt)))
    return v


@jit(inline="always")
def _unseen(st, base, r):
    """Copies of rank ``r`` the seat whose hand starts at ``base`` cannot see: the deck's minus its
    own minus those played this round."""
    return st[S_COPIES] - st[base + r] - st[PLAYED + r]


@jit
def lead_answer_chance(st, a, seat, nxt):
    """The chance that seat ``nxt``'s hand in play, drawn uniformly from the cards ``seat`` cannot
    see (the deck minus its hand minus the cards played this round), holds at least one card that
    could answer the Lead ``a``: a card an Add could use (a set's or single's number; for a single
    or a run, the numbers next to it), or, when the Lead is no bigger than that hand, a higher
    number of which enough copies are unseen (a run: any higher number). A rough count, fitted
    as a feature (docs/search.md, "Issue #24, session 25"): it ignores which cards go together."""
    base = HAND + seat * N_RANKS
    k = st[N_HELD + nxt]
    kind = act_kind(a)
    low = act_low(a)
    size = act_size(a)
    top = meld_top(kind, low, size)
    utot = 0
    for r in range(N_RANKS):
        utot += _unseen(st, base, r)
    if utot < k:
        return 1.0
    cards = 0
    if kind != K_RUN:
        cards += _unseen(st, base, low)              # an Add of the same number
    if kind != K_SET:                                # an Add extending a single or a run
        if low > 0 and NEXT_OK[low - 1]:
            cards += _unseen(st, base, low - 1)
        if top < N_RANKS - 1 and NEXT_OK[top]:
            cards += _unseen(st, base, top + 1)
    if size <= k:                                    # an Overwrite: higher numbers
        for r in range(low + 1, N_RANKS):
            u = _unseen(st, base, r)
            if kind == K_RUN or u >= size:
                cards += u
    rest = max(utot - cards, 0)
    return 1.0 - COMB[rest, k] / COMB[utot, k]


@jit(inline="always")
def opponent_near_out(st, seat, cards):
    """Does another seat hold at most ``cards`` cards in its last hand (``cards`` 0: never)?"""
    if cards > 0:
        for o in range(st[S_PLAYERS]):
            if o != seat and st[RESERVE_ON + o] == 0 and st[N_HELD + o] <= cards:
                return True
    return False


@jit
def heuristic_choice(st, params, acts, n):
    """Best play by ``heuristic_value`` with the acting seat's knobs (first in canonical order on
    ties); Pass when every play is refused or, responding, the best is worth less than
    min_response (a leader always plays)."""
    seat = st[S_TO_ACT]
    kb = KNOB + seat * MAX_KNOBS
    responding = st[S_C_SIZE] > 0
    held, _, _ = rank_masks(st, seat)
    units_now = units_of(held)
    danger = opponent_near_out(st, seat, st[kb + K_DANGER_CARDS])
    fit = not responding and st[RESERVE_ON + seat] == 0 and last_lead_fit_on(st, seat)
    best = -1
    best_v = REFUSED
    for i in range(n):
        a = acts[i]
        if act_type(a) == A_PASS:
            continue
        v = heuristic_value(st, params, a, held, units_now, responding, danger, fit)
        if v > best_v:
            best = i
            best_v = v
    if best < 0 or (responding and best_v < st[kb + K_MIN_RESPONSE]):
        return n - 1                                # Pass is last in canonical order
    return best


# ---- search player (mc) -----------------------------------------------------------------------
# What an mc seat may use: its own hand in play; every card played to the Central Meld this round
# (``PLAYED``; who played what is public too, but a uniform re-deal has no use for it), the
# Central Meld, who has passed, who leads, hand sizes, whether each 2p second hand still waits
# (and its size), the scores. What it may not: other hands, every second hand still set aside
# (its own too: it is picked up "without looking"), the undealt cards. Each sample re-deals the
# unseen cards uniformly from the seat's SEARCH stream; rollouts reuse the game's own rules
# (``legal_actions``, ``apply_action``) and policies on a copy of the state.

@jit_borrowing   # allocates nothing; its caller (mc_choose) owns every array
def determinize(st, me, keys, ctrs, slot, dst, pool):
    """``dst`` = ``st`` with every card ``me`` cannot see re-dealt at random: the unseen cards
    (the deck minus ``me``'s hand in play minus the cards played this round) are shuffled on
    stream ``slot`` and dealt to the other hands in play at their sizes (seat order), then to the
    2p second hands still set aside (``me``'s too) at their sizes; the rest stay undealt. Reads
    only what ``me`` may see: its hand, ``PLAYED`` and the sizes. Every seat of the sample plays
    ``me``'s knob row (its rollout policy's: the defaults, or its own ``tuned`` knobs)."""
    for i in range(STATE_SIZE):
        dst[i] = st[i]
    P = st[S_PLAYERS]
    for o in range(P):
        for k in range(MAX_KNOBS):
            dst[KNOB + o * MAX_KNOBS + k] = st[KNOB + me * MAX_KNOBS + k]
    copies = st[S_COPIES]
    mine = HAND + me * N_RANKS
    n = 0
    for r in range(N_RANKS):
        for _ in range(copies - st[mine + r] - st[PLAYED + r]):
            pool[n] = r
            n += 1
    rng.shuffle(pool, n, keys, ctrs, slot)
    i = 0
    for o in range(P):
        if o != me:
            base = HAND + o * N_RANKS
            for r in range(N_RANKS):
                dst[base + r] = 0
            for _ in range(st[N_HELD + o]):
                if i < n:
                    dst[base + pool[i]] += 1
                    i += 1
    for o in range(P):
        if st[RESERVE_ON + o] != 0:
            base = RESERVE + o * N_RANKS
            size = 0
            for r in range(N_RANKS):
                size += st[base + r]
                dst[base + r] = 0
            for _ in range(size):
                if i < n:
                    dst[base + pool[i]] += 1
                    i += 1


@jit_borrowing   # allocates nothing; its caller (a search) owns every array
def rollout(st, params, pol, keys, ctrs, slot, fixed_rounds, target, acts, tmp, me=-1, forbid=0):
    """Play the round in ``st`` (a copy) to its end with every seat on ``pol`` (random draws on
    stream ``slot``); seat ``me`` obeys its restrictions ``forbid``. Returns the turns simulated."""
    turns = 0
    while st[S_OUT] < 0:
        n = legal_actions(st, params, acts)
        if forbid != 0 and st[S_TO_ACT] == me:
            n, _ = restrict_actions(acts, n, forbid)
        if pol == P_HEURISTIC or pol == P_TUNED:
            i = heuristic_choice(st, params, acts, n)
        else:
            i = random_choice_on(st, params, acts, n, keys, ctrs, slot, fixed_rounds, target, tmp)
        apply_action(st, params, acts[i])
        turns += 1
    return turns


@jit(inline="always")
def round_result(st, params, me):
    """The search objective at round end, (P-1) x (the other seats' mean points - ``me``'s):
    the seat that went out scores 0, every other seat the points it still holds."""
    P = st[S_PLAYERS]
    w = st[S_OUT]
    v = 0
    for s in range(P):
        pts = 0 if s == w else points_held(st, params, s)
        if s == me:
            v -= (P - 1) * pts
        else:
            v += pts
    return v


@jit_borrowing   # allocates nothing; mc_choose owns every array
def _mc_samples(st, params, acts, n, budget, rpol, keys, ctrs, slot, fixed_rounds, target, mcstat,
                forbid, me, total, det, st2, pool, racts, tmp):
    """``mc_choose``'s ``budget`` samples, each option's round_result added to ``total``. Its own
    function, compiled without reference counting (as forecasts-cubes' _mc_samples): from a
    function that counts references, each call of a rollout's helpers counted its array
    arguments up and down (atomic instructions)."""
    for _ in range(budget):
        determinize(st, me, keys, ctrs, slot, det, pool)
        for i in range(n):
            for j in range(STATE_SIZE):
                st2[j] = det[j]
            apply_action(st2, params, acts[i])
            if st2[S_OUT] < 0:
                mcstat[1] += rollout(st2, params, rpol, keys, ctrs, slot, fixed_rounds, target,
                                     racts, tmp, me, forbid)
            mcstat[0] += 1
            total[i] += round_result(st2, params, me)


@jit(_nrt=True)    # allocates its working arrays: called from _play_game, compiled without counting
def mc_choose(st, params, acts, n, budget, rpol, keys, ctrs, slot, fixed_rounds, target, mcstat,
              forbid=0):
    """Index of the best of the ``n`` legal actions for the seat to act by the mean of
    ``round_result`` over ``budget`` samples. Each sample re-deals the hidden cards once and
    plays every option forward from it (common random numbers); ties go to the earlier option.
    Going out is taken at once (first in canonical order): it is the best result in every
    sample (0 points for the seat, and the others can only shed later). Draws only on ``slot``.
    A restricted seat passes only its allowed options and its ``forbid`` mask, which its own
    turns in the rollouts obey too."""
    for i in range(n):
        if goes_out(st, acts[i]):
            return i
    me = st[S_TO_ACT]
    total = np.zeros(n, dtype=np.int64)
    det = np.empty(STATE_SIZE, dtype=np.int64)
    st2 = np.empty(STATE_SIZE, dtype=np.int64)
    pool = np.empty(MAX_DECK, dtype=np.int64)
    racts = np.empty(MAX_ACTIONS, dtype=np.int64)
    tmp = np.zeros(MAX_PLAYERS, dtype=np.int64)
    _mc_samples(st, params, acts, n, budget, rpol, keys, ctrs, slot, fixed_rounds, target, mcstat,
                forbid, me, total, det, st2, pool, racts, tmp)
    best = 0
    for i in range(1, n):
        if total[i] > total[best]:
            best = i
    return best


# ---- trace helpers ---------------------------------------------------------------------------
@jit
def multiset_masks(counts_st, base):
    """(mask, fifth): bit rank*4+copy for the first min(count, 4) copies; bit rank*4 if 5."""
    m = np.int64(0)
    fifth = np.int64(0)
    for r in range(N_RANKS):
        c = counts_st[base + r]
        for k in range(min(c, 4)):
            m |= np.int64(1) << np.int64(r * ID_SLOTS + k)
        if c > ID_SLOTS:
            fifth |= np.int64(1) << np.int64(r * ID_SLOTS)
    return m, fifth


@jit
def played_mask(st, a):
    m = np.int64(0)
    for r in range(N_RANKS):
        for k in range(played_count(st, a, r)):
            m |= np.int64(1) << np.int64(r * ID_SLOTS + k)
    return m


# ---- one game --------------------------------------------------------------------------------
@jit
def deal_round(st, params, seed, g, rnd, deck, keys, ctrs, slot):
    """Shuffle the deck from the round's DEAL stream and deal: seat s gets deck[s*H:(s+1)*H];
    2 players: the second hands are deck[(2+s)*H:(3+s)*H]. The rest stays undealt."""
    P = st[S_PLAYERS]
    copies = st[S_COPIES]
    n = 0
    for r in range(N_RANKS):
        for _ in range(copies):
            deck[n] = r
            n += 1
    keys[slot] = rng.stream_key(seed, g, rng.DEAL, rnd)
    ctrs[slot] = 0
    rng.shuffle(deck, n, keys, ctrs, slot)
    H = HAND_SIZE[P]
    if P == 3 and params[R_EXTRA_DEAL] != 0:
        H = EXTRA_DEAL_HAND
    for i in range(HAND, STATE_SIZE):       # the hands, not the knobs before them
        st[i] = 0
    for s in range(P):
        for i in range(s * H, (s + 1) * H):
            st[HAND + s * N_RANKS + deck[i]] += 1
        st[N_HELD + s] = H
        st[RESERVE_ON + s] = 0
        if P == 2:
            for i in range((P + s) * H, (P + s + 1) * H):
                st[RESERVE + s * N_RANKS + deck[i]] += 1
            st[RESERVE_ON + s] = 1


@jit
def new_state(players):
    st = np.full(STATE_SIZE, 0, dtype=np.int64)
    st[S_PLAYERS] = players
    st[S_COPIES] = COPIES[players]
    st[S_LAST] = -1
    st[S_C_KIND] = -1
    st[S_C_LOW] = -1
    st[S_OUT] = -1
    # every seat plays the heuristic's knobs until play_one loads the seats' own (load_knobs)
    fill_knob_defaults(st, KNOB, KNOB_DEFAULTS, MAX_PLAYERS, MAX_KNOBS)
    return st


@jit(inline='always')
def play_one(params, seats, seed, g, out, row, ev, ev_n, search):
    """Play game ``g`` into ``out[row]``; record events into ``ev`` when it has rows.

    ``search`` is None when no seat is ``mc``: Numba then prunes the search player's branch at
    compile time (a build without it compiles faster; see docs/architecture.md).
    """
    P = seats.shape[0]
    st = new_state(P)
    acts = np.zeros(MAX_ACTIONS, dtype=np.int64)
    tmp = np.zeros(MAX_PLAYERS, dtype=np.int64)
    deck = np.zeros(MAX_DECK, dtype=np.int64)
    # stream slots: 0..P-1 the seats' decisions, P the current round's deal, P+1+s seat s's
    # search (mc seats only)
    keys = np.zeros(2 * P + 1, dtype=np.uint64)
    ctrs = np.zeros(2 * P + 1, dtype=np.int64)
    mcstat = np.zeros(2, dtype=np.int64)        # rollouts, rollout turns
    _play_game(params, seats, seed, g, out, row, ev, ev_n, search, st, acts, tmp, deck, keys, ctrs,
               mcstat)


@jit_borrowing   # allocates nothing; play_one owns every array
def _play_game(params, seats, seed, g, out, row, ev, ev_n, search, st, acts, tmp, deck, keys, ctrs,
               mcstat):
    """play_one's game in its working arrays. Its own function, compiled without reference
    counting: in play_one (which allocates, so counts references) every call of a turn's helpers
    (legal_actions, heuristic_choice, apply_action, ...) counted its array arguments up and down
    with atomic instructions."""
    P = seats.shape[0]
    rec = ev.shape[0] > 0
    for j in range(out.shape[1]):
        out[row, j] = 0
    load_knobs(st, seats)
    for s in range(P):
        keys[s] = rng.stream_key(seed, g, rng.SEAT, s)
        if search is not None and seats[s, 0] == P_MC:
            keys[P + 1 + s] = rng.stream_key(seed, g, rng.SEARCH, s)
    fixed = 0
    if P == 2 and params[R_TWO_P_END] == END_TWO_HANDS:
        fixed = TWO_HANDS_ROUNDS
    target = params[R_TARGET]
    C0 = col_counter(P, 0)
    turns = 0
    timeout = False
    leader = 0
    rnd = 0
    while True:
        st[S_ROUND] = rnd
        deal_round(st, params, seed, g, rnd, deck, keys, ctrs, P)
        st[S_OUT] = -1
        clear_trick(st, leader)
        if rec:
            record_event(ev, ev_n, E_ROUND, leader, rnd, leader)
            for s in range(P):
                m, f = multiset_masks(st, HAND + s * N_RANKS)
                record_event(ev, ev_n, E_DEAL, s, rnd, 0, m, f, st[N_HELD + s])
                if P == 2:
                    m, f = multiset_masks(st, RESERVE + s * N_RANKS)
                    record_event(ev, ev_n, E_DEAL, s, rnd, 1, m, f, st[N_HELD + s])
        while st[S_OUT] < 0:
            seat = st[S_TO_ACT]
            n = legal_actions(st, params, acts)
            forbid, watch = seat_masks(seats, seat)
            if forbid != 0:
                n, yielded = restrict_actions(acts, n, forbid)
                out[row, C0 + C_YIELDED] += yielded
            pol = seats[seat, 0]
            if pol == P_MC and seats[seat, 3] != SCOPE_ALL and st[RESERVE_ON + seat] != 0:
                pol = seats[seat, 2]        # scope 1 before the seat's last hand: its rollout policy
            if pol == P_HEURISTIC or pol == P_TUNED:
                i = heuristic_choice(st, params, acts, n)
            elif search is not None and pol == P_MC:
                i = 0
                if n > 1:
                    i = mc_choose(st, params, acts, n, seats[seat, 1], seats[seat, 2], keys, ctrs,
                                  P + 1 + seat, fixed, target, mcstat, forbid)
            else:
                i = random_choice(st, params, acts, n, keys, ctrs, fixed, target, tmp)
            a = acts[i]
            if watch != 0 and forbidden_bits(a) & watch != 0:
                out[row, C0 + C_FORBIDDEN] += 1
            typ = act_type(a)
            turns += 1
            if typ == A_PASS:
                out[row, C0 + C_PASS] += 1
                if rec:
                    record_event(ev, ev_n, E_PASS, seat, i, n)
            else:
                out[row, C0 + C_PLAYS] += 1
                if typ == A_LEAD:
                    out[row, C0 + C_LEAD] += 1
                    out[row, C0 + C_TRICKS] += 1
                elif typ == A_OVERWRITE:
                    out[row, C0 + C_OVERWRITE] += 1
                    if act_size(a) > st[S_C_SIZE]:
                        out[row, C0 + C_OVERWRITE_UP] += 1
                else:
                    out[row, C0 + C_ADD] += 1
                if rec:
                    record_event(ev, ev_n, E_PLAY, seat, typ, played_mask(st, a), act_kind(a),
                                 act_low(a) * ID_SLOTS, act_size(a), st[N_HELD + seat] - played_total(st, a),
                                 i, n)
            reserve_before = st[RESERVE_ON + seat]
            cause = apply_action(st, params, a)
            if reserve_before != 0 and st[RESERVE_ON + seat] == 0:
                out[row, C0 + C_PICKUPS] += 1
                if rec:
                    m, f = multiset_masks(st, HAND + seat * N_RANKS)
                    record_event(ev, ev_n, E_PICKUP, seat, rnd, m, f, st[N_HELD + seat])
            if cause != T_ON:
                out[row, C0 + C_END_PASSES + cause - T_PASSES] += 1
                if rec:
                    nxt = st[S_TO_ACT] if st[S_OUT] < 0 else -1
                    record_event(ev, ev_n, E_TRICK, nxt if nxt >= 0 else seat, rnd, cause, nxt)
        # round end: everyone else scores the points they still hold
        w = st[S_OUT]
        if rec:
            record_event(ev, ev_n, E_OUT, w, rnd)
        out[row, C0 + C_ROUNDS] += 1
        out[row, C0 + C_OUT_FIRST + w] += 1
        for s in range(P):
            pts = 0
            left = 0
            if s != w:
                pts = points_held(st, params, s)
                left = st[N_HELD + s]
                for r in range(N_RANKS):
                    left += st[RESERVE + s * N_RANKS + r]
                out[row, C0 + C_POINTS_LEFT] += pts
                out[row, C0 + C_NONWINNERS] += 1
            st[SCORE + s] += pts
            if rec:
                record_event(ev, ev_n, E_SCORE, s, rnd, pts, st[SCORE + s], left)
        for s in range(P):
            tmp[s] = st[SCORE + s]
        # game arc (issue #16): a checkpoint after every round, standing = points, fewest best
        arc.checkpoint(out, row, layout.col_arc(P, N_COUNTERS), P, tmp, 0, True, ev, ev_n, E_CHECKPOINT)
        if game_over_after(st, params, fixed, target, tmp):
            break
        rnd += 1
        if rnd >= params[R_MAX_ROUNDS]:
            timeout = True
            break
        if params[R_NEXT_LEAD] == LEAD_WINNER:
            leader = w
        else:
            leader = rnd % P
    _finish(st, P, timeout, out, row, ev, ev_n)
    out[row, col_length(P)] = turns
    out[row, col_decisions(P)] = turns
    out[row, C0 + C_MC_ROLLOUTS] = mcstat[0]
    out[row, C0 + C_MC_PLAYS] = mcstat[1]


@jit(_nrt=True)    # allocates its keys (once a game)
def _finish(st, P, timeout, out, row, ev, ev_n):
    """Fewest points wins; ties share. A timeout has no winner (places still by points)."""
    keys = np.empty(P, dtype=np.int64)
    best = st[SCORE]
    for s in range(P):
        out[row, s] = st[SCORE + s]
        keys[s] = -st[SCORE + s]
        best = min(best, st[SCORE + s])
    mask = 0
    if not timeout:
        for s in range(P):
            if st[SCORE + s] == best:
                mask |= 1 << s
    out[row, col_winners(P)] = mask
    out[row, col_flags(P)] = layout.FLAG_TIMEOUT if timeout else 0
    layout.places_from_keys(keys, P, row, out)
    if ev.shape[0] > 0:
        for s in range(P):
            record_event(ev, ev_n, E_FINAL, s, st[SCORE + s], out[row, P + s], (mask >> s) & 1,
                         1 if timeout else 0)


# ---- bulk play and trace ----------------------------------------------------------------------
# Two builds of play_one (``search`` None: no mc seat), chosen in Python by the entry points so a
# run compiles only the build it needs.
@pjit
def _play_games(params, seats, seed, first_game, out, search):
    ev, ev_n = layout.no_events()   # not np.zeros here: each would be a parallel region
    for i in prange(out.shape[0]):
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


play_games, play_games_serial, trace_game = builds.entry_points(
    _play_games, _play_games_serial, _trace_game, P_MC)


def derived_metrics(sums: dict, games: int, players: int, params) -> dict:
    """Per-variant metrics from the integer counter sums."""
    def ratio(a, b):
        return a / b if b else float("nan")
    rounds = sums["rounds"]
    tricks = sums["tricks"]
    acts = sums["act_lead"] + sums["act_overwrite"] + sums["act_add"] + sums["act_pass"]
    m = {
        "points_table_is_standin": 1.0 if int(params[R_POINTS]) == PT_STANDIN else 0.0,
        "rounds_per_game": ratio(rounds, games),
        "tricks_per_round": ratio(tricks, rounds),
        "plays_per_trick": ratio(sums["plays"], tricks),
        "turns_per_trick": ratio(acts, tricks),
        "lead_share": ratio(sums["act_lead"], acts),
        "overwrite_share": ratio(sums["act_overwrite"], acts),
        "add_share": ratio(sums["act_add"], acts),
        "pass_share": ratio(sums["act_pass"], acts),
        "end_passes_share": ratio(sums["end_passes"], tricks),
        "end_full_set_share": ratio(sums["end_full_set"], tricks),
        "end_full_run_share": ratio(sums["end_full_run"], tricks),
        "end_eight_share": ratio(sums["end_eight"], tricks),
        "end_out_share": ratio(sums["end_out"], tricks),
        "points_left_per_nonwinner": ratio(sums["points_left"], sums["nonwinner_rounds"]),
    }
    if int(params[R_OVERWRITE_UP]):
        m["overwrite_up_share"] = ratio(sums["overwrite_up"], sums["act_overwrite"])
    if players == 2:
        m["pickups_per_round"] = ratio(sums["pickups"], rounds)
    for s in range(players):
        m[f"out_first_share_seat{s}"] = ratio(sums[f"out_first_seat{s}"], rounds)
    return m
