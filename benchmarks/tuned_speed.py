"""tuned vs heuristic games/s (issue #24 target: tuned >= half the heuristic's), every competitive
game at every player count, interleaved A/B in one process, median of 5 measurements of ~0.4 s
each, at one thread and (``--threads 2``) at two. Run from the repo root:
``python3 benchmarks/tuned_speed.py [--threads N]``."""
import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from simcli.analyses import bench  # noqa: E402
from simcli.config import jobs as cfg  # noqa: E402

CASES = (("forecasts-bid", 4), ("forecasts-bid", 3), ("forecasts-bid", 2), ("forecasts-cubes", 4),
         ("forecasts-cubes", 3), ("pgc", 2), ("pgc", 3), ("pgc", 4), ("pgc", 5), ("pgc", 6),
         ("sudden-skies", 2), ("sudden-skies", 3), ("sudden-skies", 4))

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--threads", type=int, default=1)
args = ap.parse_args()
for game, P in CASES:
    jobs = {pol: cfg.resolve(game, None, P, policy=pol) for pol in ("heuristic", "tuned")}
    rates = {pol: [] for pol in jobs}
    for rep in range(5):                      # interleaved A/B
        for pol, job in jobs.items():
            g, _ = bench.measure(job, args.threads, 0.4, 1, seed=rep + 1)
            rates[pol].append(g)
    h, t = statistics.median(rates["heuristic"]), statistics.median(rates["tuned"])
    print(f"{game} {P}p, {args.threads} thread(s): heuristic {h:,.0f} games/s, tuned {t:,.0f} games/s, "
          f"ratio {t / h:.2f}", flush=True)
