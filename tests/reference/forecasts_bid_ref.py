"""forecasts-bid restated in plain, slow Python: the rulebook, RULINGS.md and the draw protocol of
docs/games/forecasts-bid.md, with lists and sets instead of bit masks.

Written from those documents, not by calling the kernel, so a test comparing the two games
row by row checks both. Cards are ``suit * 13 + rank`` (suits S, H, D, C; ranks 2 .. A).
``play_game`` returns the full result row of kernels/layout.py: scores, places, winners mask,
length (tricks), flags, decisions, then the counters in the kernel's declared order.
"""
from __future__ import annotations

from tests.reference.prng import AUX, DEAL, SEAT, Stream

SPADES, HEARTS, DIAMONDS, CLUBS = 0, 1, 2, 3
RANKS = 13


def suit(card):
    return card // RANKS


def rank(card):
    return card % RANKS


# ---- the numbers of the rulebook ----------------------------------------------------------------
def hand_size(players):         # 4p: 10, 3p: 13, Rival Station: 10 each (the Rival too)
    return {4: 10, 3: 13, 2: 10}[players]


def regular_rounds(players):    # 4p and Rival Station: 5; 3p: 4
    return {4: 5, 3: 4, 2: 5}[players]


def draw_deck_size(players):    # 4p: 12; 3p: 13; Rival Station: 12
    return {4: 12, 3: 13, 2: 12}[players]


# ---- scoring (Phase 6 and its six worked examples) ------------------------------------------------
def bid_class(bid):
    if bid == 0:
        return "clear"
    if bid in (5, 7):
        return "extended"
    return "standard"


def points(bid, won):
    if bid == 0:
        return 5 if won == 0 else -2 * won
    off = abs(won - bid)
    if bid in (5, 7):
        return 2 * bid if off == 0 else -4 * off
    return bid if off == 0 else -2 * off


def trick_winner(plays, led):
    """plays: list of (seat, card) in play order. Highest Diamond, else highest card of led suit."""
    diamonds = [(c, s) for s, c in plays if suit(c) == DIAMONDS]
    if diamonds:
        return max(diamonds)[1]
    return max((c, s) for s, c in plays if suit(c) == led)[1]


def legal(hand, led):
    if led is not None:
        follow = [c for c in hand if suit(c) == led]
        if follow:
            return sorted(follow)
    return sorted(hand)


def rival_follow(first, second, led):
    """The Rival's priority: the higher matching the led suit; else the higher Diamond; else the
    higher card by rank, the first flipped on equal ranks. Returns (played, scrapped)."""
    match = [c for c in (first, second) if suit(c) == led]
    if match:
        c = max(match)
    else:
        trumps = [c for c in (first, second) if suit(c) == DIAMONDS]
        if trumps:
            c = max(trumps)
        else:
            c = first if rank(first) >= rank(second) else second
    return c, (second if c == first else first)


# ---- the heuristic player (docs/games/forecasts-bid.md, "heuristic") ----------------------------
def strength(card):
    """Any Diamond above any other card; then rank; then suit index (S < H < D < C)."""
    r = rank(card) + (RANKS if suit(card) == DIAMONDS else 0)
    return (r, suit(card))


def estimate(hand):
    high_trumps = [c for c in hand if suit(c) == DIAMONDS and rank(c) >= 10]   # Q K A
    low_trumps = [c for c in hand if suit(c) == DIAMONDS and rank(c) < 10]
    aces = [c for c in hand if suit(c) != DIAMONDS and rank(c) == 12]
    kings = 0
    for su in (SPADES, HEARTS, CLUBS):
        in_suit = [c for c in hand if suit(c) == su]
        if su * RANKS + 11 in in_suit and len(in_suit) >= 2:
            kings += 1
    sure = len(high_trumps) + len(aces)
    return 2 * sure + len(low_trumps) + kings, sure      # in half-tricks


def heuristic_bid(hand, top):
    halves, sure = estimate(hand)
    b = min((halves + 1) // 2, top)
    if b in (5, 7) and sure < b:
        b -= 1
    return b


def beats(card, best, led):
    if suit(card) == DIAMONDS:
        return suit(best) != DIAMONDS or card > best
    if suit(best) == DIAMONDS:
        return False
    return suit(card) == led and card > best


def heuristic_card(hand_legal, want, led, best):
    if led is None:
        return max(hand_legal, key=strength) if want else min(hand_legal, key=strength)
    winners = [c for c in hand_legal if beats(c, best, led)]
    if want:
        return min(winners, key=strength) if winners else min(hand_legal, key=strength)
    losers = [c for c in hand_legal if c not in winners]
    return max(losers, key=strength) if losers else min(hand_legal, key=strength)


# ---- the game ---------------------------------------------------------------------------------
COUNTER_NAMES = (
    [f"bid_{b}" for b in range(14)]
    + [f"{cls}_{what}" for cls in ("standard", "extended", "clear")
       for what in ("hits", "misses", "gain", "loss")]
    + ["market_pass", "market_draw", "market_buy", "cards_drawn", "cards_bought",
       "investments", "investment_chances", "sudden_death", "rival_hits", "rival_rounds",
       "shared_victories", "mc_rollouts", "mc_rollout_plays",
       "restriction_forbidden", "restriction_yielded"]    # restricted play: 0 in this statement
)


class Game:
    def __init__(self, seed, g, players, policies, market=True, round_cap=6, rival_check="round5"):
        self.seed, self.g, self.players = seed, g, players
        self.rival = 2 if players == 2 else None
        self.seats = 3 if players == 2 else players
        self.policies = list(policies)          # "random" / "heuristic" per player seat
        self.market_on = market
        self.round_cap = round_cap
        self.rival_check = rival_check
        self.streams = [Stream(seed, g, SEAT, s) for s in range(self.seats)]
        self.rep = [0] * self.seats
        self.spend = [3] * self.seats
        if self.rival is not None:
            self.rep[self.rival] = 20
        self.decisions = 0
        self.tricks_played = 0
        self.count = dict.fromkeys(COUNTER_NAMES, 0)

    # one decision of a random player: one draw when there are two options or more
    def choose(self, seat, n):
        self.decisions += 1
        return self.streams[seat].below(n) if n >= 2 else 0

    def invest(self, s):
        """Seat s's Investment decision (it has the chance): True to invest."""
        if self.policies[s] == "heuristic":
            self.decisions += 1
            return self.spend[s] <= 1 and self.rep[s] > 1
        return self.choose(s, 2) == 1

    def bid(self, s, hand, h):
        """Player seat s's bid."""
        if self.policies[s] == "heuristic":
            self.decisions += 1
            return heuristic_bid(hand, h)
        return self.choose(s, h + 1)

    def order_from_left(self, dealer):
        return [(dealer + 1 + j) % self.seats for j in range(self.seats)]

    def play_round(self, rnd):
        S = self.seats
        dealer = rnd % S
        h = hand_size(self.players)
        order = self.order_from_left(dealer)
        # Phase 1: Investment
        for s in order:
            if s == self.rival or self.rep[s] < 1 or self.spend[s] >= 3:
                continue
            self.count["investment_chances"] += 1
            if self.invest(s):
                self.rep[s] -= 1
                self.spend[s] = 3
                self.count["investments"] += 1
        # Phase 2: The Deal
        deck = list(range(52))
        Stream(self.seed, self.g, DEAL, rnd).shuffle(deck)
        hands = [[] for _ in range(S)]
        for i in range(S * h):
            hands[(dealer + 1 + i) % S].append(deck[i])
        draw_deck = deck[S * h: S * h + draw_deck_size(self.players)]   # top first
        market = []
        # Phase 3: The Bid
        bids = [0] * S
        for s in order:
            if s == self.rival:
                bids[s] = 4
                continue
            bids[s] = self.bid(s, hands[s], h)
            self.count[f"bid_{bids[s]}"] += 1
        # Phase 4: The Market
        if self.market_on:
            for s in order:
                if s == self.rival:
                    continue
                self.market_turn(s, hands[s], draw_deck, market, bids[s])
        # the Rival Deck: the Rival's dealt cards, then the rest shuffled beneath
        rival_deck = []
        if self.rival is not None:
            rest = list(draw_deck) + sorted(market)
            Stream(self.seed, self.g, AUX, rnd).shuffle(rest)
            rival_deck = hands[self.rival] + rest
            hands[self.rival] = []
            draw_deck.clear()
            market.clear()
        # Phase 5: Tricks
        won = [0] * S
        leader = (dealer + 1) % S
        for _ in range(h):
            plays = []
            led = None
            best = None
            for j in range(S):
                s = (leader + j) % S
                if s == self.rival:
                    if led is None:
                        card = rival_deck.pop(0)
                    else:
                        first = rival_deck.pop(0)
                        second = rival_deck.pop(0)
                        card, _scrap = rival_follow(first, second, led)
                else:
                    options = legal(hands[s], led)
                    if self.policies[s] == "heuristic":
                        self.decisions += 1
                        card = heuristic_card(options, won[s] < bids[s], led, best)
                    else:
                        card = options[self.choose(s, len(options))]
                    hands[s].remove(card)
                if led is None:
                    led = suit(card)
                plays.append((s, card))
                best = next(c for t, c in plays if t == trick_winner(plays, led))
            w = trick_winner(plays, led)
            won[w] += 1
            leader = w
            self.tricks_played += 1
        # Phase 6: Scoring
        for s in range(S):
            pts = points(bids[s], won[s])
            self.rep[s] = min(60, self.rep[s] + pts)
            if s == self.rival:
                self.count["rival_rounds"] += 1
                self.count["rival_hits"] += won[s] == bids[s]
            else:
                cls = bid_class(bids[s])
                if won[s] == bids[s]:
                    self.count[f"{cls}_hits"] += 1
                    self.count[f"{cls}_gain"] += pts
                else:
                    self.count[f"{cls}_misses"] += 1
                    self.count[f"{cls}_loss"] += -pts

    def market_offered(self, s, draw_deck, market):
        """The Market actions seat s is offered: Pass always; Draw / Buy when a card could be taken."""
        offered = ["pass"]
        if self.spend[s] >= 1 and draw_deck:
            offered.append("draw")
        if self.spend[s] >= 1 and market:
            offered.append("buy")
        return offered

    def market_chosen(self, s, action):
        """Called with the Market action seat s took (a test's subclass counts watched ones)."""

    def market_turn(self, s, hand, draw_deck, market, bid):
        self.market_chosen(s, self._market_action(s, hand, draw_deck, market, bid,
                                                  self.market_offered(s, draw_deck, market)))

    def _market_action(self, s, hand, draw_deck, market, bid, offered):
        heuristic = self.policies[s] == "heuristic"
        take_card = None
        shed_strong = False
        if heuristic:
            self.decisions += 1
            action = "pass"
            if len(offered) > 1:
                halves, _ = estimate(hand)
                if halves != 2 * bid:
                    shed_strong = halves > 2 * bid
                    if "buy" in offered:
                        if shed_strong:
                            c = min(market, key=strength)
                            if strength(c) < strength(max(hand, key=strength)):
                                take_card = c
                        else:
                            c = max(market, key=strength)
                            if strength(c) > strength(min(hand, key=strength)):
                                take_card = c
                    if take_card is not None:
                        action = "buy"
                    elif "draw" in offered:
                        action = "draw"
            k = 0
            if action != "pass":
                k = 1
        else:
            # one decision over the distinct actions: Pass, Draw 1 .. Draw n, Buy 1 .. Buy m,
            # where n and m stop at the Spend and at the cards there (a larger k takes the same)
            n = min(self.spend[s], len(draw_deck)) if "draw" in offered else 0
            m = min(self.spend[s], len(market)) if "buy" in offered else 0
            actions = [("pass", 0)] + [("draw", k) for k in range(1, n + 1)] + \
                [("buy", k) for k in range(1, m + 1)]
            action, k = actions[self.choose(s, len(actions))]
        if action == "pass":
            self.count["market_pass"] += 1
            return action
        available = len(draw_deck) if action == "draw" else len(market)
        taken = min(k, available)
        for _ in range(taken):
            if action == "draw":
                card = draw_deck.pop(0)
            else:
                pool = sorted(market)
                if heuristic:
                    self.decisions += 1
                    card = take_card
                else:
                    card = pool[self.choose(s, len(pool))]
                market.remove(card)
            hand.append(card)
            self.spend[s] -= 1
        for _ in range(taken):
            if heuristic:
                self.decisions += 1
                card = max(hand, key=strength) if shed_strong else min(hand, key=strength)
            else:
                ordered = sorted(hand)
                card = ordered[self.choose(s, len(ordered))]
            hand.remove(card)
            market.append(card)
        if action == "draw":
            self.count["market_draw"] += 1
            self.count["cards_drawn"] += taken
        else:
            self.count["market_buy"] += 1
            self.count["cards_bought"] += taken
        return action

    def play(self):
        S = self.seats
        humans = [s for s in range(S) if s != self.rival]
        contenders = list(humans)
        rnd = 0
        sudden = False
        timeout = False
        winners = []
        while True:
            if rnd >= self.round_cap:
                timeout = True
                break
            if sudden:      # the sudden-death round is counted when it is played
                self.count["sudden_death"] = 1
            self.play_round(rnd)
            rnd += 1
            if rnd < regular_rounds(self.players):
                continue
            # the end: strictly above the Rival, then the highest; a tie -> one sudden death
            # (after it, the Rival is checked again only with rival_check = "final")
            check_rival = self.rival is not None and (not sudden or self.rival_check == "final")
            if check_rival and not any(self.rep[s] > self.rep[self.rival] for s in contenders):
                winners = [self.rival]
                break
            top = max(self.rep[s] for s in contenders)
            winners = [s for s in contenders if self.rep[s] == top]
            if len(winners) > 1 and not sudden:
                sudden = True
                contenders = winners
                continue
            break
        if timeout:
            winners = []
        if len(winners) > 1:
            self.count["shared_victories"] = 1
        # places: the winners first, then by Reputation; ties share the better place
        key = [(1 if s in winners else 0, self.rep[s]) for s in range(S)]
        places = [1 + sum(1 for t in range(S) if key[t] > key[s]) for s in range(S)]
        row = list(self.rep) + places
        row.append(sum(1 << s for s in winners))
        row.append(self.tricks_played)
        row.append(1 if timeout else 0)
        row.append(self.decisions)
        row += [self.count[name] for name in COUNTER_NAMES]
        return row


def play_game(seed, g, players, policies=None, market=True, round_cap=6, rival_check="round5"):
    """The result row of game ``g`` (policies: one name per player seat; default all random)."""
    if policies is None:
        policies = ["random"] * players
    policies = list(policies) + (["rival"] if players == 2 else [])
    return Game(seed, g, players, policies, market, round_cap, rival_check).play()
