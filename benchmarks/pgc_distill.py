"""pgc 2p: distil mc:16:tuned's choice at the turns where tuned would Add (issue #24, session 16).

Plays whole 2-player games (two rounds, seat 0 leads round 1, round 2 seat 1, as ``play_one``)
from Python with the kernel's own functions, each seat on one of

* ``tuned``     the tuned rule (``heuristic_choice``) with the knob file ``--knobs``;
* ``mc``        ``mc:BUDGET:tuned`` at every turn with 2+ options (rollouts on ``--rollout``);
* ``hyb-add``   tuned, except where tuned would Add: there mc decides (a seat that plays mc's way
                exactly at the decisions the session-15 rule was about);
* ``hyb-resp``  tuned, except at every responding turn with 2+ options: there mc decides;
* ``hyb-lead``  tuned, except at every Lead with 2+ options: there mc decides;
* ``hyb-lead8`` tuned, except at a Lead where tuned would lead an 8: there mc decides;
* ``tree-add``  tuned, except where tuned would Add: there the depth-3 tree fitted to mc's choices
                (``tree_add``) decides between that Add and tuned's best Overwrite.
* ``hyb-leadc`` tuned, except at the Leads with 2+ options where ``--cond`` holds: there mc decides
                (session 17: which Leads carry the gain; ``--cond`` is a Python expression over
                ``c[...]``, the names in ``LEAD_CONTEXT``, e.g. ``"c['reserve'] == 0"``).

Deals and search draws come from the game's own streams (``rng.DEAL``, ``rng.SEARCH``, seat s's
search on SEARCH s), so two seats on ``tuned`` (or on ``mc``) replay ``simcli run pgc --players 2
--policy tuned`` (``mc:16:tuned``) game for game.

``log``: every seat on ``--seats``; at each turn where the acting seat's tuned rule would Add,
one row of features plus tuned's and the acting seat's choice (``--out`` .npz).
``fit``: shallow gini trees (depth 1-4, at least 200 rows a leaf) fitted to mc's action type at
the logged Add turns of ``--train`` (games below ``--split``; the rest held out) and scored on
the held-out games and on ``--test`` (a log of another seed), next to tuned's agreement.
``leads``: the logged Leads of ``--train``: mc's and tuned's Lead sizes, 8s and 13-15s, mc's 8-Lead
share by cards in play where tuned leads an 8, and the Lead-8 rule's agreement (``--left``).
``leadfit``: a conditional logit over each logged Lead's options (``OPTION_FEATURES``) fitted to
mc's Leads of ``--train``, its top option's agreement with mc on ``--train`` and ``--test``.
``pair``: deals 0..games-1, each played twice (A at seat 0, then at seat 1) with A = ``--a``,
B = ``--b``; A's win share (ties shared) with a 95% interval over deals, and turns a game.

    PYTHONPATH=$PWD python3 benchmarks/pgc_distill.py log --seats mc,mc --games 500 --seed 8 --out /tmp/x.npz
    PYTHONPATH=$PWD python3 benchmarks/pgc_distill.py fit --train /tmp/x.npz --test /tmp/y.npz
    PYTHONPATH=$PWD python3 benchmarks/pgc_distill.py pair --a hyb-add --b tuned --games 1000 --seed 7
    PYTHONPATH=$PWD python3 benchmarks/pgc_distill.py pair --a hyb-leadc --cond "c['reserve'] == 0" --b tuned --games 1000 --seed 7

A logged Lead's row (``L_X``) is LEAD_FEATURES, the hand in play (13 counts), then (session 17)
the copies played this round (13), the opponent's hand in play (13), the score difference and the
round.
"""
from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from kernels import pgc, rng
from kernels.spec import MAX_KNOBS
from simcli.config import jobs as cfg, tuned

ROOT = Path(__file__).resolve().parent.parent
P = 2
MODES = ("tuned", "mc", "hyb-add", "hyb-resp", "hyb-lead", "hyb-lead8", "tree-add", "hyb-leadc")

# ``hyb-leadc`` (session 17): mc decides at the Leads where ``--cond`` (a Python expression over
# LEAD_CONTEXT) holds, tuned elsewhere: where in the Leads does mc's gain sit?
LEAD_CONTEXT = ("held", "reserve", "own_total", "opp_held", "opp_reserve", "opp_total", "round",
                "score_diff", "t_size", "t_kind", "t_top", "t_low", "t_eight", "leads", "turn")


def lead_context(st, params, a_t, leads, turn):
    seat = int(st[pgc.S_TO_ACT])
    opp = 1 - seat
    return dict(held=int(st[pgc.N_HELD + seat]), reserve=int(st[pgc.RESERVE_ON + seat]),
                own_total=int(st[pgc.N_HELD + seat]) + 12 * int(st[pgc.RESERVE_ON + seat]),
                opp_held=int(st[pgc.N_HELD + opp]), opp_reserve=int(st[pgc.RESERVE_ON + opp]),
                opp_total=int(st[pgc.N_HELD + opp]) + 12 * int(st[pgc.RESERVE_ON + opp]),
                round=int(st[pgc.S_ROUND]), score_diff=int(st[pgc.SCORE + seat] - st[pgc.SCORE + opp]),
                t_size=int(pgc.act_size(a_t)), t_kind=int(pgc.act_kind(a_t)),
                t_top=int(pgc.meld_top(pgc.act_kind(a_t), pgc.act_low(a_t), pgc.act_size(a_t))),
                t_low=int(pgc.act_low(a_t)),
                t_eight=int(pgc.trick_end_cause(st, params, a_t) == pgc.T_EIGHT), leads=leads, turn=turn)

FEATURES = (
    "c_kind", "c_size", "c_low", "c_top", "trick_plays", "i_led",
    "held", "reserve", "opp_held", "opp_reserve", "round", "score_diff",
    "units", "n_distinct", "n_singles", "n_pairs", "n_trips", "n_chains", "hi_rank", "n_strong",
    "n_eights", "lo_rank",
    "n_over", "n_add", "add_shed", "add_end", "add_kind", "add_size_after", "add_top",
    "v_add", "v_over", "v_gap", "over_shed", "over_top", "over_end", "left_after_add",
    "unseen_c", "opp_total",
)


def knob_row(path):
    vals = tuned.load_file(pgc, path, 2)
    row = pgc.KNOB_DEFAULTS.copy()
    for k in pgc.KNOBS:
        row[k.index] = vals[k.name]
    return row


def chains(held):
    """Maximal runs of 2+ consecutive held numbers (no run across 6 or 10)."""
    c = 0
    r = 0
    while r < pgc.N_RANKS:
        if (held >> r) & 1:
            ln = 1
            while r + 1 < pgc.N_RANKS and pgc.NEXT_OK[r] and (held >> (r + 1)) & 1:
                r += 1
                ln += 1
            c += ln >= 2
        r += 1
    return c


def values(st, params, acts, n):
    """Tuned's value of every option (REFUSED for refused plays and Pass)."""
    seat = int(st[pgc.S_TO_ACT])
    kb = pgc.KNOB + seat * MAX_KNOBS
    held, _, _ = pgc.rank_masks(st, seat)
    units_now = pgc.units_of(held)
    danger = pgc.opponent_near_out(st, seat, st[kb + pgc.K_DANGER_CARDS])
    v = np.full(n, pgc.REFUSED, dtype=np.int64)
    for i in range(n):
        if pgc.act_type(acts[i]) != pgc.A_PASS:
            v[i] = pgc.heuristic_value(st, params, acts[i], held, units_now, True, danger)
    return v


def to_act_hand(st):
    """(seat to act, its opponent, its hand's counts by rank, the ranks held as a bit mask)."""
    seat = int(st[pgc.S_TO_ACT])
    hand = st[pgc.HAND + seat * 13: pgc.HAND + seat * 13 + 13]
    held = 0
    for r in range(13):
        if hand[r]:
            held |= 1 << r
    return seat, 1 - seat, hand, held


def features(st, params, acts, n, i_t, trick_plays, leader):
    seat, opp, hand, held = to_act_hand(st)
    v = values(st, params, acts, n)
    a_add = int(acts[i_t])
    overs = [i for i in range(n) if pgc.act_type(acts[i]) == pgc.A_OVERWRITE]
    adds = [i for i in range(n) if pgc.act_type(acts[i]) == pgc.A_ADD]
    ok_over = [i for i in overs if v[i] > pgc.REFUSED]
    bo = max(ok_over, key=lambda i: v[i]) if ok_over else -1
    c_kind, c_low, c_size = int(st[pgc.S_C_KIND]), int(st[pgc.S_C_LOW]), int(st[pgc.S_C_SIZE])
    shed = int(pgc.played_total(st, a_add))
    unseen = 4 - int(st[pgc.PLAYED + c_low]) - int(hand[c_low]) if c_kind != pgc.K_RUN else -1
    opp_total = int(st[pgc.N_HELD + opp]) + 12 * int(st[pgc.RESERVE_ON + opp])
    f = dict(
        c_kind=c_kind, c_size=c_size, c_low=c_low, c_top=int(pgc.meld_top(c_kind, c_low, c_size)),
        trick_plays=trick_plays, i_led=int(leader == seat),
        held=int(st[pgc.N_HELD + seat]), reserve=int(st[pgc.RESERVE_ON + seat]),
        opp_held=int(st[pgc.N_HELD + opp]), opp_reserve=int(st[pgc.RESERVE_ON + opp]),
        round=int(st[pgc.S_ROUND]), score_diff=int(st[pgc.SCORE + seat] - st[pgc.SCORE + opp]),
        units=int(pgc.units_of(held)), n_distinct=bin(held).count("1"),
        n_singles=int(np.sum(hand == 1)), n_pairs=int(np.sum(hand == 2)), n_trips=int(np.sum(hand >= 3)),
        n_chains=chains(held), hi_rank=int(max((r for r in range(13) if hand[r]), default=-1)),
        lo_rank=int(min((r for r in range(13) if hand[r]), default=13)),
        n_strong=int(hand[10:].sum()), n_eights=int(hand[pgc.EIGHT]),
        n_over=len(overs), n_add=len(adds), add_shed=shed,
        add_end=int(pgc.trick_end_cause(st, params, a_add) != pgc.T_ON),
        add_kind=pgc.act_kind(a_add), add_size_after=pgc.act_size(a_add),
        add_top=int(pgc.meld_top(pgc.act_kind(a_add), pgc.act_low(a_add), pgc.act_size(a_add))),
        v_add=int(v[i_t]), v_over=int(v[bo]) if bo >= 0 else -9999,
        v_gap=int(v[i_t] - v[bo]) if bo >= 0 else 9999,
        over_shed=int(pgc.played_total(st, acts[bo])) if bo >= 0 else 0,
        over_top=int(pgc.meld_top(pgc.act_kind(acts[bo]), pgc.act_low(acts[bo]), pgc.act_size(acts[bo])))
        if bo >= 0 else -1,
        over_end=int(pgc.trick_end_cause(st, params, acts[bo]) != pgc.T_ON) if bo >= 0 else 0,
        left_after_add=int(st[pgc.N_HELD + seat]) - shed,
        unseen_c=unseen, opp_total=opp_total,
    )
    return [f[k] for k in FEATURES]


LEAD_FEATURES = ("held", "reserve", "opp_held", "opp_reserve", "round", "units", "n_singles",
                 "n_pairs", "n_trips", "n_chains", "hi_rank", "lo_rank", "n_strong", "n_eights")


def lead_features(st, params):
    seat, opp, hand, held = to_act_hand(st)
    return [int(st[pgc.N_HELD + seat]), int(st[pgc.RESERVE_ON + seat]), int(st[pgc.N_HELD + opp]),
            int(st[pgc.RESERVE_ON + opp]), int(st[pgc.S_ROUND]), int(pgc.units_of(held)),
            int(np.sum(hand == 1)), int(np.sum(hand == 2)), int(np.sum(hand >= 3)), chains(held),
            int(max((r for r in range(13) if hand[r]), default=-1)),
            int(min((r for r in range(13) if hand[r]), default=13)), int(hand[10:].sum()),
            int(hand[pgc.EIGHT])] + [int(x) for x in hand] + [
            int(x) for x in st[pgc.PLAYED: pgc.PLAYED + 13]] + [
            int(x) for x in st[pgc.HAND + opp * 13: pgc.HAND + opp * 13 + 13]] + [
            int(st[pgc.SCORE + seat] - st[pgc.SCORE + opp]), int(st[pgc.S_ROUND])]


def tree_add(st, params, acts, n, i_t):
    """The depth-3 tree fitted on 700 games of seed 8 (docs/search.md, "Issue #24, session 16"):
    Overwrite (tuned's best Overwrite) when it is within 205 of the Add by tuned's values (its
    bonuses differ by 205, so: when the Overwrite's value without bonuses is at least the Add's),
    or within 252 with 3+ Overwrites to choose from; else the Add. Returns the option index."""
    v = values(st, params, acts, n)
    overs = [i for i in range(n) if pgc.act_type(acts[i]) == pgc.A_OVERWRITE and v[i] > pgc.REFUSED]
    if not overs:
        return i_t
    bo = max(overs, key=lambda i: (v[i], -i))
    gap = v[i_t] - v[bo]
    if gap <= 205 or (gap <= 252 and len([i for i in range(n) if pgc.act_type(acts[i]) == pgc.A_OVERWRITE]) >= 3):
        return bo
    return i_t


def game_basics(game, a) -> None:
    """What every scripted 2p game of these benchmarks holds: the rules, the --knobs row, the
    search budget and the kernel's working arrays (also pgc_qlead.Game)."""
    game.params = cfg.resolve("pgc", None, 2, policy="heuristic").params
    game.krow = knob_row(a.knobs)
    game.budget = a.budget
    game.acts = np.zeros(pgc.MAX_ACTIONS, dtype=np.int64)
    game.deck = np.zeros(pgc.MAX_DECK, dtype=np.int64)
    game.mcstat = np.zeros(2, dtype=np.int64)


class Game:
    def __init__(self, a):
        game_basics(self, a)
        self.mrow = knob_row(a.rollout)
        self.ask = np.empty(pgc.STATE_SIZE, dtype=np.int64)
        self.twice = getattr(a, "twice", False)
        self.again = {"add": [0, 0], "lead": [0, 0]}     # mc's choice repeated: [same, asked]
        self.cond = eval("lambda c: " + a.cond) if getattr(a, "cond", None) else None
        self.nc = [0, 0]                                 # hyb-leadc: Leads handed to mc, Leads

    def play(self, seed, g, modes, log=None, leads=None):
        """One game; returns (scores, turns, counts of lead/overwrite/add/pass)."""
        params, acts = self.params, self.acts
        st = pgc.new_state(P)
        for s in range(P):
            row = self.mrow if modes[s] != "tuned" else self.krow
            st[pgc.KNOB + s * MAX_KNOBS: pgc.KNOB + (s + 1) * MAX_KNOBS] = row
        keys = np.zeros(3 * P + 1, dtype=np.uint64)
        ctrs = np.zeros(3 * P + 1, dtype=np.int64)
        for s in range(P):
            keys[s] = rng.stream_key(seed, g, rng.SEAT, s)
            keys[P + 1 + s] = rng.stream_key(seed, g, rng.SEARCH, s)
            # --twice: a second, independent search of the same position (SEARCH index 10 + s)
            keys[2 * P + 1 + s] = rng.stream_key(seed, g, rng.SEARCH, 10 + s)
        turns = 0
        mix = np.zeros(4, dtype=np.int64)
        for rnd in range(2):
            st[pgc.S_ROUND] = rnd
            pgc.deal_round(st, params, seed, g, rnd, self.deck, keys, ctrs, P)
            st[pgc.S_OUT] = -1
            pgc.clear_trick(st, rnd % P)
            trick_plays = 0
            leader = rnd % P
            nlead = [0, 0]
            rturn = 0
            while st[pgc.S_OUT] < 0:
                seat = int(st[pgc.S_TO_ACT])
                n = pgc.legal_actions(st, params, acts)
                mode = modes[seat]
                # tuned's choice with the --knobs row
                self.ask[:] = st
                self.ask[pgc.KNOB + seat * MAX_KNOBS: pgc.KNOB + (seat + 1) * MAX_KNOBS] = self.krow
                i_t = pgc.heuristic_choice(self.ask, params, acts, n)
                t_add = pgc.act_type(acts[i_t]) == pgc.A_ADD
                responding = st[pgc.S_C_SIZE] > 0
                use_mc = n > 1 and (mode == "mc" or (mode == "hyb-add" and t_add)
                                    or (mode == "hyb-resp" and responding)
                                    or (mode == "hyb-lead" and not responding)
                                    or (mode == "hyb-lead8" and not responding
                                        and pgc.trick_end_cause(st, params, acts[i_t]) == pgc.T_EIGHT))
                if mode == "hyb-leadc" and not responding and n > 1:
                    use_mc = bool(self.cond(lead_context(st, params, acts[i_t], nlead[seat], rturn)))
                    self.nc[0] += use_mc
                    self.nc[1] += 1
                if mode == "tree-add" and t_add:
                    i = tree_add(self.ask, params, acts, n, i_t)
                elif use_mc:
                    i = pgc.mc_choose(st, params, acts, n, self.budget, pgc.P_TUNED, keys, ctrs,
                                      P + 1 + seat, 2, params[pgc.R_TARGET], self.mcstat, 0)
                else:
                    i = i_t
                if self.twice and use_mc and (t_add or not responding):
                    i2 = pgc.mc_choose(st, params, acts, n, self.budget, pgc.P_TUNED, keys, ctrs,
                                       2 * P + 1 + seat, 2, params[pgc.R_TARGET], self.mcstat, 0)
                    c = self.again["add" if t_add else "lead"]
                    c[0] += int(i2 == i)
                    c[1] += 1
                if log is not None and t_add:
                    log.append((g, rnd, seat, pgc.act_type(acts[i_t]), pgc.act_type(acts[i]),
                                int(i == i_t), n, features(self.ask, params, acts, n, i_t, trick_plays, leader)))
                if leads is not None and not responding and n > 1:
                    leads.append((g, rnd, seat, int(acts[i_t]), int(acts[i]), lead_features(self.ask, params)))
                a = acts[i]
                typ = pgc.act_type(a)
                mix[typ] += 1
                turns += 1
                rturn += 1
                if not responding:
                    nlead[seat] += 1
                if typ == pgc.A_LEAD:
                    leader = seat
                    trick_plays = 1
                elif typ != pgc.A_PASS:
                    trick_plays += 1
                pgc.apply_action(st, params, a)
                if st[pgc.S_C_SIZE] == 0:
                    trick_plays = 0
            w = int(st[pgc.S_OUT])
            for s in range(P):
                if s != w:
                    st[pgc.SCORE + s] += pgc.points_held(st, params, s)
        return st[pgc.SCORE: pgc.SCORE + P].copy(), turns, mix


def share(scores, s):
    best = scores.min()
    w = scores == best
    return (1.0 / w.sum()) if w[s] else 0.0


def mean_ci(x):
    x = np.asarray(x, dtype=float)
    m = x.mean()
    h = 1.96 * x.std(ddof=1) / math.sqrt(len(x))
    return m, m - h, m + h


# ---- a shallow classification tree (gini), numpy only ----------------------------------------
def gini(y):
    if len(y) == 0:
        return 0.0
    q = np.bincount(y, minlength=4) / len(y)
    return 1.0 - (q * q).sum()


def grow(X, y, depth, minleaf=200):
    node = {"n": len(y), "dist": np.bincount(y, minlength=4) / len(y),
            "maj": int(np.bincount(y, minlength=4).argmax())}
    if depth == 0:
        return node
    best = (gini(y) * len(y), None, None)
    for f in range(X.shape[1]):
        x = X[:, f]
        vals = np.unique(x)
        if len(vals) > 40:
            vals = np.unique(np.quantile(x, np.linspace(0.02, 0.98, 40)).round())
        for v in vals[:-1]:
            left = x <= v
            nl = int(left.sum())
            if nl < minleaf or len(y) - nl < minleaf:
                continue
            score = gini(y[left]) * nl + gini(y[~left]) * (len(y) - nl)
            if score < best[0] - 1e-9:
                best = (score, f, v)
    if best[1] is None:
        return node
    left = X[:, best[1]] <= best[2]
    node.update(f=best[1], v=best[2], L=grow(X[left], y[left], depth - 1, minleaf),
                R=grow(X[~left], y[~left], depth - 1, minleaf))
    return node


def predict(node, X):
    out = np.empty(len(X), dtype=np.int64)
    for i, x in enumerate(X):
        t = node
        while "f" in t:
            t = t["L"] if x[t["f"]] <= t["v"] else t["R"]
        out[i] = t["maj"]
    return out


def show(node, names, ind="  "):
    d = node["dist"]
    label = f"n={node['n']} Overwrite {d[pgc.A_OVERWRITE]:.2f} Add {d[pgc.A_ADD]:.2f} Pass {d[pgc.A_PASS]:.2f}"
    if "f" not in node:
        print(ind + label + " -> " + pgc.ACTION_NAMES[node["maj"]])
        return
    print(ind + label)
    print(ind + f"if {names[node['f']]} <= {node['v']}:")
    show(node["L"], names, ind + "  ")
    print(ind + "else:")
    show(node["R"], names, ind + "  ")


def fit(a):
    d = np.load(a.train)
    X, y, g = d["X"], d["m_type"], d["g"]
    names = list(d["names"])
    tr = g < a.split
    other = np.load(a.test) if a.test else None
    print(f"{len(y)} Add turns; mc Overwrite / Add / Pass {np.mean(y == pgc.A_OVERWRITE):.3f} / "
          f"{np.mean(y == pgc.A_ADD):.3f} / {np.mean(y == pgc.A_PASS):.3f}")
    line = f"tuned (always Add): held-out {np.mean(y[~tr] == pgc.A_ADD):.3f}"
    if other is not None:
        line += f", --test {np.mean(other['m_type'] == pgc.A_ADD):.3f}"
    print(line)
    for depth in (1, 2, 3, 4):
        t = grow(X[tr], y[tr], depth)
        line = f"depth {depth}: held-out {np.mean(predict(t, X[~tr]) == y[~tr]):.3f}"
        if other is not None:
            t_all = grow(X, y, depth)
            line += f", --test (fitted on every --train row) {np.mean(predict(t_all, other['X']) == other['m_type']):.3f}"
        print(line)
        if depth <= 3:
            show(t, names)


def show_leads(a):
    d = np.load(a.train)
    t, m, X = d["L_t"], d["L_m"], d["L_X"]
    top = lambda x: pgc.meld_top(pgc.act_kind(x), pgc.act_low(x), pgc.act_size(x))
    size = lambda v: np.array([pgc.act_size(x) for x in v])
    eight = lambda v: np.array([pgc.act_low(x) <= pgc.EIGHT <= top(x) for x in v])
    high = lambda v: np.array([top(x) >= 10 for x in v])
    print(f"{len(t)} Leads with a choice; mc leads what tuned leads {np.mean(t == m):.3f}")
    for who, v in (("mc", m), ("tuned", t)):
        s = size(v)
        print(f"  {who}: single {np.mean(s == 1):.3f}, two cards {np.mean(s == 2):.3f}, three "
              f"{np.mean(s == 3):.3f}, mean {s.mean():.2f}; with an 8 {eight(v).mean():.3f}; "
              f"top 13-15 {high(v).mean():.3f}")
    t8, m8 = eight(t), eight(m)
    held = X[:, 0]
    print("  where tuned leads an 8, mc leads one too, by cards in play: " + ", ".join(
        f"{h}: {m8[t8 & (held == h)].mean():.2f} (n={int((t8 & (held == h)).sum())})"
        for h in range(2, 13) if (t8 & (held == h)).sum() >= 50))
    rule = t8 & ~(held - size(t) > a.left)
    print(f"  leads an 8 as mc does: tuned {np.mean(t8 == m8):.3f}, the rule (no 8 while more "
          f"than {a.left} cards would be left) {np.mean(rule == m8):.3f}")
    if a.rule:
        # the Lead a tuned seat on --rule makes at tuned's 8-Leads (a Lead's value reads only the
        # seat's own hand in play and whether its second hand waits)
        params = cfg.resolve("pgc", None, 2, policy="heuristic").params
        row = knob_row(a.rule)
        acts = np.zeros(pgc.MAX_ACTIONS, dtype=np.int64)
        r = np.empty(len(t), dtype=np.int64)
        for j in np.flatnonzero(t8):
            st = pgc.new_state(P)
            st[pgc.HAND: pgc.HAND + 13] = X[j, 14:27]
            st[pgc.N_HELD] = X[j, 0]
            st[pgc.RESERVE_ON] = X[j, 1]
            st[pgc.N_HELD + 1] = X[j, 2]
            st[pgc.RESERVE_ON + 1] = X[j, 3]
            st[pgc.KNOB: pgc.KNOB + MAX_KNOBS] = row
            n = pgc.legal_actions(st, params, acts)
            r[j] = acts[pgc.heuristic_choice(st, params, acts, n)]
        r8 = eight(r[t8])
        both = ~r8 & ~m8[t8]
        print(f"  at tuned's {int(t8.sum())} 8-Leads, --rule's Lead is mc's {np.mean(r[t8] == m[t8]):.3f} "
              f"(tuned's {np.mean(t[t8] == m[t8]):.3f}); where both decline the 8 ({int(both.sum())}), "
              f"the same Lead {int((r[t8] == m[t8])[both].sum())}")


# ---- a conditional logit over the Lead options (``leadfit``) ----------------------------------
OPTION_FEATURES = ("v_tuned/100", "shed", "units_after", "strength", "pts", "eight", "eight&left>4",
                   "is_set", "is_run", "top", "top>=10", "split", "iso_single", "left_after")


def lead_basics(st, params, a, held):
    """What a Lead ``a`` of the seat to act (ranks ``held``) does to its hand: (top rank, ranks
    held after, rank steps shed, points shed, splits a set, cards shed, its 8 ends the trick, cards
    left, an isolated single, the hand's counts after it)."""
    seat = int(st[pgc.S_TO_ACT])
    base = pgc.HAND + seat * 13
    kind, low, size = pgc.act_kind(a), pgc.act_low(a), pgc.act_size(a)
    tp = pgc.meld_top(kind, low, size)
    h2 = st[base: base + 13].copy()
    after, strength, pts, split = held, 0, 0, 0
    for r in range(low, tp + 1):
        c = pgc.played_count(st, a, r)
        if c:
            h2[r] -= c
            strength += c * r
            pts += c * pgc.POINTS[params[pgc.R_POINTS], r]
            if c < st[base + r]:
                split = 1
            else:
                after &= ~(1 << r)
    shed = int(pgc.played_total(st, a))
    e8 = int(pgc.trick_end_cause(st, params, a) == pgc.T_EIGHT)
    left = int(st[pgc.N_HELD + seat]) - shed
    iso = 0
    if kind == pgc.K_SINGLE and st[base + low] == 1:
        iso = int(not ((low > 0 and pgc.NEXT_OK[low - 1] and st[base + low - 1] > 0)
                       or (low < 12 and pgc.NEXT_OK[low] and st[base + low + 1] > 0)))
    return tp, after, strength, pts, split, shed, e8, left, iso, h2


def option_features(st, params, acts, n):
    """One row per Lead option: tuned's value (/100, capped at 2000), cards shed, melds left, rank
    steps and points shed, whether its 8 ends the trick (and with more than 4 cards left), set /
    run, top rank (and 13-15), splits a set, an isolated single, cards left."""
    seat = int(st[pgc.S_TO_ACT])
    held, _, _ = pgc.rank_masks(st, seat)
    un = pgc.units_of(held)
    F = np.zeros((n, len(OPTION_FEATURES)))
    for i in range(n):
        a = acts[i]
        v = pgc.heuristic_value(st, params, a, held, un, False, False)
        kind, low, size = pgc.act_kind(a), pgc.act_low(a), pgc.act_size(a)
        tp, after, strength, pts, split, shed, e8, left, iso, _ = lead_basics(st, params, a, held)
        F[i] = [min(v, 2000) / 100, shed, pgc.units_of(after), strength, pts, e8, e8 * (left > 4),
                kind == pgc.K_SET, kind == pgc.K_RUN, tp, tp >= 10, split, iso, left]
    return F


def lead_groups(path, krow):
    """(option features, mc's option, tuned's option) of every logged Lead, the position rebuilt
    from the seat's hand in play and the sizes (all a Lead's value reads)."""
    d = np.load(path)
    params = cfg.resolve("pgc", None, 2, policy="heuristic").params
    acts = np.zeros(pgc.MAX_ACTIONS, dtype=np.int64)
    out = []
    for m, x in zip(d["L_m"], d["L_X"]):
        st = pgc.new_state(P)
        st[pgc.HAND: pgc.HAND + 13] = x[14:27]
        st[pgc.N_HELD], st[pgc.RESERVE_ON], st[pgc.N_HELD + 1], st[pgc.RESERVE_ON + 1] = x[0], x[1], x[2], x[3]
        st[pgc.KNOB: pgc.KNOB + MAX_KNOBS] = krow
        n = pgc.legal_actions(st, params, acts)
        j = [i for i in range(n) if acts[i] == m]
        if j:
            out.append((option_features(st, params, acts, n), j[0], int(pgc.heuristic_choice(st, params, acts, n))))
    return out


def leadfit(a):
    """Conditional logit (softmax over each Lead's options, Newton steps, a little L2) fitted to
    mc's Leads in --train; top-1 agreement with mc on --train and --test next to tuned's."""
    krow = knob_row(a.knobs)
    tr = lead_groups(a.train, krow)
    te = lead_groups(a.test, krow) if a.test else []
    k = len(OPTION_FEATURES)
    w = np.zeros(k)
    for _ in range(30):
        g = np.zeros(k)
        H = -1e-3 * np.eye(k)
        for F, j, _ in tr:
            z = F @ w
            q = np.exp(z - z.max())
            q /= q.sum()
            mu = q @ F
            g += F[j] - mu
            H -= (F * q[:, None]).T @ F - np.outer(mu, mu)
        w = w - np.linalg.solve(H, g - 1e-3 * w)
    print("weights: " + ", ".join(f"{nm} {x:+.3f}" for nm, x in zip(OPTION_FEATURES, w)))
    for label, gr in (("--train", tr), ("--test", te)):
        if gr:
            fitted = np.mean([np.argmax(F @ w) == j for F, j, _ in gr])
            tuned_ = np.mean([t == j for _, j, t in gr])
            print(f"{label}: {len(gr)} Leads; the fit's top option is mc's {fitted:.3f}, tuned's {tuned_:.3f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=("log", "pair", "fit", "leads", "leadfit"))
    ap.add_argument("--left", type=int, default=4, help="leads: the Lead-8 rule's eight_lead_left")
    ap.add_argument("--rule", default=None, help="leads: a knob file whose Lead is compared at tuned's 8-Leads")
    ap.add_argument("--train", default=None, help="fit: a log's .npz")
    ap.add_argument("--test", default=None, help="fit: another log's .npz (held out)")
    ap.add_argument("--split", type=int, default=700, help="fit: games below this train")
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--seed", type=int, default=8)
    ap.add_argument("--budget", type=int, default=16)
    ap.add_argument("--knobs", default=str(ROOT / "configs/tuned/pgc-2p.toml"),
                    help="the tuned rule (tuned seats and the hybrids' own turns)")
    ap.add_argument("--rollout", default=str(ROOT / "configs/tuned/pgc-2p.toml"),
                    help="knobs of the mc seats' rollouts (mc:BUDGET:tuned)")
    ap.add_argument("--seats", default="mc,mc")
    ap.add_argument("--a", default="hyb-add", choices=MODES)
    ap.add_argument("--b", default="tuned", choices=MODES)
    ap.add_argument("--out", default=None)
    ap.add_argument("--cond", default=None, help="hyb-leadc: a Python expression over c[...] "
                    "(LEAD_CONTEXT) saying at which Leads mc decides")
    ap.add_argument("--twice", action="store_true", help="log: at mc's searched Add turns and Leads, "
                    "search again on an independent stream (how often mc repeats its own choice)")
    a = ap.parse_args()
    if a.what == "fit":
        fit(a)
        return
    if a.what == "leads":
        show_leads(a)
        return
    if a.what == "leadfit":
        leadfit(a)
        return
    game = Game(a)
    if a.what == "log":
        modes = a.seats.split(",")
        rows = []
        leads = []
        turns = []
        mixes = np.zeros(4, dtype=np.int64)
        for g in range(a.first, a.first + a.games):
            _, t, mix = game.play(a.seed, g, modes, rows, leads)
            turns.append(t)
            mixes += mix
        m, lo, hi = mean_ci(turns)
        print(f"seats {modes}: {a.games} games, seed {a.seed}: turns {m:.2f} [{lo:.2f}, {hi:.2f}]; "
              f"mix lead/over/add/pass {np.round(mixes / mixes.sum(), 3).tolist()}")
        print(f"rows (tuned would Add): {len(rows)}; acting seat's choice = tuned's {np.mean([r[5] for r in rows]):.3f}")
        if a.twice:
            for k, (same, asked) in game.again.items():
                if asked:
                    q = same / asked
                    h = 1.96 * math.sqrt(q * (1 - q) / asked)
                    print(f"mc's choice repeated by a second search ({k} turns): {q:.3f} [{q - h:.3f}, {q + h:.3f}] of {asked}")
        if a.out:
            np.savez(a.out, g=np.array([r[0] for r in rows]), rnd=np.array([r[1] for r in rows]),
                     seat=np.array([r[2] for r in rows]), t_type=np.array([r[3] for r in rows]),
                     m_type=np.array([r[4] for r in rows]), same=np.array([r[5] for r in rows]),
                     n=np.array([r[6] for r in rows]), X=np.array([r[7] for r in rows]),
                     names=np.array(FEATURES), turns=np.array(turns),
                     L_g=np.array([r[0] for r in leads]), L_seat=np.array([r[2] for r in leads]),
                     L_t=np.array([r[3] for r in leads]), L_m=np.array([r[4] for r in leads]),
                     L_X=np.array([r[5] for r in leads]),
                     L_names=np.array(LEAD_FEATURES + tuple(f"h{r}" for r in range(13))
                                     + tuple(f"p{r}" for r in range(13)) + tuple(f"o{r}" for r in range(13))
                                     + ("score_diff", "round")))
    else:
        diffs, tA, tAB = [], [], []
        for g in range(a.first, a.first + a.games):
            sc0, t0, _ = game.play(a.seed, g, (a.a, a.b))
            sc1, t1, _ = game.play(a.seed, g, (a.b, a.a))
            sa = (share(sc0, 0) + share(sc1, 1)) / 2
            diffs.append(2 * sa - 1)        # A's share minus B's share, per deal
            tAB += [t0, t1]
        m, lo, hi = mean_ci(diffs)
        tm, tlo, thi = mean_ci(tAB)
        print(f"A={a.a} vs B={a.b}, {a.games} deals x 2 seats, seed {a.seed}: A share - B share "
              f"{m:+.3f} [{lo:+.3f}, {hi:+.3f}] (A share {0.5 + m / 2:.3f}); turns a game {tm:.2f} [{tlo:.2f}, {thi:.2f}]"
              + (f"; --cond {a.cond!r}: mc at {game.nc[0]} of {game.nc[1]} Leads" if game.cond else ""))
        if a.out:
            np.savez(a.out, diffs=np.array(diffs), turns=np.array(tAB))


if __name__ == "__main__":
    main()
