"""pgc 2p: where do tuned and mc:16:tuned choose differently on the same positions? (issue #24)

Plays whole 2-player games (two rounds, seat 0 leads round 1) with both seats on
``mc:BUDGET:tuned`` (so the positions are the searcher's own; its rollouts play ``--rollout``)
and, at every turn with an Add among the options (``--responding``: every responding turn),
asks the tuned rule (``heuristic_choice`` with ``--knobs``, the committed 2p file by default)
what it would play there too. One row per such decision: what each chose and a few features
of the position. Prints the disagreement tables the session-15 Add rule was read from
(docs/search.md, "Row 2, session 15"). Deals and search draws come from the game's own streams
(``rng.DEAL``, ``rng.SEARCH``), so a run is reproducible.

    PYTHONPATH=$PWD python3 benchmarks/pgc_add_probe.py --games 200 --seed 8
"""
from __future__ import annotations

import argparse
import collections
from pathlib import Path

import numpy as np

from kernels import pgc, rng
from kernels.spec import MAX_KNOBS
from simcli.config import jobs as cfg, tuned

ROOT = Path(__file__).resolve().parent.parent


def knob_row(path):
    vals = tuned.load_file(pgc, path, 2)
    row = pgc.KNOB_DEFAULTS.copy()
    for k in pgc.KNOBS:
        row[k.index] = vals[k.name]
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--seed", type=int, default=8)
    ap.add_argument("--budget", type=int, default=16)
    ap.add_argument("--knobs", default=str(ROOT / "configs/tuned/pgc-2p.toml"),
                    help="the tuned rule asked at each position (mc's rollouts keep --rollout)")
    ap.add_argument("--rollout", default=str(ROOT / "configs/tuned/pgc-2p.toml"),
                    help="knobs of the mc seats' rollouts (mc:BUDGET:tuned)")
    ap.add_argument("--out", default=None, help="write the rows as .npz")
    ap.add_argument("--responding", action="store_true",
                    help="every responding turn (a Central Meld on the table), not only those with an Add")
    a = ap.parse_args()
    job = cfg.resolve("pgc", None, 2, policy="heuristic")
    params = job.params
    krow = knob_row(a.knobs)
    mrow = knob_row(a.rollout)
    ask = np.empty(pgc.STATE_SIZE, dtype=np.int64)
    P = 2
    rows = []
    acts = np.zeros(pgc.MAX_ACTIONS, dtype=np.int64)
    deck = np.zeros(pgc.MAX_DECK, dtype=np.int64)
    mcstat = np.zeros(2, dtype=np.int64)
    for g in range(a.games):
        st = pgc.new_state(P)
        for s in range(P):
            st[pgc.KNOB + s * MAX_KNOBS: pgc.KNOB + (s + 1) * MAX_KNOBS] = mrow
        keys = np.zeros(2 * P + 1, dtype=np.uint64)
        ctrs = np.zeros(2 * P + 1, dtype=np.int64)
        for s in range(P):
            keys[s] = rng.stream_key(a.seed, g, rng.SEAT, s)
            keys[P + 1 + s] = rng.stream_key(a.seed, g, rng.SEARCH, s)
        for rnd in range(2):
            st[pgc.S_ROUND] = rnd
            pgc.deal_round(st, params, a.seed, g, rnd, deck, keys, ctrs, P)
            st[pgc.S_OUT] = -1
            pgc.clear_trick(st, rnd % P)
            while st[pgc.S_OUT] < 0:
                seat = int(st[pgc.S_TO_ACT])
                n = pgc.legal_actions(st, params, acts)
                i_mc = 0
                if n > 1:
                    i_mc = pgc.mc_choose(st, params, acts, n, a.budget, pgc.P_TUNED, keys, ctrs,
                                         P + 1 + seat, 2, params[pgc.R_TARGET], mcstat, 0)
                has_add = any(pgc.act_type(acts[j]) == pgc.A_ADD for j in range(n))
                if a.responding:
                    has_add = st[pgc.S_C_SIZE] > 0
                if has_add:
                    ask[:] = st
                    ask[pgc.KNOB + seat * MAX_KNOBS: pgc.KNOB + (seat + 1) * MAX_KNOBS] = krow
                    i_t = pgc.heuristic_choice(ask, params, acts, n)
                    at, am = int(acts[i_t]), int(acts[i_mc])
                    opp = 1 - seat
                    hand = st[pgc.HAND + seat * 13: pgc.HAND + seat * 13 + 13].copy()
                    rows.append(dict(
                        g=g, rnd=rnd, seat=seat,
                        t_type=pgc.act_type(at), m_type=pgc.act_type(am),
                        t_shed=int(pgc.played_total(st, at)) if pgc.act_type(at) != pgc.A_PASS else 0,
                        m_shed=int(pgc.played_total(st, am)) if pgc.act_type(am) != pgc.A_PASS else 0,
                        t_end=int(pgc.trick_end_cause(st, params, at)),
                        m_end=int(pgc.trick_end_cause(st, params, am)),
                        t_kind=pgc.act_kind(at), t_size=pgc.act_size(at),
                        c_kind=int(st[pgc.S_C_KIND]), c_size=int(st[pgc.S_C_SIZE]),
                        c_low=int(st[pgc.S_C_LOW]),
                        t_low=pgc.act_low(at), m_kind=pgc.act_kind(am), m_low=pgc.act_low(am),
                        m_size=pgc.act_size(am),
                        held=int(st[pgc.N_HELD + seat]), reserve=int(st[pgc.RESERVE_ON + seat]),
                        opp_held=int(st[pgc.N_HELD + opp]), opp_reserve=int(st[pgc.RESERVE_ON + opp]),
                        same=int(i_t == i_mc), n=n, hand=hand))
                pgc.apply_action(st, params, acts[i_mc])
    summarize(rows)
    same = np.mean([r["same"] for r in rows])
    same_type = np.mean([r["t_type"] == r["m_type"] for r in rows])
    print(f"tuned's choice = mc's: {same:.3f} of these decisions; same action type: {same_type:.3f}")
    if a.out:
        np.savez(a.out, **{k: np.array([r[k] for r in rows]) for k in rows[0]})


def summarize(rows):
    names = pgc.ACTION_NAMES
    print(f"decisions with an Add option: {len(rows)}")
    c = collections.Counter((names[r["t_type"]], names[r["m_type"]]) for r in rows)
    print("tuned -> mc:", ", ".join(f"{t}->{m} {k}" for (t, m), k in sorted(c.items())))
    tadd = [r for r in rows if r["t_type"] == pgc.A_ADD]
    print(f"tuned Adds: {len(tadd)}; mc Adds too (any Add) {sum(r['m_type'] == pgc.A_ADD for r in tadd)}")

    def tab(label, key):
        d = collections.defaultdict(lambda: [0, 0, 0])
        for r in tadd:
            v = key(r)
            d[v][0] += 1
            d[v][1] += r["m_type"] == pgc.A_ADD
            d[v][2] += r["m_type"] == pgc.A_PASS
        print(f"  by {label}: " + "; ".join(f"{v}: n={x[0]} mcAdd {x[1] / x[0]:.2f} mcPass {x[2] / x[0]:.2f}"
                                            for v, x in sorted(d.items())))
    tab("ends trick", lambda r: r["t_end"])
    tab("cards shed", lambda r: r["t_shed"])
    tab("meld kind after (0 single 1 set 2 run)", lambda r: r["t_kind"])
    tab("Central Meld size before", lambda r: r["c_size"])
    tab("own held after", lambda r: min(r["held"] - r["t_shed"], 12) // 3 * 3)
    tab("own reserve waiting", lambda r: r["reserve"])
    tab("opp held", lambda r: min(r["opp_held"], 12) // 3 * 3)
    tab("opp reserve waiting", lambda r: r["opp_reserve"])
    tab("top rank of Add meld", lambda r: pgc.meld_top(r["t_kind"], r["t_low"], r["t_size"]) // 3 * 3)
    mcadd = [r for r in rows if r["m_type"] == pgc.A_ADD]
    print(f"mc Adds: {len(mcadd)}; tuned Adds too {sum(r['t_type'] == pgc.A_ADD for r in mcadd)}; "
          f"tuned passes there {sum(r['t_type'] == pgc.A_PASS for r in mcadd)}")


if __name__ == "__main__":
    main()
