"""sudden-skies in plain, slow Python: the rulebook, RULINGS.md and the documented draw protocol.

Written from docs/games/sudden-skies.md (rules, draw protocol, heuristic), not from the kernel;
the tests compare the two game by game. Cards are ints suit * 13 + rank (suits S H D C);
hands are Python sets; the draw pile is a deque (left = top).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from tests.reference.prng import DEAL, SEAT, Stream

SPADES, HEARTS, DIAMONDS, CLUBS = 0, 1, 2, 3
THUNDER, SUN, WIND, CLOUD = SPADES, HEARTS, DIAMONDS, CLUBS
REVEAL, DRAW, WEATHER = "reveal", "draw", "weather"

COUNTER_NAMES = ("winner_turns", "weather_spades", "weather_hearts", "weather_diamonds",
                 "weather_clubs", "skips", "forced_keeps", "weather_draws", "timeouts",
                 "stalemates", "passes", "draw_discards", "pile_emptied",
                 "mc_rollouts", "mc_rollout_plays",   # the search counters: 0 without mc seats
                 "restriction_forbidden", "restriction_yielded")  # 0: the reference plays unrestricted


def suit(c: int) -> int:
    return c // 13


@dataclass
class Rules:
    turn_cap: int = 400
    cloud_self: bool = False
    take_win: bool = True
    wind_empty: str = "receive"     # or "skip"


@dataclass
class Player:
    hand: set = field(default_factory=set)
    skip: bool = False              # Thunder mark
    cloud: bool = False             # Cloud mark
    owes_draw: bool = False         # played Weather last turn
    turns: int = 0
    # heuristic memory: what this player knows others hold, and when it last looked (Sun)
    knows: dict = field(default_factory=dict)
    looked: dict = field(default_factory=dict)


class Game:
    def __init__(self, players: int, policies, seed: int, game: int, rules: Rules | None = None):
        self.n = players
        self.rules = rules or Rules()
        self.policies = list(policies)
        self.streams = [Stream(seed, game, SEAT, s) for s in range(players)]
        self.p = [Player() for _ in range(players)]
        for me in self.p:
            me.knows = {t: set() for t in range(players)}
            me.looked = {t: None for t in range(players)}
        deck = list(range(52))
        Stream(seed, game, DEAL, 0).shuffle(deck)
        for i in range(5 * players):            # one card at a time, seat 0 first
            self.p[i % players].hand.add(deck[i])
        self.pile = deque(deck[5 * players:])   # deck[5P] on top
        self.weather_pile: list[int] = []
        self.turn = 0
        self.winner = None
        self.end = None
        self.decisions = 0
        self.counters = dict.fromkeys(COUNTER_NAMES, 0)
        self.log: list = []
        # how often rare situations came up (tests check the comparison covers them)
        self.seen = {"wind_with_empty_hand": 0, "cloud_on_self": 0, "reveal_declined": 0,
                     "forced_draw_on_empty_pile": 0, "second_mark": 0,
                     "h_thunder": 0, "h_cloud": 0, "h_sun": 0, "h_wind": 0}

    # ---- random policy: one draw per decision with 2+ options ----
    def decide(self, seat: int, options: list):
        if len(options) > 1:
            self.decisions += 1
            return options[self.streams[seat].below(len(options))]
        return options[0]

    def others_from_left(self, s: int) -> list[int]:
        return [(s + i) % self.n for i in range(1, self.n)]

    # ---- the game ----
    def play(self):
        s = 0
        while True:
            self.take_turn(s)
            if not self.pile:
                self.counters["pile_emptied"] = 1
            if self.winner is not None:
                self.end = "win"
                break
            if not self.pile and all(not pl.hand for pl in self.p):
                self.end = "stalemate"
                break
            if self.turn >= self.rules.turn_cap:
                self.end = "timeout"
                break
            s = (s + 1) % self.n
        return self

    def take_turn(self, s: int):
        me = self.p[s]
        self.turn += 1
        me.turns += 1
        if me.skip:                          # Thunder: the turn is lost
            me.skip = False
            self.counters["skips"] += 1
            self.log.append(("skip", s))
            return
        if me.owes_draw:                     # after Weather: draw one and keep it
            me.owes_draw = False
            if self.pile:
                c = self.pile.popleft()
                self.take_into_hand(s, c)
                self.counters["weather_draws"] += 1
                if me.cloud:
                    self.counters["forced_keeps"] += 1
                me.cloud = False
                self.log.append(("forced_draw", s, c))
            else:
                self.counters["passes"] += 1
                self.seen["forced_draw_on_empty_pile"] += 1
                self.log.append(("pass", s))
            return
        offered = []
        flush = len(me.hand) == 5 and len({suit(c) for c in me.hand}) == 1
        if flush:
            offered.append(REVEAL)
        if self.pile:
            offered.append(DRAW)
        if me.hand:
            offered.append(WEATHER)
        if not offered:
            self.counters["passes"] += 1
            self.log.append(("pass", s))
            return
        if flush and self.rules.take_win:     # always taken, still counted as a decision
            self.decisions += 1
            self.winner = s
            self.log.append(("reveal", s))
            return
        heuristic = self.policies[s] == "heuristic"
        if heuristic:
            kind, card = heuristic_plan(self, s, offered)
            if len(offered) > 1:
                self.decisions += 1
            if kind == WEATHER and len(me.hand) > 1:
                self.decisions += 1
        else:
            kind = self.decide(s, offered)       # offered in the order Reveal, Draw, Weather
            card = self.decide(s, sorted(me.hand)) if kind == WEATHER else None
        if flush and kind != REVEAL:
            self.seen["reveal_declined"] += 1
        if kind == REVEAL:
            self.winner = s
            self.log.append(("reveal", s))
        elif kind == DRAW:
            self.draw_and_discard(s, heuristic)
        else:
            self.weather(s, card, heuristic)

    def take_into_hand(self, s: int, c: int):
        self.p[s].hand.add(c)
        for t in range(self.n):
            self.p[s].knows[t].discard(c)

    def draw_and_discard(self, s: int, heuristic: bool):
        me = self.p[s]
        drawn = self.pile.popleft()
        earlier = set(me.hand)
        options = sorted(earlier) if me.cloud else sorted(earlier | {drawn})
        if heuristic:
            if len(options) > 1:
                self.decisions += 1
            discard = least_useful(self, s, earlier | {drawn}, options)
        else:
            discard = self.decide(s, options)
        self.take_into_hand(s, drawn)
        me.hand.discard(discard)
        self.pile.append(discard)                # face down under the pile
        self.counters["draw_discards"] += 1
        if me.cloud:
            self.counters["forced_keeps"] += 1
        me.cloud = False
        self.log.append(("draw_discard", s, drawn, discard))

    def weather(self, s: int, card: int, heuristic: bool):
        me = self.p[s]
        me.hand.discard(card)
        self.weather_pile.append(card)
        me.owes_draw = True
        for pl in self.p:                        # a face-up card is public
            for t in range(self.n):
                pl.knows[t].discard(card)
        effect = suit(card)
        self.counters[("weather_spades", "weather_hearts", "weather_diamonds", "weather_clubs")[effect]] += 1
        if effect == WIND:
            self.wind(heuristic)
            self.log.append(("wind", s, card))
            return
        targets = self.others_from_left(s)
        if effect == CLOUD and self.rules.cloud_self:
            targets.append(s)
        if self.policies[s] == "heuristic":
            if len(targets) > 1:
                self.decisions += 1
            t = heuristic_target(self, s, effect)
        else:
            t = self.decide(s, targets)
        if effect == SUN:
            me.knows[t] = set(self.p[t].hand)
            me.looked[t] = self.turn
        elif effect == THUNDER:
            self.seen["second_mark"] += self.p[t].skip
            self.p[t].skip = True
        else:
            self.seen["second_mark"] += self.p[t].cloud
            self.seen["cloud_on_self"] += t == s
            self.p[t].cloud = True
        self.log.append(("weather", s, card, t))

    def receiver(self, p: int) -> int:
        if self.rules.wind_empty == "skip":
            for i in range(1, self.n):
                q = (p + i) % self.n
                if self.p[q].hand:
                    return q
            return p
        return (p + 1) % self.n

    def wind(self, _heuristic_actor: bool):
        holders = [p for p in range(self.n) if self.p[p].hand]
        self.seen["wind_with_empty_hand"] += len(holders) < self.n
        if self.rules.wind_empty == "skip" and len(holders) < 2:
            return
        chosen = {}
        for p in holders:                         # each on its own stream, seat order
            r = self.receiver(p)
            if self.policies[p] == "heuristic":
                if len(self.p[p].hand) > 1:
                    self.decisions += 1
                chosen[p] = heuristic_wind_card(self, p, r)
            else:
                chosen[p] = self.decide(p, sorted(self.p[p].hand))
        moves = [(p, self.receiver(p), c) for p, c in chosen.items()]
        for p, _, c in moves:
            self.p[p].hand.discard(c)
        for p, r, c in moves:
            self.take_into_hand(r, c)
            if r != p:
                self.p[p].knows[r].add(c)

    # ---- the kernel's result row ----
    def result_row(self) -> list[int]:
        n = self.n
        c = dict(self.counters)
        if self.end == "timeout":
            c["timeouts"] += 1
        elif self.end == "stalemate":
            c["stalemates"] += 1
        else:
            c["winner_turns"] += self.p[self.winner].turns
        scores = [1 if s == self.winner else 0 for s in range(n)]
        places = [2 if (self.winner is not None and s != self.winner) else 1 for s in range(n)]
        winners = 0 if self.winner is None else 1 << self.winner
        flags = 1 if self.winner is None else 0
        return scores + places + [winners, self.turn, flags, self.decisions] + [c[k] for k in COUNTER_NAMES]

    def card_count(self) -> int:
        return sum(len(pl.hand) for pl in self.p) + len(self.pile) + len(self.weather_pile)


# ---- the heuristic, restated from docs/games/sudden-skies.md ----
def known_elsewhere(g: Game, me: int) -> set:
    out = set()
    for t in range(g.n):
        if t != me:
            out |= g.p[me].knows[t]
    return out


def suit_want(g: Game, me: int, cards, u: int) -> tuple:
    """(live, held, available): compared as a tuple, larger = wanted more."""
    gone = sum(1 for c in g.weather_pile if suit(c) == u)
    live = 13 - gone
    held = sum(1 for c in cards if suit(c) == u)
    elsewhere = sum(1 for c in known_elsewhere(g, me) if suit(c) == u and c not in cards)
    return (live >= 5, held, live - elsewhere)


def target_suit(g: Game, me: int, cards) -> int:
    best = 0
    for u in range(1, 4):
        if suit_want(g, me, cards, u) > suit_want(g, me, cards, best):
            best = u
    return best


def least_useful(g: Game, me: int, cards, options) -> int:
    return min(sorted(options), key=lambda c: suit_want(g, me, cards, suit(c)))


def level(g: Game, me: int, t: int) -> int:
    k = g.p[me].knows[t]
    return max(sum(1 for c in k if suit(c) == u) for u in range(4))


def mark_target(g: Game, me: int, effect: int) -> int:
    def marked(t):
        return g.p[t].skip if effect == THUNDER else g.p[t].cloud
    best = None
    for t in g.others_from_left(me):
        key = (not marked(t), level(g, me, t))
        if best is None or key > best[0]:
            best = (key, t)
    return best[1]


def age(g: Game, me: int, t: int) -> int:
    seen = g.p[me].looked[t]
    return 1 << 39 if seen is None else g.turn - seen


def sun_target(g: Game, me: int) -> int:
    stale = 2 * g.n
    best = None
    for t in g.others_from_left(me):
        key = (age(g, me, t) > stale, level(g, me, t), age(g, me, t))
        if best is None or key > best[0]:
            best = (key, t)
    return best[1]


def heuristic_target(g: Game, me: int, effect: int) -> int:
    return sun_target(g, me) if effect == SUN else mark_target(g, me, effect)


def collects(g: Game, me: int, t: int):
    """The suit `me` knows t holds most of (at least 2; ties: the lower suit), else None."""
    k = g.p[me].knows[t]
    counts = [sum(1 for c in k if suit(c) == u) for u in range(4)]
    return counts.index(max(counts)) if max(counts) >= 2 else None


def wind_pays(g: Game, me: int, T: int) -> bool:
    right = (me - 1) % g.n
    return any(suit(c) == T for c in g.p[me].knows[right]) and collects(g, me, right) != T


def heuristic_plan(g: Game, s: int, offered: list):
    if REVEAL in offered:
        return REVEAL, None
    me = g.p[s]
    if WEATHER in offered:
        T = target_suit(g, s, me.hand)
        off = sorted(c for c in me.hand if suit(c) != T)
        if off:
            by = {u: [c for c in off if suit(c) == u] for u in range(4)}
            if by[THUNDER]:
                t = mark_target(g, s, THUNDER)
                if not g.p[t].skip and level(g, s, t) >= 4:
                    g.seen["h_thunder"] += 1
                    return WEATHER, by[THUNDER][0]
            if by[CLOUD]:
                t = mark_target(g, s, CLOUD)
                if not g.p[t].cloud and level(g, s, t) >= 4:
                    g.seen["h_cloud"] += 1
                    return WEATHER, by[CLOUD][0]
            if by[SUN] and sum(1 for c in me.hand if suit(c) == T) >= 3:
                t = sun_target(g, s)
                if g.p[s].looked[t] is None:
                    g.seen["h_sun"] += 1
                    return WEATHER, by[SUN][0]
            if by[WIND] and len(off) >= 2 and wind_pays(g, s, T):
                g.seen["h_wind"] += 1
                return WEATHER, by[WIND][0]
    if DRAW in offered:
        return DRAW, None
    return WEATHER, least_useful(g, s, me.hand, me.hand)


def heuristic_wind_card(g: Game, p: int, r: int) -> int:
    hand = g.p[p].hand
    T = target_suit(g, p, hand)
    cands = sorted(c for c in hand if suit(c) != T) or sorted(hand)
    avoid = collects(g, p, r) if r != p else None
    return min(cands, key=lambda c: (suit(c) == avoid, suit_want(g, p, hand, suit(c))))
