"""Helpers shared by several test files: driving the real CLI entry point, paired matches."""
from __future__ import annotations

import contextlib
import io
import sys
import traceback
from dataclasses import dataclass

from kernels import layout

from simcli import cli
from simcli.config import jobs as cfg
from simcli.engine import runner
from simcli.stats import paired_difference


def hand_mask(*names):
    """The 52-card mask of cards named as ``parse_card`` reads them ("AH", "10S", ...)."""
    import numpy as np
    from kernels.cards import parse_card
    m = 0
    for n in names:
        m |= 1 << parse_card(n)
    return np.int64(m)


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str
    output: str  # stdout and stderr interleaved, as a terminal shows them
    exception: BaseException | None = None  # an uncaught error (its traceback is in stderr)


class _Tee(io.StringIO):
    def __init__(self, both: io.StringIO):
        super().__init__()
        self.both = both

    def write(self, text):
        self.both.write(text)
        return super().write(text)

    def isatty(self):
        return False


def invoke(*args) -> CliResult:
    """Run simcli.cli.main, the real console entry point, as the console script does: errors
    become one line on stderr and an exit code."""
    both = io.StringIO()
    out, err = _Tee(both), _Tee(both)
    argv = sys.argv
    sys.argv = ["simcli", *map(str, args)]
    code, exc = 0, None
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                cli.main()
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            except Exception as e:  # what the console script would show as a traceback
                traceback.print_exc()
                code, exc = 1, e
    finally:
        sys.argv = argv
    return CliResult(code, out.getvalue(), err.getvalue(), both.getvalue(), exc)


def rule_params(mod, **rules):
    """Game module ``mod``'s rule vector: every rule's default, with ``rules`` by name (values as a
    config or the command line writes them). An unknown name is an error, not a silent default."""
    import numpy as np
    unknown = set(rules) - {r.name for r in mod.RULES}
    assert not unknown, f"{mod.__name__} has no rule(s) {sorted(unknown)}"
    p = np.zeros(len(mod.RULES), dtype=np.int64)
    for r in mod.RULES:
        p[r.index] = r.encode(rules.get(r.name, r.default))
    return p


def reproducible_rows(job, games: int = 12, seed: int = 9, traced: int = 3):
    """Rows of games 0..games-1 of ``job``, asserting they are the same whatever the threads and
    chunks (serial, a chunk on 1 thread then a chunk on 2) and that game ``traced``'s trace
    reproduces its row; returns the rows for game-specific checks."""
    import numba
    import numpy as np
    mod = job.module
    width = layout.out_width(job.seats.shape[0], len(mod.COUNTERS))
    a = np.zeros((games, width), np.int64)
    mod.play_games_serial(job.params, job.seats, seed, 0, a)
    numba.set_num_threads(1)
    b1 = runner.play_chunk(job, seed, 0, games // 2).copy()
    runner.set_threads(2)
    b2 = runner.play_chunk(job, seed, games // 2, games).copy()
    runner.set_threads(None)
    assert np.array_equal(a, np.vstack([b1, b2]))
    o = np.zeros((1, width), np.int64)
    ev = np.zeros((4096, layout.EVENT_WIDTH), np.int64)
    ev_n = np.zeros(1, np.int64)
    mod.trace_game(job.params, job.seats, np.int64(seed), np.int64(traced), o, ev, ev_n)
    assert np.array_equal(o[0], a[traced])
    return a


def cubes_search(pol, kind, options, hands, cubes, t, k, round_played, red, budget, seed=3,
                 explore=0, forbid=0, adv_left=(0, 0, 0, 0), advisory=False, forecast=None,
                 score=(0, 0, 0, 0), correct=(0, 0, 0, 0), last_round=False,
                 rollout=None):
    """(pick, rollouts) of a forecasts-cubes search decision (``fc._mc_choose`` with seat policy
    ``pol``: race or ismcts, whose ``budget`` is then its iterations; mc with objective
    ``explore``) for seat 0 (forecast ``forecast``, default Hot; the others Cold), round
    0 (the game's last if ``last_round``, standings ``score`` and ``correct``), leader seat 0,
    nothing led in the current trick unless ``k`` > 0, heuristic rollouts unless ``rollout``, the
    default knobs."""
    import numpy as np
    from kernels import forecasts_cubes as fc
    from kernels import rng
    P = 4
    keys = np.zeros(2 * P + 1, dtype=np.uint64)
    ctrs = np.zeros(2 * P + 1, dtype=np.int64)
    keys[P + 1] = rng.stream_key(seed, 0, rng.SEARCH, 0)
    mcstat = np.zeros(2, np.int64)
    opts = np.zeros(13, np.int64)
    opts[:len(options)] = options
    f = fc.F_HOT if forecast is None else forecast
    i = fc._mc_choose(kind, 0, opts, len(options), np.asarray(hands, np.int64),
                      np.asarray(cubes, np.int64), np.array([f, 1, 1, 1], np.int64),
                      np.asarray(adv_left, np.int64), advisory, P, t, 10, 0, np.zeros(P, np.int64),
                      k, -1, -1, np.zeros(P, np.int64), np.asarray(round_played, np.int64), red,
                      budget, fc.P_HEURISTIC if rollout is None else rollout, keys, ctrs, P + 1,
                      mcstat, forbid, fc.KNOB_DEFAULTS, 0, 0, np.asarray(score, np.int64),
                      np.asarray(correct, np.int64), last_round, pol, explore)
    return int(opts[i]), int(mcstat[0])


def paired_match(game: str, seats: str, deals: int, seed: int = 5, players: int | None = None):
    """(policy tally, paired difference of the first two policies) on seat-rotated deals."""
    (res,) = runner.run_jobs([cfg.resolve(game, players=players, seats=seats)], deals, seed,
                             progress=False, rotate=True)
    return res.policy, paired_difference(res.policy, 0, 1)


def without_arc(rows, n_counters: int):
    """Result rows without their arc block (kernels/arc.py), for plain-Python references that
    state the rest of the row; tests/test_arc.py checks the arc block against traces."""
    return rows[..., :layout.RowLayout.of_width(rows.shape[-1], n_counters).arc.start]



# ---- tuned seats (issue #24): seat rows with knob columns ------------------------------------------
def knob_row(mod, **over):
    """A full knob row of game module ``mod``: its defaults, with ``over`` by knob name."""
    import numpy as np
    from kernels.spec import MAX_KNOBS
    row = np.zeros(MAX_KNOBS, dtype=np.int64)
    for k in mod.KNOBS:
        row[k.index] = over.get(k.name, k.default)
    return row


def tuned_seats(mod, policies, knobs=None, forbid=None, width=None):
    """Seat rows for ``policies`` (``mc:B:ROLLOUT`` too); ``knobs[s]`` (overrides by name, or a
    full row) fills seat s's knob columns, ``forbid[s]`` its forbid mask."""
    import numpy as np
    from kernels.spec import MAX_KNOBS, SEAT_FORBID, SEAT_KNOBS, SEAT_WIDTH
    width = SEAT_WIDTH if width is None else width
    s = np.zeros((len(policies), width), dtype=np.int64)
    for i, name in enumerate(policies):
        pol, *args = name.split(":")
        s[i, 0] = mod.POLICIES[pol]
        if pol == "mc":
            s[i, 1], s[i, 2] = int(args[0]), mod.POLICIES[args[1]]
        if width >= SEAT_WIDTH and knobs is not None and knobs[i] is not None:
            row = knobs[i] if isinstance(knobs[i], np.ndarray) else knob_row(mod, **knobs[i])
            s[i, SEAT_KNOBS:SEAT_KNOBS + MAX_KNOBS] = row
        if forbid is not None:
            s[i, SEAT_FORBID] = forbid[i]
    return s


def knob_vectors(mod, seed, n):
    """Knob rows: all at lo, all at hi, then ``n`` uniform draws inside the bounds."""
    import numpy as np
    gen = np.random.default_rng(seed)
    rows = [knob_row(mod, **{k.name: k.lo for k in mod.KNOBS}),
            knob_row(mod, **{k.name: k.hi for k in mod.KNOBS})]
    rows += [knob_row(mod, **{k.name: int(gen.integers(k.lo, k.hi + 1)) for k in mod.KNOBS})
             for _ in range(n)]
    return rows
