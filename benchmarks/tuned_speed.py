"""tuned vs heuristic games/s (issue #24 target: tuned >= half the heuristic's), one thread,
interleaved A/B in one process, median of 5 measurements of ~0.4 s each. Run from the repo root:
``python3 benchmarks/tuned_speed.py``."""
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from simcli.analyses import bench  # noqa: E402
from simcli.config import jobs as cfg  # noqa: E402

for game, P in (("forecasts-bid", 4), ("forecasts-bid", 3), ("forecasts-bid", 2), ("forecasts-cubes", 4),
                ("forecasts-cubes", 3), ("pgc", 2)):
    jobs = {pol: cfg.resolve(game, None, P, policy=pol) for pol in ("heuristic", "tuned")}
    rates = {pol: [] for pol in jobs}
    for rep in range(5):                      # interleaved A/B, one thread
        for pol, job in jobs.items():
            g, _ = bench.measure(job, 1, 0.4, 1, seed=rep + 1)
            rates[pol].append(g)
    h, t = statistics.median(rates["heuristic"]), statistics.median(rates["tuned"])
    print(f"{game} {P}p: heuristic {h:,.0f} games/s, tuned {t:,.0f} games/s, ratio {t / h:.2f}", flush=True)
