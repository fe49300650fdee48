"""Which rule value hits a balance target? Racing candidates on common deals (``simcli tune``).

Every candidate (one value, or one cell of a two-rule grid) plays the same game indices
0, 1, 2 ... (common random numbers) in rounds of doubling size, ``FIRST_ROUND`` games first,
capped at ``--games``. After each round every survivor's distance to the target is compared
with the best survivor's, and a candidate significantly farther away is dropped (Holm over the
comparisons of that round, at ``alpha`` / planned rounds). The race stops when one candidate is left, when the
survivors give the same value of the metric on every deal, or at ``--games``.

Two tests, both chunk- and thread-independent (every input is an integer sum over game indices):

* per-game means (``length_mean``, ``tie_rate``, ``timeout_rate``, ``seat0_advantage``,
  ``win_share:SEAT``, ``policy_share:POLICY``, a counter's mean per game): PAIRED per-deal
  differences. Per candidate the integer sums of x and x^2, per pair the sum of x_a * x_b,
  give the exact paired variance; a normal z test.
* any other metric (``balance``, ``leader_gap``, a derived counter metric, any new numeric
  column of the ``variants`` table): delete-a-group jackknife over ``JK_GROUPS`` groups of
  deals (game index mod ``JK_GROUPS``), applied to the same difference on the same groups, with
  a Student t test on ``JK_GROUPS - 1`` degrees of freedom.

"Farther from the target T" is an intersection-union test: with s = the sign of the
candidate's estimate minus T, it is dropped only when both s(mu_c - T) - (mu_b - T) > 0 and
s(mu_c - T) + (mu_b - T) > 0 are significant (together they imply |mu_c - T| > |mu_b - T|);
the larger of the two one-sided p-values enters Holm. ``=min`` / ``=max`` test mu_c - mu_b.
This is Hsu's multiple comparison with the best. Across rounds the error is spent by
Bonferroni over the planned rounds (``schedule``: known before any game is played): each round
tests at alpha / rounds, so a candidate at least as close as every other is dropped in the
whole race with probability at most alpha, however the rounds' statistics depend on each other.

The estimators and tests themselves (Wilson, normal, Student t, jackknife, Holm) live in
simcli/stats.py; ``PairedEstimator`` and ``JackknifeEstimator`` only keep the sums they need.
"""
from __future__ import annotations

import itertools
import math
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from simcli.config import jobs as cfg
from simcli.errors import SimError
from simcli import stats
from simcli.engine.runspec import Analysis

FIRST_ROUND = 1000          # games per candidate in the first round; then doubling
JK_GROUPS = 20              # jackknife groups (game index mod JK_GROUPS) for non-mean metrics
DEFAULT_ALPHA = 0.05        # the race's error rate: split evenly over the planned rounds (Bonferroni)
DEFAULT_GAMES = 100_000     # most games any candidate may play
DEFAULT_CHUNK = 1 << 16     # as runner.DEFAULT_CHUNK (the runner imports Numba: kept out of CLI start-up)
SHARE_UNIT = 60             # kernels.SHARE_UNIT (checked by the tests)
MAX_RULES = 2               # one rule, or a grid of two
MAX_CANDIDATES = 400        # a bigger grid is a sweep, not a race
# variants-table columns that describe the run rather than the game
NOT_METRICS = {"games", "deals", "rotations", "wall_s", "players"}
# per-game means whose per-deal values the kernel's result rows hold (paired test)
ROW_METRICS = {"length_mean": "length", "tie_rate": "tie", "timeout_rate": "timeout",
               "seat0_advantage": "win"}


# ------------------------------------------------------------------------------ input parsing

@dataclass(frozen=True)
class Target:
    """``METRIC=VALUE`` (hit a value), ``METRIC=min`` or ``METRIC=max``."""
    metric: str
    goal: str                # "value" | "min" | "max"
    value: float | None = None

    def describe(self) -> str:
        return f"{self.metric}={self.value:g}" if self.goal == "value" else f"{self.metric}={self.goal}"


def parse_target(text: str | None) -> Target:
    if not text or "=" not in text:
        raise SimError(f"--target {text!r} is not METRIC=VALUE, METRIC=min or METRIC=max "
                       "(e.g. --target seat0_advantage=0)")
    name, goal = (s.strip() for s in text.rsplit("=", 1))
    if not name:
        raise SimError(f"--target {text!r} names no metric")
    if goal.lower() in ("min", "max"):
        return Target(name, goal.lower())
    try:
        value = float(goal)
    except ValueError:
        raise SimError(f"--target {text!r}: {goal!r} is not a number, min or max") from None
    if not math.isfinite(value):
        raise SimError(f"--target {text!r}: the value must be finite")
    return Target(name, "value", value)


def candidate_values(rule, text: str) -> list:
    """The values of ``LO..HI[:STEP]`` (integer rules) or ``a,b,c`` (any rule), validated."""
    text = text.strip()
    if ".." in text:
        if rule.kind != "int":
            raise SimError(f"--rule {rule.name}={text}: a LO..HI range needs an integer rule; "
                           f"{rule.name} is one of {rule.domain()}, list values as a,b")
        lohi, _, step = text.partition(":")
        lo, _, hi = lohi.partition("..")
        try:
            lo, hi, step = int(lo), int(hi), int(step) if step else 1
        except ValueError:
            raise SimError(f"--rule {rule.name}={text} is not LO..HI or LO..HI:STEP with whole numbers") from None
        if step < 1:
            raise SimError(f"--rule {rule.name}={text}: STEP must be at least 1")
        if lo > hi:
            raise SimError(f"--rule {rule.name}={text} is an empty range (LO > HI); valid: {rule.domain()}")
        if (rule.lo is not None and lo < rule.lo) or (rule.hi is not None and hi > rule.hi):
            raise SimError(f"--rule {rule.name}={text} reaches values outside {rule.domain()}")
        if (hi - lo) // step + 1 > MAX_CANDIDATES:
            raise SimError(f"--rule {rule.name}={text} has more than {MAX_CANDIDATES} values; "
                           "narrow the range or add a STEP")
        raw = list(range(lo, hi + 1, step))
    else:
        raw = [v for v in text.split(",") if v.strip()]
    values = []
    for v in raw:
        try:
            values.append(rule.decode(rule.encode(v)))
        except ValueError as e:
            raise SimError(f"--rule {rule.name}={text}: {e}") from None
    values = list(dict.fromkeys(values))
    if len(values) < 2:
        raise SimError(f"--rule {rule.name}={text} does not vary (one value: "
                       f"{values[0] if values else 'none'}); give a range LO..HI or a list a,b")
    return values


def parse_rules(game: str, flags: list[str] | None) -> tuple[dict, dict]:
    """--rule flags -> ({rule: [candidate values]}, {rule: fixed value})."""
    mod = cfg.game_module(game)
    by_name = {r.name: r for r in mod.RULES}
    tuned, fixed = {}, {}
    for name, text in cfg.parse_rule_flags(flags).items():
        if name not in by_name:
            raise SimError(f"unknown rule {name!r} for {game}; valid rules: {', '.join(by_name) or '(none)'}")
        if ".." in text or "," in text:
            tuned[name] = candidate_values(by_name[name], text)
        else:
            fixed[name] = text
    if not tuned:
        raise SimError("tune needs a rule to vary: --rule NAME=LO..HI[:STEP] or --rule NAME=a,b,c "
                       f"(rules of {game}: {', '.join(by_name)})")
    if len(tuned) > MAX_RULES:
        raise SimError(f"tune varies at most {MAX_RULES} rules at once; got {', '.join(tuned)}")
    return tuned, fixed


# ------------------------------------------------------------------------------------ metrics

# per-deal values in [0, 1] (after scaling): their interval is the one the report tables print
SHARE_KINDS = ("win", "policy", "tie", "timeout")


@dataclass(frozen=True)
class Metric:
    """How to read one metric. ``kind`` in ROW kinds (paired), "column" or "derived" (jackknife)."""
    name: str
    kind: str                # length | tie | timeout | win | policy | counter | column | derived
    arg: int | str | None = None
    offset: float = 0.0      # subtracted from the per-game mean (seat-0 advantage: 1/S)

    @property
    def paired(self) -> bool:
        return self.kind not in ("column", "derived")

    def scale(self, job: cfg.Job, rotations: int) -> int:
        """Integer units of one deal's value (summed over rotations) per unit of the metric."""
        if self.kind == "win":
            return SHARE_UNIT * rotations
        if self.kind == "policy":
            return SHARE_UNIT * rotations * job.policies[: job.players].count(self.arg)
        return rotations

    def game_values(self, job: cfg.Job, rows: np.ndarray) -> np.ndarray:
        """int64 value of each game in ``rows`` (one rotation)."""
        from kernels import layout
        from simcli.engine import runner
        row = job.row
        if self.kind == "length":
            return rows[:, row.length]
        if self.kind == "timeout":
            return (rows[:, row.flags] & layout.FLAG_TIMEOUT != 0).astype(np.int64)
        if self.kind == "tie":
            bits = (rows[:, row.winners][:, None] >> np.arange(row.S)[None, :]) & 1
            return (bits.sum(axis=1) > 1).astype(np.int64)
        if self.kind == "counter":
            return rows[:, row.counter(self.arg)]
        units = runner.win_units(rows, row.S)
        if self.kind == "win":
            return units[:, self.arg]
        cols = [s for s in range(job.players) if job.policies[s] == self.arg]  # policy
        return units[:, cols].sum(axis=1)


def _table_metric_names(job: cfg.Job) -> tuple[list[str], list[str]]:
    """(numeric variants columns, derived counter metrics) this game's tables hold."""
    from simcli.engine import runner
    from simcli.report import tables as report
    acc = runner.accumulators_for(job)
    acc.misc[0] = 1  # one empty game: every ratio defined, so every column is built
    tables = report.build_tables([runner.Result(job, acc, 1, 0)])
    var = tables["variants"]
    keys = set(report.key_columns(runner.Result(job, acc, 1, 0)))
    cols = [c for c, t in var.schema.items() if t.is_numeric() and c not in keys | NOT_METRICS]
    cnt = tables["counters"]
    derived = cnt.filter(cnt["kind"] == "metric")["metric"].to_list() if cnt.height else []
    return cols, derived


def resolve_metric(name: str, job: cfg.Job, rotate: bool) -> Metric:
    """The Metric for ``name`` in ``job``'s game; SimError naming the valid metrics otherwise."""
    S = job.seats.shape[0]
    counters = [c.name for c in job.module.COUNTERS]
    if name in ROW_METRICS:
        if name == "seat0_advantage":
            if S < 2:
                raise SimError("seat0_advantage needs two or more seats")
            return Metric(name, "win", 0, 1 / S)
        return Metric(name, ROW_METRICS[name])
    if name.startswith("win_share:"):
        seat = name.split(":", 1)[1]
        if not (seat.isascii() and seat.isdigit()) or int(seat) >= S:
            raise SimError(f"metric {name!r}: SEAT must be 0..{S - 1}")
        return Metric(name, "win", int(seat))
    if name.startswith("policy_share:"):
        pol = name.split(":", 1)[1]
        if not rotate:
            raise SimError(f"metric {name!r} needs --rotate (a policy's share over seat rotations)")
        held = list(dict.fromkeys(job.policies[: job.players]))
        if pol not in held:
            raise SimError(f"metric {name!r}: {pol!r} holds no seat; policies: {', '.join(held)}")
        return Metric(name, "policy", pol)
    if name in counters:
        return Metric(name, "counter", counters.index(name))
    cols, derived = _table_metric_names(job)
    if name in cols:
        return Metric(name, "column")
    if name in derived:
        return Metric(name, "derived")
    raise SimError(f"unknown metric {name!r} for {job.game}; valid metrics: "
                   f"{', '.join(dict.fromkeys([*ROW_METRICS, *cols]))}, win_share:SEAT, "
                   f"policy_share:POLICY (with --rotate), counters ({', '.join(counters)}), "
                   f"derived ({', '.join(derived)})")


# -------------------------------------------------------------------------------- the race

@dataclass
class Candidate:
    values: dict                        # tuned rule -> value
    job: cfg.Job
    deals: int = 0
    status: str = "racing"              # racing -> best | indistinguishable | dropped
    p_value: float | None = None        # last comparison with the best (raw, before Holm)
    total: int = 0                      # sum over deals of x (integer units, see Metric.scale)
    total_sq: int = 0
    acc: object = None                  # runner's Accumulators over every deal played
    policy: object = None               # PolicyTally (rotated runs)
    groups: list = field(default_factory=list)  # jackknife: Accumulators per group
    wall: float = 0.0
    estimate: tuple = (math.nan, math.nan, math.nan)   # metric, ci_low, ci_high
    leave_out: np.ndarray | None = None  # jackknife: metric without each group
    best_then: float | None = None       # dropped: the best survivor's metric in the drop round


class _PairedTap:
    """Given to ``runner.chunk_tally`` as its per-game writer: each deal's value x, summed over
    the deal's rotations."""

    def __init__(self, metric: Metric, n: int):
        self.metric = metric
        self.x = np.zeros(n, dtype=np.int64)

    def write(self, job, start, rows):
        self.x += self.metric.game_values(job, rows)


class _GroupTap:
    """Given to ``runner.chunk_tally`` as its per-game writer: folds each game of one chunk into
    fresh accumulators of its jackknife group (game index mod JK_GROUPS)."""

    def __init__(self, job: cfg.Job):
        from simcli.engine import runner
        self.groups = [runner.accumulators_for(job) for _ in range(JK_GROUPS)]

    def write(self, job, start, rows):
        lower = bool(job.module.LOWER_IS_BETTER)
        for g, acc in enumerate(self.groups):
            first = (g - start) % JK_GROUPS  # group of game index i is i mod JK_GROUPS
            part = np.ascontiguousarray(rows[first::JK_GROUPS])
            if part.shape[0]:
                acc.fold(part, lower)


def race_chunk(job: cfg.Job, metric: Metric, seed: int, start: int, stop: int, rotate: bool) -> tuple:
    """One chunk task of the race: candidate ``job``'s games [start, stop) (every rotation when
    ``rotate``). A pure function of its arguments, so it runs the same here or on a Dask worker:
    returns (ChunkTally, the chunk's tap: each deal's value (paired metrics) or its jackknife
    groups (other metrics), seconds)."""
    from simcli.engine import runner
    t0 = time.perf_counter()
    tap = _PairedTap(metric, stop - start) if metric.paired else _GroupTap(job)
    ct = runner.chunk_tally(job, seed, start, stop, rotate, None, tap)
    return ct, tap, time.perf_counter() - t0


class PairedEstimator:
    """Per-game means: integer sums of each deal's value x and x^2 per candidate, and of
    x_a x_b per pair of candidates, give the exact variance of the paired per-deal difference;
    a normal test."""
    name = "paired"

    def __init__(self, metric: Metric, cands: list[Candidate], rotations: int, seed: int):
        self.metric, self.cands, self.rotations = metric, cands, rotations
        self.pair: dict[tuple[int, int], int] = {}   # sum over deals of x_a * x_b

    def add(self, taps: dict) -> None:
        """Fold one chunk's per-deal values of every candidate that played it."""
        for i, tap in taps.items():
            c = self.cands[i]
            c.total += int(tap.x.sum())
            c.total_sq += int((tap.x * tap.x).sum())
        for a in taps:
            for b in taps:
                if a < b:
                    self.pair[a, b] = self.pair.get((a, b), 0) + int((taps[a].x * taps[b].x).sum())

    def scale(self, i: int) -> int:
        return self.metric.scale(self.cands[i].job, self.rotations)

    def estimate(self, i: int) -> tuple[float, float, float]:
        c, k = self.cands[i], self.scale(i)
        if self.metric.kind in SHARE_KINDS:
            # a share in [0, 1] per deal: the report tables' interval (Wilson, effective n)
            si = stats.share_interval(int(c.total), int(c.total_sq), c.deals, k)
            m, lo, hi = si["mean"], si["low"], si["high"]
        else:
            m, lo, hi = stats.mean_ci(c.total / k, c.total_sq / k**2, c.deals)
        off = self.metric.offset
        return m - off, lo - off, hi - off

    def linear(self, c: int, b: int, wc: float, wb: float, const: float) -> tuple[float, float, int | None]:
        """(mean, se, df) of D = wc * metric_c + wb * metric_b + const over the shared deals."""
        mean = wc * self.cands[c].estimate[0] + wb * self.cands[b].estimate[0] + const
        n = self.cands[c].deals
        if n < 2:
            return mean, math.nan, None
        kc, kb = self.scale(c), self.scale(b)
        cc, cb = self.cands[c], self.cands[b]
        xc, xb = cc.total / n, cb.total / n
        var_c = (cc.total_sq / n - xc * xc) / kc**2
        var_b = (cb.total_sq / n - xb * xb) / kb**2
        cov = (self.pair[min(c, b), max(c, b)] / n - xc * xb) / (kc * kb)
        var = max(wc * wc * var_c + wb * wb * var_b + 2 * wc * wb * cov, 0.0) * n / (n - 1)
        return mean, math.sqrt(var / n), None

    def identical(self, alive: list[int]) -> bool:
        """Every survivor gave the same value on every deal."""
        for a in alive:
            for b in alive:
                if a < b:
                    ca, cb = self.cands[a], self.cands[b]
                    if self.scale(a) != self.scale(b) or (
                            ca.total_sq + cb.total_sq - 2 * self.pair[a, b]) != 0:
                        return False
        return True


class JackknifeEstimator:
    """Any metric of the report tables: delete-a-group jackknife over JK_GROUPS groups of deals
    (game index mod JK_GROUPS), applied to the difference itself on the same groups; Student t
    on JK_GROUPS - 1 degrees of freedom."""
    name = "jackknife"

    def __init__(self, metric: Metric, cands: list[Candidate], rotations: int, seed: int):
        from simcli.engine import runner
        self.metric, self.cands, self.rotations, self.seed = metric, cands, rotations, seed
        for c in cands:
            c.groups = [runner.accumulators_for(c.job) for _ in range(JK_GROUPS)]

    def add(self, taps: dict) -> None:
        """Fold one chunk's jackknife groups of every candidate that played it."""
        for i, tap in taps.items():
            for mine, theirs in zip(self.cands[i].groups, tap.groups):
                mine.merge(theirs)

    def estimate(self, i: int) -> tuple[float, float, float]:
        c = self.cands[i]
        full = self._table_values(c, None)[0]
        c.leave_out = np.array(self._table_values(c, range(JK_GROUPS)), dtype=float)
        se = stats.jackknife_se(c.leave_out)
        q = stats.t_quantile(1 - (1 - 0.95) / 2, JK_GROUPS - 1)
        return full, full - q * se, full + q * se

    def _table_values(self, c: Candidate, leave_out) -> list[float]:
        """The metric from the report tables: of all deals (None) or without each group."""
        from simcli.engine import runner
        from simcli.report import tables as report
        results = []
        if leave_out is None:
            results.append(runner.Result(c.job, c.acc, c.deals, self.seed, rotations=self.rotations))
        else:
            for g in leave_out:
                acc = runner.accumulators_for(c.job)
                for name, arr in acc.arrays().items():
                    arr += getattr(c.acc, name) - getattr(c.groups[g], name)
                games = int(acc.misc[0]) // self.rotations
                job = replace(c.job, labels={**c.job.labels, "_group": g})
                results.append(runner.Result(job, acc, games, self.seed, rotations=self.rotations))
        tables = report.build_tables(results)
        if self.metric.kind == "column":
            return [float("nan") if v is None else float(v) for v in tables["variants"][self.metric.name]]
        cnt = tables["counters"]
        rows = cnt.filter((cnt["kind"] == "metric") & (cnt["metric"] == self.metric.name))
        return [float(v) for v in rows["value"]]

    def linear(self, c: int, b: int, wc: float, wb: float, const: float) -> tuple[float, float, int | None]:
        """(mean, se, df) of D = wc * metric_c + wb * metric_b + const, by the jackknife."""
        mean = wc * self.cands[c].estimate[0] + wb * self.cands[b].estimate[0] + const
        loo = wc * self.cands[c].leave_out + wb * self.cands[b].leave_out + const
        return mean, stats.jackknife_se(loo), JK_GROUPS - 1

    def identical(self, alive: list[int]) -> bool:
        return False   # a table metric's per-deal values are not kept


def schedule(games: int, first: int = FIRST_ROUND) -> list[int]:
    """Cumulative games per candidate after each round: first, doubling, capped at ``games``."""
    n, out = min(first, games), []
    while n < games:
        out.append(n)
        n *= 2
    return out + [games]


class Race:
    """The candidates, their integer tallies (through a paired or a jackknife estimator), and
    the tests between them. ``alpha`` bounds, over the whole race, the probability that a
    candidate at least as close to the target as every other is dropped: each of the planned
    rounds tests at ``alpha / rounds`` (Bonferroni over the rounds, Holm within a round)."""

    def __init__(self, cands: list[Candidate], metric: Metric, target: Target, seed: int,
                 rotate: bool, alpha: float):
        from simcli.engine import runner
        self.cands, self.metric, self.target = cands, metric, target
        self.seed, self.rotate, self.alpha = seed, rotate, alpha
        self.rotations = cands[0].job.players if rotate else 1
        self.round_alpha = alpha   # set by run() from the planned schedule
        self.rounds: list[dict] = []
        self.stop_reason = ""
        for c in cands:
            c.acc = runner.accumulators_for(c.job)
            c.policy = runner.policy_tally_for(c.job, self.rotations) if rotate else None
        kind = PairedEstimator if metric.paired else JackknifeEstimator
        self.est = kind(metric, cands, self.rotations, seed)

    def alive(self) -> list[int]:
        return [i for i, c in enumerate(self.cands) if c.status == "racing"]

    def play(self, start: int, stop: int, chunk: int, ex, bar=None) -> None:
        """Games [start, stop) for every survivor, chunk by chunk, folding integer sums; the chunk
        tasks run on ``ex`` (here or on Dask) and come back in task order."""
        from simcli.engine import runner
        alive = self.alive()
        keys = [(s, e, i) for s, e in runner.plan_chunks(start, stop - start, chunk) for i in alive]
        tasks = ((self.cands[i].job, self.metric, self.seed, s, e, self.rotate) for s, e, i in keys)
        taps = {}
        for (s, e, i), (ct, tap, seconds) in zip(keys, ex.map(race_chunk, tasks)):
            c = self.cands[i]
            c.wall += seconds
            c.acc.merge(ct.acc)
            if ct.policy is not None:
                c.policy.merge(ct.policy)
            c.deals += ct.games
            taps[i] = tap
            if bar is not None:
                bar.update(ct.games * self.rotations)
            if i == alive[-1]:          # the chunk is complete for every survivor
                self.est.add(taps)
                taps = {}

    def estimate(self, i: int) -> None:
        self.cands[i].estimate = self.est.estimate(i)

    def distance(self, i: int, best_value: float | None = None) -> float:
        m = self.cands[i].estimate[0]
        if self.target.goal == "value":
            return abs(m - self.target.value)
        if best_value is None:
            return m if self.target.goal == "min" else -m
        return m - best_value if self.target.goal == "min" else best_value - m

    # -- tests
    def p_worse(self, c: int, b: int) -> float:
        """One-sided p-value of "candidate c is farther from the target than b"."""
        lin = self.est.linear
        if self.target.goal != "value":
            w = 1.0 if self.target.goal == "min" else -1.0
            return stats.one_sided_p(*lin(c, b, w, -w, 0.0))
        T = self.target.value
        s = np.sign(self.cands[c].estimate[0] - T)
        if s == 0 or not math.isfinite(s):
            return 1.0
        p1 = stats.one_sided_p(*lin(c, b, s, -1.0, -s * T + T))
        p2 = stats.one_sided_p(*lin(c, b, s, 1.0, -s * T - T))
        return max(p1, p2)

    def best(self, alive: list[int]) -> int:
        def key(i):
            d = self.distance(i)
            return (not math.isfinite(d), d if math.isfinite(d) else 0.0, i)
        return min(alive, key=key)

    def judge(self) -> int:
        """Estimates, the best survivor, and this round's drops (Holm at ``round_alpha``); a
        dropped candidate keeps the best's estimate of its round (``best_then``)."""
        alive = self.alive()
        for i in alive:
            self.estimate(i)
        b = self.best(alive)
        others = [i for i in alive if i != b]
        ps = [self.p_worse(i, b) for i in others]
        for i, p in zip(others, ps):
            self.cands[i].p_value = p
        self.cands[b].p_value = None
        for i, drop in zip(others, stats.holm(ps, self.round_alpha) if ps else []):
            if drop:
                self.cands[i].status = "dropped"
                self.cands[i].best_then = self.cands[b].estimate[0]
        return b

    def round_level(self, planned: int) -> float:
        """Each round's level: Bonferroni over the planned rounds (they sum to alpha)."""
        return self.alpha / planned

    def run(self, games: int, chunk: int, progress: bool = False, first: int = FIRST_ROUND,
            ex=None) -> None:
        """Race to the end; every candidate's status becomes best, indistinguishable or dropped.
        Chunk tasks run on ``ex`` (default: here)."""
        from tqdm import tqdm
        if ex is None:
            from simcli.engine.executor import LocalExecutor
            ex = LocalExecutor()
        plan = schedule(games, first)
        self.round_alpha = self.round_level(len(plan))
        bar = tqdm(total=len(self.cands) * games * self.rotations, unit="game", unit_scale=True,
                   disable=not progress, file=sys.stderr, dynamic_ncols=True, leave=False)
        played = 0
        try:
            for n in plan:
                before = len(self.alive())
                self.play(played, n, chunk, ex, bar)
                played = n
                b = self.judge()
                alive = self.alive()
                self.rounds.append({"games": n, "survivors": len(alive), "dropped": before - len(alive),
                                    "best": self.cands[b].values})
                if len(alive) == 1:
                    self.stop_reason = "one candidate left"
                    break
                if self.est.identical(alive):
                    self.stop_reason = "the survivors gave the same value of the metric on every deal"
                    break
            else:
                self.stop_reason = f"the survivors cannot be told apart at --games {games}"
        finally:
            bar.close()
        b = self.best(self.alive())
        for i in self.alive():
            self.cands[i].status = "best" if i == b else "indistinguishable"


# ------------------------------------------------------------------------------ entry points

def make_candidates(game, variant, players, policy, seats, tuned: dict, fixed: dict) -> list[Candidate]:
    """One resolved Job per rule value (or per cell of a two-rule grid), labelled by its values."""
    names = list(tuned)
    cells = list(itertools.product(*(tuned[n] for n in names)))
    if len(cells) > MAX_CANDIDATES:
        raise SimError(f"{len(cells)} candidates is more than tune races ({MAX_CANDIDATES}); "
                       "narrow a range or add a STEP")
    cands = []
    for cell in cells:
        values = dict(zip(names, cell))
        job = cfg.resolve(game, variant, players, policy=policy, seats=seats,
                          rules={**fixed, **values}, labels=values)
        cands.append(Candidate(values, job))
    return cands


def race(cands: list[Candidate], target: Target, games: int, seed: int, chunk: int = DEFAULT_CHUNK,
         rotate: bool = False, alpha: float = DEFAULT_ALPHA, progress: bool = False,
         first: int = FIRST_ROUND, ex=None) -> Race:
    """Race already-resolved candidates to ``target``; ``games`` is the most any one plays
    (chunk tasks on ``ex``: here by default, or a Dask executor)."""
    if games < JK_GROUPS:  # every jackknife group needs a deal, and a variance two
        raise SimError(f"--games {games} is too few to race; give at least {JK_GROUPS}")
    metric = resolve_metric(target.metric, cands[0].job, rotate)
    r = Race(cands, metric, target, seed, rotate, alpha)
    r.run(games, chunk, progress, first, ex)
    return r


def tune_table(r: Race):
    """Table ``tune``: one row per candidate (see docs/reports.md)."""
    import polars as pl
    alive_best = next(c for c in r.cands if c.status == "best")
    rows = []
    for i, c in enumerate(r.cands):
        m, lo, hi = c.estimate
        rows.append({**c.values, "games": c.deals, "metric": m, "ci_low": lo, "ci_high": hi,
                     # a dropped candidate against the best of the round that dropped it
                     "distance": r.distance(i, c.best_then if c.status == "dropped" else alive_best.estimate[0]),
                     "status": c.status,
                     "p_value": c.p_value})
    return pl.DataFrame(rows, infer_schema_length=None)


def _label(values: dict) -> str:
    return ", ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in values.items())


def verdict_lines(r: Race, games: int) -> list[str]:
    """The printed verdict: best value(s) with intervals, games used against the full grid."""
    t = r.target
    used = sum(c.deals for c in r.cands)
    grid = len(r.cands) * games
    keep = [c for c in r.cands if c.status in ("best", "indistinguishable")]
    keep.sort(key=lambda c: c.status != "best")
    head = "best" if len(keep) == 1 else f"best of {len(keep)} that cannot be told apart"
    lines = [f"tune {r.cands[0].job.describe()} target {t.describe()}: {head} ({r.stop_reason})"]
    for c in keep:
        m, lo, hi = c.estimate
        lines.append(f"  {_label(c.values)}: {t.metric} {m:.4f} [{lo:.4f}, {hi:.4f}] "
                     f"over {c.deals:,} deals" + (" (best)" if c.status == "best" and len(keep) > 1 else ""))
    lines.append(f"games used {used:,} of {grid:,} for the full grid ({100 * used / grid:.1f}%)"
                 + (f", each deal x {r.rotations} rotations" if r.rotations > 1 else "")
                 + f"; a best value is dropped with probability at most {r.alpha} over the race "
                 f"({r.alpha:g} / {round(r.alpha / r.round_alpha)} planned rounds each, Holm within a round)")
    return lines


def header_line(cands: list[Candidate], tgt: Target, games: int, rotate: bool, play: dict) -> str:
    """What tune races, with which play, and what --games counts."""
    from simcli.report.headers import games_phrase
    job = cands[0].job
    how = (f"designed play, every seat {play['play']['policy']} (--policy or --seats chooses another)"
           if play["play"].get("designed") else f"seats {job.policy_label}")
    return (f"tune {job.game}/{job.variant}/{job.players}p to {tgt.describe()}: {len(cands)} candidates, "
            f"{how}; each plays at most {games_phrase(games, job.players if rotate else 1)}")


def tune_png(table, rules: list[str], target: Target) -> bytes:
    """Metric against rule value with 95% intervals and the target line; a heat-map for two rules."""
    from simcli.report.plots import figure_bytes, pyplot
    plt = pyplot()
    colour = {"best": "#1a7f37", "indistinguishable": "#2b5797", "dropped": "#999999"}
    rows = table.to_dicts()
    if len(rules) == 1:
        fig, ax = plt.subplots(figsize=(max(6, 0.45 * len(rows) + 2), 4), dpi=100)
        for x, row in enumerate(rows):
            m, lo, hi = row["metric"], row["ci_low"], row["ci_high"]
            if m is None or not math.isfinite(m):
                continue
            err = [[max(m - lo, 0)], [max(hi - m, 0)]] if lo is not None and math.isfinite(lo) else None
            ax.errorbar([x], [m], yerr=err, fmt="o", capsize=4, color=colour[row["status"]])
        for s, c in colour.items():
            ax.plot([], [], "o", color=c, label=s)
        if target.goal == "value":
            ax.axhline(target.value, color="#c0392b", ls="--", lw=1, label=f"target {target.value:g}")
        ax.set_xticks(range(len(rows)), [str(r[rules[0]]) for r in rows])
        ax.set_xlabel(rules[0])
        ax.set_ylabel(target.metric)
        ax.legend(fontsize=8)
        ax.grid(axis="y", alpha=.3)
    else:
        xs = list(dict.fromkeys(r[rules[1]] for r in rows))
        ys = list(dict.fromkeys(r[rules[0]] for r in rows))
        grid = np.full((len(ys), len(xs)), np.nan)
        fig, ax = plt.subplots(figsize=(max(6, 0.7 * len(xs) + 2), max(4, 0.45 * len(ys) + 1.5)), dpi=100)
        for r in rows:
            yi, xi = ys.index(r[rules[0]]), xs.index(r[rules[1]])
            grid[yi, xi] = r["distance"] if r["distance"] is not None else np.nan
        im = ax.imshow(grid, cmap="viridis_r", aspect="auto")
        top = np.nanmax(grid) if np.isfinite(grid).any() else 1.0
        for r in rows:
            yi, xi = ys.index(r[rules[0]]), xs.index(r[rules[1]])
            mark = {"best": "*", "indistinguishable": "~", "dropped": ""}[r["status"]]
            dark = top > 0 and grid[yi, xi] > 0.55 * top  # viridis_r is dark at the far end
            ax.text(xi, yi, f"{r['metric']:.4g}{mark}", ha="center", va="center", fontsize=8,
                    color="white" if dark else "black")
        fig.colorbar(im, ax=ax, label="distance to the target" if target.goal == "value"
                     else "distance from the best")
        ax.set_xticks(range(len(xs)), [str(v) for v in xs])
        ax.set_yticks(range(len(ys)), [str(v) for v in ys])
        ax.set_xlabel(rules[1])
        ax.set_ylabel(rules[0])
    ax.set_title(f"tune {target.describe()} (* best, ~ cannot be told apart)" if len(rules) == 2
                 else f"tune {target.describe()}: 95% intervals")
    fig.tight_layout()
    return figure_bytes(fig)


# ---------------------------------------------------------------------------------- analysis

class TuneAnalysis(Analysis):
    """`simcli tune` on the run pipeline: the candidates are the spec's jobs, raced on common
    deals (chunk tasks on the spec's backend); tables, printed verdict, tune.png, meta."""
    name = "tune"

    def __init__(self, cands: list[Candidate], target: Target, rules: list[str], alpha: float,
                 play: dict | None = None, first: int = FIRST_ROUND):
        self.cands, self.target, self.rules, self.alpha, self.first = cands, target, rules, alpha, first
        self.play = play or {"play": {"designed": False}}
        self.race: Race | None = None

    def header(self, spec) -> list[str]:
        return [header_line(self.cands, self.target, spec.games[0], spec.rotate, self.play)]

    def simulate(self, spec, ex, per_game=None) -> list:
        from simcli.engine import runner
        games = spec.games[0]
        r = self.race = race(self.cands, self.target, games, spec.seed, spec.chunk, spec.rotate,
                             self.alpha, spec.progress, self.first, ex)
        return [runner.Result(c.job, c.acc, c.deals, spec.seed, c.wall, r.rotations, c.policy)
                for c in r.cands]

    def tables(self, spec, results) -> dict:
        from simcli.report import tables as report
        tables = report.build_tables(results)
        tables["tune"] = tune_table(self.race)
        return tables

    def lines(self, spec, tables, results) -> list[str]:
        from simcli.report.fmt import echo_table
        out: list[str] = []
        echo_table(out.append, tables["tune"], wide=spec.wide, keys=tuple(self.rules))
        return out + verdict_lines(self.race, spec.games[0])

    def verdict(self, spec, tables, results) -> None:
        """The findings judge the best candidate(s) against the target, and their seats."""
        from simcli.engine import runner
        from simcli.report import findings
        from simcli.report import tables as report
        r = self.race
        best = [runner.Result(c.job, c.acc, c.deals, spec.seed, c.wall, r.rotations, c.policy)
                for c in r.cands if c.status == "best"]
        judged = {**report.build_tables(best), "tune": tables["tune"]}
        tables["findings"] = findings.add_to(
            judged, findings.Settings(threshold=spec.threshold, target=vars(self.target)), spec.echo)

    def files(self, spec, tables) -> dict:
        return {"tune.png": tune_png(tables["tune"], self.rules, self.target)}

    def meta(self, spec, results) -> dict:
        r = self.race
        return {"axes": list(self.rules), **self.play,
                "tune": {"target": self.target.describe(), "metric_test": r.est.name,
                         "alpha": self.alpha, "alpha_per_round": r.round_alpha,
                         "first_round": self.first, "rounds": r.rounds,
                         "stop": r.stop_reason, "games_used": sum(c.deals for c in r.cands),
                         "full_grid_games": len(r.cands) * spec.games[0]}}


def tune_plan(game, target: str, rule, variant, players, policy, seats, rotate: bool,
              alpha: float) -> tuple[list[Candidate], TuneAnalysis]:
    """The user's words for `tune` -> (candidates, analysis); every check before anything runs."""
    from simcli.analyses.run import designed_default
    policy, play = designed_default(game, policy, seats)
    tgt = parse_target(target)
    tuned, fixed = parse_rules(game, rule)
    cands = make_candidates(game, variant, players, policy, seats, tuned, fixed)
    resolve_metric(tgt.metric, cands[0].job, rotate)  # bad metric: fail before anything is written
    return cands, TuneAnalysis(cands, tgt, list(tuned), alpha, play)
