"""forecasts-bid's game-horizon objective (``mc:B:ROLLOUT:3``, fb.OBJ_GAME; issue #24): rollouts
play every later round to the end of the game, from the searching seat's own SEARCH stream."""
from __future__ import annotations

import numpy as np
import pytest

from kernels import forecasts_bid as fb
from kernels import layout, rng
from simcli.config import jobs as cfg
from simcli.errors import SimError
from tests.helpers import reproducible_rows
from tests.test_forecasts_bid_mc import MC_SEAT, search_card, winning_card_position


def test_objectives_3_and_4_are_labels_and_5_is_refused_naming_the_choices():
    valid, args = fb.POLICIES, fb.POLICY_ARGS
    for name in ("mc", "race", "halve"):
        label, row = cfg.parse_policy(f"{name}:8:tuned:3", valid, args)
        assert label == f"{name}:8:tuned:3" and row[3] == fb.OBJ_GAME == 3
        label, row = cfg.parse_policy(f"{name}:8::4", valid, args)
        assert label == f"{name}:8:heuristic:4" and row[3] == fb.OBJ_INVEST == 4
    for bad in ("mc:16:heuristic:5", "mc:16:heuristic:-1", "mc:16:heuristic:game"):
        with pytest.raises(SimError) as e:
            cfg.parse_policy(bad, valid, args)
        msg = str(e.value)
        assert "\n" not in msg and "0..4" in msg
        for choice in ("0 round gain", "1 round margin", "2 win chance",
                       "3 win share at the end of the game", "4 as 3 for Investment"):
            assert choice in msg


def invest_position(players, rnd, objective, budget=3, seed=4, spend=0, rep=5):
    """(st, keys, ctrs, j): the start of round ``rnd`` (before the deal), seat 0 on
    mc:budget:heuristic:objective with Market Spend ``spend`` and Reputation ``rep`` (so it may
    invest), the other players heuristic with Spend 3 (they do not invest)."""
    S = fb.n_seats(players, None)
    st = np.empty(fb.ST_SIZE, dtype=np.int64)
    fb.init_game(st, players, 1)
    st[fb.S_ROUND] = rnd
    st[fb.S_DEALER] = rnd % S
    for s in range(S):
        if s != st[fb.S_RIVAL]:
            st[fb.S_POLICY + s] = fb.P_HEURISTIC
    st[fb.S_POLICY + MC_SEAT] = fb.P_MC
    st[fb.S_MCARG + 2 * MC_SEAT] = budget
    st[fb.S_MCARG + 2 * MC_SEAT + 1] = fb.P_HEURISTIC
    st[fb.S_MCOBJ + MC_SEAT] = objective
    st[fb.S_SPEND + MC_SEAT] = spend
    st[fb.S_REP + MC_SEAT] = rep
    keys = np.zeros(2 * S + 2, dtype=np.uint64)
    ctrs = np.zeros(2 * S + 2, dtype=np.int64)
    keys[S + fb.SLOT_SEARCH_OFFSET + MC_SEAT] = rng.stream_key(seed, 0, rng.SEARCH, MC_SEAT)
    keys[S + fb.SLOT_DEAL_OFFSET] = rng.stream_key(seed, 0, rng.DEAL, rnd)
    keys[S + fb.SLOT_AUX_OFFSET] = rng.stream_key(seed, 0, rng.AUX, rnd)
    j = (MC_SEAT - st[fb.S_DEALER] - 1) % S     # seat 0's place from the dealer's left
    return st, keys, ctrs, j


# plays per round by the rules: every seat (the Rival too) plays one card to each trick
# (4p 10 tricks x 4, 3p 13 x 3, 2p + Rival 10 x 3) and the regular rounds (4p 5, 3p 4, 2p 5)
PLAYS_PER_ROUND = {4: 40, 3: 39, 2: 30}
REGULAR_ROUNDS = {4: 5, 3: 4, 2: 5}


@pytest.mark.parametrize("players", [4, 3, 2])
@pytest.mark.parametrize("rounds_left", [1, 2, 4])
def test_game_horizon_rollouts_play_to_the_end_of_the_game(players, rounds_left):
    """An Investment decision (two options) at the start of the round with ``rounds_left``
    regular rounds from it on: each objective-3 rollout plays this round and every later one
    (plus, after a tie for the lead, the one sudden-death round), each objective-0 rollout only
    this round. Counted by the search's own counters (mc_rollouts, mc_rollout_plays)."""
    rnd = REGULAR_ROUNDS[players] - rounds_left
    per_round = PLAYS_PER_ROUND[players]
    for obj, lo, hi in ((fb.OBJ_MEAN, per_round, per_round),
                        (fb.OBJ_GAME, per_round * rounds_left, per_round * (rounds_left + 1))):
        st, keys, ctrs, j = invest_position(players, rnd, obj, budget=5)
        fb.mc_invest(st, keys, ctrs, MC_SEAT, j)
        rollouts = int(st[fb.S_COUNT + fb.C_MC_ROLLOUTS])
        plays = int(st[fb.S_COUNT + fb.C_MC_PLAYS])
        assert rollouts == 5 * 2
        assert lo * rollouts <= plays <= hi * rollouts, (obj, plays / rollouts)
        if obj == fb.OBJ_GAME and rounds_left > 1:
            assert plays > per_round * rollouts     # past this round


def test_objective_4_rolls_out_to_the_game_end_for_investment_only():
    """OBJ_INVEST: an Investment decision is searched to the end of the game (as objective 3:
    the same rollouts, the same choice), every other decision exactly as objective 0 (the same
    card and the same rollout plays in the AD/2C position below)."""
    for rounds_left in (1, 3):
        out = {}
        for obj in (fb.OBJ_GAME, fb.OBJ_INVEST):
            st, keys, ctrs, j = invest_position(4, 5 - rounds_left, obj, budget=5)
            yes = int(fb.mc_invest(st, keys, ctrs, MC_SEAT, j))
            out[obj] = (yes, int(st[fb.S_COUNT + fb.C_MC_PLAYS]), ctrs.tolist())
        assert out[fb.OBJ_GAME] == out[fb.OBJ_INVEST]
        assert out[fb.OBJ_INVEST][1] >= 40 * rounds_left * 10
    for seed in range(2):
        got = {}
        for obj in (fb.OBJ_MEAN, fb.OBJ_INVEST):
            st, c = winning_card_position(8, rounds_left=1, objective=obj)
            card, after, ctrs = search_card(st, seed)
            got[obj] = (card, int(after[fb.S_COUNT + fb.C_MC_PLAYS]), ctrs.tolist())
        assert got[fb.OBJ_MEAN] == got[fb.OBJ_INVEST]
        assert got[fb.OBJ_MEAN][0] == c["2C"]


@pytest.mark.parametrize("players", [4, 2])
def test_later_deals_come_from_the_search_stream_not_the_games_deal(players):
    """The game's own DEAL / AUX keys (what the coming rounds will really be dealt from) do not
    reach an objective-3 search: changing them changes neither the choice nor a single rollout
    card play; changing the seat's SEARCH key changes the rollouts (4p: the sudden deaths)."""
    def run(deal_seed, search_seed):
        st, keys, ctrs, j = invest_position(players, 1, fb.OBJ_GAME, budget=6, seed=search_seed)
        S = int(st[fb.S_SEATS])
        keys[S + fb.SLOT_DEAL_OFFSET] = rng.stream_key(deal_seed, 0, rng.DEAL, 1)
        keys[S + fb.SLOT_AUX_OFFSET] = rng.stream_key(deal_seed, 0, rng.AUX, 1)
        yes = int(fb.mc_invest(st, keys, ctrs, MC_SEAT, j))
        return yes, int(st[fb.S_COUNT + fb.C_MC_PLAYS])
    assert run(1, 4) == run(2, 4)
    if players == 4:    # 4p ties for the lead often: how many sudden deaths the rollouts play
        plays = {run(1, s)[1] for s in range(4, 10)}    # follows the SEARCH stream
        assert len(plays) > 1


@pytest.mark.parametrize("players,seats", [
    (4, "mc:2:heuristic:3,heuristic,race:2:random:3,halve:2:tuned:4"),
    (3, "mc:2:tuned:3,mc:2:heuristic,heuristic"),
    (2, "mc:2:heuristic:3,mc:2:random:3")])
def test_game_horizon_results_are_identical_across_threads_and_chunks(players, seats):
    job = cfg.resolve("forecasts-bid", players=players, seats=seats)
    S = job.seats.shape[0]
    a = reproducible_rows(job, games=8)     # serial == chunked on 1 and 2 threads; trace == run
    assert a[:, layout.col_counter(S, fb.C_MC_ROLLOUTS)].min() > 0
    assert a[:, layout.col_counter(S, fb.C_MC_PLAYS)].min() > 0


def test_the_game_horizon_plays_for_the_game_where_the_round_horizon_plays_for_the_round():
    """The position of test_forecasts_bid_mc (4p, trick 9 of 10, seat 0 holds AD and 2C, every
    card of the trick's rest known) with one regular round after this one. AD leaves Reputation
    33, 29, 10, 5: seat 0 leads by 4 going into the last round; 2C leaves 33, 34, -4, 5: seat 0
    trails seat 1 by 1 but gains more over the others' mean (the round objective: 8 against -1).
    The rest of the game is the same for either card (every seat on the same rollout policy,
    the same deals), so leading by 4 wins the game more often than trailing by 1 (the
    win-chance model gives about 0.64 against 0.46 for two rounds; one round spreads less):
    objective 0 plays 2C, the game horizon AD."""
    for seed in range(3):
        st, c = winning_card_position(48, rounds_left=1, objective=fb.OBJ_MEAN)
        assert search_card(st, seed)[0] == c["2C"], "the position tells the horizons apart"
        st, c = winning_card_position(48, rounds_left=1, objective=fb.OBJ_GAME)
        card, after, _ = search_card(st, seed)
        assert card == c["AD"]
        # 48 samples x 2 options, each played on through the last round (40 plays) and this
        # round's last trick (4 plays; seat 0's own card to this one is the option, not counted)
        assert int(after[fb.S_COUNT + fb.C_MC_ROLLOUTS]) == 96
        assert int(after[fb.S_COUNT + fb.C_MC_PLAYS]) >= 96 * (40 + 4)
