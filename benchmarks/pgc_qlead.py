"""pgc 2p: a last-hand Lead rule fitted to the search's option *values* (issue #24, session 25).

Session 16's conditional logit fitted mc's *choices* at the Leads and picked mc's Lead no more
often than tuned; session 17 located the search's Lead gain in the last hand (a seat's Leads after
it picked up its second hand: +0.261 a seat over tuned). This script tries the step both named
next: a rule learnt from the values the search gives *every* option, not only from its pick.

``log``: two tuned seats (the positions a tuned seat meets) play deals ``--first``.. of ``--seed``;
at each last-hand Lead with 2+ options and none going out, ``mc:BUDGET:tuned``'s mean
``round_result`` of every option is logged with the option's features (``OPT``), once on stream A
(SEARCH 20 + seat: the label) and once on stream B (SEARCH 30 + seat: an independent estimate, to
score a rule without rewarding its fit to A's noise). The game goes on with tuned's Lead.

``fit``: ridge regression of the within-Lead centred A values on the centred features of
``--train``; on ``--test``: the mean regret, by the B values, of tuned's Lead, of the fitted rule's
Lead and of A's own best (what a perfect copy of mc's noisy pick reaches), and top-1 agreement.
Writes the weights to ``--out``.

``pair``: deals played twice (A at seat 0, then 1): A = ``--mode`` against B = ``--b`` (default
``tuned``); A's share minus B's, turns a game. ``table``: both seats on ``--mode``, turns a game.
The modes: ``tuned`` (the ``--knobs`` rule everywhere); ``qlead`` (tuned, but at its last-hand
Leads the fitted rule ``--weights`` decides, and at its last-hand responses ``--resp-weights`` if
given; ``--first-lead-weights`` / ``--first-resp-weights`` the same in the first hand);
``mclast`` / ``mcfirst`` (``mc:BUDGET:tuned`` at every last-hand / first-hand turn with 2+
options, tuned elsewhere: where is the search better than tuned, and where does its length come
from?); ``mc`` (``mc:BUDGET:tuned`` at every turn). ``log --responses`` / ``--first-hand`` log
those turns too, and ``fit --only lead|resp --hand first|last`` fits one class of them;
``fit --features a,b,...`` keeps only those OPT columns (and tuned's value) and prints the
weights in units of tuned's value, what a knob adds (the session-25 knobs: docs/search.md).

    PYTHONPATH=$PWD python3 benchmarks/pgc_qlead.py log --games 400 --seed 8 --out /tmp/q8.npz
    PYTHONPATH=$PWD python3 benchmarks/pgc_qlead.py fit --train /tmp/q8.npz --test /tmp/q9.npz --out /tmp/w.npy
    PYTHONPATH=$PWD python3 benchmarks/pgc_qlead.py pair --weights /tmp/w.npy --games 1000 --seed 7
    PYTHONPATH=$PWD python3 benchmarks/pgc_qlead.py table --mode mclast --budget 16 --games 1000 --seed 8
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

from kernels import pgc, rng
from kernels.spec import MAX_KNOBS
from simcli.config import jobs as cfg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pgc_distill import game_basics, lead_basics  # noqa: E402  (session 16's script, its helpers)

ROOT = Path(__file__).resolve().parent.parent
P = 2

OPT = ("v_tuned", "shed", "units_after", "strength", "pts", "eight", "top", "top_hi", "is_single",
       "is_set", "is_run", "split", "iso_single", "left", "singles_after", "eights_after",
       "strong_after", "lo_after", "hi_after", "beaters", "top_x_oppsmall", "eight_x_left",
       "shed_x_oppsmall", "units_x_left", "over_ways", "add_cards", "p_resp", "shed_gt_opp",
       "p_resp_x_opplast", "gt_x_opplast", "p_resp_x_left", "opp_last_small") + tuple(
           f"shed{r}" for r in range(13)) + ("is_over", "is_add", "is_pass", "ends_trick")


def opt_features(st, params, acts, n):
    """One row per Lead option (OPT). ``beaters``: unseen copies (not in the seat's hand, not
    played this round) of the numbers above the Lead's top, a rough count of what could Overwrite
    a single or set (a run's: above its top too)."""
    seat = int(st[pgc.S_TO_ACT])
    opp = 1 - seat
    held, _, _ = pgc.rank_masks(st, seat)
    un = pgc.units_of(held)
    base = pgc.HAND + seat * 13
    hand = st[base: base + 13].copy()
    opp_total = int(st[pgc.N_HELD + opp]) + 12 * int(st[pgc.RESERVE_ON + opp])
    opp_small = 1.0 if opp_total <= 5 else 0.0
    k = int(st[pgc.N_HELD + opp])
    opp_last = 1.0 if st[pgc.RESERVE_ON + opp] == 0 else 0.0
    copies = int(st[pgc.S_COPIES])
    U = [copies - int(hand[r]) - int(st[pgc.PLAYED + r]) for r in range(13)]
    F = np.zeros((n, len(OPT)))
    for i in range(n):
        a = acts[i]
        if pgc.act_type(a) == pgc.A_PASS:
            F[i, OPT.index("is_pass")] = 1
            continue
        v = pgc.heuristic_value(st, params, a, held, un, False, False)
        kind, low, size = pgc.act_kind(a), pgc.act_low(a), pgc.act_size(a)
        tp, after, strength, pts, split, shed, e8, left, iso, h2 = lead_basics(st, params, a, held)
        kept = [r for r in range(13) if h2[r] > 0]
        beat = sum(U[r] for r in range(tp + 1, 13))
        ua = pgc.units_of(after)
        # what the unseen cards could answer the Lead with: Overwrites (same kind and size,
        # higher) and the cards an Add could use; p_resp is the kernel's lead_answer_chance (the
        # session-25 knob's feature; this script's own first statement of it matched it exactly)
        if kind == pgc.K_RUN:
            over = sum(all(U[r] >= 1 for r in range(lo2, lo2 + size))
                       and all(pgc.NEXT_OK[r] for r in range(lo2, lo2 + size - 1))
                       for lo2 in range(low + 1, 13 - size + 1))
            addc = (U[low - 1] if low > 0 and pgc.NEXT_OK[low - 1] else 0) + (
                U[tp + 1] if tp < 12 and pgc.NEXT_OK[tp] else 0)
        else:
            over = sum(U[r] >= size for r in range(low + 1, 13))
            addc = U[low] + ((U[low - 1] if low > 0 and pgc.NEXT_OK[low - 1] else 0)
                             + (U[low + 1] if low < 12 and pgc.NEXT_OK[low] else 0)
                             if kind == pgc.K_SINGLE else 0)
        p_resp = pgc.lead_answer_chance(st, a, seat, opp)
        gt = 1.0 if shed > k else 0.0
        F[i] = [min(v, 2000) / 100, shed, ua, strength, pts, e8, tp, tp >= 10,
                kind == pgc.K_SINGLE, kind == pgc.K_SET, kind == pgc.K_RUN, split, iso, left,
                int(np.sum(h2 == 1)), int(h2[pgc.EIGHT]), int(h2[10:].sum()),
                min(kept) if kept else 13, max(kept) if kept else -1, beat,
                tp * opp_small, e8 * left, shed * opp_small, ua * left / 10,
                over, addc, p_resp, gt, p_resp * opp_last * (k <= 3), gt * opp_last * (k <= 3),
                p_resp * left / 10, opp_last * (k <= 3)] + [int(hand[r] - h2[r]) for r in range(13)] + [
                pgc.act_type(a) == pgc.A_OVERWRITE, pgc.act_type(a) == pgc.A_ADD, 0,
                pgc.trick_end_cause(st, params, a) != pgc.T_ON]
    return F


class Game:
    def __init__(self, a):
        game_basics(self, a)
        self.det = np.empty(pgc.STATE_SIZE, dtype=np.int64)
        self.st2 = np.empty(pgc.STATE_SIZE, dtype=np.int64)
        self.pool = np.empty(pgc.MAX_DECK, dtype=np.int64)
        self.racts = np.empty(pgc.MAX_ACTIONS, dtype=np.int64)
        self.tmp = np.zeros(pgc.MAX_PLAYERS, dtype=np.int64)
        self.w = np.load(a.weights) if getattr(a, "weights", None) else None
        self.wr = np.load(a.resp_weights) if getattr(a, "resp_weights", None) else None
        self.resp = getattr(a, "responses", False)
        self.first = getattr(a, "first_hand", False) or getattr(a, "mode", "") == "mcfirst"
        ld = lambda f: np.load(f) if f else None
        self.wsets = {(False, True): self.w, (False, False): self.wr,
                      (True, True): ld(getattr(a, "first_lead_weights", None)),
                      (True, False): ld(getattr(a, "first_resp_weights", None))}
        if self.wsets[(True, True)] is not None or self.wsets[(True, False)] is not None:
            self.first = True

    def values(self, st, n, keys, ctrs, slot):
        total = np.zeros(n, dtype=np.int64)
        acts = self.acts.copy()
        pgc._mc_samples(st, self.params, acts, n, self.budget, pgc.P_TUNED, keys, ctrs, slot, 2,
                        self.params[pgc.R_TARGET], self.mcstat, 0, int(st[pgc.S_TO_ACT]), total,
                        self.det, self.st2, self.pool, self.racts, self.tmp)
        return total / self.budget

    def play(self, seed, g, modes, log=None):
        params, acts = self.params, self.acts
        st = pgc.new_state(P)
        for s in range(P):
            st[pgc.KNOB + s * MAX_KNOBS: pgc.KNOB + (s + 1) * MAX_KNOBS] = self.krow
        nk = 3 * P + 1 + 2 * P
        keys = np.zeros(nk, dtype=np.uint64)
        ctrs = np.zeros(nk, dtype=np.int64)
        for s in range(P):
            keys[s] = rng.stream_key(seed, g, rng.SEAT, s)
            keys[P + 1 + s] = rng.stream_key(seed, g, rng.SEARCH, s)
            keys[2 * P + 1 + s] = rng.stream_key(seed, g, rng.SEARCH, 20 + s)   # label A
            keys[3 * P + 1 + s] = rng.stream_key(seed, g, rng.SEARCH, 30 + s)   # score B
        turns = 0
        for rnd in range(2):
            st[pgc.S_ROUND] = rnd
            pgc.deal_round(st, params, seed, g, rnd, self.deck, keys, ctrs, P)
            st[pgc.S_OUT] = -1
            pgc.clear_trick(st, rnd % P)
            while st[pgc.S_OUT] < 0:
                seat = int(st[pgc.S_TO_ACT])
                n = pgc.legal_actions(st, params, acts)
                i = pgc.heuristic_choice(st, params, acts, n)
                first = st[pgc.RESERVE_ON + seat] != 0
                last = ((not first or self.first) and n > 1
                        and not any(pgc.goes_out(st, acts[j]) for j in range(n)))
                lead = st[pgc.S_C_SIZE] == 0
                if last and log is not None and (lead or self.resp):
                    F = opt_features(st, params, acts, n)
                    va = self.values(st, n, keys, ctrs, 2 * P + 1 + seat)
                    vb = self.values(st, n, keys, ctrs, 3 * P + 1 + seat)
                    log.append((g, F, va, vb, i, st.copy(), acts[:n].copy()))
                elif ((last and ((modes[seat] == "mclast" and not first)
                                 or (modes[seat] == "mcfirst" and first)))
                      or (modes[seat] == "mc" and n > 1)):
                    i = pgc.mc_choose(st, params, acts, n, self.budget, pgc.P_TUNED, keys, ctrs,
                                      P + 1 + seat, 2, params[pgc.R_TARGET], self.mcstat, 0)
                elif last and modes[seat] == "qlead":
                    w = self.wsets[(bool(first), bool(lead))]
                    if w is not None:
                        F = opt_features(st, params, acts, n)
                        i = int(np.argmax(F @ w))
                pgc.apply_action(st, params, acts[i])
                turns += 1
            w = int(st[pgc.S_OUT])
            for s in range(P):
                if s != w:
                    st[pgc.SCORE + s] += pgc.points_held(st, params, s)
        return st[pgc.SCORE: pgc.SCORE + P].copy(), turns


def mean_ci(x):
    x = np.asarray(x, dtype=float)
    m = x.mean()
    h = 1.96 * x.std(ddof=1) / math.sqrt(len(x))
    return m, m - h, m + h


def share(scores, s):
    best = scores.min()
    win = np.flatnonzero(scores == best)
    return 1.0 / len(win) if s in win else 0.0


def load(path, refeature=True, only=None, hand=None):
    """The logged Leads as (game, features, A values, B values, tuned's option); the features
    recomputed from the logged position by today's ``opt_features``."""
    d = np.load(path, allow_pickle=True)
    out = []
    params = cfg.resolve("pgc", None, 2, policy="heuristic").params
    for g, F, va, vb, t, st, acts in d["groups"]:
        kind = "lead" if st[pgc.S_C_SIZE] == 0 else "resp"
        if only is not None and kind != only:
            continue
        h = "first" if st[pgc.RESERVE_ON + st[pgc.S_TO_ACT]] != 0 else "last"
        if hand is not None and h != hand:
            continue
        if refeature:
            F = opt_features(st, params, acts, len(acts))
        out.append((g, F, va, vb, t))
    return out


def fit(a):
    tr = load(a.train, only=a.only, hand=a.hand)
    keep = [OPT.index(f) for f in a.features.split(",")] if a.features else list(range(len(OPT)))
    if a.features and 0 not in keep:
        keep = [0] + keep
    mask = np.zeros(len(OPT))
    mask[keep] = 1
    tr = [(g, F * mask, va, vb, t) for g, F, va, vb, t in tr]
    X = np.concatenate([F - F.mean(0) for _, F, va, vb, t in tr])
    y = np.concatenate([va - va.mean() for _, F, va, vb, t in tr])
    sd = X.std(0) + 1e-9
    Xs = X / sd
    lam = a.ridge * len(y)
    w = np.linalg.solve(Xs.T @ Xs + lam * np.eye(X.shape[1]), Xs.T @ y) / sd * mask
    r2 = 1 - np.sum((y - X @ w) ** 2) / np.sum(y ** 2)
    print(f"train: {len(tr)} Leads, {len(y)} options; within-Lead R^2 {r2:.3f}")
    print("weights (per unit): " + ", ".join(f"{nm} {x:+.2f}" for nm, x in zip(OPT, w) if x != 0))
    # in units of tuned's value (v_tuned is tuned's value / 100): what a knob would add
    print("in tuned's value units: " + ", ".join(f"{nm} {100 * x / w[0]:+.0f}" for nm, x in zip(OPT, w)
                                                 if x != 0 and nm != "v_tuned"))
    # tuned's value alone, as a one-feature fit (its scale)
    xt = X[:, 0]
    bt = float(xt @ y / (xt @ xt))
    print(f"tuned's value alone: slope {bt:.3f}, R^2 {1 - np.sum((y - bt * xt) ** 2) / np.sum(y ** 2):.3f}")
    for label, path in (("train", a.train), ("test", a.test)):
        if not path:
            continue
        gr = [(g, F * mask, va, vb, t) for g, F, va, vb, t in load(path, only=a.only, hand=a.hand)]
        reg_t, reg_f, reg_a, agr_t, agr_f = [], [], [], [], []
        for _, F, va, vb, t in gr:
            best = vb.max()
            f = int(np.argmax(F @ w))
            ia = int(np.argmax(va))
            reg_t.append(best - vb[t])
            reg_f.append(best - vb[f])
            reg_a.append(best - vb[ia])
            agr_t.append(t == ia)
            agr_f.append(f == ia)
        print(f"{label}: {len(gr)} Leads; regret by B (points a round): tuned {np.mean(reg_t):.3f}, "
              f"fit {np.mean(reg_f):.3f}, A's pick {np.mean(reg_a):.3f}; "
              f"agreement with A's pick: tuned {np.mean(agr_t):.3f}, fit {np.mean(agr_f):.3f}")
    if a.out:
        np.save(a.out, w)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=("log", "fit", "pair", "table"))
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--seed", type=int, default=8)
    ap.add_argument("--budget", type=int, default=64)
    # the tuned rule the session-25 experiments started from (the committed pgc-2p.toml has the
    # fitted last-hand knobs in it already: a fit on top of it would count them twice)
    ap.add_argument("--knobs", default=str(ROOT / "configs/tuned/starts/pgc-2p-session18.toml"))
    ap.add_argument("--train")
    ap.add_argument("--test")
    ap.add_argument("--ridge", type=float, default=1e-3)
    ap.add_argument("--features", default=None, help="fit: only these OPT columns (v_tuned always)")
    ap.add_argument("--weights")
    ap.add_argument("--b", default="tuned", help="pair: the other seat's mode")
    ap.add_argument("--mode", choices=("qlead", "mclast", "mcfirst", "mc", "tuned"), default="qlead",
                    help="pair/table: the seat (qlead: the fitted rules; mclast: mc:BUDGET:tuned at every "
                    "last-hand turn with 2+ options)")
    ap.add_argument("--resp-weights", help="pair/table: the responses' weights (else tuned responds)")
    ap.add_argument("--responses", action="store_true", help="log: the last hand's responses too")
    ap.add_argument("--first-hand", action="store_true", help="log: the first hand's turns too (2p)")
    ap.add_argument("--first-lead-weights")
    ap.add_argument("--first-resp-weights")
    ap.add_argument("--hand", choices=("first", "last"), default=None, help="fit: only this hand")
    ap.add_argument("--only", choices=("lead", "resp"), default=None, help="fit: only these turns")
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.what == "fit":
        fit(a)
        return
    game = Game(a)
    t0 = time.time()
    if a.what == "log":
        log = []
        turns = [game.play(a.seed, g, ("tuned", "tuned"), log)[1]
                 for g in range(a.first, a.first + a.games)]
        print(f"{a.games} games, seed {a.seed}: {len(log)} last-hand Leads logged, turns {np.mean(turns):.2f}; "
              f"{time.time() - t0:.0f} s")
        arr = np.empty(len(log), dtype=object)
        for k, r in enumerate(log):
            arr[k] = r
        np.savez(a.out, groups=arr)
    elif a.what == "table":
        ts = [game.play(a.seed, g, (a.mode, a.mode))[1] for g in range(a.first, a.first + a.games)]
        tm, tlo, thi = mean_ci(ts)
        print(f"two {a.mode} seats, {a.games} games, seed {a.seed}: turns a game {tm:.2f} [{tlo:.2f}, {thi:.2f}]")
    else:
        diffs, ts = [], []
        for g in range(a.first, a.first + a.games):
            sc0, t0_ = game.play(a.seed, g, (a.mode, a.b))
            sc1, t1_ = game.play(a.seed, g, (a.b, a.mode))
            diffs.append(share(sc0, 0) + share(sc1, 1) - 1)
            ts += [t0_, t1_]
        m, lo, hi = mean_ci(diffs)
        tm, tlo, thi = mean_ci(ts)
        print(f"{a.mode} vs {a.b}, {a.games} deals x 2 seats, seed {a.seed}: {m:+.3f} [{lo:+.3f}, {hi:+.3f}]; "
              f"turns a game {tm:.2f} [{tlo:.2f}, {thi:.2f}]; {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
