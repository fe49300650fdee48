"""pgc whole games: invariants over random games at every variant and player count, bulk play
versus chunking and threads, trace versus run, and game-by-game agreement with the plain
Python statement of the rules (tests/reference/pgc_ref.py)."""
from collections import Counter

import numpy as np
import pytest

from kernels import layout, pgc, rng
from tests.reference import pgc_ref
from tests.helpers import without_arc, rule_params

VARIANTS = {                                    # configs/pgc.toml, restated
    "base": ([4, 2, 3, 5, 6], {}),
    "overwrite": ([4, 2, 3, 5, 6], {"overwrite_up": True}),
    "points20": ([2], {"two_player_end": "target"}),
    "short": ([4, 2, 3, 5, 6], {"target": 10, "two_player_end": "target"}),
    "extra-deal": ([3], {"extra_deal": True}),
}
CASES = [(v, p) for v, (counts, _) in VARIANTS.items() for p in counts]
ODD_RULES = {"pass_locks_out": False, "run_order": "high", "eight_rule": "none",
             "next_lead": "winner", "points": "face"}


def params(**rules):
    return rule_params(pgc, **rules)


def seats_of(policies):
    s = np.zeros((len(policies), 4), dtype=np.int64)
    for i, name in enumerate(policies):
        s[i, 0] = pgc.POLICIES[name]
    return s


def run(p, policies, seed, first, n, serial=False):
    P = len(policies)
    out = np.full((n, layout.out_width(P, pgc.N_COUNTERS)), -7, dtype=np.int64)
    fn = pgc.play_games_serial if serial else pgc.play_games
    fn(p, seats_of(policies), seed, first, out)
    return out


def counter(out, P, name):
    i = [c.name for c in pgc.COUNTERS].index(name)
    return out[:, layout.col_counter(P, i)]


# ---- invariants ---------------------------------------------------------------------------------
@pytest.mark.parametrize("variant,P", CASES)
@pytest.mark.parametrize("policy", ["random", "heuristic"])
def test_invariants_over_random_games(variant, P, policy):
    rules = VARIANTS[variant][1]
    p = params(**rules)
    pgc.check(P, p)
    out = run(p, [policy] * P, 11, 0, 400)
    scores = out[:, :P]
    lo, hi = pgc.score_range(P, p)
    llo, lhi = pgc.length_range(P, p)
    assert (scores >= lo).all() and (scores <= hi).all()
    length = out[:, layout.col_length(P)]
    assert ((length >= llo) & (length <= lhi)).all()
    assert (out[:, layout.col_flags(P)] == 0).all()            # the default cap is never hit
    assert (out[:, layout.col_decisions(P)] == length).all()   # one decision per turn
    best = scores.min(axis=1)
    for s in range(P):
        won = (out[:, layout.col_winners(P)] >> s) & 1
        assert (won == (scores[:, s] == best)).all()           # fewest points win, ties share
        assert (out[:, P + s] == 1 + (scores < scores[:, [s]]).sum(axis=1)).all()
    rounds = counter(out, P, "rounds")
    target = int(p[pgc.R_TARGET])
    if P == 2 and not rules.get("two_player_end"):
        assert (rounds == 2).all()                             # two hands
    else:
        assert (scores.max(axis=1) >= target).all()
    # every round: one player goes out, every other scores what they hold
    assert (sum(counter(out, P, f"out_first_seat{s}") for s in range(6)) == rounds).all()
    for s in range(P, 6):
        assert (counter(out, P, f"out_first_seat{s}") == 0).all()
    assert (counter(out, P, "nonwinner_rounds") == rounds * (P - 1)).all()
    assert (counter(out, P, "points_left") == scores.sum(axis=1)).all()
    # every trick starts with a Lead and ends in exactly one way
    ends = sum(counter(out, P, n) for n in
               ("end_passes", "end_full_set", "end_full_run", "end_eight", "end_out"))
    assert (ends == counter(out, P, "tricks")).all()
    assert (counter(out, P, "tricks") == counter(out, P, "act_lead")).all()
    assert (counter(out, P, "plays") == counter(out, P, "act_lead") + counter(out, P, "act_overwrite")
            + counter(out, P, "act_add")).all()
    assert (counter(out, P, "plays") + counter(out, P, "act_pass") == length).all()
    assert (counter(out, P, "end_out") <= rounds).all()
    if P == 2:
        assert (counter(out, P, "pickups") >= rounds).all()    # the winner emptied two hands
        assert (counter(out, P, "pickups") <= 2 * rounds).all()
    else:
        assert (counter(out, P, "pickups") == 0).all()
    if not rules.get("overwrite_up"):
        assert (counter(out, P, "overwrite_up") == 0).all()
    # derived metrics: the action mix and the trick endings are shares of a whole
    sums = {c.name: int(counter(out, P, c.name).sum()) for c in pgc.COUNTERS}
    m = pgc.derived_metrics(sums, out.shape[0], P, p)
    assert m["points_table_is_standin"] == 1.0
    assert abs(sum(m[k] for k in ("lead_share", "overwrite_share", "add_share", "pass_share")) - 1) < 1e-9
    assert abs(sum(m[f"end_{k}_share"] for k in ("passes", "full_set", "full_run", "eight", "out")) - 1) < 1e-9
    assert abs(sum(m[f"out_first_share_seat{s}"] for s in range(P)) - 1) < 1e-9
    assert m["rounds_per_game"] >= 1 and m["plays_per_trick"] >= 1


@pytest.mark.parametrize("P", [2, 3, 4, 5, 6])
def test_cards_are_conserved_under_the_flat_table(P):
    # with 1 point a card, the points left equal the cards left, and cards played per round
    # (counted from the trace) plus cards left equal the cards dealt
    p = params(points="flat", two_player_end="target")
    hand = int(pgc.HAND_SIZE[P]) * (2 if P == 2 else 1)
    for g in range(20):
        rows, events = trace(p, ["random"] * P, 3, g)
        played = sum(bin(int(e[3]) & ((1 << 64) - 1)).count("1")
                     for e in events if e[0] == pgc.E_PLAY)
        rounds = counter(rows, P, "rounds")[0]
        assert played + rows[0, :P].sum() == rounds * hand * P


# ---- bulk play: threads, chunks, serial -------------------------------------------------------
@pytest.mark.parametrize("P,rules", [(4, {}), (2, {}), (6, {"overwrite_up": True}), (3, ODD_RULES)])
def test_serial_parallel_and_chunkings_agree(P, rules):
    p = params(**rules)
    pol = ["random", "heuristic"] * 3
    pol = pol[:P]
    whole = run(p, pol, 99, 1000, 300)
    serial = run(p, pol, 99, 1000, 300, serial=True)
    a = run(p, pol, 99, 1000, 117)
    b = run(p, pol, 99, 1117, 183)
    assert (whole == serial).all()
    assert (whole == np.vstack([a, b])).all()
    assert not (run(p, pol, 100, 1000, 300) == whole).all()


def trace(p, policies, seed, g):
    P = len(policies)
    out = np.zeros((1, layout.out_width(P, pgc.N_COUNTERS)), dtype=np.int64)
    ev = np.zeros((6000, layout.EVENT_WIDTH), dtype=np.int64)
    ev_n = np.zeros(1, dtype=np.int64)
    pgc.trace_game(p, seats_of(policies), seed, g, out, ev, ev_n)
    assert ev_n[0] <= ev.shape[0]
    return out, ev[:ev_n[0]]


@pytest.mark.parametrize("P,rules", [(4, {}), (2, {}), (5, {"overwrite_up": True}), (3, {"extra_deal": True})])
def test_trace_equals_run(P, rules):
    p = params(**rules)
    pol = ["heuristic", "random"] * 3
    rows = run(p, pol[:P], 5, 40, 10)
    for i in range(10):
        out, _ = trace(p, pol[:P], 5, 40 + i)
        assert (out[0] == rows[i]).all()


# ---- every kernel play is legal by the reference, replayed from the trace ------------------------
def mask_numbers(mask, fifth=0):
    # trace card id = rank * 4 + copy; the 5th copies' mask has bit rank * 4
    nums = [int(pgc.NUMBER[b // 4]) for b in range(64) if (int(mask) >> b) & 1]
    nums += [int(pgc.NUMBER[b // 4]) for b in range(64) if (int(fifth) >> b) & 1]
    return Counter(nums)


def replay(rules, P, policies, seed, g):
    """Replay the kernel's trace through the reference's rules: every play must be legal there
    and every dealt, held and scored card must match."""
    p = params(**rules)
    out, events = trace(p, policies, seed, g)
    ref = pgc_ref.Game(rules, P, policies, seed, g)
    ref.fixed_rounds = 2 if (P == 2 and ref.rules["two_player_end"] == "two-hands") else 0
    kinds = {pgc.K_SINGLE: "single", pgc.K_SET: "set", pgc.K_RUN: "run"}
    for e in events:
        code, seat, v = int(e[0]), int(e[1]), [int(x) for x in e[2:10]]
        if code == pgc.E_ROUND:
            ref.round = v[0]
            ref.deal(v[0])
            ref.out = None
            ref.end_trick(v[1])
        elif code == pgc.E_DEAL:
            held = ref.hand[seat] if v[1] == 0 else ref.second[seat]
            assert mask_numbers(v[2], v[3]) == +held and v[4] == sum(held.values())
        elif code in (pgc.E_PLAY, pgc.E_PASS):
            assert seat == ref.to_act
            legal = ref.legal(seat)
            choice, options = (v[0], v[1]) if code == pgc.E_PASS else (v[6], v[7])
            assert len(legal) == options
            if code == pgc.E_PASS:
                a = ("pass",)
            else:
                typ, kind, low, size = v[0], kinds[v[2]], v[3] // 4, v[4]
                if kind == "run":
                    meld = tuple(int(pgc.NUMBER[r]) for r in range(low, low + size))
                else:
                    meld = (int(pgc.NUMBER[low]),) * size
                a = (pgc.ACTION_NAMES[typ], meld)
                assert mask_numbers(v[1]) == ref.cards_played(a)
            assert a in legal and legal.index(a) == choice
            ref.act(seat, a)
        elif code == pgc.E_SCORE:
            assert ref.out is not None
            pts = 0 if seat == ref.out else ref.left_points(seat)
            assert v[1] == pts
            before = ref.scores[seat]
            ref.scores[seat] += pts
            assert v[2] == ref.scores[seat] >= before              # scores never fall
            assert (pts == 0) == (seat == ref.out)                  # only the winner scores 0
    return out


@pytest.mark.parametrize("P,rules", [(2, {}), (3, {"extra_deal": True}), (4, {"overwrite_up": True}),
                                     (5, ODD_RULES), (6, {})])
def test_every_traced_play_is_legal_under_the_reference_rules(P, rules):
    for g in range(8):
        pol = (["random"] * P) if g % 2 else (["heuristic"] * P)
        replay(rules, P, pol, 21, g)


# ---- game-by-game agreement with the plain statement --------------------------------------------
def ref_row(res):
    c = [res["counters"].get(x.name, 0) for x in pgc.COUNTERS]
    return (res["scores"] + res["places"]
            + [res["winners"], res["length"], res["timeout"], res["decisions"]] + c)


REF_CASES = [(v, P, "random", 160 if P in (2, 3) else 100) for v, P in CASES] + [
    ("odd", 4, "random", 120), ("odd", 2, "random", 80), ("odd", 6, "random", 60),
    ("round-win", 3, "random", 80),
    ("base", 4, "heuristic", 60), ("base", 2, "heuristic", 60), ("overwrite", 5, "mixed", 50),
    ("short", 6, "mixed", 50), ("extra-deal", 3, "heuristic", 50),
]


@pytest.mark.parametrize("variant,P,policy,n", REF_CASES)
def test_kernel_agrees_with_the_plain_statement(variant, P, policy, n):
    if variant == "odd":
        rules = ODD_RULES
    elif variant == "round-win":
        rules = {"random_win": "round"}
    else:
        rules = VARIANTS[variant][1]
    pols = [policy] * P if policy != "mixed" else ["heuristic" if s % 2 else "random" for s in range(P)]
    out = run(params(**rules), pols, 2026, 500, n)
    for i in range(n):
        assert ref_row(pgc_ref.play_game(rules, P, pols, 2026, 500 + i)) == without_arc(out[i], pgc.N_COUNTERS).tolist(), i


def test_a_low_round_cap_times_out_with_no_winner():
    p = params(max_rounds=1)
    out = run(p, ["random"] * 4, 8, 0, 200)
    one_round = counter(out, 4, "rounds") == 1
    assert one_round.all()
    timed = out[:, layout.col_flags(4)] == layout.FLAG_TIMEOUT
    # one round ends the game only if someone reached 20 in it; otherwise a timeout
    assert (timed == (out[:, :4].max(axis=1) < 20)).all()
    assert (out[timed, layout.col_winners(4)] == 0).all()
    assert timed.any() and (~timed).any()
    assert (pgc_ref.play_game({"max_rounds": 1}, 4, ["random"] * 4, 8, 3)["timeout"] == timed[3])


# ---- statistics ---------------------------------------------------------------------------------
def test_random_choices_are_uniform_over_distinct_actions():
    # 4p, seat 0 holds 3, 3, 4, 9: onto a single 2 it may Overwrite with 3, 4 or 9, Add to make
    # 2-3 or 2-3-4, or Pass -> 6 distinct actions (the two 3s give one "single 3")
    from tests.test_pgc_rules import state
    p = params()
    st = state(4, [[3, 3, 4, 9], [1], [1], [1]], central=[2])
    acts = np.zeros(pgc.MAX_ACTIONS, dtype=np.int64)
    n = pgc.legal_actions(st, p, acts)
    assert n == 6
    counts = np.zeros(n)
    keys = np.zeros(4, dtype=np.uint64)
    ctrs = np.zeros(4, dtype=np.int64)
    tmp = np.zeros(6, dtype=np.int64)
    for g in range(6000):
        keys[0] = rng.stream_key(1, g, rng.SEAT, 0)
        ctrs[0] = 0
        counts[pgc.random_choice(st, p, acts, n, keys, ctrs, 0, 20, tmp)] += 1
    expected = counts.sum() / n
    assert ((counts - expected) ** 2 / expected).sum() < 25.74   # chi-square 5 df, p = 1e-4


def test_deals_are_uniform_over_ranks_and_seats():
    # 6000 4p deals: each seat's copies of each rank; 12 of 52 cards -> mean 12/13 a rank
    p = params()
    st = pgc.new_state(4)
    deck = np.zeros(pgc.MAX_DECK, dtype=np.int64)
    keys = np.zeros(1, dtype=np.uint64)
    ctrs = np.zeros(1, dtype=np.int64)
    tot = np.zeros((4, 13))
    for g in range(3000):
        pgc.deal_round(st, p, 4, g, g % 3, deck, keys, ctrs, 0)
        tot += st[pgc.HAND:pgc.HAND + 4 * 13].reshape(4, 13)
    expected = 3000 * 12 / 13
    # each cell: hypergeometric count, variance 12 * (4/52) * (48/52) * (40/51) per deal
    var = 3000 * 12 * (4 / 52) * (48 / 52) * (40 / 51)
    z = (tot - expected) / np.sqrt(var)
    assert np.abs(z).max() < 4.5
