"""One game replayed with the event recorder on, decoded to JSON-ready dicts.

The kernel's ``trace_game`` runs the same ``play_one`` as bulk play, so the traced game is
the simulated game. Events are int rows ``[code, seat, v0, ...]`` decoded here with the
module's ``EVENTS`` declarations; the last event is always ``result`` from the result row.
"""
from __future__ import annotations

import numpy as np

from kernels import layout
from simcli.config.jobs import Job

MAX_EVENTS = 1 << 14


def trace_rows(job: Job, seed: int, game_index: int) -> tuple[np.ndarray, np.ndarray]:
    """(result row, event rows) of one game; grows the event buffer until it fits."""
    mod = job.module
    width = layout.out_width(job.seats.shape[0], len(mod.COUNTERS))
    cap = MAX_EVENTS
    while True:
        out = np.zeros((1, width), dtype=np.int64)
        ev = np.zeros((cap, layout.EVENT_WIDTH), dtype=np.int64)
        ev_n = np.zeros(1, dtype=np.int64)
        mod.trace_game(job.params, job.seats, np.int64(seed), np.int64(game_index), out, ev, ev_n)
        if ev_n[0] <= cap:
            return out[0], ev[: ev_n[0]]
        cap = int(ev_n[0]) + 1


def decode_event(mod, row: np.ndarray) -> dict:
    by_code = {e.code: e for e in mod.EVENTS}
    e = by_code.get(int(row[0]))
    if e is None:
        return {"event": f"unknown_{int(row[0])}", "seat": int(row[1]), "values": row[2:].tolist()}
    d = {"event": e.name}
    if int(row[1]) >= 0 or e.seat_always:
        d["seat"] = int(row[1])
    words = dict(e.words)
    for i, f in enumerate(e.fields):
        v = int(row[2 + i])
        if f in e.cards:
            d[f] = mod.format_card(v) if v >= 0 else None
        elif f in e.masks:
            d[f] = [mod.format_card(c) for c in range(64) if (v >> c) & 1]
        elif f in words:
            d[f] = words[f][v] if 0 <= v < len(words[f]) else v
        else:
            d[f] = v
    return d


def result_event(job: Job, out_row: np.ndarray) -> dict:
    mod = job.module
    row = job.row
    winners = int(out_row[row.winners])
    d = {
        "event": "result",
        "scores": [int(x) for x in out_row[row.scores]],
        "places": [int(x) for x in out_row[row.places]],
        "winners": [s for s in range(row.S) if (winners >> s) & 1],
        "length": int(out_row[row.length]),
        "timeout": bool(out_row[row.flags] & layout.FLAG_TIMEOUT),
        "decisions": int(out_row[row.decisions]),
        "counters": {c.name: int(out_row[row.counter(i)]) for i, c in enumerate(mod.COUNTERS)},
    }
    return d


def trace_events(job: Job, seed: int, game_index: int) -> list[dict]:
    out, ev = trace_rows(job, seed, game_index)
    events = [{"event": "game", "game_index": game_index, "seed": seed, "game": job.game,
               "variant": job.variant, "players": job.players, "policies": job.policies,
               "rules": job.rules, "version": job.module.VERSION}]
    events += [decode_event(job.module, r) for r in ev]
    events.append(result_event(job, out))
    for e in events:
        e.setdefault("game_index", game_index)
    return events
