"""The first printed line of a run: which play was simulated, how to choose another, and what
``--games`` counted (deals, rotations, games), in the same words for every command."""
from __future__ import annotations

from collections import Counter

from simcli.report.fmt import short_policies


def games_phrase(deals: int, rotations: int = 1) -> str:
    """``5,000 deals x 4 rotations = 20,000 games``, or ``20,000 games`` without rotation."""
    if rotations > 1:
        return f"{deals:,} deals x {rotations} rotations = {deals * rotations:,} games"
    return f"{deals:,} games"


def _games(jobs, counts, rotate: bool) -> str:
    rots = [j.players if rotate else 1 for j in jobs]
    pairs = Counter(zip(counts, rots))
    if len(pairs) == 1:
        (n, r), = pairs
        return games_phrase(n, r) + ("" if len(jobs) == 1 else " per job")
    parts = [f"{games_phrase(n, r)} ({k} job{'s' if k > 1 else ''})" for (n, r), k in pairs.most_common()]
    return "; ".join(parts)


def _play(jobs, play: dict | None, suite: bool) -> str:
    # designed play only while every job plays it (not --skill's levels, which replace it)
    if play and play.get("designed") and all(set(j.policies[:j.players]) == {play["policy"]}
                                             for j in jobs):
        game = jobs[0].game
        return (f"designed play, every seat {play['policy']} (configs/{game}.toml; "
                f"choose another with --policy or --seats)")
    if suite:
        return "each game's designed play (configs/suite.toml; a GAME and --policy play another)"
    labels = list(dict.fromkeys(short_policies(j.policy_label) for j in jobs))
    if len(labels) == 1:
        return f"seats {labels[0]}"
    if len(labels) <= 4:
        return "seats " + " | ".join(labels)
    return f"seats as listed per job ({len(labels)} seatings)"


def run_header(jobs, counts, rotate: bool, play: dict | None = None, suite: bool = False) -> str:
    """One line: what was simulated, with which play, and how many deals and games."""
    what = jobs[0].describe().split(" [")[0] if len(jobs) == 1 else f"{len(jobs)} jobs"
    return f"{what}: {_play(jobs, play, suite)}; {_games(jobs, counts, rotate)}"
