"""Balance regression: re-run the committed baselines and test what moved.

``configs/check.toml`` lists the jobs (like the suite), the games per job and two seeds: the
baseline is made with ``baseline_seed`` (``simcli check --update``), the check re-runs with
``check_seed`` — an independent sample, so an unchanged rule set differs only by chance and
the two-sample tests below hold their nominal error rate.

Tests per job (matched by game, variant, players, policies and labels):
  win share of each seat     z test, per-deal variances     effect: difference, Cohen's h
  tie rate, timeout rate     two-proportion z test          effect: difference, Cohen's h
  score mean of each seat    Welch's t test (normal tail)   effect: difference, Cohen's d
  score distribution / seat  two-sample chi-square          effect: Cramer's V
  length distribution        two-sample chi-square          effect: Cramer's V
  game arc (games with checkpoints and a winner, n = arc_games; docs/balance.md):
    comeback_rate, last_swing  two-proportion z test         effect: difference, Cohen's h
    lead_changes, decided_at   Welch's t test (normal tail)   effect: difference, Cohen's d
    (skipped while the baseline predates these columns)
All p-values of one check form one family, corrected with Holm-Bonferroni at ``alpha``.
Designer expectations (``configs/expectations.toml``) are checked on the new run's numbers.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from simcli.config import jobs as cfg
from simcli.config import schema
from simcli import stats
from simcli.errors import SimError

KEYS = ["game", "variant", "players", "policies"]
BASELINE_TABLES = ("seats", "variants", "scores", "lengths", "counters")


@dataclass
class CheckConfig:
    jobs: list
    games: int
    baseline_seed: int
    check_seed: int
    alpha: float
    counts: list  # games for each job


def load_check_config(path: Path | None = None) -> CheckConfig:
    """The check config, validated against ``schema.CHECK`` (one line naming file and key)."""
    path = Path(path) if path is not None else cfg.configs_dir() / "check.toml"
    data = schema.load(path, "check")
    games = data.get("games", 20000)
    counts: list[int] = []
    try:
        jobs = cfg.jobs_from_entries(data["job"], f"check config {path}", games, counts)
    except SimError as e:  # a game-level problem (variant, policy, rule value): name the file
        msg = str(e)
        raise SimError(msg if msg.startswith("check config") else f"check config {path}: {msg}") from None
    if not jobs:
        raise SimError(f"check config {path} expands to no jobs (check the players lists; games not in this checkout are skipped)")
    return CheckConfig(jobs, games, data.get("baseline_seed", 1), data.get("check_seed", 2),
                       float(data.get("alpha", 0.01)), counts)


# columns compare() reads from a baseline, by table: a folder of another shape is refused up front
BASELINE_COLUMNS = {
    "variants": (*KEYS, "games", "tie_rate", "timeout_rate", "length_mean"),
    "seats": ("seat", "win_share", "score_mean", "score_sd"),
    "scores": ("seat", "score", "count"),
    "lengths": ("length", "count"),
}


def read_tables(folder: Path) -> dict[str, pl.DataFrame]:
    """The baseline's tables; a missing, damaged or foreign table is one line (SimError, exit 2)."""
    tables = {}
    for name, columns in BASELINE_COLUMNS.items():
        p = folder / f"{name}.parquet"
        if not p.is_file():
            raise SimError(f"baseline folder {folder} has no {name}.parquet: not a folder written by "
                           f"`simcli check --update`; give --baseline DIR")
        try:
            df = pl.read_parquet(p)
        except (pl.exceptions.PolarsError, OSError, ValueError) as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise SimError(f"baseline table {p} cannot be read (damaged or not Parquet): {first}") from None
        missing = [c for c in columns if c not in df.columns]
        wrong = [c for c in columns if c in df.columns and c not in KEYS and not df[c].dtype.is_numeric()]
        if missing or wrong:
            what = f"no column {', '.join(missing)}" if missing else f"column {', '.join(wrong)} is not numeric"
            raise SimError(f"baseline table {p} is not a simcli {name} table ({what}); "
                           "make a baseline with `simcli check --update`")
        if df.height == 0:
            raise SimError(f"baseline table {p} is empty; make a baseline with `simcli check --update`")
        tables[name] = df
    return tables


def read_baseline(folder: Path, jobs: list) -> dict[str, pl.DataFrame]:
    """The baseline's tables, refused in one line when missing, damaged, empty, or covering none
    of the check's jobs (a run of another game: every test would only report it missing)."""
    try:
        present = (Path(folder) / "variants.parquet").is_file()
    except OSError as e:
        raise SimError(f"--baseline {folder}: {e.strerror or e}") from None
    if not present:
        raise SimError(f"no baseline in {folder}; make one with `simcli check --update`")
    tables = read_tables(Path(folder))
    have = set(tables["variants"].select("game", "variant", "players").iter_rows())
    if not any((j.game, j.variant, j.players) in have for j in jobs):
        shown = ", ".join(sorted({f"{g}/{v}/{n}p" for g, v, n in have}))[:200]
        raise SimError(f"baseline {folder} covers none of the {len(jobs)} jobs of the check config "
                       f"(it holds {shown}); make one with `simcli check --update`")
    return tables


def is_baseline(folder: Path) -> bool:
    """Whether ``folder`` holds a baseline written by ``simcli check --update``."""
    import json
    try:
        meta = json.loads((Path(folder) / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(meta, dict) and meta.get("purpose") == "balance baseline"


def update_target(baseline: Path, force: bool, config: Path | None = None):
    """Where ``check --update`` writes: a new or empty folder, or an earlier baseline (replaced
    whole). A folder of other files (a user's own, a run result) needs ``--force``; one holding
    the check config (``config``, default configs/check.toml) is refused even then."""
    from simcli.report.output import OutputFolder
    config = Path(config) if config is not None else cfg.configs_dir() / "check.toml"
    out = OutputFolder(baseline, force=True, option="--baseline", inputs=[config]).validate()
    if not force and not is_baseline(out.target) and out.target.is_dir() and any(out.target.iterdir()):
        raise SimError(f"--baseline {baseline} holds files that are not a simcli baseline; choose a "
                       f"new or empty folder, or add --force to replace it whole")
    return out


def _key_cols(df: pl.DataFrame) -> list[str]:
    fixed = {"seat", "policy", "games", "deals", "rotations", "score", "count", "length", "kind", "metric",
             "value", "win_share", "win_ci_low", "win_ci_high", "win_se", "mean_place"}
    return [c for c in df.columns if c in KEYS or (df[c].dtype == pl.String and c not in fixed
                                                    and c not in ("length_unit",))]


def _job_key(row: dict, cols: list[str]) -> tuple:
    return tuple((c, row.get(c)) for c in cols)


def _win_share_test(new: dict, n2: int, base: dict, n1: int) -> tuple[float, float, str]:
    """(z, p, note): win share now against the baseline, with the per-deal variances both
    tables carry (``win_se``; a shared win has less variance than a Bernoulli game). A baseline
    written before ``win_se`` existed falls back to the two-proportion test."""
    se1, se2 = base.get("win_se"), new.get("win_se")
    if se1 is not None and se2 is not None and se1 == se1 and se2 == se2 and (se1 > 0 or se2 > 0):
        z, p = stats.two_means(new["win_share"], se2, base["win_share"], se1)
        return z, p, "z over per-deal variances; effect size = Cohen's h"
    z, p = stats.two_proportion(new["win_share"] * n2, n2, base["win_share"] * n1, n1)
    return z, p, "two-proportion z; effect size = Cohen's h"


def compare(base: dict[str, pl.DataFrame], new: dict[str, pl.DataFrame], alpha: float) -> pl.DataFrame:
    """One row per test: keys, metric, seat, baseline, current, effect, effect_size, p, moved."""
    rows = []
    kcols = _key_cols(new["variants"])
    bvar = {_job_key(r, kcols): r for r in base["variants"].iter_rows(named=True)}
    for v in new["variants"].iter_rows(named=True):
        key = _job_key(v, kcols)
        keyd = dict(key)
        b = bvar.get(key)
        if b is None:
            rows.append({**keyd, "metric": "baseline", "seat": None, "baseline": None, "current": None,
                         "effect": None, "effect_size": None, "p_value": 0.0,
                         "note": "no baseline for this job: run `simcli check --update`"})
            continue
        n1, n2 = b["games"], v["games"]
        for metric in ("tie_rate", "timeout_rate"):
            x1, x2 = b[metric] * n1, v[metric] * n2
            _, p = stats.two_proportion(x2, n2, x1, n1)
            rows.append({**keyd, "metric": metric, "seat": None, "baseline": b[metric], "current": v[metric],
                         "effect": v[metric] - b[metric], "effect_size": stats.cohens_h(v[metric], b[metric]),
                         "p_value": p, "note": "two-proportion z; effect size = Cohen's h"})
        rows += _arc_tests(keyd, b, v)
        flt = [pl.col(c) == keyd[c] if keyd[c] is not None else pl.col(c).is_null() for c in kcols]
        bs = base["seats"].filter(*flt) if all(c in base["seats"].columns for c in kcols) else base["seats"].clear()
        ns = new["seats"].filter(*flt)
        bsc = base["scores"].filter(*flt) if all(c in base["scores"].columns for c in kcols) else base["scores"].clear()
        nsc = new["scores"].filter(*flt)
        for s_row in ns.iter_rows(named=True):
            seat = s_row["seat"]
            match = bs.filter(pl.col("seat") == seat)
            if not match.height:
                continue
            bsr = match.row(0, named=True)
            _, p, note = _win_share_test(s_row, n2, bsr, n1)
            rows.append({**keyd, "metric": "win_share", "seat": seat, "baseline": bsr["win_share"],
                         "current": s_row["win_share"], "effect": s_row["win_share"] - bsr["win_share"],
                         "effect_size": stats.cohens_h(s_row["win_share"], bsr["win_share"]), "p_value": p,
                         "note": note})
            if s_row.get("score_sd") is not None and bsr.get("score_sd") is not None:
                _, p = stats.welch(s_row["score_mean"], s_row["score_sd"], n2, bsr["score_mean"], bsr["score_sd"], n1)
                rows.append({**keyd, "metric": "score_mean", "seat": seat, "baseline": bsr["score_mean"],
                             "current": s_row["score_mean"], "effect": s_row["score_mean"] - bsr["score_mean"],
                             "effect_size": stats.cohens_d(s_row["score_mean"], s_row["score_sd"],
                                                           bsr["score_mean"], bsr["score_sd"]),
                             "p_value": p, "note": "Welch t; effect size = Cohen's d"})
            h1 = dict(bsc.filter(pl.col("seat") == seat).select("score", "count").iter_rows())
            h2 = dict(nsc.filter(pl.col("seat") == seat).select("score", "count").iter_rows())
            stat, df, p, v_eff = stats.chi2_homogeneity(h2, h1)
            if df:
                rows.append({**keyd, "metric": "score_distribution", "seat": seat, "baseline": None,
                             "current": stat, "effect": None, "effect_size": v_eff, "p_value": p,
                             "note": f"chi-square, {df} df; current = statistic; effect size = Cramer's V"})
        bl = base["lengths"].filter(*flt) if all(c in base["lengths"].columns for c in kcols) else base["lengths"].clear()
        nl = new["lengths"].filter(*flt)
        stat, df, p, v_eff = stats.chi2_homogeneity(dict(nl.select("length", "count").iter_rows()),
                                                    dict(bl.select("length", "count").iter_rows()))
        if df:
            rows.append({**keyd, "metric": "length_distribution", "seat": None, "baseline": b["length_mean"],
                         "current": v["length_mean"], "effect": v["length_mean"] - b["length_mean"],
                         "effect_size": v_eff, "p_value": p,
                         "note": f"chi-square, {df} df; baseline/current = mean length; effect size = Cramer's V"})
    if not rows:
        return pl.DataFrame()
    df = pl.DataFrame(rows, infer_schema_length=None)
    pvals = [p if p == p else 1.0 for p in df["p_value"].to_list()]
    moved = stats.holm(pvals, alpha)
    return df.with_columns(pl.Series("moved", moved))


ARC_SHARES = ("comeback_rate", "last_swing")
ARC_MEANS = ("lead_changes", "decided_at")


def _arc_tests(keyd: dict, b: dict, v: dict) -> list[dict]:
    """The game-arc metrics of one job as tests; none when either run lacks them (a baseline
    made before they existed, or a game without checkpoints)."""
    rows = []
    n1, n2 = b.get("arc_games"), v.get("arc_games")
    if not n1 or not n2:
        return rows
    for metric in ARC_SHARES:
        if b.get(metric) is None or v.get(metric) is None:
            continue
        _, p = stats.two_proportion(v[metric] * n2, n2, b[metric] * n1, n1)
        rows.append({**keyd, "metric": metric, "seat": None, "baseline": b[metric], "current": v[metric],
                     "effect": v[metric] - b[metric], "effect_size": stats.cohens_h(v[metric], b[metric]),
                     "p_value": p, "note": "two-proportion z over arc_games; effect size = Cohen's h"})
    for metric in ARC_MEANS:
        sd = metric + "_sd"
        if any(r.get(c) is None for r in (b, v) for c in (metric, sd)):
            continue
        _, p = stats.welch(v[metric], v[sd], n2, b[metric], b[sd], n1)
        rows.append({**keyd, "metric": metric, "seat": None, "baseline": b[metric], "current": v[metric],
                     "effect": v[metric] - b[metric],
                     "effect_size": stats.cohens_d(v[metric], v[sd], b[metric], b[sd]),
                     "p_value": p, "note": "Welch t over arc_games; effect size = Cohen's d"})
    return rows


def load_expectations(path: Path | None = None) -> list[dict]:
    """Designer expectations, validated against ``schema.EXPECTATIONS``. A file the user names
    must exist; only the default file may be absent (an install without configs: none)."""
    if path is None:
        path = cfg.configs_dir() / "expectations.toml"
        if not path.exists():
            return []
    return schema.load(Path(path), "expectations").get("expect", [])


def _metric_names(job) -> set[str]:
    """Every metric an expectation may name for ``job``: the numeric ``variants`` columns and
    the ``counters`` metrics its tables hold (built from one empty game, nothing simulated)."""
    from simcli.report import tables as report
    from simcli.engine import runner
    acc = runner.accumulators_for(job)
    acc.misc[0] = 1  # one empty game: every ratio defined, so every column is built
    tables = report.build_tables([runner.Result(job, acc, 1, 0)])
    var, cnt = tables["variants"], tables["counters"]
    names = {c for c, t in var.schema.items() if t.is_numeric()}
    return names | (set(cnt["metric"].to_list()) if cnt.height else set())


def validate_expectations(expected: list[dict], jobs: list, path) -> None:
    """An expectation names only variants, player counts and metrics that exist (else it would
    silently check nothing): one line naming the file, the entry and the bad key."""
    path = path if path is not None else cfg.configs_dir() / "expectations.toml"
    names: dict[str, set] = {}
    for i, e in enumerate(expected, 1):
        where = f"expectations file {path}: expect[{i}]"
        games = [e["game"]] if "game" in e else sorted({j.game for j in jobs})
        variants = {g: cfg.variants_of(g)[1] for g in games}
        if "variant" in e and not any(e["variant"] in v for v in variants.values()):
            valid = sorted({n for v in variants.values() for n in v})
            raise SimError(f"{where}.variant: unknown variant {e['variant']!r}; valid variants: {', '.join(valid)}")
        if "players" in e:
            counts = sorted({n for v in variants.values() for name, d in v.items()
                             if e.get("variant", name) == name for n in d["players"]})
            if e["players"] not in counts:
                raise SimError(f"{where}.players: {e['players']} players is not a count of "
                               f"{'/'.join(games)}{' ' + e['variant'] if 'variant' in e else ''}; "
                               f"valid counts: {', '.join(map(str, counts))}")
        valid = set()
        for g in games:
            if g not in names:
                mine = [j for j in jobs if j.game == g] or [cfg.resolve(g)]
                names[g] = set().union(*(_metric_names(j) for j in mine))
            valid |= names[g]
        if e["metric"] not in valid:
            raise SimError(f"{where}.metric: unknown metric {e['metric']!r}; valid metrics: "
                           f"{', '.join(sorted(valid))}")


def check_expectations(tables: dict[str, pl.DataFrame], expectations: list[dict]) -> list[dict]:
    """Each expectation against every matching job; returns one row per evaluation."""
    variants = tables["variants"]
    counters = tables.get("counters")
    out = []
    for e in expectations:
        metric = e["metric"]
        for v in variants.iter_rows(named=True):
            if any(k in e and v.get(k) != e[k] for k in ("game", "variant", "players", "policies")):
                continue
            if metric in v:
                value = v[metric]
            elif counters is not None and counters.height:
                m = counters.filter((pl.col("game") == v["game"]) & (pl.col("variant") == v["variant"])
                                    & (pl.col("players") == v["players"]) & (pl.col("policies") == v["policies"])
                                    & (pl.col("metric") == metric))
                if not m.height:
                    continue
                value = m["value"][0]
            else:
                continue
            ok = True
            desc = []
            if "within" in e:
                ok &= abs(value) <= e["within"]
                desc.append(f"|x| <= {e['within']}")
            if "below" in e:
                ok &= value < e["below"]
                desc.append(f"x < {e['below']}")
            if "above" in e:
                ok &= value > e["above"]
                desc.append(f"x > {e['above']}")
            if value is None or (isinstance(value, float) and math.isnan(value)):
                ok = False
            out.append({"game": v["game"], "variant": v["variant"], "players": v["players"],
                        "policies": v["policies"], "metric": metric, "value": value,
                        "expectation": " and ".join(desc), "ok": bool(ok)})
    return out


def baseline_folder(given: Path | None, update: bool = False) -> Path:
    """The baseline folder: ``--baseline`` when given, else the project's reports/baseline (found
    from the package, so `simcli check` works from any folder). Checking against a folder that
    does not exist is one line naming it; it never advises ``--update`` (which would bless
    today's code as the baseline)."""
    folder = Path(given) if given is not None else cfg.configs_dir().parent / "reports" / "baseline"
    if update:
        return folder
    if not folder.is_dir():
        where = "--baseline" if given is not None else "the project's baseline"
        raise SimError(f"{where} {folder} does not exist; give --baseline DIR, the folder of an existing baseline")
    return folder


def summary_lines(moved: pl.DataFrame, failed: list[dict], wide: bool = False) -> list[str]:
    from simcli.report.fmt import table_lines
    lines = []
    if moved.height:
        lines += table_lines(moved.select([c for c in ("game", "variant", "players", "policies", "metric", "seat",
                                                       "baseline", "current", "effect", "effect_size", "p_value")
                                           if c in moved.columns]),
                             title=f"{moved.height} significant change(s):", wide=wide)
    for f in failed:
        lines.append(f"expectation failed: {f['game']}/{f['variant']}/{f['players']}p [{f['policies']}] "
                     f"{f['metric']} = {f['value']:.4g}, expected {f['expectation']}")
    return lines


def meta_for(conf: CheckConfig, seed: int) -> dict:
    return {"purpose": "balance baseline", "seed": seed, "games": conf.counts, "alpha": conf.alpha,
            "jobs": [{"game": j.game, "version": j.module.VERSION, "variant": j.variant, "players": j.players,
                      "policies": j.policies, "rules": j.rules, "labels": j.labels} for j in conf.jobs]}


def check_command(*, update: bool, games, config_file, baseline: Path, expectations, alpha,
                  threads, backend, progress: bool, echo, force: bool = False, wide: bool = False) -> int:
    """`simcli check`: re-make the baseline (``update``) or compare a fresh run with it and the
    designer's expectations. Returns the exit code (1: balance moved or an expectation failed)."""
    from simcli.engine.runspec import DEFAULT_CHUNK, RunSpec, compute, write_result
    from simcli.report import findings
    conf = load_check_config(config_file)
    baseline = baseline_folder(baseline, update)
    counts = [games] * len(conf.jobs) if games else conf.counts
    alpha = alpha or conf.alpha
    seed = conf.baseline_seed if update else conf.check_seed
    output = update_target(baseline, force, config_file) if update else None
    if not update:
        base = read_baseline(baseline, conf.jobs)
        expected = load_expectations(expectations)
        validate_expectations(expected, conf.jobs, expectations)
    spec = RunSpec(jobs=conf.jobs, games=counts, seed=seed, threads=threads, chunk=DEFAULT_CHUNK,
                   backend=backend, progress=progress).validate()
    _, tables, _, _ = compute(spec)
    if update:
        conf.counts = counts
        keep = {k: tables[k] for k in BASELINE_TABLES if k in tables}
        final = write_result(output, keep, "parquet", meta_for(conf, seed))
        echo(f"baseline of {len(conf.jobs)} jobs ({sum(counts)} games) written to {final}")
        return 0
    result = compare(base, tables, alpha)
    moved = result.filter(pl.col("moved")) if result.height else result
    failed = [e for e in check_expectations(tables, expected) if not e["ok"]]
    echo(f"checked {len(conf.jobs)} jobs ({sum(counts):,} games) against {baseline}: "
         f"{result.height} tests, Holm-Bonferroni at alpha = {alpha}")
    for line in summary_lines(moved, failed, wide):
        echo(line)
    findings.add_to({}, findings.Settings(alpha=alpha), echo, findings.check_rows(result, failed))
    if moved.height or failed:
        return 1
    echo("no significant change; every expectation holds")
    return 0
