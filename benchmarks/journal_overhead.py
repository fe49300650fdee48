"""What the resume journal (issue #27) costs: the same run with and without it, interleaved.

    python benchmarks/journal_overhead.py [--game forecasts-cubes] [--games 1000000] [--trials 5]
        [--chunk 65536] [--threads 1]

Each trial runs `simcli run GAME --out TMP` in this process twice, once as shipped (journal on)
and once with the journal switched off, in alternating order; it prints both medians of wall
and CPU time, the overhead, and the journal's size. Compile time is excluded (a warm-up run
first). Target: under 2% (benchmarks/RESULTS.md).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def one(args, journal_on: bool, tmp: Path, k: int) -> tuple[float, float, dict]:
    from simcli.engine import runspec
    from simcli.analyses.run import resolve_run
    from simcli.report.output import OutputFolder
    jobs, counts, seed, extra, analysis = resolve_run(args.game, games=args.games, policy=args.policy)
    spec = runspec.RunSpec(jobs=jobs, games=counts, seed=seed, threads=args.threads, chunk=args.chunk,
                           output=OutputFolder(tmp / f"run-{k}-{int(journal_on)}"), extra_meta=extra,
                           echo=lambda *_: None)
    real = runspec.open_journal
    if not journal_on:
        runspec.open_journal = lambda spec, analysis: None
    try:
        w0, c0 = time.perf_counter(), time.process_time()
        runspec.execute(spec, analysis)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    finally:
        runspec.open_journal = real
    import json
    meta = json.loads((tmp / f"run-{k}-{int(journal_on)}" / "meta.json").read_text())
    return wall, cpu, meta.get("journal", {})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--game", default="forecasts-cubes")
    ap.add_argument("--policy", default="heuristic")
    ap.add_argument("--games", type=int, default=1_000_000)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--chunk", type=int, default=1 << 16)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        one(args, True, tmp, -1)  # warm-up: compile, caches
        res = {True: [], False: []}
        info = {}
        for k in range(args.trials):
            for on in ((True, False) if k % 2 == 0 else (False, True)):
                wall, cpu, j = one(args, on, tmp, k)
                res[on].append((wall, cpu))
                info = j or info
                print(f"trial {k} journal {'on ' if on else 'off'}: wall {wall:.3f} s, cpu {cpu:.3f} s",
                      flush=True)
    med = {on: (statistics.median(w for w, _ in r), statistics.median(c for _, c in r)) for on, r in res.items()}
    print(f"\n{args.game} {args.policy} x{args.games:,} games, chunk {args.chunk}, {args.threads} thread(s), "
          f"{args.trials} interleaved trials (medians)")
    print(f"  journal on : wall {med[True][0]:.3f} s  cpu {med[True][1]:.3f} s")
    print(f"  journal off: wall {med[False][0]:.3f} s  cpu {med[False][1]:.3f} s")
    print(f"  overhead   : wall {100 * (med[True][0] / med[False][0] - 1):+.2f}%  "
          f"cpu {100 * (med[True][1] / med[False][1] - 1):+.2f}%")
    print(f"  journal: {info.get('records', '?')} records, {info.get('bytes', '?')} bytes "
          f"for {info.get('tasks', '?')} chunks")


if __name__ == "__main__":
    main()
