"""forecasts-cubes restated in plain, slow Python: the reference the kernel is tested against.

Written from the rulebook (forecasts-cubes.txt), RULINGS.md and docs/games/forecasts-cubes.md
(rules as implemented, policies, random draw protocol); it does not read or call the kernel.
Randomness comes from ``tests.reference.prng.Stream``.

Cards use the French encoding of kernels/cards.py: ``card = suit * 13 + rank``, suits
0..3 = Spades, Hearts, Diamonds, Clubs, ranks 0..12 = 2, 3, ..., 10, J, Q, K, A. The deck has
no J, Q or K, so ranks 9, 10, 11 never occur.
"""
from __future__ import annotations

from fractions import Fraction

from tests.reference.prng import DEAL, SEAT, Stream

SHARE_UNIT = 60

RANDOM, HEURISTIC = "random", "heuristic"

# buckets
HOT, NEUTRAL, COLD = 0, 1, 2
BUCKET_NAMES = ("hot", "neutral", "cold")

# forecasts
F_HOT, F_COLD = 0, 1

DECK = [s * 13 + r for s in range(4) for r in (0, 1, 2, 3, 4, 5, 6, 7, 8, 12)]  # ascending codes

COUNTER_NAMES = (
    ["advisory_uses", "advisory_user_share", "advisory_user_seats", "correct_forecasts",
     "hot_forecasts", "hot_correct", "cold_forecasts", "cold_correct",
     "round_hot", "round_neutral", "round_cold", "rounds", "no_move_tricks",
     "mc_rollouts", "mc_rollout_plays"]  # search counters: always 0 for random/heuristic seats
    + [f"final_hot_{k}" for k in range(10)]
    + ["restriction_forbidden", "restriction_yielded"]  # always 0: the reference plays unrestricted
)


def suit(card: int) -> int:
    return card // 13


def rank(card: int) -> int:
    return card % 13


def is_red(card: int) -> bool:
    return suit(card) in (1, 2)


def strength(card: int) -> int:
    """Heuristic forecast weight: 2 = 1 ... 10 = 9, A = 10."""
    r = rank(card)
    return 10 if r == 12 else r + 1


def legal(hand: list[int], led: int | None) -> list[int]:
    """Cards that may be played: any card when leading; else the led suit if held, else any."""
    if led is None:
        return sorted(hand)
    follow = [c for c in hand if suit(c) == led]
    return sorted(follow if follow else hand)


def winner_of(plays: list[tuple[int, int]]) -> tuple[int, int]:
    """(seat, card) of the highest card of the led suit; ``plays`` in playing order."""
    led = suit(plays[0][1])
    best = plays[0]
    for seat, card in plays[1:]:
        if suit(card) == led and rank(card) > rank(best[1]):
            best = (seat, card)
    return best


def moves(red: bool) -> tuple[tuple[int, int], tuple[int, int]]:
    """(source, destination) of option 0 and option 1 for a trick won by this colour."""
    if red:
        return (COLD, NEUTRAL), (NEUTRAL, HOT)
    return (HOT, NEUTRAL), (NEUTRAL, COLD)


def points(cubes: list[int], forecast: int) -> tuple[int, bool]:
    """Round points for a forecast and whether it is correct (bucket strictly > opposite)."""
    mine, other = (cubes[HOT], cubes[COLD]) if forecast == F_HOT else (cubes[COLD], cubes[HOT])
    correct = mine > other
    return mine + (1 if correct else 0), correct


def lowest_rank(cards: list[int]) -> int:
    """The lowest-rank card; equal ranks: the lowest code (suit order S, H, D, C)."""
    return min(cards, key=lambda c: (rank(c), c))


def deal(players: int, seed: int, game_index: int, rnd: int) -> list[list[int]]:
    """Round ``rnd``'s hands: the 40 codes ascending, shuffled by DEAL stream ``rnd``."""
    H = 10 if players == 4 else 13
    deck = list(DECK)
    Stream(seed, game_index, DEAL, rnd).shuffle(deck)
    return [deck[s * H:(s + 1) * H] for s in range(players)]


# ---------------------------------------------------------------- heuristic policy
def heuristic_forecast(hand: list[int]) -> int:
    red = sum(strength(c) for c in hand if is_red(c))
    black = sum(strength(c) for c in hand if not is_red(c))
    return F_HOT if red >= black else F_COLD


def heuristic_card(hand: list[int], forecast: int, trick: list[tuple[int, int]]) -> int:
    want_red = forecast == F_HOT
    if not trick:
        mine = [c for c in hand if is_red(c) == want_red]
        if mine:
            return max(mine, key=lambda c: (rank(c), -c))  # highest rank; equal: first suit (S H D C)
        return lowest_rank(hand)
    led = suit(trick[0][1])
    best = winner_of(trick)[1]
    follow = [c for c in hand if suit(c) == led]
    if follow:
        if is_red(trick[0][1]) == want_red:
            top = max(follow)
            return top if rank(top) > rank(best) else min(follow)
        below = [c for c in follow if rank(c) < rank(best)]
        return max(below) if below else min(follow)
    other = [c for c in hand if is_red(c) != want_red]
    if other:
        return lowest_rank(other)
    return lowest_rank(hand)


def heuristic_move(cubes, forecast, singles, doubles, red) -> tuple[int, int]:
    """(size, option): the legal move leaving the most round points; ties single, option 0."""
    best = None
    best_pts = None
    for size, legal_opts in ((1, singles), (2, doubles)):
        for opt in legal_opts:
            src, dst = moves(red)[opt]
            after = list(cubes)
            after[src] -= size
            after[dst] += size
            pts = points(after, forecast)[0]
            if best is None or pts > best_pts:
                best, best_pts = (size, opt), pts
    return best


# ---------------------------------------------------------------- the game
def play_game(players: int, advisory: bool, tricks_per_round: int, rounds: int,
              policies: list[str], seed: int, game_index: int) -> dict:
    P = players
    assert P in (3, 4) and len(policies) == P
    H = 10 if P == 4 else 13
    assert 1 <= tricks_per_round <= H
    seat_stream = [Stream(seed, game_index, SEAT, s) for s in range(P)]
    scores = [0] * P
    correct = [0] * P
    adv_used = [False] * P
    decisions = 0
    length = 0
    ctr = {name: 0 for name in COUNTER_NAMES}

    for r in range(rounds):
        hands = deal(P, seed, game_index, r)
        cubes = [4, 1, 4]

        forecasts = []
        for s in range(P):
            if policies[s] == RANDOM:
                f = seat_stream[s].below(2)
            else:
                f = heuristic_forecast(hands[s])
            forecasts.append(f)
            decisions += 1

        leader = r % P
        for _t in range(tricks_per_round):
            trick: list[tuple[int, int]] = []
            for i in range(P):
                s = (leader + i) % P
                led = suit(trick[0][1]) if trick else None
                opts = legal(hands[s], led)
                if policies[s] == RANDOM:
                    card = opts[seat_stream[s].below(len(opts))] if len(opts) > 1 else opts[0]
                else:
                    card = heuristic_card(hands[s], forecasts[s], trick)
                    assert card in opts
                hands[s].remove(card)
                trick.append((s, card))
                decisions += 1
            length += 1
            w, wcard = winner_of(trick)
            red = is_red(wcard)
            mv = moves(red)
            singles = [k for k in (0, 1) if cubes[mv[k][0]] >= 1]
            if not singles:
                ctr["no_move_tricks"] += 1
            else:
                doubles = [k for k in (0, 1) if cubes[mv[k][0]] >= 2]
                adv_offer = advisory and not adv_used[w] and bool(doubles)
                options = [(1, k) for k in singles] + ([(2, k) for k in doubles] if adv_offer else [])
                if r == rounds - 1 and _t == tricks_per_round - 1:
                    # the game's last move: keep the moves that win most, if any move wins
                    options = winning_options(options, cubes, red, w, scores, correct, forecasts,
                                              adv_used, advisory)
                if policies[w] == RANDOM:
                    # one uniform draw over all legal moves, singles then doubles
                    size, opt = (options[seat_stream[w].below(len(options))] if len(options) > 1
                                 else options[0])
                else:
                    size, opt = heuristic_move(cubes, forecasts[w],
                                               [k for z, k in options if z == 1],
                                               [k for z, k in options if z == 2], red)
                decisions += 1
                if size == 2:
                    adv_used[w] = True
                    ctr["advisory_uses"] += 1
                src, dst = mv[opt]
                cubes[src] -= size
                cubes[dst] += size
            leader = w
            assert sum(cubes) == 9 and min(cubes) >= 0

        for s in range(P):
            pts, ok = points(cubes, forecasts[s])
            scores[s] += pts
            correct[s] += ok
            ctr["correct_forecasts"] += ok
            if forecasts[s] == F_HOT:
                ctr["hot_forecasts"] += 1
                ctr["hot_correct"] += ok
            else:
                ctr["cold_forecasts"] += 1
                ctr["cold_correct"] += ok
        ctr["round_hot"] += cubes[HOT]
        ctr["round_neutral"] += cubes[NEUTRAL]
        ctr["round_cold"] += cubes[COLD]
        ctr["rounds"] += 1
        ctr[f"final_hot_{cubes[HOT]}"] += 1

    places, winners = rank_players(scores, correct, adv_used, advisory)
    share = SHARE_UNIT // len(winners)
    for s in range(P):
        if adv_used[s]:
            ctr["advisory_user_seats"] += 1
            if s in winners:
                ctr["advisory_user_share"] += share
    return {
        "scores": scores, "places": places, "winners": winners, "length": length,
        "flags": 0, "decisions": decisions, "counters": ctr,
        "correct": correct, "advisory_used": adv_used,
    }


def winning_options(options, cubes, red, w, scores, correct, forecasts, adv_used, advisory):
    """The last move of the game: the (size, option) moves after which seat ``w`` has the
    largest win share, when some move makes ``w`` a winner; otherwise ``options`` unchanged
    (RULINGS: every policy takes an immediate game-winning action when one is offered)."""
    shares = []
    for size, opt in options:
        src, dst = moves(red)[opt]
        after = list(cubes)
        after[src] -= size
        after[dst] += size
        final = [scores[s] + points(after, forecasts[s])[0] for s in range(len(scores))]
        right = [correct[s] + points(after, forecasts[s])[1] for s in range(len(scores))]
        used = [adv_used[s] or (s == w and size == 2) for s in range(len(scores))]
        _, winners = rank_players(final, right, used, advisory)
        shares.append(Fraction(1, len(winners)) if w in winners else Fraction(0))
    best = max(shares)
    if best == 0:
        return options
    return [o for o, sh in zip(options, shares) if sh == best]


def rank_players(scores, correct, adv_used, advisory: bool):
    """Competition places after the tie-breakers, and the set of winners (place 1)."""
    P = len(scores)
    keys = [(scores[s], correct[s], (0 if adv_used[s] else 1) if advisory else 0)
            for s in range(P)]
    places = [1 + sum(1 for t in range(P) if keys[t] > keys[s]) for s in range(P)]
    winners = {s for s in range(P) if places[s] == 1}
    return places, winners
