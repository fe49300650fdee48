"""sudden-skies: the flush race with weather effects, 2-4 players (rulebook sudden-skies.txt).

Each player holds five cards from a 52-card deck and races to reveal a flush. A turn is one
of Reveal, Draw-and-Discard (draw the top card, put one card face down under the draw pile)
or Weather (play any card face up out of the game; its suit acts: Wind = Diamonds,
Sun = Hearts, Thunder = Spades, Cloud = Clubs). After a Weather turn the player's next turn
is a forced draw-and-keep. Rulings: RULINGS.md "sudden-skies"; docs/games/sudden-skies.md.

Encodings (kernels/cards.py): card = suit * 13 + rank, a hand is a 64-bit mask. The whole
game state is one flat int64 array (``ST_*`` offsets below), so a search player can copy it
and play forward with the same rule functions.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from . import arc, builds, layout, rng
from ._jit import jit, jit_borrowing, pjit
from .cards import (
    CLUBS, DIAMONDS, HEARTS, N_CARDS, N_RANKS, N_SUITS, SPADES, SUIT_MASK,
    card_name, lowest_bit, popcount, select_bit, suit_of,
)
from .knobs import load_knob_row
from .layout import col_counter, col_decisions, col_flags, col_length, col_winners, record_event
from .spec import (MAX_KNOBS, SEAT_FORBID, SEAT_WATCH, Counter, Event, Knob,
                   Restriction, Rule)

GAME_ID = "sudden-skies"
VERSION = 2  # 2: mc reveals a flush whenever offered (also with take_win = false)
PLAYER_COUNTS = (2, 3, 4)
LOWER_IS_BETTER = False
LENGTH_UNIT = "turns"

# ---- rules (index = slot in params) ---------------------------------------------------------
R_TURN_CAP, R_CLOUD_SELF, R_TAKE_WIN, R_WIND_EMPTY = 0, 1, 2, 3
WIND_RECEIVE, WIND_SKIP = 0, 1
RULES = (
    Rule("turn_cap", R_TURN_CAP, 400,
         "safety cap: after this many turns without a winner the game ends as a timeout",
         lo=1, hi=100000, ruling="RULINGS sudden-skies: turn cap in the config, default 400 turns"),
    Rule("cloud_self", R_CLOUD_SELF, False,
         "a Cloud (Clubs) may target the player who plays it",
         ruling="RULINGS sudden-skies (switch): Cloud targets another player"),
    Rule("take_win", R_TAKE_WIN, True,
         "every policy reveals a flush as soon as it may (false: Reveal is one more offered "
         "action, which only the random policy may decline)",
         ruling="RULINGS conventions: a game-winning action is always taken unless the config says not"),
    Rule("wind_empty", R_WIND_EMPTY, "receive",
         "Wind when a player holds no card: 'receive' = they pass nothing but still receive from "
         "their right; 'skip' = empty-handed players are left out, cards go to the next player "
         "on the left who holds cards",
         choices=("receive", "skip"),
         ruling="gap: the rules never say how a player with no card takes part in a Wind"),
)

P_RANDOM, P_HEURISTIC, P_MC, P_TUNED = 0, 1, 2, 3
POLICIES = {"random": P_RANDOM, "heuristic": P_HEURISTIC, "mc": P_MC, "tuned": P_TUNED}
# mc:BUDGET:ROLLOUT - samples per decision (each option is played forward from every sample)
# and the policy every seat follows inside a rollout
POLICY_ARGS = {"mc": (("budget", 64, 1, 4096), ("rollout", "heuristic", None, None))}

# ---- restrictions (policy modifiers ``POLICY+NAME``: bits of a seat row's forbid mask) ----------
RX_NO_WIND, RX_NO_SUN, RX_NO_THUNDER, RX_NO_CLOUD, RX_NO_WEATHER = range(5)
RESTRICTIONS = (
    Restriction("no-wind", RX_NO_WIND, "never play a Diamond as weather (Wind)"),
    Restriction("no-sun", RX_NO_SUN, "never play a Heart as weather (Sun)"),
    Restriction("no-thunder", RX_NO_THUNDER, "never play a Spade as weather (Thunder)"),
    Restriction("no-cloud", RX_NO_CLOUD, "never play a Club as weather (Cloud)"),
    Restriction("no-weather", RX_NO_WEATHER,
                "never play a weather card unless it is the only action (draw pile empty)"),
)

# ---- tuned: the heuristic's decision rule as named integer knobs (defaults = heuristic) -------
(K_THUNDER_LEVEL, K_CLOUD_LEVEL, K_SUN_MIN_HELD, K_SUN_RELOOK, K_WIND_MIN_OFF, K_WIND_NEEDS_PAY,
 K_W_HELD, K_W_AVAIL, K_STALL_TURNS, K_STALL_ANY) = range(10)
KNOBS = (
    Knob("thunder_level", K_THUNDER_LEVEL, 4, 0, 6, "Thunder (an off-suit Spade) an unmarked opponent "
         "known to hold this many cards of one suit (0: Thunder whenever an off-suit Spade is held; "
         "6: never by choice)"),
    Knob("cloud_level", K_CLOUD_LEVEL, 4, 0, 6, "Cloud (an off-suit Club) an unmarked opponent known "
         "to hold this many of one suit (0: whenever; 6: never by choice)"),
    Knob("sun_min_held", K_SUN_MIN_HELD, 3, 0, 6, "look with Sun (an off-suit Heart) only holding this "
         "many cards of the suit collected (6: never by choice)"),
    Knob("sun_relook", K_SUN_RELOOK, 0, 0, 400, "look with Sun only at an opponent never looked at "
         "(0) or also at one last looked at more than this many turns ago"),
    Knob("wind_min_off", K_WIND_MIN_OFF, 2, 0, 6, "play Wind (an off-suit Diamond) only holding this "
         "many off-suit cards (6: never by choice)"),
    Knob("wind_needs_pay", K_WIND_NEEDS_PAY, 1, 0, 1, "1: Wind only when the right-hand neighbour is "
         "known to hold a card of the suit collected and to collect another; 0: without that"),
    Knob("w_held", K_W_HELD, 32, 0, 48, "suit choice (what to collect, what to discard or pass): "
         "weight of the cards of the suit held"),
    Knob("w_avail", K_W_AVAIL, 1, 0, 48, "suit choice: weight of the suit's cards still to be had "
         "(not on the weather pile, not known in another hand); 32 or more puts them before the "
         "cards held"),
    Knob("stall_turns", K_STALL_TURNS, 0, 0, 400, "after this many turns of the game without a "
         "weather card (counted from the start, then from the last one played), Thunder and Cloud "
         "need no known threat (as at level 0): a weather card leaves the game and breaks the "
         "repeating draw-and-discard cycles that lock up tables of weather-shy players (discards go "
         "under the pile, so each seat keeps drawing the same cards; 0: off)"),
    Knob("stall_any", K_STALL_ANY, 0, 0, 1, "1: once stall_turns have passed without weather, Sun "
         "and Wind need no condition either, so any off-suit card is played as weather (Thunder, "
         "Cloud, Sun, Wind in that order): a table whose off-suit cards are all Hearts and Diamonds "
         "also breaks its cycle (the draw pile shrinks by a card, so every seat draws other cards); "
         "0: only Thunder and Cloud"),
)
KNOB_DEFAULTS = np.zeros(MAX_KNOBS, dtype=np.int64)
for _k in KNOBS:
    KNOB_DEFAULTS[_k.index] = _k.default

REPORT_NOTES = (
    "sudden-skies score: 1 for the winner, 0 for everyone else (the rulebook names only a "
    "winner; a design decision, see docs/games/sudden-skies.md).",
    "sudden-skies timeouts include stalemates (draw pile and every hand empty; most random-play "
    "games end so): the counters 'timeouts' (turn cap) and 'stalemates' tell them apart.",
    "sudden-skies heuristic plays weather sparingly (a weather card costs a turn of tempo).",
)

# ---- constants ----------------------------------------------------------------------------
MAX_PLAYERS = 4
HAND_SIZE = 5
WIND, SUN, THUNDER, CLOUD = DIAMONDS, HEARTS, SPADES, CLUBS  # a weather card's effect = its suit

# kinds of action; a set of offered kinds is a bit mask of (1 << kind)
KIND_REVEAL, KIND_DRAW, KIND_WEATHER = 0, 1, 2
K_REVEAL, K_DRAW, K_WEATHER = 1 << KIND_REVEAL, 1 << KIND_DRAW, 1 << KIND_WEATHER

# how a game ended
END_RUNNING, END_WIN, END_TIMEOUT, END_STALEMATE = 0, 1, 2, 3
# why a turn passed
PASS_NO_DRAW, PASS_NO_ACTION = 0, 1

# heuristic tuning
# (a weather card costs a turn of tempo: weather now, draw next turn; so it is played sparingly)
# The heuristic's thresholds and suit weights are the knobs of ``tuned`` (KNOBS below): a seat
# reads them from its knob row in the state (ST_KNOB), the defaults for a ``heuristic`` seat.
SUN_STALE_ROUNDS = 2    # choosing whom to look at, a look older than this many rounds of turns
                        # counts as stale
NEVER_SEEN_AGE = np.int64(1) << 39   # older than any real look (turn_cap <= 100000)
# lexicographic keys packed into one integer: each weight exceeds everything below it
W_LIVE = 1024           # suit want: live suit > held * w_held + available * w_avail (<= 6*48 + 13*48)
W_AVOID = 4096          # Wind card: the receiver's suit > any suit want
W_UNMARKED = 64         # mark target: not yet marked > known level (<= 13)
W_STALE = 16            # Sun target: stale look > known level (<= 13) ...
W_LEVEL = np.int64(1) << 40   # ... and known level > age (<= NEVER_SEEN_AGE)
NO_KEY = np.int64(1) << 50    # larger than any key above

# ---- state layout (one flat int64 array) ----------------------------------------------------
ST_HAND = 0             # [4] hand masks
ST_SKIP = 4             # [4] Thunder mark: skip your next turn
ST_CLOUD = 8            # [4] Cloud mark: keep the next card you draw
ST_OWE = 12             # [4] played Weather on your last turn: next turn is draw-and-keep
ST_TURNS = 16           # [4] turns taken by each seat (skipped ones included)
ST_KNOW = 20            # [16] KNOW[me * 4 + t]: cards `me` knows `t` holds (Sun, own Wind pass)
ST_SEEN = 36            # [16] SEEN[me * 4 + t]: turn of me's last Sun look at t (-1 never)
ST_PILE = 52            # [52] draw pile, a ring buffer: top at ST_PILE_TOP, ST_PILE_N cards
ST_PILE_TOP = ST_PILE + N_CARDS
ST_PILE_N = ST_PILE_TOP + 1
ST_GONE = ST_PILE_N + 1         # weather pile (out of the game), a mask
ST_TURN = ST_GONE + 1           # turns taken so far (= game length)
ST_PLAYERS = ST_TURN + 1
ST_WINNER = ST_PLAYERS + 1      # -1 until someone reveals
ST_END = ST_WINNER + 1          # END_*
ST_DECISIONS = ST_END + 1
ST_RULES = ST_DECISIONS + 1     # copy of params
N_RULES = len(RULES)
ST_POLICY = ST_RULES + N_RULES  # [4] each seat's policy code
ST_PASS = ST_POLICY + MAX_PLAYERS      # [4] Wind: the card each seat passes (-1 none)
ST_PASS_TO = ST_PASS + MAX_PLAYERS     # [4] Wind: who receives it
ST_EV = ST_PASS_TO + MAX_PLAYERS       # [5] the last turn's trace event: code, v1..v4
# what each seat has observed, for search (mc) seats; kept only in games with an mc seat
N_LOC = MAX_PLAYERS + 1                # locations of a card: the hands 0..3, then the draw pile
LOC_PILE = MAX_PLAYERS
ST_POSS = ST_EV + 5                    # [4 * 5] POSS[o * N_LOC + L]: cards o cannot rule out at L
ST_KSLOT = ST_POSS + MAX_PLAYERS * N_LOC   # [4] draw-pile ring slots holding o's own discards
ST_MCARG = ST_KSLOT + MAX_PLAYERS      # [4 * 2] each seat's mc budget and rollout policy
ST_FORBID = ST_MCARG + 2 * MAX_PLAYERS # [4] each seat's restriction bits (RESTRICTIONS)
ST_WATCH = ST_FORBID + MAX_PLAYERS     # [4] each seat's watched restriction bits (only counted)
ST_KNOB = ST_WATCH + MAX_PLAYERS       # [4 * MAX_KNOBS] each seat's heuristic knobs (load_knobs)
ST_LAST_WX = ST_KNOB + MAX_PLAYERS * MAX_KNOBS   # turn the last weather card was played (0: none yet)
ST_CTR = ST_LAST_WX + 1                # the game's counters

# ---- counters (index = column offset in the result row) -------------------------------------
(C_WINNER_TURNS, C_THUNDER, C_SUN, C_WIND, C_CLOUD, C_SKIPS, C_FORCED_KEEPS, C_WEATHER_DRAWS,
 C_TIMEOUTS, C_STALEMATES, C_PASSES, C_DRAW_DISCARDS, C_PILE_EMPTIED, C_MC_ROLLOUTS,
 C_MC_PLAYS, C_RX_FORBIDDEN, C_RX_YIELDED) = range(17)
C_WEATHER_BY_SUIT = C_THUNDER   # C_THUNDER + suit: Spades, Hearts, Diamonds, Clubs
COUNTERS = (
    Counter("winner_turns", "turns taken by the winner (its skipped turns and the reveal included)"),
    Counter("weather_spades", "Thunder (Spades) weather cards played"),
    Counter("weather_hearts", "Sun (Hearts) weather cards played"),
    Counter("weather_diamonds", "Wind (Diamonds) weather cards played"),
    Counter("weather_clubs", "Cloud (Clubs) weather cards played"),
    Counter("skips", "turns lost to a Thunder mark"),
    Counter("forced_keeps", "Cloud marks spent: a draw the player was forced to keep"),
    Counter("weather_draws", "forced draw-and-keep turns after a Weather card that drew a card"),
    Counter("timeouts", "games ended by the turn cap"),
    Counter("stalemates", "games ended with an empty draw pile and empty hands"),
    Counter("passes", "turns that passed with nothing to do (empty draw pile or empty hand)"),
    Counter("draw_discards", "Draw-and-Discard turns"),
    Counter("pile_emptied", "games in which the draw pile ran out"),
    Counter("mc_rollouts", "rollouts played by search (mc) seats"),
    Counter("mc_rollout_plays", "turns simulated inside those rollouts"),
    Counter("restriction_forbidden",
            "decisions at which a seat with a watch bit took an option in its watched set"),
    Counter("restriction_yielded",
            "decisions at which a restricted seat found every legal option forbidden"),
)
N_COUNTERS = len(COUNTERS)
STATE_SIZE = ST_CTR + N_COUNTERS

# ---- trace events -------------------------------------------------------------------------
(E_DEAL, E_SKIP, E_FORCED_DRAW, E_PASS, E_REVEAL, E_DRAW_DISCARD, E_WEATHER, E_WIND_PASS,
 E_SUN_VIEW, E_RESULT) = range(1, 11)
E_CHECKPOINT = 11
_EFFECTS = ("thunder", "sun", "wind", "cloud")
EVENTS = (
    Event(E_DEAL, "deal", ("hand", "pile"), masks=("hand",)),
    Event(E_SKIP, "skip", ("turn",)),
    Event(E_FORCED_DRAW, "forced_draw", ("turn", "card", "cloud_spent"), cards=("card",)),
    Event(E_PASS, "pass", ("turn", "reason"),
          words=(("reason", ("empty draw pile", "no card and no draw")),)),
    Event(E_REVEAL, "reveal", ("turn", "hand"), masks=("hand",)),
    Event(E_DRAW_DISCARD, "draw_discard", ("turn", "drawn", "discarded", "cloud_spent"),
          cards=("drawn", "discarded")),
    Event(E_WEATHER, "weather", ("turn", "card", "effect", "target", "marked"),
          cards=("card",), words=(("effect", _EFFECTS),)),
    Event(E_WIND_PASS, "wind_pass", ("turn", "card", "to"), cards=("card",)),
    Event(E_SUN_VIEW, "sun_view", ("turn", "target", "hand"), masks=("hand",)),
    Event(E_RESULT, "result", ("length", "end", "score0", "score1", "score2", "score3"),
          words=(("end", ("running", "win", "timeout", "stalemate")),), seat_always=True),
    arc.checkpoint_event(E_CHECKPOINT),   # flush progress after every full turn of the table
)


def format_card(c: int) -> str:
    return card_name(c) if 0 <= c < N_CARDS else "-"


def n_seats(players: int, params) -> int:
    return players


def extra_seats(players: int, params) -> tuple:
    return ()


def score_range(players: int, params) -> tuple[int, int]:
    return 0, 1


def length_range(players: int, params) -> tuple[int, int]:
    return 1, int(params[R_TURN_CAP])


def check(players: int, params) -> None:
    if players not in PLAYER_COUNTS:
        raise ValueError(f"sudden-skies is for 2-4 players, not {players}")


# ---- small helpers --------------------------------------------------------------------------
@jit(inline='always')
def bit(c):
    return np.int64(1) << c


@jit(inline='always')
def pile_draw(st):
    """Take the top card of the draw pile; -1 when it is empty."""
    n = st[ST_PILE_N]
    if n == 0:
        return -1
    top = st[ST_PILE_TOP]
    c = st[ST_PILE + top]
    st[ST_PILE + top] = -1
    top += 1
    st[ST_PILE_TOP] = top if top < N_CARDS else 0
    st[ST_PILE_N] = n - 1
    return c


@jit(inline='always')
def pile_put_under(st, c):
    """A discard goes face down under the draw pile."""
    n = st[ST_PILE_N]
    i = st[ST_PILE_TOP] + n
    if i >= N_CARDS:
        i -= N_CARDS
    st[ST_PILE + i] = c
    st[ST_PILE_N] = n + 1


@jit
def pile_mask(st):
    m = np.int64(0)
    for i in range(st[ST_PILE_N]):
        m |= bit(st[ST_PILE + (st[ST_PILE_TOP] + i) % N_CARDS])
    return m


@jit(inline='always')
def forget_card(st, me, c):
    """``me`` now holds (or has seen go public) card c: nobody else holds it, as far as me knows."""
    m = ~bit(c)
    b = ST_KNOW + me * MAX_PLAYERS
    st[b] &= m
    st[b + 1] &= m
    st[b + 2] &= m
    st[b + 3] &= m


# ---- setup ----------------------------------------------------------------------------------
@jit
def new_state(params, seats):
    """An empty table for ``seats.shape[0]`` players (policies from ``seats[:, 0]``)."""
    st = np.empty(STATE_SIZE, dtype=np.int64)
    init_state(st, params, seats)
    return st


@jit
def init_state(st, params, seats):
    """Make ``st`` (STATE_SIZE values, any content) the empty table of new_state."""
    P = seats.shape[0]
    for i in range(STATE_SIZE):
        st[i] = 0
    for s in range(P):
        st[ST_POLICY + s] = seats[s, 0]
        st[ST_MCARG + 2 * s] = seats[s, 1]
        st[ST_MCARG + 2 * s + 1] = seats[s, 2]
        if seats.shape[1] > SEAT_WATCH:     # restriction masks present (spec.SEAT_WIDTH rows)
            st[ST_FORBID + s] = seats[s, SEAT_FORBID]
            st[ST_WATCH + s] = seats[s, SEAT_WATCH]
    load_knobs(st, seats)
    st[ST_PLAYERS] = P
    st[ST_WINNER] = -1
    for i in range(MAX_PLAYERS * MAX_PLAYERS):
        st[ST_SEEN + i] = -1
    for i in range(N_CARDS):
        st[ST_PILE + i] = -1
    for r in range(N_RULES):
        st[ST_RULES + r] = params[r]


@jit
def load_knobs(st, seats):
    """Each seat's knob row (ST_KNOB; ``knobs.load_knob_row``), defaults past the seat rows."""
    for s in range(MAX_PLAYERS):
        load_knob_row(seats, s, KNOB_DEFAULTS, P_TUNED, P_MC, st, ST_KNOB + s * MAX_KNOBS)


@jit(inline='always')
def knob(st, s, k):
    """Seat s's knob k."""
    return st[ST_KNOB + s * MAX_KNOBS + k]


@jit(inline='always')
def rule_based(pol):
    """The heuristic and tuned play by the same rule (tuned with its own knobs)."""
    return pol == P_HEURISTIC or pol == P_TUNED


@jit
def deal(st, deck, keys, ctrs, slot):
    """Shuffle 0..51 on the DEAL stream; deck[i] for i < 5P goes to seat i % P (one at a time,
    clockwise from seat 0); the rest is the draw pile, deck[5P] on top."""
    P = st[ST_PLAYERS]
    for i in range(N_CARDS):
        deck[i] = i
    rng.shuffle(deck, N_CARDS, keys, ctrs, slot)
    dealt = HAND_SIZE * P
    for i in range(dealt):
        st[ST_HAND + i % P] |= bit(deck[i])
    for i in range(N_CARDS - dealt):
        st[ST_PILE + i] = deck[dealt + i]
    st[ST_PILE_TOP] = 0
    st[ST_PILE_N] = N_CARDS - dealt


# ---- the rules: legal options --------------------------------------------------------------
@jit(inline='always')
def is_flush(hand):
    if popcount(hand) != HAND_SIZE:
        return False
    for u in range(N_SUITS):
        if hand & ~SUIT_MASK[u] == 0:
            return True
    return False


@jit(inline='always')
def legal_turn(st, s):
    """Actions offered to seat s on a free turn (no skip mark, no draw owed): a bit mask.

    Reveal: holding a five-card flush at the start of the turn. Draw-and-Discard: the draw
    pile is not empty. Weather: holding a card."""
    hand = st[ST_HAND + s]
    m = 0
    if is_flush(hand):
        m |= K_REVEAL
    if st[ST_PILE_N] > 0:
        m |= K_DRAW
    if hand != 0:
        m |= K_WEATHER
    return m


@jit(inline='always')
def legal_discards(st, s, drawn):
    """Cards seat s may discard after drawing ``drawn``: any of hand + drawn card, but only the
    earlier cards under a Cloud mark."""
    if st[ST_CLOUD + s]:
        return st[ST_HAND + s]
    return st[ST_HAND + s] | bit(drawn)


@jit
def legal_weather(st, s):
    return st[ST_HAND + s]


# ---- restrictions: what a restricted seat may still do -----------------------------------------
@jit(inline='always')
def forbidden_cards(mask):
    """The cards restriction bits ``mask`` forbid as weather (a mask of whole suits)."""
    m = np.int64(0)
    if (mask >> RX_NO_WIND) & 1:
        m |= SUIT_MASK[WIND]
    if (mask >> RX_NO_SUN) & 1:
        m |= SUIT_MASK[SUN]
    if (mask >> RX_NO_THUNDER) & 1:
        m |= SUIT_MASK[THUNDER]
    if (mask >> RX_NO_CLOUD) & 1:
        m |= SUIT_MASK[CLOUD]
    if (mask >> RX_NO_WEATHER) & 1:
        m |= SUIT_MASK[WIND] | SUIT_MASK[SUN] | SUIT_MASK[THUNDER] | SUIT_MASK[CLOUD]
    return m


@jit(inline='always')
def restrict_turn(st, s, kinds):
    """(kinds, weather cards) left to seat s on a free turn by its restriction bits: Weather goes
    when no hand card may be played as weather. When nothing is left the restriction yields
    (every offered action, counted in restriction_yielded)."""
    hand = st[ST_HAND + s]
    fb = st[ST_FORBID + s]
    if fb == 0:
        return kinds, hand
    allowed = hand & ~forbidden_cards(fb)
    k = kinds if allowed != 0 else kinds & ~K_WEATHER
    if k == 0:
        st[ST_CTR + C_RX_YIELDED] += 1
        return kinds, hand
    return k, allowed


@jit(inline='always')
def note_watched(st, s, kind, card):
    """Count a free-turn choice of seat s that one of its watched restrictions would forbid."""
    w = st[ST_WATCH + s]
    if w != 0 and kind == KIND_WEATHER and (forbidden_cards(w) >> card) & 1:
        st[ST_CTR + C_RX_FORBIDDEN] += 1


@jit
def n_targets(st, s, effect):
    """Sun, Thunder, Cloud target another player (Cloud also oneself with cloud_self)."""
    P = st[ST_PLAYERS]
    if effect == CLOUD and st[ST_RULES + R_CLOUD_SELF]:
        return P
    return P - 1


@jit
def target_at(st, s, k):
    """Target option k: the others clockwise from s's left, then s itself (Cloud self only)."""
    P = st[ST_PLAYERS]
    if k < P - 1:
        return (s + 1 + k) % P
    return s


@jit(inline='always')
def wind_receiver(st, p):
    """Who receives p's Wind card: the left neighbour ('skip': the next one holding cards)."""
    P = st[ST_PLAYERS]
    if st[ST_RULES + R_WIND_EMPTY] == WIND_SKIP:
        for i in range(1, P):
            q = (p + i) % P
            if st[ST_HAND + q]:
                return q
        return p
    return (p + 1) % P


@jit(inline='always')
def wind_passers(st):
    """Bit mask of seats that pass a card in a Wind: every seat holding cards ('skip': only when
    at least two seats hold cards, else nobody passes)."""
    P = st[ST_PLAYERS]
    m = 0
    for p in range(P):
        if st[ST_HAND + p]:
            m |= 1 << p
    if st[ST_RULES + R_WIND_EMPTY] == WIND_SKIP and popcount(m) < 2:
        return 0
    return m


# ---- the rules: applying one choice ----------------------------------------------------------
@jit
def apply_skip_turn(st, s):
    st[ST_SKIP + s] = 0


@jit(inline='always')
def apply_forced_draw(st, s):
    """Draw one card and keep it; -1 (turn passes) when the pile is empty. Spends a Cloud mark."""
    st[ST_OWE + s] = 0
    c = pile_draw(st)
    if c >= 0:
        st[ST_HAND + s] |= bit(c)
        st[ST_CLOUD + s] = 0
        forget_card(st, s, c)
    return c


@jit
def apply_reveal(st, s):
    st[ST_WINNER] = s
    st[ST_END] = END_WIN


@jit(inline='always')
def apply_draw_discard(st, s, drawn, discard):
    """Keep ``drawn``, put ``discard`` under the draw pile (drawn already left the pile)."""
    st[ST_HAND + s] = (st[ST_HAND + s] | bit(drawn)) & ~bit(discard)
    pile_put_under(st, discard)
    st[ST_CLOUD + s] = 0
    forget_card(st, s, drawn)


@jit(inline='always')
def apply_weather_card(st, s, card):
    """Play ``card`` face up out of the game; s owes a draw-and-keep next turn."""
    st[ST_HAND + s] &= ~bit(card)
    st[ST_GONE] |= bit(card)
    st[ST_OWE + s] = 1
    st[ST_LAST_WX] = st[ST_TURN]
    m = ~bit(card)
    for i in range(MAX_PLAYERS * MAX_PLAYERS):
        st[ST_KNOW + i] &= m


@jit
def apply_sun(st, s, t):
    """s looks at t's hand (information only)."""
    st[ST_KNOW + s * MAX_PLAYERS + t] = st[ST_HAND + t]
    st[ST_SEEN + s * MAX_PLAYERS + t] = st[ST_TURN]


@jit
def apply_thunder(st, t):
    """t skips its next turn; marks do not stack. Returns 1 when the mark is new."""
    if st[ST_SKIP + t]:
        return 0
    st[ST_SKIP + t] = 1
    return 1


@jit
def apply_cloud(st, t):
    """t must keep the next card it draws; marks do not stack. Returns 1 when the mark is new."""
    if st[ST_CLOUD + t]:
        return 0
    st[ST_CLOUD + t] = 1
    return 1


@jit(inline='always')
def apply_wind(st):
    """Everyone passes at once: st[ST_PASS + p] = p's card (-1: p passes nothing); the
    receivers are written to st[ST_PASS_TO + p]."""
    P = st[ST_PLAYERS]
    for p in range(P):
        st[ST_PASS_TO + p] = wind_receiver(st, p) if st[ST_PASS + p] >= 0 else -1
    for p in range(P):
        if st[ST_PASS + p] >= 0:
            st[ST_HAND + p] &= ~bit(st[ST_PASS + p])
    for p in range(P):
        c = st[ST_PASS + p]
        if c >= 0:
            r = st[ST_PASS_TO + p]
            st[ST_HAND + r] |= bit(c)
            forget_card(st, r, c)
            if r != p:
                st[ST_KNOW + p * MAX_PLAYERS + r] |= bit(c)


# ---- heuristic -----------------------------------------------------------------------------
@jit
def known_elsewhere(st, me):
    m = np.int64(0)
    for t in range(st[ST_PLAYERS]):
        if t != me:
            m |= st[ST_KNOW + me * MAX_PLAYERS + t]
    return m


@jit
def h_suit_key(st, me, cards, u, elsewhere):
    """How much ``me`` wants suit u with these cards: live suit first (5+ cards not on the
    weather pile), then cards held, then cards not known to be gone or held by others."""
    live = N_RANKS - popcount(st[ST_GONE] & SUIT_MASK[u])
    held = popcount(cards & SUIT_MASK[u])
    avail = live - popcount(elsewhere & SUIT_MASK[u] & ~cards)
    return ((1 if live >= HAND_SIZE else 0) * W_LIVE + held * knob(st, me, K_W_HELD)
            + avail * knob(st, me, K_W_AVAIL))


@jit
def h_target_suit(st, me, cards):
    """The suit ``me`` collects: highest h_suit_key, lowest suit on ties."""
    elsewhere = known_elsewhere(st, me)
    best = 0
    best_key = -1
    for u in range(N_SUITS):
        k = h_suit_key(st, me, cards, u, elsewhere)
        if k > best_key:
            best_key = k
            best = u
    return best


@jit
def h_least_useful(st, me, cards, options):
    """The option card of the suit ``me`` wants least (h_suit_key over ``cards``), lowest code."""
    elsewhere = known_elsewhere(st, me)
    best = -1
    best_key = NO_KEY
    m = options
    while m:
        c = lowest_bit(m)
        m &= m - 1
        k = h_suit_key(st, me, cards, suit_of(c), elsewhere)
        if k < best_key:
            best_key = k
            best = c
    return best


@jit
def h_level(st, me, t):
    """Most cards of one suit ``me`` knows t holds."""
    k = st[ST_KNOW + me * MAX_PLAYERS + t]
    lvl = 0
    for u in range(N_SUITS):
        n = popcount(k & SUIT_MASK[u])
        if n > lvl:
            lvl = n
    return lvl


@jit
def h_known_suit(st, me, t):
    """The suit ``me`` knows t holds most of (-1 if fewer than 2 of any)."""
    k = st[ST_KNOW + me * MAX_PLAYERS + t]
    best = -1
    lvl = 1
    for u in range(N_SUITS):
        n = popcount(k & SUIT_MASK[u])
        if n > lvl:
            lvl = n
            best = u
    return best


@jit
def h_mark_target(st, me, mark):
    """Opponent to Thunder/Cloud: not yet marked first, then nearest a flush as far as me
    knows, then nearest clockwise from me's left."""
    P = st[ST_PLAYERS]
    best = (me + 1) % P
    best_key = -1
    for i in range(1, P):
        t = (me + i) % P
        k = (0 if st[mark + t] else W_UNMARKED) + h_level(st, me, t)
        if k > best_key:
            best_key = k
            best = t
    return best


@jit
def h_age(st, me, t):
    seen = st[ST_SEEN + me * MAX_PLAYERS + t]
    return NEVER_SEEN_AGE if seen < 0 else st[ST_TURN] - seen


@jit
def h_sun_target(st, me):
    """Opponent to look at: stale knowledge first, then the leader as far as me knows, then the
    oldest look, then nearest clockwise."""
    P = st[ST_PLAYERS]
    stale = SUN_STALE_ROUNDS * P
    best = (me + 1) % P
    best_key = -1
    for i in range(1, P):
        t = (me + i) % P
        age = h_age(st, me, t)
        k = ((W_STALE if age > stale else 0) + h_level(st, me, t)) * W_LEVEL + age
        if k > best_key:
            best_key = k
            best = t
    return best


@jit
def h_target(st, me, effect):
    if effect == SUN:
        return h_sun_target(st, me)
    if effect == THUNDER:
        return h_mark_target(st, me, ST_SKIP)
    return h_mark_target(st, me, ST_CLOUD)


@jit
def h_wind_pays(st, me, T):
    """A Wind should bring ``me`` a card of suit T: its right-hand neighbour (who passes to it)
    is known to hold a card of T and to collect another suit."""
    P = st[ST_PLAYERS]
    right = (me + P - 1) % P
    known = st[ST_KNOW + me * MAX_PLAYERS + right]
    return (known & SUIT_MASK[T]) != 0 and h_known_suit(st, me, right) != T


@jit
def heuristic_plan(st, s, kinds, allowed):
    """(kind, weather card or -1): reveal; else a tactical Weather with an off-suit card; else
    Draw-and-Discard; with an empty draw pile, Weather with the least useful card. Only cards
    in ``allowed`` are played as weather (the hand, less what a restriction forbids)."""
    if kinds & K_REVEAL:
        return KIND_REVEAL, -1
    hand = st[ST_HAND + s]
    if kinds & K_WEATHER:
        T = h_target_suit(st, s, hand)
        off = hand & ~SUIT_MASK[T] & allowed
        if off:
            stall = knob(st, s, K_STALL_TURNS)
            stalled = stall > 0 and st[ST_TURN] - st[ST_LAST_WX] >= stall
            spades = off & SUIT_MASK[SPADES]
            if spades:
                t = h_mark_target(st, s, ST_SKIP)
                lvl = 0 if stalled else knob(st, s, K_THUNDER_LEVEL)
                if st[ST_SKIP + t] == 0 and h_level(st, s, t) >= lvl:
                    return KIND_WEATHER, lowest_bit(spades)
            clubs = off & SUIT_MASK[CLUBS]
            if clubs:
                t = h_mark_target(st, s, ST_CLOUD)
                lvl = 0 if stalled else knob(st, s, K_CLOUD_LEVEL)
                if st[ST_CLOUD + t] == 0 and h_level(st, s, t) >= lvl:
                    return KIND_WEATHER, lowest_bit(clubs)
            any_weather = stalled and knob(st, s, K_STALL_ANY) != 0
            hearts = off & SUIT_MASK[HEARTS]
            if hearts and any_weather:
                return KIND_WEATHER, lowest_bit(hearts)
            if hearts and popcount(hand & SUIT_MASK[T]) >= knob(st, s, K_SUN_MIN_HELD):
                t = h_sun_target(st, s)
                age = h_age(st, s, t)
                relook = knob(st, s, K_SUN_RELOOK)
                if age == NEVER_SEEN_AGE or (relook > 0 and age > relook):
                    return KIND_WEATHER, lowest_bit(hearts)
            diamonds = off & SUIT_MASK[DIAMONDS]
            if diamonds and (any_weather or (popcount(off) >= knob(st, s, K_WIND_MIN_OFF)
                             and (knob(st, s, K_WIND_NEEDS_PAY) == 0 or h_wind_pays(st, s, T)))):
                return KIND_WEATHER, lowest_bit(diamonds)
    if kinds & K_DRAW:
        return KIND_DRAW, -1
    return KIND_WEATHER, h_least_useful(st, s, hand, allowed)


@jit
def heuristic_wind_card(st, p, receiver):
    """Pass an off-suit card, avoiding the suit the receiver is known to collect."""
    hand = st[ST_HAND + p]
    T = h_target_suit(st, p, hand)
    cands = hand & ~SUIT_MASK[T]
    if cands == 0:
        cands = hand
    avoid = h_known_suit(st, p, receiver) if receiver != p else -1
    elsewhere = known_elsewhere(st, p)
    best = -1
    best_key = NO_KEY
    m = cands
    while m:
        c = lowest_bit(m)
        m &= m - 1
        u = suit_of(c)
        k = (W_AVOID if u == avoid else 0) + h_suit_key(st, p, hand, u, elsewhere)
        if k < best_key:
            best_key = k
            best = c
    return best


# ---- policies: one decision each --------------------------------------------------------------
@jit(inline='always')
def _pick(mask, keys, ctrs, s):
    """Random policy: uniform card of ``mask`` (ascending card code), one draw when 2+ options."""
    n = popcount(mask)
    if n > 1:
        return select_bit(mask, rng.below(keys, ctrs, s, n))
    return lowest_bit(mask)


@jit(inline='always')
def choose_action(st, s, kinds, allowed, keys, ctrs):
    """(kind, weather card or -1) for a free turn with 2+ offered kinds or a Weather; weather
    cards only from ``allowed`` (restrict_turn)."""
    if rule_based(st[ST_POLICY + s]):
        kind, card = heuristic_plan(st, s, kinds, allowed)
        if popcount(kinds) > 1:
            st[ST_DECISIONS] += 1
        if kind == KIND_WEATHER and popcount(allowed) > 1:
            st[ST_DECISIONS] += 1
        return kind, card
    n = popcount(kinds)
    if n > 1:
        st[ST_DECISIONS] += 1
        kind = select_bit(kinds, rng.below(keys, ctrs, s, n))
    else:
        kind = lowest_bit(kinds)
    card = -1
    if kind == KIND_WEATHER:
        if popcount(allowed) > 1:
            st[ST_DECISIONS] += 1
        card = _pick(allowed, keys, ctrs, s)
    return kind, card


@jit(inline='always')
def choose_discard(st, s, drawn, options, keys, ctrs):
    if popcount(options) > 1:
        st[ST_DECISIONS] += 1
    if rule_based(st[ST_POLICY + s]):
        return h_least_useful(st, s, st[ST_HAND + s] | bit(drawn), options)
    return _pick(options, keys, ctrs, s)


@jit(inline='always')
def choose_target(st, s, effect, keys, ctrs):
    n = n_targets(st, s, effect)
    if n > 1:
        st[ST_DECISIONS] += 1
    if rule_based(st[ST_POLICY + s]):
        return h_target(st, s, effect)
    if n > 1:
        return target_at(st, s, rng.below(keys, ctrs, s, n))
    return target_at(st, s, 0)


@jit(inline='always')
def choose_wind_card(st, p, receiver, keys, ctrs):
    hand = st[ST_HAND + p]
    if popcount(hand) > 1:
        st[ST_DECISIONS] += 1
    if rule_based(st[ST_POLICY + p]):
        return heuristic_wind_card(st, p, receiver)
    return _pick(hand, keys, ctrs, p)


# ---- one turn ---------------------------------------------------------------------------------
@jit(inline='always')
def _count(st, i):
    st[ST_CTR + i] += 1


@jit(inline='always')
def _note(st, code, v1, v2, v3, v4):
    """What the last turn did, for the trace (record_turn): an event code and its values."""
    st[ST_EV] = code
    st[ST_EV + 1] = v1
    st[ST_EV + 2] = v2
    st[ST_EV + 3] = v3
    st[ST_EV + 4] = v4


@jit(inline='always')
def turn_start(st, s):
    """The checks before a free turn (RULINGS order): a Thunder mark costs the turn, a weather
    card last turn forces a draw-and-keep, nothing offered passes. Counts the turn. Returns the
    offered kinds (a mask) when seat s has a free turn, else -1 (the turn is over)."""
    st[ST_TURN] += 1
    st[ST_TURNS + s] += 1
    # 1. a Thunder mark: the turn is lost (it still counts)
    if st[ST_SKIP + s]:
        apply_skip_turn(st, s)
        _count(st, C_SKIPS)
        _note(st, E_SKIP, 0, 0, 0, 0)
        return -1
    # 2. a Weather card last turn: draw one and keep it, nothing else
    if st[ST_OWE + s]:
        cloud = st[ST_CLOUD + s]
        c = apply_forced_draw(st, s)
        if c >= 0:
            _count(st, C_WEATHER_DRAWS)
            if cloud:
                _count(st, C_FORCED_KEEPS)
            _note(st, E_FORCED_DRAW, c, cloud, 0, 0)
        else:
            _count(st, C_PASSES)
            _note(st, E_PASS, PASS_NO_DRAW, 0, 0, 0)
        return -1
    # 3. a free turn
    kinds = legal_turn(st, s)
    if kinds == 0:
        _count(st, C_PASSES)
        _note(st, E_PASS, PASS_NO_ACTION, 0, 0, 0)
        return -1
    return kinds


@jit(inline='always')
def do_reveal(st, s):
    _note(st, E_REVEAL, st[ST_HAND + s], 0, 0, 0)
    apply_reveal(st, s)


@jit(inline='always')
def finish_draw(st, s, drawn, d, cloud):
    """Draw-and-Discard after the choice: keep ``drawn``, discard ``d`` (``cloud``: the seat's
    Cloud mark before the draw)."""
    apply_draw_discard(st, s, drawn, d)
    _count(st, C_DRAW_DISCARDS)
    if cloud:
        _count(st, C_FORCED_KEEPS)
    _note(st, E_DRAW_DISCARD, drawn, d, cloud, 0)


@jit(inline='always')
def play_weather(st, s, card):
    """The weather card goes face up out of the game (its effect follows)."""
    apply_weather_card(st, s, card)
    _count(st, C_WEATHER_BY_SUIT + suit_of(card))


@jit(inline='always')
def resolve_wind(st, card, keys, ctrs, preset):
    """Every passer chooses a card, then all pass at once. Seats in the bit mask ``preset`` have
    their card already in st[ST_PASS + p]; the others choose now (seat order 0..P-1)."""
    P = st[ST_PLAYERS]
    who = wind_passers(st)
    for p in range(P):
        if (preset >> p) & 1:
            continue
        st[ST_PASS + p] = -1
        if (who >> p) & 1:
            st[ST_PASS + p] = choose_wind_card(st, p, wind_receiver(st, p), keys, ctrs)
    apply_wind(st)
    _note(st, E_WEATHER, card, WIND, -1, 0)


@jit(inline='always')
def resolve_target(st, s, card, t):
    """Sun, Thunder or Cloud of ``card`` on seat t."""
    effect = suit_of(card)
    marked = 0
    if effect == SUN:
        apply_sun(st, s, t)
    elif effect == THUNDER:
        marked = apply_thunder(st, t)
    else:
        marked = apply_cloud(st, t)
    _note(st, E_WEATHER, card, effect, t, marked)


@jit(inline='always')
def take_turn(st, s, keys, ctrs):
    """Seat s takes one turn (the checks in the order RULINGS gives), every choice by the seat
    policies random / heuristic. Only ``st`` and the seat streams are touched, so a search
    player runs it on a copy of the state (its rollouts)."""
    kinds = turn_start(st, s)
    if kinds < 0:
        return
    if (kinds & K_REVEAL) and st[ST_RULES + R_TAKE_WIN]:
        kind = KIND_REVEAL      # always taken; counted as the seat's one decision this turn
        card = -1
        st[ST_DECISIONS] += 1
    else:
        left, allowed = restrict_turn(st, s, kinds)
        kind, card = choose_action(st, s, left, allowed, keys, ctrs)
        note_watched(st, s, kind, card)
    if kind == KIND_REVEAL:
        do_reveal(st, s)
        return
    if kind == KIND_DRAW:
        cloud = st[ST_CLOUD + s]
        drawn = pile_draw(st)
        options = legal_discards(st, s, drawn)
        d = choose_discard(st, s, drawn, options, keys, ctrs)
        finish_draw(st, s, drawn, d, cloud)
        return
    play_weather(st, s, card)
    if suit_of(card) == WIND:
        resolve_wind(st, card, keys, ctrs, 0)
        return
    t = choose_target(st, s, suit_of(card), keys, ctrs)
    resolve_target(st, s, card, t)


@jit
def record_turn(st, s, ev, ev_n):
    """Trace the turn seat s just took (from _note), with a Wind's passes or a Sun's view."""
    turn = st[ST_TURN]
    code = st[ST_EV]
    record_event(ev, ev_n, code, s, turn, st[ST_EV + 1], st[ST_EV + 2], st[ST_EV + 3], st[ST_EV + 4])
    if code == E_WEATHER and st[ST_EV + 2] == WIND:
        for p in range(st[ST_PLAYERS]):
            if st[ST_PASS + p] >= 0:
                record_event(ev, ev_n, E_WIND_PASS, p, turn, st[ST_PASS + p], st[ST_PASS_TO + p])
    elif code == E_WEATHER and st[ST_EV + 2] == SUN:
        t = st[ST_EV + 3]
        record_event(ev, ev_n, E_SUN_VIEW, s, turn, t, st[ST_HAND + t])


@jit
def all_hands_empty(st):
    for p in range(st[ST_PLAYERS]):
        if st[ST_HAND + p]:
            return False
    return True


@jit
def game_over(st):
    """After a turn: a reveal wins; an empty pile with empty hands is a stalemate; the cap."""
    if st[ST_WINNER] >= 0:
        return True
    if st[ST_PILE_N] == 0 and all_hands_empty(st):
        st[ST_END] = END_STALEMATE
        return True
    if st[ST_TURN] >= st[ST_RULES + R_TURN_CAP]:
        st[ST_END] = END_TIMEOUT
        return True
    return False


# ---- search player (mc) -------------------------------------------------------------------
# What an mc seat may use: its own hand; every card that went face up (the weather pile); the
# hands its own Sun looks showed it; the card it passed and the card it received in each Wind;
# where its own face-down discards lie in the draw pile (it put them there); the marks, owed
# draws and turn counts of every seat; who looked at whom with Sun and when; hand sizes; the
# draw pile size. It may not use: other hands beyond what it saw (and what it saw may since have
# been discarded or passed on), the draw pile order, other seats' face-down discards, what other
# seats saw. The game keeps, per seat o and location L (a hand or the draw pile), POSS: the
# cards o cannot rule out being at L (see track_turn); a sample re-deals every card o cannot
# place for sure within those bounds (see _determinize).
MC_HORIZON = 150        # a rollout stops this many turns after the decision (scores 0: no win)
MC_Z = 3                # another option overrules the favourite only when its paired advantage
                        # over it is at least this many standard errors (see _mc_search)
FULL_DECK = (np.int64(1) << N_CARDS) - 1
MAX_OPTIONS = 2 + HAND_SIZE * MAX_PLAYERS   # Reveal, Draw, weather card x target
D_PLAN, D_DISCARD, D_WIND = 0, 1, 2        # the decisions mc searches


@jit
def init_tracking(st):
    """After the deal: each seat knows its own hand; every other card may be anywhere else."""
    P = st[ST_PLAYERS]
    for o in range(P):
        b = ST_POSS + o * N_LOC
        unseen = FULL_DECK & ~st[ST_HAND + o]
        for L in range(MAX_PLAYERS):
            st[b + L] = unseen if (L < P and L != o) else 0
        st[b + LOC_PILE] = unseen
        st[ST_KSLOT + o] = 0


@jit
def track_turn(st, s, top0, n0):
    """Update every seat's POSS after seat s's turn (recorded by _note), from what each seat
    observed. ``top0``, ``n0``: the draw pile's top slot and size before the turn. The masks only
    grow when a card may have moved unseen, so the truth always lies within them:
    a draw by s from the pile adds the pile's candidates to s's hand (only the card itself when
    the observer put it there); a face-down discard by s adds s's candidates to the pile; a Wind
    adds each passer's candidates to its receiver's; a Sun look pins the target's hand. Cards
    an observer holds or sees on the weather pile leave its masks."""
    P = st[ST_PLAYERS]
    code = st[ST_EV]
    for o in range(P):
        b = ST_POSS + o * N_LOC
        if code == E_FORCED_DRAW or code == E_DRAW_DISCARD:
            c = st[ST_EV + 1]
            top_bit = np.int64(1) << top0
            if o != s:
                if st[ST_KSLOT + o] & top_bit:
                    st[b + s] |= bit(c)          # o's own discard came up: o knows s has it
                else:
                    st[b + s] |= st[b + LOC_PILE]
            st[ST_KSLOT + o] &= ~top_bit
            if code == E_DRAW_DISCARD:
                if o != s:
                    st[b + LOC_PILE] |= st[b + s]
                else:
                    d = st[ST_EV + 2]
                    slot = top0 + n0
                    if slot >= N_CARDS:
                        slot -= N_CARDS
                    for L in range(N_LOC):
                        st[b + L] &= ~bit(d)
                    st[ST_KSLOT + o] |= np.int64(1) << slot
        elif code == E_WEATHER:
            effect = st[ST_EV + 2]
            if effect == SUN and o == s:
                t = st[ST_EV + 3]
                h = st[ST_HAND + t]
                for L in range(N_LOC):
                    st[b + L] &= ~h
                st[b + t] = h
            elif effect == WIND:
                o0, o1, o2, o3 = st[b], st[b + 1], st[b + 2], st[b + 3]
                for p in range(P):
                    # who passes is public (every seat holding cards); the card only to o
                    if p != o and st[ST_PASS + p] >= 0:
                        r = st[ST_PASS_TO + p]
                        if r != p:
                            st[b + r] |= o0 if p == 0 else (o1 if p == 1 else (o2 if p == 2 else o3))
                if st[ST_PASS + o] >= 0:
                    r = st[ST_PASS_TO + o]
                    c = st[ST_PASS + o]
                    for L in range(N_LOC):
                        st[b + L] &= ~bit(c)
                    if r != o:
                        st[b + r] |= bit(c)
        keep = ~(st[ST_HAND + o] | st[ST_GONE])
        for L in range(N_LOC):
            st[b + L] &= keep


@jit
def _augment(i, poss, loc, cap, m, parent, via, queue):
    """Place card i, whose possible locations are all full, by moving placed cards along a
    shortest chain of locations to one with room (an augmenting path; one exists whenever the
    constraints can all be met, which they can: the real deal meets them)."""
    seen = 0
    head = 0
    tail = 0
    for L in range(N_LOC):
        if (poss[i] >> L) & 1:
            seen |= 1 << L
            parent[L] = -1
            queue[tail] = L
            tail += 1
    end = -1
    while head < tail:
        L = queue[head]
        head += 1
        if cap[L] > 0:
            end = L
            break
        for k in range(m):
            if loc[k] == L:
                for L2 in range(N_LOC):
                    if (poss[k] >> L2) & 1 and not (seen >> L2) & 1:
                        seen |= 1 << L2
                        parent[L2] = L
                        via[L2] = k
                        queue[tail] = L2
                        tail += 1
    if end < 0:             # unreachable with sound tracking; keep the card count right anyway
        for L in range(N_LOC):
            if cap[L] > 0:
                loc[i] = L
                cap[L] -= 1
                return
        return
    cap[end] -= 1
    L = end
    while parent[L] >= 0:
        loc[via[L]] = L
        L = parent[L]
    loc[i] = L


@jit_borrowing   # allocates nothing; its caller (a search) owns every array
def _determinize(st, me, extra, rpol, dst, cards, poss, loc, pilec, cap, work, keys, ctrs, slot):
    """dst = st with everything seat ``me`` cannot see re-dealt, from stream ``slot``.

    Kept: me's hand, ``extra`` (a card me holds mid-turn: the one it just drew), the weather
    pile, me's own discards at their slots in the draw pile, everything public. Re-dealt: every
    other card goes to another hand (at its size) or to a free draw-pile slot, only where me's
    POSS allows it: cards in turn, shuffled, each to one of its allowed locations with
    probability in proportion to the room left there (a card with one allowed location first);
    the pile cards are then shuffled into the free slots. Other seats' heuristic memory is
    rebuilt from the sample (a seat that has looked at another with Sun - public - knows its
    sampled hand, else nothing), and every seat plays ``rpol``."""
    P = st[ST_PLAYERS]
    for i in range(STATE_SIZE):
        dst[i] = st[i]
    b = ST_POSS + me * N_LOC
    top = st[ST_PILE_TOP]
    n = st[ST_PILE_N]
    kslot = st[ST_KSLOT + me]
    known = np.int64(0)
    for i in range(n):
        j = top + i
        if j >= N_CARDS:
            j -= N_CARDS
        if (kslot >> j) & 1:
            known |= bit(st[ST_PILE + j])
    hidden = FULL_DECK & ~st[ST_HAND + me] & ~extra & ~st[ST_GONE] & ~known
    everywhere = 1 << LOC_PILE
    for L in range(N_LOC):
        cap[L] = 0
    for L in range(P):
        if L != me:
            cap[L] = popcount(st[ST_HAND + L])
            everywhere |= 1 << L
    cap[LOC_PILE] = n - popcount(known)
    m = 0
    h = hidden
    while h:
        cards[m] = lowest_bit(h)
        h &= h - 1
        m += 1
    rng.shuffle(cards, m, keys, ctrs, slot)
    for i in range(m):
        c = cards[i]
        pm = 0
        for L in range(N_LOC):
            if (st[b + L] >> c) & 1:
                pm |= 1 << L
        poss[i] = pm & everywhere if pm & everywhere else everywhere
        loc[i] = -1
    for i in range(m):                      # cards with one allowed location
        if popcount(poss[i]) == 1:
            L = lowest_bit(poss[i])
            if cap[L] > 0:
                loc[i] = L
                cap[L] -= 1
    for i in range(m):
        if loc[i] >= 0:
            continue
        room = 0
        for L in range(N_LOC):
            if (poss[i] >> L) & 1:
                room += cap[L]
        if room == 0:
            _augment(i, poss, loc, cap, m, work[0], work[1], work[2])
            continue
        r = rng.below(keys, ctrs, slot, room)
        for L in range(N_LOC):
            if (poss[i] >> L) & 1:
                if r < cap[L]:
                    loc[i] = L
                    cap[L] -= 1
                    break
                r -= cap[L]
    for L in range(P):
        if L != me:
            dst[ST_HAND + L] = 0
    npile = 0
    for i in range(m):
        if loc[i] == LOC_PILE:
            pilec[npile] = cards[i]
            npile += 1
        else:
            dst[ST_HAND + loc[i]] |= bit(cards[i])
    rng.shuffle(pilec, npile, keys, ctrs, slot)
    k = 0
    for i in range(n):
        j = top + i
        if j >= N_CARDS:
            j -= N_CARDS
        if not (kslot >> j) & 1:
            dst[ST_PILE + j] = pilec[k]
            k += 1
    for t in range(MAX_PLAYERS):
        for u in range(MAX_PLAYERS):
            if t != me:
                seen = t < P and u < P and u != t and st[ST_SEEN + t * MAX_PLAYERS + u] >= 0
                dst[ST_KNOW + t * MAX_PLAYERS + u] = dst[ST_HAND + u] if seen else 0
    for p in range(MAX_PLAYERS):
        dst[ST_POLICY + p] = rpol
        if p != me:     # every seat of the sample plays me's knob row (its rollout policy's)
            for k in range(MAX_KNOBS):
                dst[ST_KNOB + p * MAX_KNOBS + k] = st[ST_KNOB + me * MAX_KNOBS + k]
        if p != me:     # me's rollouts obey its restriction; another seat's is not known to me
            dst[ST_FORBID + p] = 0
        dst[ST_WATCH + p] = 0
        dst[ST_PASS + p] = -1
        dst[ST_PASS_TO + p] = -1
        dst[ST_KSLOT + p] = 0
    for i in range(MAX_PLAYERS * N_LOC):
        dst[ST_POSS + i] = 0
    for i in range(5):
        dst[ST_EV + i] = 0


@jit(inline='always')
def _plan_code(kind, card, target):
    """A free-turn option as one integer: kind, weather card (-1 none), target (-1 none)."""
    return kind + 4 * (card + 1) + 256 * (target + 1)


@jit_borrowing   # allocates nothing; its caller (a search) owns every array
def _play_option(st, me, dkind, opt, aux, aux2, keys, ctrs):
    """Apply option ``opt`` of decision ``dkind`` of seat ``me`` to ``st`` (a sample), the rest of
    the turn by the seats' policies; returns the seat whose turn is next.
    D_PLAN: a free turn's plan; D_DISCARD: the discard after drawing ``aux``; D_WIND: me's pass in
    the Wind (card ``aux2``) that seat ``aux`` played."""
    P = st[ST_PLAYERS]
    if dkind == D_PLAN:
        kind = opt & 3
        card = ((opt >> 2) & 63) - 1
        t = (opt >> 8) - 1
        if kind == KIND_REVEAL:
            do_reveal(st, me)
        elif kind == KIND_DRAW:
            cloud = st[ST_CLOUD + me]
            drawn = pile_draw(st)
            d = choose_discard(st, me, drawn, legal_discards(st, me, drawn), keys, ctrs)
            finish_draw(st, me, drawn, d, cloud)
        else:
            play_weather(st, me, card)
            if card // N_RANKS == WIND:
                resolve_wind(st, card, keys, ctrs, 0)
            else:
                resolve_target(st, me, card, t)
        return (me + 1) % P
    if dkind == D_DISCARD:
        finish_draw(st, me, aux, opt, st[ST_CLOUD + me])
        return (me + 1) % P
    st[ST_PASS + me] = opt
    resolve_wind(st, aux2, keys, ctrs, 1 << me)
    return (aux + 1) % P


@jit_borrowing   # allocates nothing; its caller (a search) owns every array
def _rollout(st, s, horizon, keys, ctrs):
    """Play on from seat s with the seats' policies until the game ends or turn ``horizon``;
    returns the turns played."""
    P = st[ST_PLAYERS]
    plays = 0
    while not game_over(st) and st[ST_TURN] < horizon:
        take_turn(st, s, keys, ctrs)
        plays += 1
        s += 1
        if s == P:
            s = 0
    return plays


@jit_borrowing   # allocates nothing; _mc_search owns every array
def _mc_samples(st, me, dkind, opts, n_opt, aux, aux2, extra, keys, ctrs, slot, budget, rpol, total,
                ndiff, det, sim, cards, poss, loc, pilec, cap, work, rkeys, rctrs, horizon):
    """``_mc_search``'s ``budget`` samples: each option's wins into ``total``, the samples where
    it and the favourite differ into ``ndiff``; returns the turns simulated. Its own function,
    compiled without reference counting (as forecasts-cubes' _mc_samples)."""
    P = st[ST_PLAYERS]
    plays = 0
    w0 = 0
    for _ in range(budget):
        _determinize(st, me, extra, rpol, det, cards, poss, loc, pilec, cap, work, keys, ctrs, slot)
        # the rollouts' random choices (rollout = random): per-seat streams keyed by one draw
        base = rng.bits(keys[slot], ctrs[slot])
        ctrs[slot] += 1
        for p in range(P):
            rkeys[p] = rng.bits(base, p)
        for i in range(n_opt):
            for j in range(STATE_SIZE):
                sim[j] = det[j]
            for p in range(P):
                rctrs[p] = 0
            nxt = _play_option(sim, me, dkind, opts[i], aux, aux2, rkeys, rctrs)
            plays += _rollout(sim, nxt, horizon, rkeys, rctrs)
            win = 1 if sim[ST_WINNER] == me else 0
            total[i] += win
            if i == 0:
                w0 = win
            elif win != w0:
                ndiff[i] += 1
    return plays


@jit(_nrt=True)    # allocates its working arrays: called from play_one_in, compiled without counting
def _mc_search(st, me, dkind, opts, n_opt, aux, aux2, extra, keys, ctrs, slot):
    """Index of the chosen one of ``opts[:n_opt]`` for seat ``me``; ``opts[0]`` is the favourite.
    Each of the seat's budget of samples re-deals what me cannot see once and plays every option
    forward from it (common random numbers: also the same rollout streams for every option).
    Another option is chosen only when it beat the favourite significantly: with d = its wins
    minus the favourite's and n = the samples where the two results differ (a sign test on the
    paired results), d > 0 and d * d > MC_Z**2 * n; among those, the most wins (ties: the earlier
    option). Otherwise the favourite. Draws only on stream ``slot`` (me's SEARCH stream)."""
    P = st[ST_PLAYERS]
    budget = st[ST_MCARG + 2 * me]
    rpol = st[ST_MCARG + 2 * me + 1]
    total = np.zeros(n_opt, dtype=np.int64)
    ndiff = np.zeros(n_opt, dtype=np.int64)     # samples where option i and the favourite differ
    det = np.empty(STATE_SIZE, dtype=np.int64)
    sim = np.empty(STATE_SIZE, dtype=np.int64)
    cards = np.empty(N_CARDS, dtype=np.int64)
    poss = np.empty(N_CARDS, dtype=np.int64)
    loc = np.empty(N_CARDS, dtype=np.int64)
    pilec = np.empty(N_CARDS, dtype=np.int64)
    cap = np.empty(N_LOC, dtype=np.int64)
    work = np.empty((3, N_LOC), dtype=np.int64)
    rkeys = np.empty(MAX_PLAYERS, dtype=np.uint64)
    rctrs = np.zeros(MAX_PLAYERS, dtype=np.int64)
    horizon = st[ST_TURN] + MC_HORIZON
    plays = _mc_samples(st, me, dkind, opts, n_opt, aux, aux2, extra, keys, ctrs, slot, budget, rpol,
                        total, ndiff, det, sim, cards, poss, loc, pilec, cap, work, rkeys, rctrs,
                        horizon)
    st[ST_CTR + C_MC_ROLLOUTS] += budget * n_opt
    st[ST_CTR + C_MC_PLAYS] += plays
    best = 0
    for i in range(1, n_opt):
        d = total[i] - total[0]
        if d > 0 and d * d > MC_Z * MC_Z * ndiff[i] and total[i] > total[best]:
            best = i
    return best


@jit(inline='always')
def _to_front(opts, n, code):
    """Move option ``code`` to the front (the tie-break favourite), keeping the others' order."""
    for j in range(n):
        if opts[j] == code:
            for i in range(j, 0, -1):
                opts[i] = opts[i - 1]
            opts[0] = code
            return


@jit(_nrt=True)    # allocates: called from play_one_in, compiled without counting
def mc_plan(st, s, kinds, keys, ctrs, slot, allowed=-1):
    """(kind, weather card or -1, target or -1) for seat s's free turn, by search (weather cards
    only from ``allowed``, a restricted seat's: restrict_turn; -1 = the whole hand).

    A Reveal offered (only reaches here with take_win = false) is taken without search: it wins
    for certain (RULINGS: every policy takes an immediate game-winning action; take_win = false
    lets only the random policy decline it). Otherwise the options: Draw-and-Discard, and each
    hand card as weather with each of its targets (a Wind has none). The favourite (_mc_search)
    is Draw-and-Discard when offered, else the heuristic's own plan; then the heuristic's plan,
    then that order. A weather card costs a turn of tempo, and a seat that draws unless forced
    already beats three heuristics (docs/games/sudden-skies.md), so a weather play must beat
    drawing significantly in the samples. Counts decisions where the other policies do."""
    if kinds & K_REVEAL:
        if popcount(kinds) > 1:
            st[ST_DECISIONS] += 1
        return KIND_REVEAL, -1, -1
    hand = st[ST_HAND + s]
    allowed = hand & allowed
    opts = np.empty(MAX_OPTIONS, dtype=np.int64)
    n = 0
    if kinds & K_DRAW:
        opts[n] = _plan_code(KIND_DRAW, -1, -1)
        n += 1
    if kinds & K_WEATHER:
        h = allowed
        while h:
            c = lowest_bit(h)
            h &= h - 1
            effect = c // N_RANKS
            if effect == WIND:
                opts[n] = _plan_code(KIND_WEATHER, c, -1)
                n += 1
            else:
                for k in range(n_targets(st, s, effect)):
                    opts[n] = _plan_code(KIND_WEATHER, c, target_at(st, s, k))
                    n += 1
    hk, hc = heuristic_plan(st, s, kinds, allowed)
    ht = -1
    if hk == KIND_WEATHER and hc // N_RANKS != WIND:
        ht = h_target(st, s, hc // N_RANKS)
    _to_front(opts, n, _plan_code(hk, hc, ht))
    if kinds & K_DRAW:
        _to_front(opts, n, _plan_code(KIND_DRAW, -1, -1))
    best = opts[0]
    if n > 1:
        best = opts[_mc_search(st, s, D_PLAN, opts, n, 0, 0, np.int64(0), keys, ctrs, slot)]
    kind = best & 3
    card = ((best >> 2) & 63) - 1
    t = (best >> 8) - 1
    if popcount(kinds) > 1:
        st[ST_DECISIONS] += 1
    if kind == KIND_WEATHER:
        if popcount(allowed) > 1:
            st[ST_DECISIONS] += 1
        if card // N_RANKS != WIND and n_targets(st, s, card // N_RANKS) > 1:
            st[ST_DECISIONS] += 1
    return kind, card, t


@jit(_nrt=True)    # allocates: called from play_one_in, compiled without counting
def mc_discard(st, s, drawn, options, keys, ctrs, slot):
    """The card seat s discards after drawing ``drawn`` (2+ options), by search; the
    heuristic's discard first (the favourite), then ascending card code."""
    opts = np.empty(HAND_SIZE + 1, dtype=np.int64)
    n = 0
    m = options
    while m:
        opts[n] = lowest_bit(m)
        m &= m - 1
        n += 1
    _to_front(opts, n, h_least_useful(st, s, st[ST_HAND + s] | bit(drawn), options))
    return opts[_mc_search(st, s, D_DISCARD, opts, n, drawn, 0, bit(drawn), keys, ctrs, slot)]


@jit(_nrt=True)    # allocates: called from play_one_in, compiled without counting
def mc_wind(st, p, s, card, keys, ctrs, slot):
    """The card seat p passes in the Wind (``card``) seat s played (2+ cards held), by search;
    the heuristic's pass first (the favourite), then ascending card code."""
    hand = st[ST_HAND + p]
    opts = np.empty(HAND_SIZE, dtype=np.int64)
    n = 0
    m = hand
    while m:
        opts[n] = lowest_bit(m)
        m &= m - 1
        n += 1
    _to_front(opts, n, heuristic_wind_card(st, p, wind_receiver(st, p)))
    return opts[_mc_search(st, p, D_WIND, opts, n, s, card, np.int64(0), keys, ctrs, slot)]


@jit
def take_turn_search(st, s, keys, ctrs):
    """take_turn in a game with search seats: an mc seat's choices (its plan, its discard, its
    Wind pass, also in another seat's Wind) come from search on stream slot P + 1 + seat, the
    other seats' from their policies exactly as in take_turn."""
    kinds = turn_start(st, s)
    if kinds < 0:
        return
    P = st[ST_PLAYERS]
    mc = st[ST_POLICY + s] == P_MC
    t = -1
    if (kinds & K_REVEAL) and st[ST_RULES + R_TAKE_WIN]:
        kind = KIND_REVEAL
        card = -1
        st[ST_DECISIONS] += 1
    else:
        left, allowed = restrict_turn(st, s, kinds)
        if mc:
            kind, card, t = mc_plan(st, s, left, keys, ctrs, P + 1 + s, allowed)
        else:
            kind, card = choose_action(st, s, left, allowed, keys, ctrs)
        note_watched(st, s, kind, card)
    if kind == KIND_REVEAL:
        do_reveal(st, s)
        return
    if kind == KIND_DRAW:
        cloud = st[ST_CLOUD + s]
        drawn = pile_draw(st)
        options = legal_discards(st, s, drawn)
        if not mc:
            d = choose_discard(st, s, drawn, options, keys, ctrs)
        elif popcount(options) > 1:
            st[ST_DECISIONS] += 1
            d = mc_discard(st, s, drawn, options, keys, ctrs, P + 1 + s)
        else:
            d = lowest_bit(options)
        finish_draw(st, s, drawn, d, cloud)
        return
    play_weather(st, s, card)
    if card // N_RANKS == WIND:
        who = wind_passers(st)
        preset = 0
        for p in range(P):
            if (who >> p) & 1 and st[ST_POLICY + p] == P_MC:
                hp = st[ST_HAND + p]
                if popcount(hp) > 1:
                    st[ST_DECISIONS] += 1
                    st[ST_PASS + p] = mc_wind(st, p, s, card, keys, ctrs, P + 1 + p)
                else:
                    st[ST_PASS + p] = lowest_bit(hp)
                preset |= 1 << p
        resolve_wind(st, card, keys, ctrs, preset)
        return
    if t < 0:
        t = choose_target(st, s, card // N_RANKS, keys, ctrs)
    resolve_target(st, s, card, t)


@jit
def play_from_search(st, s, keys, ctrs, ev, ev_n, ab, stand):
    """play_from for a game with mc seats: every seat's observations are tracked after each turn."""
    P = st[ST_PLAYERS]
    rec = ev.shape[0] > 0
    while True:
        top0 = st[ST_PILE_TOP]
        n0 = st[ST_PILE_N]
        take_turn_search(st, s, keys, ctrs)
        track_turn(st, s, top0, n0)
        if rec:
            record_turn(st, s, ev, ev_n)
        if st[ST_PILE_N] == 0:
            st[ST_CTR + C_PILE_EMPTIED] = 1
        if game_over(st):
            arc_checkpoint(st, ab, stand, ev, ev_n)
            return
        if s == P - 1:
            arc_checkpoint(st, ab, stand, ev, ev_n)
        s = (s + 1) % P


# ---- one game ----------------------------------------------------------------------------------
@jit
def play_one(params, seats, seed, g, out, row, ev, ev_n, search):
    """Play game ``g`` into ``out[row]``; record events into ``ev`` when it has rows.

    ``search`` is None when no seat is ``mc``: Numba then prunes the search player's turn
    (take_turn_search, _mc_search) and its bookkeeping from this build (kernels/builds.py), so
    random and heuristic play compile and run without them.
    """
    keys, ctrs, st, deck, ab, stand = work_arrays(params, seats)
    play_one_in(params, seats, seed, g, out, row, ev, ev_n, search, keys, ctrs, st, deck, ab, stand)


@jit
def work_arrays(params, seats):
    """The working arrays of play_one_in, allocated once per block of games: the stream keys and
    counters (slots 0..P-1 the seats' decisions, P the deal, P+1+s seat s's search), the state,
    the deck, the game arc block and the standings."""
    P = seats.shape[0]
    return (np.empty(2 * P + 1, dtype=np.uint64), np.zeros(2 * P + 1, dtype=np.int64),
            np.empty(STATE_SIZE, dtype=np.int64), np.empty(N_CARDS, dtype=np.int64),
            np.zeros((1, arc.width(P)), dtype=np.int64), np.zeros(P, dtype=np.int64))


@jit_borrowing   # allocates nothing; its caller owns every array (work_arrays)
def play_one_in(params, seats, seed, g, out, row, ev, ev_n, search, keys, ctrs, st, deck, ab, stand):
    """play_one with its working arrays (work_arrays) passed in, reset here for game ``g``: a
    block of games reuses them instead of allocating per game. The stream keys are derived in
    stages (rng.game_key, kind_key, index_key: the same keys as rng.stream_key), the search
    streams only in the search build."""
    P = seats.shape[0]
    rec = ev.shape[0] > 0
    gkey = rng.game_key(seed, g)
    seat_key = rng.kind_key(gkey, rng.SEAT)
    for s in range(P):
        keys[s] = rng.index_key(seat_key, s)
    if search is not None:
        search_key = rng.kind_key(gkey, rng.SEARCH)
        for s in range(P):
            keys[P + 1 + s] = rng.index_key(search_key, s)
    keys[P] = rng.index_key(rng.kind_key(gkey, rng.DEAL), 0)
    for i in range(2 * P + 1):
        ctrs[i] = 0
    init_state(st, params, seats)
    deal(st, deck, keys, ctrs, P)
    if rec:
        for s in range(P):
            record_event(ev, ev_n, E_DEAL, s, st[ST_HAND + s], st[ST_PILE_N])
    for i in range(ab.shape[1]):
        ab[0, i] = 0
    for s in range(P):
        stand[s] = 0
    if search is not None:
        init_tracking(st)
        play_from_search(st, 0, keys, ctrs, ev, ev_n, ab, stand)
    else:
        play_from(st, 0, keys, ctrs, ev, ev_n, ab, stand)
    finish(st, out, row, ev, ev_n)
    arc.copy_block(ab, 0, 0, out, row, layout.col_arc(P, N_COUNTERS), P)


# Game arc (issue #16): a checkpoint after every full turn of the table (after the last seat's
# turn) and at the end. The standing is flush progress, the most cards of one suit in hand (a
# proxy: a hand's suits say how near a flush is, not who will reveal first); a revealed flush
# stands above any hand, so the winner leads at the final checkpoint.
REVEALED_STANDING = N_RANKS + 1


@jit
def arc_checkpoint(st, ab, stand, ev, ev_n):
    """Record one checkpoint of the game arc into the block ``ab[0]`` (standings into ``stand``)."""
    P = st[ST_PLAYERS]
    for p in range(P):
        h = st[ST_HAND + p]
        most = 0
        for suit in range(N_SUITS):
            most = max(most, popcount(h & SUIT_MASK[suit]))
        stand[p] = most
    if st[ST_WINNER] >= 0:
        stand[st[ST_WINNER]] = REVEALED_STANDING
    arc.checkpoint(ab, 0, 0, P, stand, 0, False, ev, ev_n, E_CHECKPOINT)


@jit
def play_from(st, s, keys, ctrs, ev, ev_n, ab=None, stand=None):
    """Turns from seat s clockwise until the game is over (also for hand-built states).

    With ``ab`` (an arc block, see arc_checkpoint) the game arc's checkpoints are recorded.
    """
    P = st[ST_PLAYERS]
    rec = ev.shape[0] > 0
    while True:
        take_turn(st, s, keys, ctrs)
        if rec:
            record_turn(st, s, ev, ev_n)
        if st[ST_PILE_N] == 0:
            st[ST_CTR + C_PILE_EMPTIED] = 1
        if game_over(st):
            if ab is not None:
                arc_checkpoint(st, ab, stand, ev, ev_n)
            return
        if ab is not None and s == P - 1:
            arc_checkpoint(st, ab, stand, ev, ev_n)
        s = (s + 1) % P


@jit(_nrt=True)    # allocates: called from play_one_in, compiled without counting
def finish(st, out, row, ev, ev_n):
    """Score 1 for the winner, 0 otherwise; places 1 / 2 (all 1 when nobody won)."""
    P = st[ST_PLAYERS]
    w = st[ST_WINNER]
    for i in range(out.shape[1]):
        out[row, i] = 0
    if st[ST_END] == END_TIMEOUT:
        _count(st, C_TIMEOUTS)
    elif st[ST_END] == END_STALEMATE:
        _count(st, C_STALEMATES)
    else:
        st[ST_CTR + C_WINNER_TURNS] += st[ST_TURNS + w]
    for s in range(P):
        out[row, s] = 1 if s == w else 0
        out[row, layout.col_place(P, s)] = 2 if (w >= 0 and s != w) else 1
    out[row, col_winners(P)] = (1 << w) if w >= 0 else 0
    out[row, col_length(P)] = st[ST_TURN]
    out[row, col_flags(P)] = layout.FLAG_TIMEOUT if w < 0 else 0
    out[row, col_decisions(P)] = st[ST_DECISIONS]
    for i in range(N_COUNTERS):
        out[row, col_counter(P, i)] = st[ST_CTR + i]
    if ev.shape[0] > 0:
        sc = np.zeros(MAX_PLAYERS, dtype=np.int64)
        for s in range(P):
            sc[s] = out[row, s]
        record_event(ev, ev_n, E_RESULT, w, st[ST_TURN], st[ST_END], sc[0], sc[1], sc[2], sc[3])


# ---- bulk play and trace ----------------------------------------------------------------------
# Two builds of play_one (``search`` None: no mc seat), chosen in Python by the entry points so a
# run compiles only the build it uses (kernels/builds.py).


@jit(inline='always')
def _play_range(params, seats, seed, first_game, out, lo, hi, ev, ev_n, search):
    """Play games ``first_game + i`` into rows ``i`` in [lo, hi) with one set of working arrays."""
    keys, ctrs, st, deck, ab, stand = work_arrays(params, seats)
    for i in range(lo, hi):
        play_one_in(params, seats, seed, first_game + i, out, np.uint64(i), ev, ev_n, search,
                    keys, ctrs, st, deck, ab, stand)


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
    play_one(params, seats, seed, game_index, out, np.uint64(0), ev, ev_n, search)


play_games, play_games_serial, trace_game = builds.entry_points(
    _play_games, _play_games_serial, _trace_game, P_MC)


def derived_metrics(sums: dict, games: int, players: int, params) -> dict:
    """Per-variant metrics from the integer counter sums."""
    g = max(games, 1)
    wins = games - sums["timeouts"] - sums["stalemates"]
    weather = sum(sums[f"weather_{u}"] for u in ("spades", "hearts", "diamonds", "clubs"))
    m = {
        "win_rate": wins / g,
        "timeout_rate": sums["timeouts"] / g,
        "stalemate_rate": sums["stalemates"] / g,
        "winner_turns_mean": sums["winner_turns"] / wins if wins else float("nan"),
        "weather_per_game": weather / g,
        "skips_per_game": sums["skips"] / g,
        "forced_keeps_per_game": sums["forced_keeps"] / g,
        "weather_draws_per_game": sums["weather_draws"] / g,
        "draw_discards_per_game": sums["draw_discards"] / g,
        "passes_per_game": sums["passes"] / g,
        "pile_emptied_rate": sums["pile_emptied"] / g,
    }
    for u, name in (("spades", "thunder"), ("hearts", "sun"), ("diamonds", "wind"), ("clubs", "cloud")):
        m[f"{name}_per_game"] = sums[f"weather_{u}"] / g
        m[f"{name}_share"] = sums[f"weather_{u}"] / weather if weather else float("nan")
    return m
