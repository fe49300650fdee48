"""Honest statistics from integer tallies: intervals, two-sample tests, multiple comparisons.

Every win-share interval treats the *deal* as the independent unit and uses the variance of
the observed per-deal shares (``share_interval``): a shared win's smaller variance counts, and
the rotations of one deal are not taken for independent games. The interval is Wilson's score
interval with the effective number of deals n_eff = n * p(1-p) / s^2 (Kish's design effect),
which stays inside [0, 1] and keeps its coverage near 0 and 1 where a normal interval does not.
Paired differences (in [-1, 1], centred near 0) use the normal interval over deals.

Only the standard library (numpy for the jackknife's arrays): normal, Student t and chi-square
tail probabilities are computed here (``math.erfc``, the regularized incomplete beta and gamma
functions), so no SciPy is needed. Every estimator and test the commands print lives here:
Wilson intervals (plain, effective-n, ratio), paired differences, z / Welch / chi-square tests,
Holm, Student t and the delete-a-group jackknife (``tune``).
"""
from __future__ import annotations

import math

Z95 = 1.959963984540054


def normal_sf2(z: float) -> float:
    """Two-sided normal tail probability P(|Z| >= |z|)."""
    return math.erfc(abs(z) / math.sqrt(2))


def wilson(p: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion ``p`` observed over ``n`` trials."""
    if n <= 0:
        return float("nan"), float("nan")
    z2 = z * z
    if p <= 0 or p >= 1:   # the closed forms at the boundary: exactly 0 or 1 at the observed end
        return (0.0, z2 / (n + z2)) if p <= 0 else (n / (n + z2), 1.0)
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(max(p * (1 - p), 0.0) / n + z2 / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def mean_ci(total: float, total_sq: float, n: int, z: float = Z95) -> tuple[float, float, float]:
    """(mean, low, high) of n observations given their sum and sum of squares (normal approx)."""
    if n <= 1:
        m = total / n if n else float("nan")
        return m, float("nan"), float("nan")
    m = total / n
    var = max(total_sq / n - m * m, 0.0) * n / (n - 1)
    se = math.sqrt(var / n)
    return m, m - z * se, m + z * se


def share_moments(total: int, total_sq: int, n: int, scale: int) -> tuple[float, float]:
    """(mean, sample variance) of n per-deal shares x = u / scale from integer sums of u, u^2.

    Computed from the integers (n * sum u^2 - (sum u)^2 is exact in Python ints), so it does
    not lose precision when the variance is small against the mean.
    """
    if n <= 0:
        return float("nan"), float("nan")
    m = total / (n * scale)
    if n == 1:
        return m, float("nan")
    num = int(n) * int(total_sq) - int(total) * int(total)
    return m, max(num, 0) / (n * (n - 1) * scale * scale)


def wilson_effective(p: float, var: float, n: int, z: float = Z95) -> tuple[float, float, float]:
    """Wilson interval for a mean share ``p`` of n deals whose per-deal shares have sample
    variance ``var``: (low, high, effective n). n_eff = n * p(1-p) / var (Kish). At p = 0 or 1
    (no deal won, or every deal won outright) n_eff = n, as for one Bernoulli game per deal;
    with 0 < p < 1 and var = 0 every deal gave exactly the share p: the interval is [p, p]."""
    if n <= 0 or p != p:
        return float("nan"), float("nan"), float("nan")
    bern = p * (1 - p)
    if bern <= 0:
        n_eff = float(n)
    elif var <= 0:
        return p, p, math.inf
    else:
        n_eff = n * bern / var
    lo, hi = wilson(p, n_eff, z)
    return lo, hi, n_eff


def share_interval(total: int, total_sq: int, n: int, scale: int, z: float = Z95) -> dict:
    """Mean per-deal share with its Wilson effective-n interval and standard error.

    ``total``/``total_sq`` are integer sums over n deals of u and u^2, the deal's share being
    u / scale (win units over 60 x games that replay the deal x seats held).
    """
    m, var = share_moments(total, total_sq, n, scale)
    lo, hi, n_eff = wilson_effective(m, var if var == var else 0.0, n, z)
    se = math.sqrt(var / n) if n > 1 and var == var else float("nan")
    return {"mean": m, "low": lo, "high": hi, "se": se, "n_eff": n_eff}


def seat_share(acc, s: int, rotations: int = 1) -> dict:
    """Seat s's win share over a job's deals (share_interval), from its Accumulators."""
    from kernels.layout import SHARE_UNIT
    from kernels.tally import M_DEALS
    return share_interval(int(acc.win_units[s]), int(acc.win_sq[s]), int(acc.misc[M_DEALS]),
                          SHARE_UNIT * rotations)


def policy_share(pt, qi: int) -> tuple[float, float, float]:
    """Win share of policy ``qi`` per seat it holds, with a 95% interval over deals.

    Per deal, x = u_q / (60 * R * n_q) lies in [0, 1]; the interval is the Wilson effective-n
    interval of the mean of x over deals (deals are independent; rotations of one deal are not).
    """
    from kernels.layout import SHARE_UNIT
    scale = SHARE_UNIT * pt.rotations * int(pt.seats_held[qi])
    r = share_interval(int(pt.total[qi]), int(pt.total_sq[qi]), pt.games, scale)
    return r["mean"], r["low"], r["high"]


def paired_difference(pt, a: int, b: int) -> dict:
    """Win share of policy a minus policy b on the same deals, with interval, z and p."""
    from kernels.layout import SHARE_UNIT
    scale = SHARE_UNIT * pt.rotations * int(pt.seats_held[a]) * int(pt.seats_held[b])
    m, var = share_moments(int(pt.pair[a, b]), int(pt.pair_sq[a, b]), pt.games, scale)
    se = math.sqrt(var / pt.games) if var == var else float("nan")
    lo, hi = (m - Z95 * se, m + Z95 * se) if se == se else (float("nan"), float("nan"))
    z = m / se if se and se == se else (0.0 if m == 0 else float("inf"))
    return {"diff": m, "ci_low": lo, "ci_high": hi, "z": z,
            "p_value": normal_sf2(z) if z == z else float("nan")}


def two_proportion(x1: float, n1: int, x2: float, n2: int) -> tuple[float, float]:
    """Pooled two-proportion z test: (z, two-sided p). x are successes (may be fractional)."""
    if n1 == 0 or n2 == 0:
        return 0.0, 1.0
    p1, p2 = x1 / n1, x2 / n2
    p = (x1 + x2) / (n1 + n2)
    se = math.sqrt(max(p * (1 - p), 0.0) * (1 / n1 + 1 / n2))
    if se == 0:
        return (0.0, 1.0) if p1 == p2 else (math.inf, 0.0)
    z = (p1 - p2) / se
    return z, normal_sf2(z)


def two_means(m1: float, se1: float, m2: float, se2: float) -> tuple[float, float]:
    """z test of two independent means given their standard errors: (z, two-sided p).

    For win shares the standard errors come from the per-deal variances (``share_interval``),
    the same variances the intervals use.
    """
    se = math.sqrt(se1 * se1 + se2 * se2)
    if not se > 0:
        return (0.0, 1.0) if m1 == m2 else (math.inf, 0.0)
    z = (m1 - m2) / se
    return z, normal_sf2(z)


def cohens_h(p1: float, p2: float) -> float:
    return 2 * math.asin(math.sqrt(min(max(p1, 0), 1))) - 2 * math.asin(math.sqrt(min(max(p2, 0), 1)))


def welch(m1: float, s1: float, n1: int, m2: float, s2: float, n2: int) -> tuple[float, float]:
    """Welch's unequal-variance test of two means: (t, two-sided p).

    The p-value uses the normal distribution for the t statistic: exact enough for the
    thousands of games a baseline holds (df > 1000 differs from normal by < 0.1%), and
    Welch–Satterthwaite df is reported by the caller when it matters.
    """
    if n1 < 2 or n2 < 2:
        return 0.0, 1.0
    se = math.sqrt(s1 * s1 / n1 + s2 * s2 / n2)
    if se == 0:
        return (0.0, 1.0) if m1 == m2 else (math.inf, 0.0)
    t = (m1 - m2) / se
    return t, normal_sf2(t)


def cohens_d(m1: float, s1: float, m2: float, s2: float) -> float:
    sp = math.sqrt((s1 * s1 + s2 * s2) / 2)
    return (m1 - m2) / sp if sp else 0.0


def gammaincc(a: float, x: float) -> float:
    """Regularized upper incomplete gamma Q(a, x) (series / continued fraction)."""
    if x <= 0:
        return 1.0
    gln = math.lgamma(a)
    if x < a + 1:
        term = total = 1.0 / a
        ap = a
        for _ in range(10000):
            ap += 1
            term *= x / ap
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return max(0.0, 1.0 - total * math.exp(-x + a * math.log(x) - gln))
    b = x + 1 - a
    c = 1 / 1e-300
    d = 1 / b
    h = d
    for i in range(1, 10000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = 1e-300 if abs(d) < 1e-300 else d
        c = b + an / c
        c = 1e-300 if abs(c) < 1e-300 else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-15:
            break
    return min(1.0, math.exp(-x + a * math.log(x) - gln) * h)


def chi2_sf(x: float, df: int) -> float:
    return gammaincc(df / 2, x / 2) if df > 0 else 1.0


def chi2_homogeneity(h1: dict, h2: dict, min_expected: float = 5.0) -> tuple[float, int, float, float]:
    """Two-sample chi-square test that two histograms ({value: count}) share one distribution.

    Adjacent values are pooled (in value order) until each pooled bin expects >= min_expected
    in both samples. Returns (statistic, df, p, Cramer's V).
    """
    n1, n2 = sum(h1.values()), sum(h2.values())
    if n1 == 0 or n2 == 0:
        return 0.0, 0, 1.0, 0.0
    values = sorted(set(h1) | set(h2))
    bins, c1, c2 = [], 0, 0
    for v in values:
        c1 += h1.get(v, 0)
        c2 += h2.get(v, 0)
        tot = c1 + c2
        if tot * n1 / (n1 + n2) >= min_expected and tot * n2 / (n1 + n2) >= min_expected:
            bins.append((c1, c2))
            c1 = c2 = 0
    if c1 or c2:
        if bins:
            a, b = bins.pop()
            bins.append((a + c1, b + c2))
        else:
            bins.append((c1, c2))
    if len(bins) < 2:
        return 0.0, 0, 1.0, 0.0
    n = n1 + n2
    stat = 0.0
    for a, b in bins:
        tot = a + b
        for obs, ni in ((a, n1), (b, n2)):
            exp = tot * ni / n
            stat += (obs - exp) ** 2 / exp
    df = len(bins) - 1
    return stat, df, chi2_sf(stat, df), math.sqrt(stat / n)


def holm(pvalues: list[float], alpha: float) -> list[bool]:
    """Holm–Bonferroni step-down: which hypotheses are rejected at family-wise level alpha."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    m = len(pvalues)
    rejected = [False] * m
    for rank, i in enumerate(order):
        if pvalues[i] <= alpha / (m - rank):
            rejected[i] = True
        else:
            break
    return rejected


def holm_adjusted(pvalues: list[float]) -> list[float]:
    """Holm step-down adjusted p-values: hypothesis i is rejected at family-wise level alpha
    exactly when ``adjusted[i] <= alpha`` (the same decisions as ``holm``). NaN counts as 1."""
    m = len(pvalues)
    clean = [p if p == p else 1.0 for p in pvalues]
    order = sorted(range(m), key=lambda i: clean[i])
    adj = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * clean[i]))
        adj[i] = running
    return adj


def mean_vs_value(mean: float, se: float, value: float) -> tuple[float, float]:
    """Two-sided z test of a mean with standard error ``se`` against a fixed ``value``:
    (z, p). A zero standard error: p = 1 when the mean equals the value, else 0."""
    if not (se == se and mean == mean):
        return float("nan"), float("nan")
    if se <= 0:
        return (0.0, 1.0) if mean == value else (math.inf, 0.0)
    z = (mean - value) / se
    return z, normal_sf2(z)


def rate_above(count: float, n: int, threshold: float) -> float:
    """One-sided p-value that a rate of ``count`` in ``n`` exceeds ``threshold`` (normal
    approximation of the binomial under rate = threshold; 1.0 when there is nothing to test)."""
    if n <= 0 or not 0 < threshold < 1:
        return 1.0
    se = math.sqrt(threshold * (1 - threshold) / n)
    z = (count / n - threshold) / se
    return 0.5 * math.erfc(z / math.sqrt(2))


def ratio_interval(sum_r: int, sum_h: int, sum_rr: int, sum_hh: int, sum_hr: int, reached: int,
                   n: int, z: float = Z95) -> tuple[float, float, float]:
    """(R, low, high) for R = sum h / sum r over n independent units (deals), each contributing
    h of its r trials, from integer sums of r, h, r^2, h^2 and h*r (a ratio estimator);
    ``reached`` is the number of units with r > 0.

    var(R) = sum (h - R r)^2 / (n (n - 1) rbar^2), computed from the integers; the interval is
    Wilson's with the effective number of trials R(1 - R) / var(R). With one trial per unit (r in
    {0, 1}) that is n_eff = (n - 1)/n x sum r: Wilson over the trials. A deal whose rotations all
    agree counts once, so correlated rotations are not taken for independent games.

    With no spread between the units (every unit's h / r equals R: always R = 0 or 1 when the
    leader never or always won) var(R) = 0 says nothing about the sampling error; the interval is
    then Wilson over the units that have a trial, ``reached`` (the games that reach an arc
    checkpoint; under --rotate the deals that do: a deal's agreeing rotations count once).
    No trial at all (sum r = 0): no estimate and no interval (nan; the report writes null).
    """
    if sum_r <= 0:
        return float("nan"), float("nan"), float("nan")
    R = sum_h / sum_r
    # sum (h - R r)^2 x sum_r^2, exact in Python ints
    num = sum_r * sum_r * sum_hh - 2 * sum_h * sum_r * sum_hr + sum_h * sum_h * sum_rr
    if num <= 0:   # no spread: Wilson over the units with a trial
        lo, hi = wilson(R, reached, z)
        return R, lo, hi
    if n < 2:
        return R, float("nan"), float("nan")
    var = num * n / ((n - 1) * sum_r ** 4)
    lo, hi = wilson(R, R * (1 - R) / var, z)
    return R, lo, hi


def one_sided_p(mean: float, se: float, df: int | None = None) -> float:
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


def jackknife_se(loo) -> float:
    """Delete-a-group jackknife standard error from the leave-one-group-out estimates (an array)."""
    import numpy as np
    loo = np.asarray(loo, dtype=float)
    g = len(loo)
    if not np.all(np.isfinite(loo)):
        return math.nan
    return math.sqrt((g - 1) / g * float(((loo - loo.mean()) ** 2).sum()))
