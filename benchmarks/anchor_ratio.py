"""Marginal games/s of the real CLI path as a ratio of a hand-tuned kernel (issue #26).

For each game, ``simcli run GAME --players P --policy random --threads T`` is timed at BIG and at
SMALL games (default 1.2M and 0.2M); the marginal rate (BIG - SMALL) / (wall(BIG) - wall(SMALL))
cancels start-up, imports, cache loading and writing the tables. Each trial also runs the anchor
(``anchor_rate.py 500000`` from the shared anchors folder, a hand-tuned one-thread Numba trick
game, 200 card plays a game) in a subprocess, interleaved with the simcli runs, so the ratio
simcli / anchor is taken under the same machine load. Prints every trial, then medians:

    python benchmarks/anchor_ratio.py                                   # cubes 4p, bid 4p, 1 thread, 3 trials
    python benchmarks/anchor_ratio.py --games all --threads 1,2 --no-anchor   # 2-thread / 1-thread ratios
    python benchmarks/anchor_ratio.py --repos /tmp/before,.                   # A/B: another checkout, interleaved

``--games`` takes GAME[:PLAYERS] items (comma-separated, or ``all`` for the five games at their
usual count). With several ``--threads`` the table also gives each count's median rate over the
first count's. ``--repos`` times the same commands in other checkouts of the project too (each
with its own Numba cache), one after the other within every trial, so a before/after comparison
sees the same load. Beside the wall-clock rate the JSON has ``cpu_rate``: the marginal games per
CPU-second of the simcli process (user + system), and the same for the anchor (two anchor runs,
the second of a fifth of the games), which move less with the machine's load than wall time. The
last line is JSON (every trial, the medians). The anchor is looked up beside the repository
(``../shared/anchors``) unless ``--anchor`` names it; only this benchmark runs it.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ALL = ("forecasts-cubes:4", "forecasts-bid:4", "pgc:4", "sudden-skies:4", "daily-weather:1")
# `simcli run daily-weather` plays every date of the year (365 jobs): one date is one job, like the
# other games (the base variant's own date, Wednesday 23 December)
DAILY_DATE = "2026-12-23"
ANCHOR_PLACES = (ROOT.parent / "shared" / "anchors" / "anchor_rate.py",
                 Path("/work/shared/anchors/anchor_rate.py"))


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", default="forecasts-cubes:4,forecasts-bid:4",
                   help="GAME[:PLAYERS],... or 'all' (default: forecasts-cubes:4,forecasts-bid:4)")
    p.add_argument("--trials", type=int, default=3)
    p.add_argument("--threads", default="1", help="thread counts, e.g. 1 or 1,2")
    p.add_argument("--big", type=float, default=1.2e6, help="games of the long run (default 1.2M)")
    p.add_argument("--small", type=float, default=0.2e6, help="games of the short run (default 0.2M)")
    p.add_argument("--policy", default="random")
    p.add_argument("--chunk", type=int, default=None, help="simcli --chunk (default: simcli's)")
    p.add_argument("--repos", default=str(ROOT),
                   help="checkouts to time, comma-separated (default: this one); the first is the reference")
    p.add_argument("--anchor", default=None, help="path of anchor_rate.py")
    p.add_argument("--anchor-games", type=int, default=500_000)
    p.add_argument("--no-anchor", action="store_true", help="simcli rates only (thread scaling)")
    a = p.parse_args(argv)
    a.games = list(ALL) if a.games == "all" else [g for g in a.games.split(",") if g]
    a.threads = [int(t) for t in a.threads.split(",")]
    a.repos = [str(Path(r).resolve()) for r in a.repos.split(",") if r]
    a.big, a.small = int(a.big), int(a.small)
    if not 0 < a.small < a.big:
        p.error("need 0 < --small < --big")
    return a


def simcli_wall(game: str, players: int, games: int, threads: int, a, repo: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one `simcli run` process (``repo``'s code, tables written)."""
    env = dict(os.environ, PYTHONPATH=repo)
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-m", "simcli.cli", "run", game, "--players", str(players),
               "--policy", a.policy, "--games", str(games), "--threads", str(threads),
               "--no-progress", "--out", out + "/r"]
        if a.chunk:
            cmd += ["--chunk", str(a.chunk)]
        if game == "daily-weather":
            cmd += ["--date", DAILY_DATE]
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(cmd, check=True, env=env, cwd=repo, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - t
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def marginal_rate(game: str, players: int, threads: int, a, repo: str) -> dict:
    small, small_cpu = simcli_wall(game, players, a.small, threads, a, repo)
    big, big_cpu = simcli_wall(game, players, a.big, threads, a, repo)
    return {"small_s": round(small, 3), "big_s": round(big, 3),
            "rate": round((a.big - a.small) / max(big - small, 1e-9)),
            "cpu_rate": round((a.big - a.small) / max(big_cpu - small_cpu, 1e-9))}


def anchor_path(a) -> Path:
    for p in ([Path(a.anchor)] if a.anchor else ANCHOR_PLACES):
        if p.is_file():
            return p
    sys.exit("anchor_rate.py not found (looked in ../shared/anchors; give --anchor PATH)")


def anchor_run(a, games: int) -> tuple[int, float]:
    """(games/s the anchor prints, CPU seconds of its process). It plays ``games`` three times."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([sys.executable, str(anchor_path(a)), str(games)], check=True,
                         capture_output=True, text=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return int(out.stdout.split()[-1]), (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def anchor_rates(a) -> dict:
    """The anchor's own figure (``rate``, best of its three timed runs, wall clock) and its marginal
    games per CPU-second (``cpu_rate``: a run of ANCHOR_GAMES against one of a fifth of them, each
    process playing its count three times; start-up and compile cancel as for simcli)."""
    small = a.anchor_games // 5
    rate, cpu = anchor_run(a, a.anchor_games)
    _, cpu_small = anchor_run(a, small)
    return {"rate": rate, "cpu_rate": round(3 * (a.anchor_games - small) / max(cpu - cpu_small, 1e-9))}


def split(item: str) -> tuple[str, int]:
    game, _, p = item.partition(":")
    return game, int(p or 4)


def label(item: str, t: int, repo: str, a) -> str:
    """A measurement's key: game, threads, and the checkout when there are several."""
    return f"{item}@{t}" + (f"@{Path(repo).name}" if len(a.repos) > 1 else "")


def keys(a) -> list[tuple[str, int, str]]:
    return [(item, t, repo) for item in a.games for t in a.threads for repo in a.repos]


def trials(a) -> list[dict]:
    """Every trial: the anchor, then each game at each thread count, in turn."""
    for item in a.games:            # warm the Numba cache: the trials time no compile
        for repo in a.repos:
            simcli_wall(*split(item), 1000, a.threads[0], a, repo)
    rows = []
    for k in range(a.trials):
        rec = {"trial": k + 1, "load1": round(os.getloadavg()[0], 2)}
        if not a.no_anchor:
            anchor = anchor_rates(a)
            rec["anchor"], rec["anchor_cpu"] = anchor["rate"], anchor["cpu_rate"]
        for item, t, repo in keys(a):
            rec[label(item, t, repo, a)] = marginal_rate(*split(item), t, a, repo)
        print(json.dumps(rec), flush=True)
        rows.append(rec)
    return rows


def summary(a, rows: list[dict]) -> list[dict]:
    anchor = statistics.median(r["anchor"] for r in rows) if not a.no_anchor else None
    out, first = [], {}
    for item, t, repo in keys(a):
        key = label(item, t, repo, a)
        rates = [r[key]["rate"] for r in rows]
        med = statistics.median(rates)
        base = first.setdefault((item, repo), med)
        line = {"game": item, "threads": t, "repo": repo, "rate": round(med), "trials": rates,
                "cpu_rate": round(statistics.median(r[key]["cpu_rate"] for r in rows)),
                "vs_first_threads": round(med / base, 3)}
        if anchor:
            line["anchor"] = round(anchor)
            line["ratio"] = round(med / anchor, 3)
            line["ratio_per_trial_median"] = round(statistics.median(
                r[key]["rate"] / r["anchor"] for r in rows), 3)
            line["anchor_cpu"] = round(statistics.median(r["anchor_cpu"] for r in rows))
            line["cpu_ratio"] = round(line["cpu_rate"] / line["anchor_cpu"], 3)
        out.append(line)
    return out


def print_table(a, lines: list[dict]) -> None:
    head = "| game |" + (" checkout |" if len(a.repos) > 1 else "") + " threads | simcli games/s (median) | trials |"
    head += " anchor | ratio | simcli / anchor per CPU-second |" if not a.no_anchor else ""
    head += f" vs {a.threads[0]} thread(s) |" if len(a.threads) > 1 else ""
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for x in lines:
        cells = [x["game"]] + ([Path(x["repo"]).name] if len(a.repos) > 1 else [])
        cells += [str(x["threads"]), f"{x['rate']:,}", " / ".join(f"{v:,}" for v in x["trials"])]
        if not a.no_anchor:
            cells += [f"{x['anchor']:,}", f"{x['ratio']:.2f}",
                      f"{x['cpu_rate']:,} / {x['anchor_cpu']:,} = {x['cpu_ratio']:.2f}"]
        if len(a.threads) > 1:
            cells.append(f"{x['vs_first_threads']:.2f}x")
        print("| " + " | ".join(cells) + " |")


def main(argv=None) -> None:
    a = parse_args(argv)
    load0 = os.getloadavg()
    rows = trials(a)
    lines = summary(a, rows)
    print_table(a, lines)
    print(json.dumps({"load_before": [round(x, 2) for x in load0],
                      "load_after": [round(x, 2) for x in os.getloadavg()],
                      "big": a.big, "small": a.small, "trials": rows, "summary": lines}))


if __name__ == "__main__":
    main()
