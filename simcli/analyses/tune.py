"""Which rule value hits a balance target? Racing candidates on common deals (``simcli tune``).

Every candidate (one value, or one cell of a two-rule grid) plays the same game indices
0, 1, 2 ... (common random numbers) in rounds of doubling size, ``FIRST_ROUND`` games first,
capped at ``--games``. After each round every survivor's distance to the target is compared
with the best survivor's, and a candidate significantly farther away is dropped (Holm over the
comparisons of that round, at ``alpha``). The race stops when one candidate is left, when the
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
This is Hsu's multiple comparison with the best: per round, a candidate at least as close as
every other is dropped with probability at most alpha.
"""
from __future__ import annotations

import itertools
import math
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Optional

import numpy as np
import typer

from simcli.config import jobs as cfg
from simcli.errors import SimError
from simcli.stats import holm, mean_ci, normal_sf2, share_interval

FIRST_ROUND = 1000          # games per candidate in the first round; then doubling
JK_GROUPS = 20              # jackknife groups (game index mod JK_GROUPS) for non-mean metrics
DEFAULT_ALPHA = 0.05        # family-wise error rate of each round's drops (Holm)
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
        S = job.seats.shape[0]
        if self.kind == "length":
            return rows[:, 2 * S + 1]
        if self.kind == "timeout":
            return (rows[:, 2 * S + 2] & layout.FLAG_TIMEOUT != 0).astype(np.int64)
        if self.kind == "tie":
            bits = (rows[:, 2 * S][:, None] >> np.arange(S)[None, :]) & 1
            return (bits.sum(axis=1) > 1).astype(np.int64)
        if self.kind == "counter":
            return rows[:, 2 * S + layout.N_FIXED + self.arg]
        units = runner.win_units(rows, S)
        if self.kind == "win":
            return units[:, self.arg]
        cols = [s for s in range(job.players) if job.policies[s] == self.arg]  # policy
        return units[:, cols].sum(axis=1)


def _table_metric_names(job: cfg.Job) -> tuple[list[str], list[str]]:
    """(numeric variants columns, derived counter metrics) this game's tables hold."""
    from simcli.report import tables as report
    from simcli.engine import runner
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
        if not seat.isdigit() or int(seat) >= S:
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


class _RowTap:
    """Given to ``runner.chunk_tally`` as its per-game writer: sees each rotation's rows."""

    def __init__(self, metric: Metric, cand: Candidate, start: int, n: int):
        self.metric, self.cand, self.start = metric, cand, start
        self.x = np.zeros(n, dtype=np.int64)

    def write(self, job, start, rows):
        if self.metric.paired:
            self.x += self.metric.game_values(job, rows)
            return
        lower = bool(job.module.LOWER_IS_BETTER)
        for g, acc in enumerate(self.cand.groups):
            first = (g - start) % JK_GROUPS  # group of game index i is i mod JK_GROUPS
            part = np.ascontiguousarray(rows[first::JK_GROUPS])
            if part.shape[0]:
                acc.fold(part, lower)


def _one_sided_p(mean: float, se: float, df: int | None = None) -> float:
    """P(estimate >= mean | true difference 0): normal, or Student t with ``df``."""
    if math.isnan(mean) or math.isnan(se):
        return 1.0  # nothing to judge by: never a reason to drop
    if se == 0:
        return 0.0 if mean > 0 else 1.0
    z = mean / se
    if df is not None:
        return t_sf(z, df)
    return normal_sf2(z) / 2 if z >= 0 else 1 - normal_sf2(z) / 2


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularized incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        for aa in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                   -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1 + aa * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1) < 1e-15:
            break
    return h


def t_sf(t: float, df: int) -> float:
    """One-sided Student t tail P(T >= t) with ``df`` degrees of freedom."""
    if math.isinf(t) or t == 0:
        return 0.5 if t == 0 else 0.0 if t > 0 else 1.0
    x = df / (df + t * t)
    a, b = df / 2, 0.5
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    ibeta = front * _betacf(a, b, x) / a if x < (a + 1) / (a + b + 2) else 1 - front * _betacf(b, a, 1 - x) / b
    half = ibeta / 2  # P(|T| >= |t|) / 2
    return half if t >= 0 else 1 - half


def t_quantile(p: float, df: int) -> float:
    """t with P(T >= t) = 1 - p (bisection on ``t_sf``)."""
    lo, hi = 0.0, 1000.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if t_sf(mid, df) > 1 - p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def schedule(games: int, first: int = FIRST_ROUND) -> list[int]:
    """Cumulative games per candidate after each round: first, doubling, capped at ``games``."""
    n, out = min(first, games), []
    while n < games:
        out.append(n)
        n *= 2
    return out + [games]


class Race:
    """The candidates, their integer tallies, and the tests between them."""

    def __init__(self, cands: list[Candidate], metric: Metric, target: Target, seed: int,
                 rotate: bool, alpha: float):
        from simcli.engine import runner
        self.cands, self.metric, self.target = cands, metric, target
        self.seed, self.rotate, self.alpha = seed, rotate, alpha
        self.rotations = cands[0].job.players if rotate else 1
        self.pair: dict[tuple[int, int], int] = {}   # sum over deals of x_a * x_b
        self.rounds: list[dict] = []
        self.stop_reason = ""
        for c in cands:
            c.acc = runner.accumulators_for(c.job)
            c.policy = runner.policy_tally_for(c.job, self.rotations) if rotate else None
            if not metric.paired:
                c.groups = [runner.accumulators_for(c.job) for _ in range(JK_GROUPS)]

    def alive(self) -> list[int]:
        return [i for i, c in enumerate(self.cands) if c.status == "racing"]

    def play(self, start: int, stop: int, chunk: int, bar=None) -> None:
        """Games [start, stop) for every survivor, chunk by chunk, folding integer sums."""
        from simcli.engine import runner
        alive = self.alive()
        for s, e in runner.plan_chunks(start, stop - start, chunk):
            xs = {}
            for i in alive:
                c = self.cands[i]
                tap = _RowTap(self.metric, c, s, e - s)
                t0 = time.perf_counter()
                ct = runner.chunk_tally(c.job, self.seed, s, e, self.rotate, None, tap)
                c.wall += time.perf_counter() - t0
                c.acc.merge(ct.acc)
                if ct.policy is not None:
                    c.policy.merge(ct.policy)
                c.deals += ct.games
                if self.metric.paired:
                    c.total += int(tap.x.sum())
                    c.total_sq += int((tap.x * tap.x).sum())
                    xs[i] = tap.x
                if bar is not None:
                    bar.update(ct.games * self.rotations)
            for a in xs:
                for b in xs:
                    if a < b:
                        self.pair[a, b] = self.pair.get((a, b), 0) + int((xs[a] * xs[b]).sum())

    # -- estimates
    def _scale(self, i: int) -> int:
        return self.metric.scale(self.cands[i].job, self.rotations)

    def estimate(self, i: int) -> None:
        c = self.cands[i]
        if self.metric.paired:
            k = self._scale(i)
            if self.metric.kind in SHARE_KINDS:
                # a share in [0, 1] per deal: the report tables' interval (Wilson, effective n)
                si = share_interval(int(c.total), int(c.total_sq), c.deals, k)
                m, lo, hi = si["mean"], si["low"], si["high"]
            else:
                m, lo, hi = mean_ci(c.total / k, c.total_sq / k**2, c.deals)
            off = self.metric.offset
            c.estimate = (m - off, lo - off, hi - off)
            return
        full = self._table_values(c, None)[0]
        loo = np.array(self._table_values(c, range(JK_GROUPS)), dtype=float)
        c.leave_out = loo
        se = _jackknife_se(loo)
        q = t_quantile(1 - (1 - 0.95) / 2, JK_GROUPS - 1)
        c.estimate = (full, full - q * se, full + q * se)

    def _table_values(self, c: Candidate, leave_out) -> list[float]:
        """The metric from the report tables: of all deals (None) or without each group."""
        from simcli.report import tables as report
        from simcli.engine import runner
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

    def distance(self, i: int, best_value: float | None = None) -> float:
        m = self.cands[i].estimate[0]
        if self.target.goal == "value":
            return abs(m - self.target.value)
        if best_value is None:
            return m if self.target.goal == "min" else -m
        return m - best_value if self.target.goal == "min" else best_value - m

    # -- tests
    def _linear(self, c: int, b: int, wc: float, wb: float, const: float) -> tuple[float, float, int | None]:
        """(mean, se, df) of D = wc * metric_c + wb * metric_b + const over the shared deals."""
        mc, mb = self.cands[c].estimate[0], self.cands[b].estimate[0]
        mean = wc * mc + wb * mb + const
        if not self.metric.paired:
            loo = wc * self.cands[c].leave_out + wb * self.cands[b].leave_out + const
            return mean, _jackknife_se(loo), JK_GROUPS - 1
        n = self.cands[c].deals
        if n < 2:
            return mean, math.nan, None
        kc, kb = self._scale(c), self._scale(b)
        cc, cb = self.cands[c], self.cands[b]
        xc, xb = cc.total / n, cb.total / n
        var_c = (cc.total_sq / n - xc * xc) / kc**2
        var_b = (cb.total_sq / n - xb * xb) / kb**2
        cov = (self.pair[min(c, b), max(c, b)] / n - xc * xb) / (kc * kb)
        var = max(wc * wc * var_c + wb * wb * var_b + 2 * wc * wb * cov, 0.0) * n / (n - 1)
        return mean, math.sqrt(var / n), None

    def p_worse(self, c: int, b: int) -> float:
        """One-sided p-value of "candidate c is farther from the target than b"."""
        if self.target.goal != "value":
            w = 1.0 if self.target.goal == "min" else -1.0
            return _one_sided_p(*self._linear(c, b, w, -w, 0.0))
        T = self.target.value
        s = np.sign(self.cands[c].estimate[0] - T)
        if s == 0 or not math.isfinite(s):
            return 1.0
        p1 = _one_sided_p(*self._linear(c, b, s, -1.0, -s * T + T))
        p2 = _one_sided_p(*self._linear(c, b, s, 1.0, -s * T - T))
        return max(p1, p2)

    def identical(self, alive: list[int]) -> bool:
        """Every survivor gave the same value on every deal (paired metrics only)."""
        if not self.metric.paired:
            return False
        for a in alive:
            for b in alive:
                if a < b:
                    ca, cb = self.cands[a], self.cands[b]
                    if self._scale(a) != self._scale(b) or (
                            ca.total_sq + cb.total_sq - 2 * self.pair[a, b]) != 0:
                        return False
        return True

    def best(self, alive: list[int]) -> int:
        def key(i):
            d = self.distance(i)
            return (not math.isfinite(d), d if math.isfinite(d) else 0.0, i)
        return min(alive, key=key)

    def judge(self) -> int:
        """Estimates, the best survivor, and this round's drops (Holm); returns the best."""
        alive = self.alive()
        for i in alive:
            self.estimate(i)
        b = self.best(alive)
        others = [i for i in alive if i != b]
        ps = [self.p_worse(i, b) for i in others]
        for i, p in zip(others, ps):
            self.cands[i].p_value = p
        self.cands[b].p_value = None
        for i, drop in zip(others, holm(ps, self.alpha) if ps else []):
            if drop:
                self.cands[i].status = "dropped"
        return b

    def run(self, games: int, chunk: int, progress: bool = False, first: int = FIRST_ROUND) -> None:
        """Race to the end; every candidate's status becomes best, indistinguishable or dropped."""
        from tqdm import tqdm
        bar = tqdm(total=len(self.cands) * games * self.rotations, unit="game", unit_scale=True,
                   disable=not progress, file=sys.stderr, dynamic_ncols=True, leave=False)
        played = 0
        try:
            for n in schedule(games, first):
                before = len(self.alive())
                self.play(played, n, chunk, bar)
                played = n
                b = self.judge()
                alive = self.alive()
                self.rounds.append({"games": n, "survivors": len(alive), "dropped": before - len(alive),
                                    "best": self.cands[b].values})
                if len(alive) == 1:
                    self.stop_reason = "one candidate left"
                    break
                if self.identical(alive):
                    self.stop_reason = "the survivors gave the same value of the metric on every deal"
                    break
            else:
                self.stop_reason = f"the survivors cannot be told apart at --games {games}"
        finally:
            bar.close()
        b = self.best(self.alive())
        for i in self.alive():
            self.cands[i].status = "best" if i == b else "indistinguishable"


def _jackknife_se(loo: np.ndarray) -> float:
    """Delete-a-group jackknife standard error from the leave-one-group-out estimates."""
    g = len(loo)
    if not np.all(np.isfinite(loo)):
        return math.nan
    return math.sqrt((g - 1) / g * float(((loo - loo.mean()) ** 2).sum()))


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
         first: int = FIRST_ROUND) -> Race:
    """Race already-resolved candidates to ``target``; ``games`` is the most any one plays."""
    if games < JK_GROUPS:  # every jackknife group needs a deal, and a variance two
        raise SimError(f"--games {games} is too few to race; give at least {JK_GROUPS}")
    metric = resolve_metric(target.metric, cands[0].job, rotate)
    r = Race(cands, metric, target, seed, rotate, alpha)
    r.run(games, chunk, progress, first)
    return r


def tune_table(r: Race):
    """Table ``tune``: one row per candidate (see docs/reports.md)."""
    import polars as pl
    alive_best = next(c for c in r.cands if c.status == "best")
    rows = []
    for i, c in enumerate(r.cands):
        m, lo, hi = c.estimate
        rows.append({**c.values, "games": c.deals, "metric": m, "ci_low": lo, "ci_high": hi,
                     "distance": r.distance(i, alive_best.estimate[0]), "status": c.status,
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
                 + f"; drops at family-wise alpha {r.alpha} per round (Holm)")
    return lines


def header_line(cands: list[Candidate], tgt: Target, games: int, rotate: bool, play: dict) -> str:
    """What tune races, with which play, and what --games counts."""
    from simcli.report.headers import games_phrase
    job = cands[0].job
    how = (f"designed play, every seat {play['play']['policy']} (--policy or --seats chooses another)"
           if play["play"].get("designed") else f"seats {job.policy_label}")
    return (f"tune {job.game}/{job.variant}/{job.players}p to {tgt.describe()}: {len(cands)} candidates, "
            f"{how}; each plays at most {games_phrase(games, job.players if rotate else 1)}")


def tune_png(table, rules: list[str], target: Target, path: Path) -> None:
    """Metric against rule value with 95% intervals and the target line; a heat-map for two rules."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
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
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)


# ---------------------------------------------------------------------------------- command

def tune_cmd(
    game: Annotated[str, typer.Argument(help="game id (see `simcli list`)")],
    target: Annotated[str, typer.Option("--target", help="METRIC=VALUE, METRIC=min or METRIC=max, e.g. seat0_advantage=0")],
    rule: Annotated[Optional[list[str]], typer.Option("--rule", help="NAME=LO..HI[:STEP] or NAME=a,b,c to vary (one or two); NAME=VALUE fixes a rule")] = None,
    variant: Annotated[Optional[str], typer.Option("--variant", help="variant name (default: the game's default)")] = None,
    players: Annotated[Optional[int], typer.Option("--players", help="player count (default: the variant's first)")] = None,
    policy: Annotated[Optional[str], typer.Option("--policy", help="policy for every seat, e.g. random, heuristic")] = None,
    seats: Annotated[Optional[str], typer.Option("--seats", help="comma-separated policy per seat")] = None,
    rotate: Annotated[bool, typer.Option("--rotate", help="play every deal once per rotation of the seat policies")] = False,
    games: Annotated[int, typer.Option("--games", min=JK_GROUPS, help="the most games any one candidate plays")] = DEFAULT_GAMES,
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**63 - 1, help="master seed")] = 1,
    alpha: Annotated[float, typer.Option("--alpha", min=1e-9, max=0.5, help="family-wise error rate of each round's drops")] = DEFAULT_ALPHA,
    threads: Annotated[Optional[int], typer.Option("--threads", min=1, help="worker threads (default: all cores)")] = None,
    chunk: Annotated[int, typer.Option("--chunk", min=1, help="games per chunk")] = DEFAULT_CHUNK,
    out: Annotated[Optional[str], typer.Option("--out", help="output folder, new or empty (default reports/run-<time>); see --force")] = None,
    fmt: Annotated[str, typer.Option("--format", help="parquet | csv")] = "parquet",
    html: Annotated[bool, typer.Option("--html", help="also write report.html")] = False,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="no progress bar")] = False,
    force: Annotated[bool, typer.Option("--force", help="replace a non-empty --out whole (default: refuse it)")] = False,
    wide: Annotated[bool, typer.Option("--wide", help="print tables in one block with every column and full cells")] = False,
    threshold: Annotated[float, typer.Option("--threshold", min=0.0, max=1.0, help="findings: the smallest win-share effect flagged in the verdict")] = 0.02,
) -> None:
    """Which rule value(s) hit a balance target: race candidates on common deals."""
    import tempfile
    from simcli.report import export
    from simcli.report import tables as report
    from simcli.engine import runner
    from simcli.engine.compile import ensure_compiled
    from simcli.report.output import OutputFolder
    from simcli.engine.runspec import RunSpec, write_result
    output = OutputFolder(out, force=force).validate()
    tgt = parse_target(target)
    tuned, fixed = parse_rules(game, rule)
    from simcli.engine.runspec import designed_default
    from simcli.report import findings
    from simcli.report.fmt import echo_table
    policy, play = designed_default(game, policy, seats)
    cands = make_candidates(game, variant, players, policy, seats, tuned, fixed)
    resolve_metric(tgt.metric, cands[0].job, rotate)  # bad metric: fail before anything is written
    # the shared checks of every simulating command (games, seed, chunk, threads, format, output)
    spec = RunSpec([c.job for c in cands], games, seed, threads, chunk, rotate=rotate, fmt=fmt,
                   html=html, output=output).validate()
    note = spec.thread_note()
    if note:
        print(note, file=sys.stderr)
    from simcli.report.fmt import fit
    for line in fit(header_line(cands, tgt, games, rotate, play)):
        typer.echo(line)
    ensure_compiled(spec.jobs, lambda line: print(line, file=sys.stderr, flush=True))
    threads_used = runner.set_threads(threads)
    t0 = time.time()
    r = race(cands, tgt, games, seed, chunk, rotate, alpha, not no_progress and sys.stderr.isatty())
    wall = time.time() - t0
    table = tune_table(r)
    tables = report.build_tables([runner.Result(c.job, c.acc, c.deals, seed, c.wall, r.rotations, c.policy)
                                  for c in r.cands])
    tables["tune"] = table
    echo_table(typer.echo, table, wide=wide, keys=tuple(tuned))
    for line in verdict_lines(r, games):
        typer.echo(line)
    # the verdict: the best candidate(s) against the target, and their seats
    best = [runner.Result(c.job, c.acc, c.deals, seed, c.wall, r.rotations, c.policy)
            for c in r.cands if c.status == "best"]
    judged = {**report.build_tables(best), "tune": table}
    tables["findings"] = findings.add_to(judged, findings.Settings(threshold=threshold, target=vars(tgt)),
                                         typer.echo)
    meta = {"seed": seed, "games": games, "threads": threads_used, "chunk": chunk, "rotate": rotate,
            "wall_time_s": round(wall, 3), "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "command": sys.argv, "packages": export.package_versions(), "axes": list(tuned), **play,
            "findings": {"threshold": threshold, "alpha": 0.05},
            "tune": {"target": tgt.describe(), "metric_test": "paired" if r.metric.paired else "jackknife",
                     "alpha": alpha, "first_round": FIRST_ROUND, "rounds": r.rounds,
                     "stop": r.stop_reason, "games_used": sum(c.deals for c in r.cands),
                     "full_grid_games": len(r.cands) * games},
            "jobs": [{"game": c.job.game, "version": c.job.module.VERSION, "variant": c.job.variant,
                      "players": c.job.players, "policies": c.job.policies, "rules": c.job.rules,
                      "labels": c.job.labels, "games": c.deals} for c in r.cands]}
    with tempfile.TemporaryDirectory() as tmp:
        png = Path(tmp) / "tune.png"
        tune_png(table, list(tuned), tgt, png)
        final = write_result(output, tables, fmt, meta, {"tune.png": png.read_bytes()}, html=html)
    n_files = sum(1 for p in final.iterdir() if not p.name.startswith("."))
    typer.echo(f"wrote {n_files} files to {final} ({wall:.1f} s)")
