"""Information-set Monte Carlo tree search (the ``ismcts`` player, issue #24).

Single-observer ISMCTS (Cowling, Powley and Whitehouse, "Information Set Monte Carlo Tree Search",
IEEE TCIAIG 2012): one tree per decision, over the searching seat's information sets. Each
iteration

1. re-deals what the seat cannot see (a *determinisation*, the game's own sampler, as ``mc``);
2. walks down the tree from the root, at each node offering only the actions legal in this
   determinisation: a legal action with no child yet is added (one new node an iteration: the
   rollout policy's choice when it is untried, so that a node's first visit continues the line
   the flat search would play, else one drawn uniformly among the untried), else the child with the best UCB score is taken, where a
   child's exploration term counts the iterations in which it was *available* (legal at its
   parent), not its parent's visits;
3. plays the rest of the horizon with the rollout policy (the game's rollout, as ``mc``'s);
4. credits every node on the path with the result **of the seat that chose its action**, so the
   other seats' nodes are searched for their own good (max-n), not for the searcher's.

The decision is the root child visited most (ties: more reward, then the earlier created).

Both games that use it (forecasts-cubes, forecasts-bid) keep the root **flat**: each sample is
played from every option in turn (``select`` at the root offered only that option's action), so
the options are compared on common samples as the flat search compares them, every option gets
the same visits, and the decision is the one with the most reward. A UCB root with a fresh sample
an iteration lost -0.025 (forecasts-cubes) and -0.139 (forecasts-bid) to the flat search at its
cost (docs/search.md, "Information-set MCTS").

Unlike the flat search, later decisions of every seat inside the horizon are searched too instead
of following the rollout rule, and the samples are spent where the choice is close. Like it, it
trusts the determinisations: an opponent node may use a card the opponent could not know it has
(strategy fusion), the known limit of single-observer ISMCTS.

The tree lives in flat int64 arrays (``new_tree``); action codes are 0..63 so a node's legal set
is one 64-bit mask. Every random choice draws from the seat's keyed SEARCH stream, and all
arithmetic but the UCB comparison is on integers (the comparison is plain float64, the same on
every thread): reproducible for any thread count, chunk size or backend.
"""
from __future__ import annotations

import math

import numpy as np

from . import rng
from ._jit import jit
from .cards import nth_bit, popcount

ROOT = 0
# the columns of a tree's node table
ACT, MOVER, VISITS, AVAIL, REWARD, CHILD, SIB = range(7)
N_COLS = 7


@jit
def new_tree(iterations):
    """A node table for ``iterations`` iterations (one node each, plus the root): row i holds node
    i's action, the seat that chose it, visits, availability, reward sum, first child, next
    sibling (-1: none). Only the root is in use."""
    tree = np.zeros((iterations + 1, N_COLS), dtype=np.int64)
    tree[ROOT, ACT] = -1
    tree[ROOT, MOVER] = -1
    tree[ROOT, CHILD] = -1
    tree[ROOT, SIB] = -1
    return tree


@jit
def child_of(tree, node, action):
    """The child of ``node`` reached by ``action``, or -1."""
    c = tree[node, CHILD]
    while c >= 0:
        if tree[c, ACT] == action:
            return c
        c = tree[c, SIB]
    return -1


@jit
def ucb(tree, c, explore, scale):
    """UCB1 with availability counts: mean reward / scale + explore * sqrt(ln(avail) / visits)."""
    v = tree[c, VISITS]
    return (tree[c, REWARD] / (v * scale)
            + explore * math.sqrt(math.log(max(tree[c, AVAIL], 1)) / v))


@jit
def select(tree, n_nodes, node, legal, mover, explore, scale, keys, ctrs, slot, prefer=-1):
    """One step down from ``node`` whose legal actions in this determinisation are the bits of
    ``legal`` (not 0), chosen by seat ``mover``. Returns (child, n_nodes, expanded).

    Every existing child whose action is legal gains one availability. If some legal action has no
    child, one of them becomes node ``n_nodes``: ``prefer`` (the rollout policy's choice) when it
    is one of them, else one drawn uniformly from stream ``slot``; otherwise the legal child with
    the best UCB score is taken (ties: the first in the child list)."""
    untried = legal
    best = -1
    best_v = -1.0
    c = tree[node, CHILD]
    while c >= 0:
        bit = np.int64(1) << tree[c, ACT]
        if legal & bit:
            untried &= ~bit
            tree[c, AVAIL] += 1
        c = tree[c, SIB]
    if untried:
        if prefer >= 0 and (untried >> prefer) & 1:
            a = prefer
        else:
            n = popcount(untried)
            a = nth_bit(untried, rng.below(keys, ctrs, slot, n) if n > 1 else 0)
        new = n_nodes
        tree[new, ACT] = a
        tree[new, MOVER] = mover
        tree[new, VISITS] = 0
        tree[new, AVAIL] = 1
        tree[new, REWARD] = 0
        tree[new, CHILD] = -1
        tree[new, SIB] = tree[node, CHILD]
        tree[node, CHILD] = new
        return new, n_nodes + 1, True
    c = tree[node, CHILD]
    while c >= 0:
        if legal & (np.int64(1) << tree[c, ACT]):
            v = ucb(tree, c, explore, scale)
            if best < 0 or v > best_v:
                best = c
                best_v = v
        c = tree[c, SIB]
    return best, n_nodes, False


@jit
def backup(tree, path, depth, result):
    """Credit the ``depth`` nodes of ``path`` with one visit and ``result[mover]`` each."""
    for d in range(depth):
        n = path[d]
        tree[n, VISITS] += 1
        tree[n, REWARD] += result[tree[n, MOVER]]


@jit
def most_visited(tree):
    """The root's most visited child's action (ties: more reward, then the earlier created)."""
    best = -1
    c = tree[ROOT, CHILD]
    while c >= 0:     # the child list runs newest first: ">=" keeps the earliest on ties
        if (best < 0 or tree[c, VISITS] > tree[best, VISITS]
                or (tree[c, VISITS] == tree[best, VISITS] and tree[c, REWARD] >= tree[best, REWARD])):
            best = c
        c = tree[c, SIB]
    return tree[best, ACT]
