"""pgc restricted play (issue #15): ``no-overwrite``, ``no-add``, ``no-runs``, ``no-sets-of-4+``.

Seats are hand-built 6-wide rows ``[policy, arg0, arg1, arg2, forbid, watch]`` (the CLI's
``POLICY+RESTRICTION`` parsing is tested elsewhere). What a restriction forbids is restated here
from docs/games/pgc.md on the reference's action words, and whole restricted games are checked
against the plain-Python statement (tests/reference/pgc_ref.py) with the restricted seat's legal
actions filtered the same way: so the kernel's restricted random seat must make the reference's
one uniform draw over what is left, and its heuristic the reference's best remaining play.
"""
import numpy as np
import pytest

from tests.helpers import without_arc

from kernels import layout, pgc, rng
from kernels.spec import SEAT_FORBID, SEAT_WATCH, SEAT_WIDTH
from tests.reference import pgc_ref
from tests.test_pgc_games import ref_row
from tests.test_pgc_rules import action, params, state

BIT = {r.name: 1 << r.bit for r in pgc.RESTRICTIONS}
ALL = sum(BIT.values())
C_FORBIDDEN = [c.name for c in pgc.COUNTERS].index("restriction_forbidden")
C_YIELDED = [c.name for c in pgc.COUNTERS].index("restriction_yielded")


def forbidden(names, a):
    """Does a restriction in ``names`` forbid the reference action ``a``? (docs/games/pgc.md)"""
    if a[0] == "pass":
        return False
    meld = a[1]
    kind = pgc_ref.kind_of(meld)
    return (("no-overwrite" in names and a[0] == "overwrite")
            or ("no-add" in names and a[0] == "add")
            or ("no-runs" in names and kind == "run")
            or ("no-sets-of-4+" in names and kind == "set" and len(meld) >= 4))


def names_of(mask):
    return {r.name for r in pgc.RESTRICTIONS if mask >> r.bit & 1}


class RestrictedRef(pgc_ref.Game):
    """The reference game with each seat's legal actions cut by its forbid mask (all of them
    when that would leave none), and watched choices counted."""

    def __init__(self, rules, players, policies, seed, game, forbid, watch):
        super().__init__(rules, players, policies, seed, game)
        self.forbid = [names_of(m) for m in forbid]
        self.watch = [names_of(m) for m in watch]

    def legal(self, seat):
        acts = super().legal(seat)
        left = [a for a in acts if not forbidden(self.forbid[seat], a)]
        if not left:
            self.counters["restriction_yielded"] += 1
            return acts
        return left

    def act(self, seat, a):
        if forbidden(self.watch[seat], a):
            self.counters["restriction_forbidden"] += 1
        return super().act(seat, a)


def seats_of(policies, forbid=None, watch=None, width=SEAT_WIDTH):
    P = len(policies)
    s = np.zeros((P, width), dtype=np.int64)
    for i, name in enumerate(policies):
        pol, *args = name.split(":")
        s[i, 0] = pgc.POLICIES[pol]
        if pol == "mc":
            s[i, 1] = int(args[0])
            s[i, 2] = pgc.POLICIES[args[1]]
    if width > SEAT_WATCH:
        s[:, SEAT_FORBID] = forbid if forbid is not None else 0
        s[:, SEAT_WATCH] = watch if watch is not None else 0
    return s


def run(p, seats, seed, first, n):
    out = np.full((n, layout.out_width(seats.shape[0], pgc.N_COUNTERS)), -7, dtype=np.int64)
    pgc.play_games_serial(p, seats, np.int64(seed), np.int64(first), out)
    return out


def trace(p, seats, seed, g):
    out = np.zeros((1, layout.out_width(seats.shape[0], pgc.N_COUNTERS)), dtype=np.int64)
    ev = np.zeros((8000, layout.EVENT_WIDTH), dtype=np.int64)
    ev_n = np.zeros(1, dtype=np.int64)
    pgc.trace_game(p, seats, np.int64(seed), np.int64(g), out, ev, ev_n)
    return out[0], ev[:ev_n[0]]


def traced_actions(events, seat):
    """The reference words of every action ``seat`` took, from E_PLAY / E_PASS events."""
    kinds = {pgc.K_SINGLE: "single", pgc.K_SET: "set", pgc.K_RUN: "run"}
    taken = []
    for e in events:
        if int(e[1]) != seat:
            continue
        if e[0] == pgc.E_PASS:
            taken.append(("pass",))
        elif e[0] == pgc.E_PLAY:
            typ, kind, low, size = int(e[2]), kinds[int(e[4])], int(e[5]) // 4, int(e[6])
            if kind == "run":
                meld = tuple(int(pgc.NUMBER[r]) for r in range(low, low + size))
            else:
                meld = (int(pgc.NUMBER[low]),) * size
            taken.append((pgc.ACTION_NAMES[typ], meld))
    return taken


# ---- declarations ------------------------------------------------------------------------------
def test_declarations():
    assert [r.name for r in pgc.RESTRICTIONS] == ["no-overwrite", "no-add", "no-runs", "no-sets-of-4+"]
    assert [r.bit for r in pgc.RESTRICTIONS] == [0, 1, 2, 3]
    assert [c.name for c in pgc.COUNTERS[-2:]] == ["restriction_forbidden", "restriction_yielded"]


# ---- the options a restriction leaves, on hand-built states --------------------------------------
def left_after(st, p, mask):
    acts = np.zeros(pgc.MAX_ACTIONS, dtype=np.int64)
    n = pgc.legal_actions(st, p, acts)
    k, yielded = pgc.restrict_actions(acts, n, np.int64(mask))
    return [int(a) for a in acts[:k]], yielded


def test_options_left_on_a_single():
    # seat 0 holds 3, 3, 4, 9 onto a single 2: Overwrite 3, 4 or 9; Add to make 2-3 or 2-3-4; Pass
    p = params()
    st = state(4, [[3, 3, 4, 9], [1], [1], [1]], central=[2])
    ow = [action("overwrite", [n]) for n in (3, 4, 9)]
    add = [action("add", [2, 3]), action("add", [2, 3, 4])]
    ps = [action("pass")]
    assert left_after(st, p, 0) == (ow + add + ps, 0)
    assert left_after(st, p, BIT["no-overwrite"]) == (add + ps, 0)
    assert left_after(st, p, BIT["no-add"]) == (ow + ps, 0)
    assert left_after(st, p, BIT["no-runs"]) == (ow + ps, 0)       # both Adds make runs
    assert left_after(st, p, BIT["no-sets-of-4+"]) == (ow + add + ps, 0)
    assert left_after(st, p, ALL) == (ps, 0)                        # Pass is never forbidden


def test_options_left_on_a_set():
    # seat 1 holds 5, 5, 7, 8 onto the set 5-5 (4 copies at 4p): Overwrite 7-7? no (one 7);
    # Add one 5 (set of 3) or two (set of 4, ends the trick); Pass
    p = params()
    st = state(4, [[1], [5, 5, 7, 8], [1], [1]], central=[5, 5], to_act=1)
    add3, add4 = action("add", [5, 5, 5]), action("add", [5, 5, 5, 5])
    assert left_after(st, p, 0) == ([add3, add4, action("pass")], 0)
    assert left_after(st, p, BIT["no-sets-of-4+"]) == ([add3, action("pass")], 0)
    assert left_after(st, p, BIT["no-runs"]) == ([add3, add4, action("pass")], 0)


def test_a_leader_always_keeps_a_single():
    # leading with 1-2-3 only: the runs 1-2, 2-3, 1-2-3 go under no-runs, the singles stay
    p = params()
    st = state(4, [[1, 2, 3], [1], [1], [1]])
    singles = [action("lead", [n]) for n in (1, 2, 3)]
    assert left_after(st, p, ALL) == (singles, 0)


def test_the_restriction_yields_when_every_option_is_forbidden():
    # pgc never offers such a list (a responder may always Pass), so build one: two Overwrites
    acts = np.array([action("overwrite", [3]), action("overwrite", [4])] + [0] * 10, dtype=np.int64)
    k, yielded = pgc.restrict_actions(acts, 2, np.int64(BIT["no-overwrite"]))
    assert (k, yielded) == (2, 1)
    assert acts[:2].tolist() == [action("overwrite", [3]), action("overwrite", [4])]


def test_random_restricted_is_one_uniform_draw_over_what_is_left():
    # no-overwrite on the single-2 state leaves [add 2-3, add 2-3-4, pass]: the random seat's
    # choice must be that list's entry ``below(3)`` from the seat's stream, one draw
    p = params()
    st = state(4, [[3, 3, 4, 9], [1], [1], [1]], central=[2])
    acts = np.zeros(pgc.MAX_ACTIONS, dtype=np.int64)
    n = pgc.legal_actions(st, p, acts)
    n, _ = pgc.restrict_actions(acts, n, np.int64(BIT["no-overwrite"]))
    assert n == 3
    keys = np.zeros(4, dtype=np.uint64)
    ctrs = np.zeros(4, dtype=np.int64)
    k2 = np.zeros(4, dtype=np.uint64)
    c2 = np.zeros(4, dtype=np.int64)
    tmp = np.zeros(6, dtype=np.int64)
    counts = np.zeros(3)
    for g in range(3000):
        keys[0] = k2[0] = rng.stream_key(3, g, rng.SEAT, 0)
        ctrs[0] = c2[0] = 0
        i = pgc.random_choice(st, p, acts, n, keys, ctrs, 0, 20, tmp)
        assert i == rng.below(k2, c2, 0, 3) and ctrs[0] == c2[0]
        counts[i] += 1
    assert ((counts - 1000) ** 2 / 1000).sum() < 18.42      # chi-square 2 df, p = 1e-4


# ---- whole games against the restricted reference ------------------------------------------------
REF_CASES = [
    (4, ["random"] * 4, "no-overwrite"), (4, ["random"] * 4, "no-add"),
    (4, ["random"] * 4, "no-runs"), (4, ["random"] * 4, "no-sets-of-4+"),
    (3, ["heuristic", "random", "heuristic"], "no-overwrite"),
    (4, ["heuristic"] * 4, "no-add"), (4, ["heuristic"] * 4, "no-runs"),
    (2, ["heuristic", "random"], "no-sets-of-4+"), (5, ["random", "heuristic"] * 2 + ["random"], "ALL"),
]


@pytest.mark.parametrize("P,pols,restriction", REF_CASES)
def test_restricted_games_agree_with_the_restricted_reference(P, pols, restriction):
    mask = ALL if restriction == "ALL" else BIT[restriction]
    forbid = [mask if s == 0 else 0 for s in range(P)]     # seat 0 restricted, seat 1 watched
    watch = [mask if s == 1 else 0 for s in range(P)]
    out = run(params(), seats_of(pols, forbid, watch), 2026, 300, 30)
    for i in range(30):
        res = RestrictedRef({}, P, pols, 2026, 300 + i, forbid, watch).play()
        assert ref_row(res) == without_arc(out[i], pgc.N_COUNTERS).tolist(), i


@pytest.mark.parametrize("P,pols", [(4, ["random", "heuristic", "random", "heuristic"]),
                                    (2, ["heuristic", "random"])])
def test_a_restricted_seat_never_takes_a_forbidden_option(P, pols):
    p = params()
    for r in pgc.RESTRICTIONS:
        seen_watched = 0
        for s in range(P):
            forbid = [1 << r.bit if t == s else 0 for t in range(P)]
            for g in range(10):
                _, ev = trace(p, seats_of(pols, forbid), 11, g)
                taken = traced_actions(ev, s)
                assert taken and not any(forbidden({r.name}, a) for a in taken), (r.name, s, g)
                seen_watched += sum(forbidden({r.name}, a) for t in range(P) if t != s
                                    for a in traced_actions(ev, t))
        assert seen_watched > 0            # the others did take it: the check had teeth


def test_mc_restricted_never_takes_a_forbidden_option():
    # 2p, an mc seat (budget 3, random rollouts) under no-add + no-runs: neither at the root ...
    p = params()
    mask = BIT["no-add"] | BIT["no-runs"]
    taken = []
    for g in range(3):
        _, ev = trace(p, seats_of(["mc:3:random", "heuristic"], [mask, 0]), 5, g)
        taken += traced_actions(ev, 0)
    assert taken and not any(forbidden({"no-add", "no-runs"}, a) for a in taken)


def test_mc_rollouts_obey_the_seat_restriction():
    # ... nor in its own rollouts: the kernel's rollout with (me = 0, no-add) must replay, draw
    # for draw, a rollout written out here in which seat 0's options are cut before each draw
    p = params()
    st = state(2, [[2, 3, 4, 5, 7, 9, 12], [1, 2, 3, 11, 13, 14, 15]], central=[1])
    mask = np.int64(BIT["no-add"])

    def keys_ctrs(g):
        keys = np.zeros(5, dtype=np.uint64)
        keys[3] = rng.stream_key(9, g, rng.SEARCH, 0)
        return keys, np.zeros(5, dtype=np.int64)

    def by_hand(forbid, g):
        keys, ctrs = keys_ctrs(g)
        st2 = st.copy()
        acts = np.zeros(pgc.MAX_ACTIONS, dtype=np.int64)
        tmp = np.zeros(6, dtype=np.int64)
        taken = []
        while st2[pgc.S_OUT] < 0:
            m = pgc.legal_actions(st2, p, acts)
            if st2[pgc.S_TO_ACT] == 0:
                left = [a for a in acts[:m] if not (forbid and pgc.act_type(a) == pgc.A_ADD)]
                acts[:len(left)] = left
                m = len(left)
            i = pgc.random_choice_on(st2, p, acts, m, keys, ctrs, 3, 2, 20, tmp)
            taken.append((int(st2[pgc.S_TO_ACT]), int(acts[i])))
            pgc.apply_action(st2, p, acts[i])
        return taken, st2

    def kernel(forbid, g):
        keys, ctrs = keys_ctrs(g)
        st2 = st.copy()
        turns = pgc.rollout(st2, p, pgc.P_RANDOM, keys, ctrs, 3, 2, 20,
                            np.zeros(pgc.MAX_ACTIONS, dtype=np.int64), np.zeros(6, dtype=np.int64),
                            0, forbid)
        return turns, st2

    would_add = 0
    for g in range(12):
        free, _ = by_hand(False, g)
        would_add += any(s == 0 and pgc.act_type(a) == pgc.A_ADD for s, a in free)
        cut, end = by_hand(True, g)
        assert not any(s == 0 and pgc.act_type(a) == pgc.A_ADD for s, a in cut)
        turns, kend = kernel(mask, g)
        assert turns == len(cut) and (kend == end).all()
    assert would_add > 0                   # unrestricted, seat 0 does Add in some rollouts


# ---- no restriction bits: bit-identical play ------------------------------------------------------
def test_narrow_zero_and_meaningless_masks_play_identical_games():
    p = params()
    pols = ["random", "heuristic", "random", "heuristic"]
    narrow = run(p, seats_of(pols, width=4), 4, 0, 150)
    zero = run(p, seats_of(pols), 4, 0, 150)
    # a bit no restriction uses forbids nothing ever offered: the very same games
    unused = run(p, seats_of(pols, forbid=[1 << 20] * 4), 4, 0, 150)
    assert (narrow == zero).all() and (narrow == unused).all()
    assert (narrow[:, layout.col_counter(4, C_FORBIDDEN)] == 0).all()
    assert (narrow[:, layout.col_counter(4, C_YIELDED)] == 0).all()


def test_watch_bits_only_count():
    # watching every restriction changes no game; the count is every watched action in the trace
    p = params()
    pols = ["random", "heuristic", "random", "heuristic"]
    base = run(p, seats_of(pols), 8, 0, 40)
    watched = run(p, seats_of(pols, watch=[ALL] * 4), 8, 0, 40)
    col = layout.col_counter(4, C_FORBIDDEN)
    keep = [j for j in range(base.shape[1]) if j != col]
    assert (base[:, keep] == watched[:, keep]).all()
    for g in range(10):
        _, ev = trace(p, seats_of(pols, watch=[ALL] * 4), 8, g)
        n = sum(forbidden(set(BIT), a) for s in range(4) for a in traced_actions(ev, s))
        assert watched[g, col] == n > 0


# ---- the sign of an effect on a clearly one-sided case ------------------------------------------
def test_a_seat_that_may_only_lead_or_pass_wins_less():
    # no-overwrite + no-add: the seat sheds cards only when it leads. On the same 300 deals its
    # win share against three heuristics must fall (paired by deal, seat 0 restricted)
    p = params()
    pols = ["heuristic"] * 4
    n = 300
    base = run(p, seats_of(pols), 12, 0, n)
    mask = BIT["no-overwrite"] | BIT["no-add"]
    restr = run(p, seats_of(pols, forbid=[mask, 0, 0, 0]), 12, 0, n)
    win = layout.col_winners(4)
    w0 = (base[:, win] & 1).astype(float) / np.maximum(1, [bin(int(m)).count("1") for m in base[:, win]])
    w1 = (restr[:, win] & 1).astype(float) / np.maximum(1, [bin(int(m)).count("1") for m in restr[:, win]])
    d = w1 - w0
    z = d.mean() / (d.std(ddof=1) / np.sqrt(n))
    assert z < -4, (w0.mean(), w1.mean(), z)
    assert (restr[:, layout.col_counter(4, C_YIELDED)] == 0).all()
