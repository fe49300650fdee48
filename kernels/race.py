"""Racing the options of one search decision on common samples (the ``race`` player, issue #26).

The flat search (``mc:B``) plays every option on each of B samples and takes the best mean. The
race plays the options on the same samples too (one determinisation per sample, shared by every
option still in the race, and the same rollout random numbers for each: the sample's stream
counter is reset before each option), but after samples 4, 6, 8, 12, 16, 24, ... (``looks_at``)
it compares the leader (best total so far) with every other option still running, on their
paired per-sample differences ``d``:

* dropped when the leader is clearly better: mean(d) > 0 and mean(d) > z * se(d), z = 2.5
  (sums of d and d^2 kept as exact integers, the test in float64; a difference of the same
  sign on every sample passes it);
* dropped as equivalent when it has scored exactly the leader's value on every one of at least
  max(``RACE_EQ``, B / 4) samples (the earlier option is kept, as the flat search's tie rule
  does).

It stops as soon as one option is left, or after B samples; the pick is the best total among the
options still running (ties: the earlier). So B is still the budget per option, and a decision
whose best option stands out costs a few samples instead of B, while a close one still gets
all B. An indifference margin (also drop an option that cannot be better than the leader by
delta) was tried and cost strength: forecasts-cubes race:16 with delta = 0.25 round points
-0.041 [-0.060, -0.022] win share against mc:16; so did a look after every sample (race:64
-0.023 [-0.042, -0.005] against mc:64) (benchmarks/RESULTS.md, issue #26).
Everything is deterministic arithmetic on the game's integer rollout values and the seat's keyed
SEARCH stream: reproducible for any thread count, chunk size or backend.

Sample ``j`` of a decision starts at counter ``base + j * STRIDE`` of the seat's search stream,
whatever was dropped before it; a decision leaves the counter at ``base + B * STRIDE``.
"""
from __future__ import annotations

import math

import numpy as np

from ._jit import jit

RACE_MIN = 4                 # samples every option gets before any can be dropped
Z = 2.5                      # how sure the race must be before it drops an option
RACE_EQ = 8                  # samples of identical values (and a quarter of the budget) before an
                             # option counts as equivalent
STRIDE = np.int64(1 << 24)   # stream counters per sample


@jit
def new_race(n_opt):
    """(alive, total, S, Q): every option running, no sample yet."""
    return (np.ones(n_opt, dtype=np.int64), np.zeros(n_opt, dtype=np.int64),
            np.zeros((n_opt, n_opt), dtype=np.int64), np.zeros((n_opt, n_opt), dtype=np.int64))


@jit
def record(vals, alive, total, S, Q, n_opt):
    """Add one common sample's values of the running options."""
    for i in range(n_opt):
        if alive[i]:
            total[i] += vals[i]
            for j in range(i + 1, n_opt):
                if alive[j]:
                    d = vals[i] - vals[j]
                    S[i, j] += d
                    Q[i, j] += d * d


@jit
def leader(alive, total, n_opt):
    """The running option with the best total (the earliest on ties)."""
    best = -1
    for i in range(n_opt):
        if alive[i] and (best < 0 or total[i] > total[best]):
            best = i
    return best


@jit
def looks_at(m):
    """Whether the race compares after sample ``m``: 4, 6, 8, 12, 16, 24, 32, 48, ... (each look
    at z = 2.5 adds to the chance of dropping an option that is really better)."""
    if m < RACE_MIN:
        return False
    while m % 2 == 0:
        m //= 2
    return m == 1 or m == 3


@jit
def prune(alive, total, S, Q, n_opt, m, budget):
    """Drop the options the leader clearly beats, or equals on every sample, after ``m`` common
    samples (of ``budget``); returns how many are still running."""
    if not looks_at(m):
        return running(alive, n_opt)
    L = leader(alive, total, n_opt)
    left = 1
    for j in range(n_opt):
        if not alive[j] or j == L:
            continue
        si = S[L, j] if L < j else -S[j, L]     # >= 0: L leads on the same m samples
        qi = Q[L, j] if L < j else Q[j, L]
        mean = si / m
        var = max(qi / m - mean * mean, 0.0) * m / (m - 1)
        if si > 0 and mean > Z * np.sqrt(var / m):
            alive[j] = 0
        elif si == 0 and qi == 0 and m >= RACE_EQ and 4 * m >= budget:
            alive[j] = 0
        else:
            left += 1
    return left


# ---- sift: the race without the equivalence drop, on a later schedule (issue #26, session 16) ----
# A ``sift`` seat (forecasts-bid) races its options on common samples as ``race`` does, by schedule
# k (``sift:B:ROLLOUT:OBJECTIVE``, OBJECTIVE = objective + 10 x k; k = 0 is the default). At a look
# (a sample m >= SIFT_FIRST[k] that ``looks_at`` names) each running option j is compared with the
# leader L on their paired per-sample differences d (mean, standard error se):
# * dropped when mean > 0 and mean > SIFT_Z[k] x se (race's test);
# * dropped as equivalent when d was 0 on every one of m >= SIFT_EQ[k] samples (race's rule, at
#   max(8, B/4)): every schedule that keeps it lost to mc:64 (benchmarks/RESULTS.md, session 16);
# * dropped when its expected loss is small: SIFT_C[k] > 0, se > 0, d nonzero on at least
#   SIFT_NZ[k] samples, and se x (phi(t) - t x (1 - Phi(t))) < SIFT_C[k], t = mean / se (the
#   expected amount by which j beats L under a normal posterior of the mean difference);
# * in a round that can end the game (``final``): SIFT_FINAL[k] = 1 turns the z test off there
#   (z = NO_Z: it then drops only an option the leader beat by the same amount on every sample,
#   se = 0) and the expected loss with it; 2 turns only the expected loss off;
# SIFT_DISTINCT[k] = 1: a card play searches only the distinct cards (forecasts_bid.distinct_plays).
# Schedules 1-35 are session 16's screening candidates, kept so that every figure recorded for
# them can be reproduced; 0 is the one kept (the same rule as 8). 36-39 (session 17, branch
# sift17) are 10 with distinct cards (36), with the z test in a round that can end the game (37;
# 38 with distinct cards too) and with distinct cards and every drop in every round (39): cheaper
# (about 32k / 36k / 30k / 29k rollouts a game against 10's 38-40k), none level with mc:64 on
# fresh seeds (benchmarks/RESULTS.md, "Issue #26, session 17, branch sift17").
BIG = 1 << 30
NO_Z = 1e300
SIFT_FIRST = (16, 8, 8, BIG, BIG, 8, 16, 16, 16, 8, 8, 16, 4, 8, 16, 4, 16, 8, 8, 8, 8, 16, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8)
SIFT_Z = (3.0, 3.0, 2.5, 3.0, 3.0, 3.0, 3.0, NO_Z, 3.0, 3.0, 3.0, 3.0, 2.5, 3.0, 3.0, 2.5, 2.5, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, NO_Z, NO_Z, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0)
SIFT_EQ = (BIG, 16, 16, BIG, BIG, 16, 16, 16, BIG, BIG, BIG, BIG, BIG, BIG, 16, 16, 16, 8, 8, 8, 8, 16, 8, 8, 8, 8, BIG, 8, 8, 8, 8, 8, BIG, BIG, BIG, BIG, BIG, BIG, BIG, BIG)
SIFT_C = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.25, 0.25, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.25, 0.25, 0.1, 0.25, 0.25, 0.25, 0.05, 0.1, 0.5, 0.5, 1.0, 2.0, 0.0, 0.0, 0.25, 0.25, 0.1, 0.1, 0.25, 0.25, 0.25, 0.25)
SIFT_NZ = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 8, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 2, 4, 2, 4, 8, 8, 8, 8)
SIFT_FINAL = (1, 0, 0, 0, 0, 1, 1, 0, 1, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0, 1, 1, 1, 0, 2, 2, 2, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 0)
SIFT_DISTINCT = (0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0, 0, 0, 1, 0, 1, 1)


@jit
def record_sample(vals, alive, total, H, m, n_opt):
    """``record`` for a sift race: sample ``m``'s (0-based) values of the running options into
    row m of ``H`` (budget x n_opt) and their totals. The pair sums a look needs are summed from
    H for the leader's pairs only (``pair_stats``): an option dropped once never runs again, so
    two running options ran on every sample so far, and the sums are the same integers as
    running sums over every pair, which cost O(n_opt^2) a sample (session 23)."""
    for i in range(n_opt):
        if alive[i]:
            total[i] += vals[i]
            H[m, i] = vals[i]


@jit
def pair_stats(H, m, a, b):
    """(sum d, sum d^2, samples with d != 0) of d = H[t, a] - H[t, b] over the first m samples."""
    s = 0
    q = 0
    nz = 0
    for t in range(m):
        d = H[t, a] - H[t, b]
        s += d
        q += d * d
        if d != 0:
            nz += 1
    return s, q, nz


@jit
def expected_loss(mean, se):
    """E[max(0, -X)] for X normal with ``mean`` >= 0 and standard deviation ``se`` > 0: what the
    leader is expected to lose to an option it leads by ``mean`` on average."""
    t = mean / se
    return se * (np.exp(-0.5 * t * t) * 0.3989422804014327
                 - t * 0.5 * math.erfc(t * 0.7071067811865476))


@jit
def prune_sift(alive, total, H, n_opt, m, k, final):
    """``prune`` by schedule ``k`` (above) after ``m`` common samples (rows 0 .. m - 1 of ``H``,
    ``record_sample``); returns how many options are still running."""
    if m < SIFT_FIRST[k] or not looks_at(m):
        return running(alive, n_opt)
    z = SIFT_Z[k]
    c = SIFT_C[k]
    if final and SIFT_FINAL[k] == 1:
        z = NO_Z
        c = 0.0
    elif final and SIFT_FINAL[k] == 2:
        c = 0.0
    L = leader(alive, total, n_opt)
    left = 1
    for j in range(n_opt):
        if not alive[j] or j == L:
            continue
        si, qi, ni = pair_stats(H, m, L, j)     # si >= 0: L leads on the same m samples
        mean = si / m
        var = max(qi / m - mean * mean, 0.0) * m / (m - 1)
        se = np.sqrt(var / m)
        if si > 0 and mean > z * se:
            alive[j] = 0
        elif si == 0 and qi == 0 and m >= SIFT_EQ[k]:
            alive[j] = 0
        elif c > 0.0 and se > 0.0 and ni >= SIFT_NZ[k] and expected_loss(mean, se) < c:
            alive[j] = 0
        else:
            left += 1
    return left


# ---- successive halving on common samples (the ``halve`` player, forecasts-bid) ----------------
# Budget B per option, as ``mc:B``: a decision with n options may play about B x n rollouts.
# They are spent in R = ceil(log2 n) rounds of about B x n / R rollouts each: every option still
# running gets that round's share of new common samples (the same re-deals and rollout streams),
# then the better half by total over every sample so far stays (ties: the earlier option). With
# n = 2 it is the flat search at B; with 11 options (a 4p bid) at B = 16 the last two options are
# compared on 47 common samples instead of 16.


@jit
def halving_rounds(n_opt):
    """R = ceil(log2 n_opt) halving rounds (0 for a single option)."""
    r = 0
    k = 1
    while k < n_opt:
        k *= 2
        r += 1
    return r


@jit
def halving_samples(budget, n_opt, left, rounds):
    """New common samples for each of the ``left`` running options in one round: the round's
    share budget x n_opt / rounds of the rollouts, split among them (at least 1)."""
    t = (budget * n_opt) // (rounds * left)
    return t if t > 1 else 1


@jit
def halve(alive, total, n_opt):
    """Keep the better half (rounded up) of the running options by ``total`` (ties: the earlier
    option), drop the rest; returns how many are running."""
    left = running(alive, n_opt)
    keep = (left + 1) // 2
    for i in range(n_opt):
        if not alive[i]:
            continue
        better = 0          # running options ranked above i
        for j in range(n_opt):
            if alive[j] and j != i and (total[j] > total[i] or (total[j] == total[i] and j < i)):
                better += 1
        if better >= keep:
            alive[i] = -1   # marked: still compared with in this pass
    for i in range(n_opt):
        if alive[i] < 0:
            alive[i] = 0
    return keep


@jit
def running(alive, n_opt):
    c = 0
    for i in range(n_opt):
        c += alive[i]
    return c
