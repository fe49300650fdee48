"""pgc ("Five Three Five") restated in plain, slow Python, from the rulebook, RULINGS.md and the
draw protocol in docs/games/pgc.md -- not from kernels/pgc.py.

Cards are their printed numbers (1-5, 7-9, 11-15). A hand is a Counter {number: copies}.
A meld is a sorted tuple of numbers. An action is ("lead", meld), ("overwrite", meld),
("add", new_central_meld) or ("pass",).

``play_game(rules, players, policies, seed, game)`` returns a dict with the final scores,
places, winners, turns, timeout flag, decisions and every counter by name.
"""
from __future__ import annotations

from collections import Counter
from functools import lru_cache

from tests.reference.prng import DEAL, SEAT, Stream

NUMBERS = [1, 2, 3, 4, 5, 7, 8, 9, 11, 12, 13, 14, 15]

DEFAULT_RULES = {
    "points": "standin", "run_order": "low", "pass_locks_out": True, "eight_rule": "clear",
    "next_lead": "rotate", "target": 20, "two_player_end": "two-hands", "overwrite_up": False,
    "extra_deal": False, "max_rounds": 100, "random_win": "game",
}


def card_points(number: int, table: str) -> int:
    if table == "flat":
        return 1
    if table == "face":
        return number
    # the stand-in table: Rainy 1-5 one point, Cloudy 7-9 two, Sunny 11-15 three
    if number <= 5:
        return 1
    if number <= 9:
        return 2
    return 3


# ---- melds ---------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def kind_of(meld) -> str | None:
    """single / set / run, or None when the cards are not one legal meld."""
    if len(meld) == 1:
        return "single"
    if all(c == meld[0] for c in meld):
        return "set"
    if all(b == a + 1 for a, b in zip(meld, meld[1:])):
        return "run"      # numbers differ by one: 5-7 and 9-11 are not consecutive
    return None


KIND_ORDER = {"single": 0, "set": 1, "run": 2}


def all_melds(max_size: int, copies: int):
    """Every meld of 1..max_size cards that the deck can hold, sorted canonically:
    by kind (single, set, run), then lowest number, then size."""
    found = []
    for n in NUMBERS:
        found.append((n,))
        for size in range(2, min(max_size, copies) + 1):
            found.append((n,) * size)
        for size in range(2, max_size + 1):
            run = tuple(range(n, n + size))
            if all(c in NUMBERS for c in run):
                found.append(run)
    found.sort(key=lambda m: (KIND_ORDER[kind_of(m)], m[0], len(m)))
    return found


def beats(new, old, rules) -> bool:
    """Overwrite: same type, equal size, stronger. PGC Overwrite: any larger meld beats it."""
    if len(old) >= 4:
        return False                    # no Overwrite onto a Central Meld of 4 or more
    if len(new) > len(old):
        return bool(rules["overwrite_up"])
    if len(new) < len(old) or kind_of(new) != kind_of(old):
        return False
    if kind_of(new) == "run":
        if rules["run_order"] == "low":
            return new[0] < old[0]      # the LOWER run is stronger
        return new[0] > old[0]
    return new[0] > old[0]              # singles and sets: the higher number


def minus(big, small):
    """The multiset big - small as a Counter, or None if small is not inside big."""
    c = Counter(big)
    c.subtract(Counter(small))
    if any(v < 0 for v in c.values()):
        return None
    return +c


def can_pay(hand: Counter, cards: Counter) -> bool:
    return all(hand[n] >= k for n, k in cards.items())


# ---- the game ------------------------------------------------------------------------------
class Game:
    def __init__(self, rules, players, policies, seed, game):
        self.rules = dict(DEFAULT_RULES, **rules)
        self.n = players
        self.policies = policies
        self.seed, self.game = seed, game
        self.copies = 5 if players >= 5 else 4
        if players == 3 and self.rules["extra_deal"]:
            self.hand_size = 16
        else:
            self.hand_size = {2: 12, 3: 13, 4: 12, 5: 12, 6: 10}[players]
        self.full_set = self.copies     # a set of 4 (5 at 5-6 players) ends the trick
        self.streams = [Stream(seed, game, SEAT, s) for s in range(players)]
        self.scores = [0] * players
        self.counters = Counter()
        self.turns = 0
        self.lead_melds = all_melds(3, self.copies)
        self.add_melds = all_melds(5, self.copies)
        self.meld_counts = {m: Counter(m) for m in self.add_melds}

    # -- the deal
    def deal(self, rnd):
        deck = [n for n in NUMBERS for _ in range(self.copies)]
        Stream(self.seed, self.game, DEAL, rnd).shuffle(deck)
        H = self.hand_size
        self.hand = [Counter(deck[s * H:(s + 1) * H]) for s in range(self.n)]
        if self.n == 2:
            # two hands each; the second is set aside until the first is empty
            self.second = [Counter(deck[(2 + s) * H:(3 + s) * H]) for s in range(2)]
        else:
            self.second = [None] * self.n

    # -- legal actions
    def legal(self, seat):
        hand = self.hand[seat]
        central = self.central
        acts = []
        if not central:
            for m in self.lead_melds:
                if can_pay(hand, self.meld_counts[m]):
                    acts.append(("lead", m))
            return acts                 # a leader must lead
        for m in self.lead_melds:
            if beats(m, central, self.rules) and can_pay(hand, self.meld_counts[m]):
                acts.append(("overwrite", m))
        for m in self.add_melds:
            if len(m) <= len(central) or len(m) - len(central) > 3:
                continue
            if m[0] > central[0] or m[-1] < central[-1]:
                continue                # cannot contain the Central Meld
            added = minus(m, central)
            if added is None or not can_pay(hand, added):
                continue
            if kind_of(m) == "set" and len(m) > self.full_set:
                continue
            acts.append(("add", m))
        acts.append(("pass",))
        return acts

    def cards_played(self, act):
        if act[0] == "add":
            return minus(act[1], self.central)
        return Counter(act[1])

    def empties_last_hand(self, seat, act):
        if act[0] == "pass" or self.second[seat] is not None:
            return False
        return sum(self.cards_played(act).values()) == sum(self.hand[seat].values())

    def left_points(self, seat):
        held = self.hand[seat] + (self.second[seat] or Counter())
        return sum(card_points(n, self.rules["points"]) * k for n, k in held.items())

    def game_ends(self, totals):
        if self.fixed_rounds:
            return self.round + 1 >= self.fixed_rounds
        return max(totals) >= self.rules["target"]

    def going_out_wins(self, seat):
        totals = [self.scores[s] + (0 if s == seat else self.left_points(s)) for s in range(self.n)]
        return self.game_ends(totals) and totals[seat] == min(totals)

    # -- policies
    def choose_random(self, seat, acts):
        stream = self.streams[seat]
        mode = self.rules["random_win"]
        outs = [a for a in acts if self.empties_last_hand(seat, a)]
        if outs and (mode == "round" or (mode == "game" and self.going_out_wins(seat))):
            return outs[stream.below(len(outs))]
        return acts[stream.below(len(acts))]

    def ends_trick_itself(self, act):
        if act[0] == "pass":
            return None
        m = act[1]
        if act[0] == "add" and kind_of(m) == "set" and len(m) == self.full_set:
            return "full_set"
        if act[0] == "add" and kind_of(m) == "run" and len(m) == 5:
            return "full_run"
        if self.rules["eight_rule"] == "clear" and self.cards_played(act)[8] > 0:
            return "eight"
        return None

    @staticmethod
    def units(hand: Counter) -> int:
        """Distinct numbers held, minus pairs of consecutive numbers both held."""
        held = sorted(n for n, k in hand.items() if k > 0)
        return len(held) - sum(1 for a, b in zip(held, held[1:]) if b == a + 1)

    def choose_heuristic(self, seat, acts):
        hand = self.hand[seat]
        responding = bool(self.central)
        units_now = self.units(hand)
        best, best_v = None, None
        for act in acts:
            if act[0] == "pass":
                continue
            if self.empties_last_hand(seat, act):
                v = 1_000_000
            else:
                played = self.cards_played(act)
                after = hand - played
                shed = sum(played.values())
                strength = sum(NUMBERS.index(n) * k for n, k in played.items())
                ends = self.ends_trick_itself(act) is not None
                if responding and not ends:
                    if self.units(after) > units_now or any(after[n] for n in played):
                        continue        # would break a run, or split a set, it needs
                    if max(played) >= 13 and sum(after.values()) > 3:
                        continue        # keep 13-15 to win back the lead
                v = 10 * shed - 20 * self.units(after) - strength + (100 if ends else 0)
            if best_v is None or v > best_v:
                best, best_v = act, v
        return best if best is not None else ("pass",)

    # -- one action
    def end_trick(self, leader):
        self.central = ()
        self.passed = set()
        self.passes_in_row = 0
        self.last_player = None
        self.to_act = leader

    def next_seat(self, seat):
        s = (seat + 1) % self.n
        while self.rules["pass_locks_out"] and s in self.passed:
            s = (s + 1) % self.n
        return s

    def act(self, seat, act):
        """Apply one action; returns the trick-end cause or None."""
        kind = act[0]
        self.counters["act_" + kind] += 1
        if kind == "pass":
            self.passed.add(seat)
            self.passes_in_row += 1
            if self.rules["pass_locks_out"]:
                over = len(self.passed) == self.n - 1
            else:
                over = self.passes_in_row == self.n - 1
            if over:
                self.end_trick(self.last_player)   # the last player to play leads
                return "passes"
            self.to_act = self.next_seat(seat)
            return None
        self.counters["plays"] += 1
        if kind == "lead":
            self.counters["tricks"] += 1
        if kind == "overwrite" and len(act[1]) > len(self.central):
            self.counters["overwrite_up"] += 1
        cause = self.ends_trick_itself(act)
        self.hand[seat] = self.hand[seat] - self.cards_played(act)
        self.central = act[1]
        self.last_player = seat
        self.passes_in_row = 0
        if sum(self.hand[seat].values()) == 0:
            if self.second[seat] is not None:
                # 2 players: the first hand is empty, pick up the second at once
                self.hand[seat], self.second[seat] = self.second[seat], None
                self.counters["pickups"] += 1
            else:
                self.out = seat
                return cause or "out"
        if cause:
            self.end_trick(seat)
        else:
            self.to_act = self.next_seat(seat)
        return cause

    # -- the whole game
    def play(self):
        r = self.rules
        self.fixed_rounds = 2 if (self.n == 2 and r["two_player_end"] == "two-hands") else 0
        leader = 0
        self.round = 0
        timeout = False
        while True:
            self.deal(self.round)
            self.out = None
            self.end_trick(leader)
            while self.out is None:
                seat = self.to_act
                acts = self.legal(seat)
                if self.policies[seat] == "heuristic":
                    a = self.choose_heuristic(seat, acts)
                else:
                    a = self.choose_random(seat, acts)
                assert a in acts
                self.turns += 1
                cause = self.act(seat, a)
                if cause:
                    self.counters["end_" + cause] += 1
            w = self.out
            self.counters["rounds"] += 1
            self.counters[f"out_first_seat{w}"] += 1
            for s in range(self.n):
                if s != w:
                    pts = self.left_points(s)
                    self.scores[s] += pts
                    self.counters["points_left"] += pts
                    self.counters["nonwinner_rounds"] += 1
            if self.game_ends(self.scores):
                break
            self.round += 1
            if self.round >= r["max_rounds"]:
                timeout = True
                break
            leader = w if r["next_lead"] == "winner" else self.round % self.n
        best = min(self.scores)
        winners = 0 if timeout else sum(1 << s for s in range(self.n) if self.scores[s] == best)
        places = [1 + sum(1 for t in self.scores if t < self.scores[s]) for s in range(self.n)]
        return {"scores": list(self.scores), "places": places, "winners": winners,
                "length": self.turns, "timeout": int(timeout), "decisions": self.turns,
                "counters": dict(self.counters)}


def play_game(rules, players, policies, seed, game):
    return Game(rules, players, policies, seed, game).play()
