"""``simcli train``: search a game's ``tuned`` knobs (its ``KNOBS``) by racing on common deals.

A (1+lambda) evolution strategy with two racing stages per generation, game-agnostic: it needs
only the game module's ``KNOBS``, ``POLICIES["tuned"]``, ``RESTRICTIONS`` and ``play_games``.

* Each generation mutates the incumbent (the current best knobs) into ``candidates`` distinct
  children (1-3 knobs moved: a step of up to a quarter of the knob's range, or a fresh uniform
  value with probability 1/4; numpy's PCG64 from ``--seed``).
* Stage A: every child plays ``games`` deals against each opponent of the pool (``heuristic``,
  ``incumbent``, any policy text such as ``heuristic+bid-zero``), once per seat rotation (the
  child in seat r, the opponent in every other player seat): its win share. ``self`` in the
  pool is the child's own table (every seat on the child, no rotation needed): its share per
  seat is (1 - the table's timeout rate) / P, so a knob set whose tables time out loses fitness
  although no single seat of it is beaten. The ``finalists`` best mean shares go on.
* Stage B, on fresh deals (``final_games``): each finalist and the incumbent again against the
  pool, plus the exploit test of every restriction R in ``exploits``: the share of ``knobs+R``
  in one seat against ``knobs`` in the others (seat-rotated) minus the share of ``knobs`` in
  the same games (the ``ablate`` design). Fitness = mean pool share - ``exploit_weight`` x the
  sum of the positive gains (``exploit_penalty = "sum"``) or the largest positive gain
  (``"max"``: what ``ablate``'s "no restriction gains more than +0.01" bounds; with the sum, two
  restrictions that gain on opposite sides, such as forecasts-cubes' hot-only and cold-only,
  are cheapest to answer by always doing what one of them forces, a convention, not play). The
  best finalist replaces the incumbent when its fitness is higher on these common deals.
  ``incumbent`` in the pool makes the fitness relative to the current best: where strategies
  beat each other in a circle (forecasts-cubes' forecast rules) the search then cycles, so the
  committed forecasts-cubes files use a fixed pool (heuristic, self).

Win units (``win_units``): a sole win is SHARE_UNIT, a shared victory among k seats SHARE_UNIT // k
to each (RULINGS: 1/k of a win), and a timeout (no winner) 0 to every seat: a loss for all.

Every game of a stage uses the same deals for every contender (common random numbers: game
indices ``generation * GEN_STRIDE + stage offset``, master seed ``--seed``), so the search is a
pure function of its settings: the same settings give the same knobs on any machine, thread
count or chunking (kernel results are; numpy's generator is fixed). Shares are exact integer
win units (layout.SHARE_UNIT) until the final division.
"""
from __future__ import annotations

import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from kernels import layout
from kernels.spec import SEAT_FORBID, SEAT_KNOBS, SEAT_WIDTH
from simcli.config import jobs as cfg
from simcli.config import tuned
from simcli.errors import SimError

GEN_STRIDE = 1_000_000      # game indices per generation (stage A from 0, stage B from STAGE_B)
STAGE_B = 500_000


@dataclass
class Settings:
    game: str
    players: int
    variant: str | None = None
    seed: int = 1
    generations: int = 24
    candidates: int = 10
    games: int = 300
    finalists: int = 3
    final_games: int = 600
    pool: list = field(default_factory=lambda: ["heuristic", "incumbent", "self"])
    exploits: list | None = None        # restriction names; None = all the game's
    exploit_weight: float = 2.0
    start: str = "heuristic"            # "heuristic" (the knobs' defaults) or a parameter file
    exploit_penalty: str = "sum"        # "sum" or "max" of the positive exploit gains
    horizon: int = 0                    # > 0: a game longer than this (the length column) is won by nobody
    no_win_weight: float = 0.0          # fitness -= this x the share of the candidate's own table's games nobody wins
    search: list | None = None          # knob names: only these are searched, every other held at its start value

    def command(self, out: str) -> str:
        """The command line that makes the same file."""
        v = f" --variant {self.variant}" if self.variant else ""
        return (f"simcli train {self.game} --players {self.players}{v} --seed {self.seed} "
                f"--generations {self.generations} --candidates {self.candidates} --games {self.games} "
                f"--finalists {self.finalists} --final-games {self.final_games} "
                f"--pool {','.join(self.pool)} --exploits {','.join(self.exploits or []) or 'none'} "
                f"--exploit-weight {self.exploit_weight:g}"
                + (f" --exploit-penalty {self.exploit_penalty}" if self.exploit_penalty != "sum" else "")
                + (f" --horizon {self.horizon}" if self.horizon else "")
                + (f" --no-win-weight {self.no_win_weight:g}" if self.no_win_weight else "")
                + f" --start {self.start}"
                + (f" --search {','.join(self.search)}" if self.search else "")
                + f" --out {out}")


def win_units(winners: np.ndarray, S: int, length: np.ndarray | None = None, horizon: int = 0) -> np.ndarray:
    """Win units of every seat summed over games, from the WINNERS column (a bit mask of the
    winning seats per game): SHARE_UNIT for a sole win, SHARE_UNIT // k to each of k seats sharing
    a victory, and nothing to anyone in a game with no winner (a timeout counts as a loss for
    every seat). With a ``horizon`` > 0, a game whose LENGTH is above it also gives nobody anything
    (a win that takes longer is worth no more than a timeout, as in the search's capped rollouts)."""
    w = np.asarray(winners, dtype=np.int64)
    if horizon > 0:
        w = np.where(np.asarray(length) > horizon, 0, w)
    bits = (w[:, None] >> np.arange(S)) & 1
    k = bits.sum(axis=1)
    unit = np.where(k > 0, layout.SHARE_UNIT // np.maximum(k, 1), 0)
    return (bits * unit[:, None]).sum(axis=0)


class Arena:
    """One game, variant and player count: seat rows and exact win units of seat-rotated games."""

    def __init__(self, game: str, variant: str | None, players: int, horizon: int = 0):
        self.horizon = int(horizon)
        self.job = cfg.resolve(game, variant, players, policy="heuristic")
        self.mod = self.job.module
        self.knobs = tuned.knobs_of(self.mod)
        if not self.knobs or "tuned" not in self.mod.POLICIES:
            raise SimError(f"{game} has no tuned policy to train (it declares no knobs)")
        self.P = players
        self.S = self.job.seats.shape[0]
        self.fixed = self.job.seats[self.P:].copy()
        self.valid = cfg.user_policies(self.mod, players, self.job.params)
        self.restrictions = {r.name: r for r in getattr(self.mod, "RESTRICTIONS", ())}
        self._out = np.zeros((0, layout.out_width(self.S, len(self.mod.COUNTERS))), dtype=np.int64)

    def row(self, values: dict, restriction: str | None = None) -> np.ndarray:
        """A tuned seat row with these knob values (and one restriction obeyed)."""
        r = np.zeros(SEAT_WIDTH, dtype=np.int64)
        r[0] = self.mod.POLICIES["tuned"]
        tuned.fill(r, tuned.row_of(self.mod, values))
        if restriction is not None:
            r[SEAT_FORBID] |= 1 << self.restrictions[restriction].bit
        return r

    def policy_row(self, text: str) -> np.ndarray:
        """An opponent's seat row from policy text (e.g. ``heuristic+bid-zero``, ``tuned@FILE``)."""
        knobs = cfg.knob_source(self.mod, self.job.variant, self.P)
        row = cfg.parse_policy(text, self.valid, getattr(self.mod, "POLICY_ARGS", {}),
                               tuple(self.restrictions.values()), knobs)[1]
        return cfg.checked_seat(self.mod, text, row)

    def units(self, seats: np.ndarray, seed: int, first: int, n: int) -> np.ndarray:
        """Win units (SHARE_UNIT per win, split by shared victories) of every seat over games
        ``first .. first + n - 1``."""
        if self._out.shape[0] < n:
            self._out = np.zeros((n, self._out.shape[1]), dtype=np.int64)
        out = self._out[:n]
        self.mod.play_games(self.job.params, np.ascontiguousarray(seats), seed, first, out)
        return win_units(out[:, layout.col_winners(self.S)], self.S, out[:, layout.col_length(self.S)],
                         self.horizon)

    def seats(self, mine: np.ndarray, other: np.ndarray, r: int) -> np.ndarray:
        rows = [other] * self.P
        rows[r] = mine
        return np.vstack([np.stack(rows), self.fixed]) if len(self.fixed) else np.stack(rows)

    def rotated(self, mine: np.ndarray, other: np.ndarray, seed: int, first: int, n: int) -> int:
        """Units of ``mine`` in one seat against ``other`` in the rest, summed over rotations."""
        return int(sum(self.units(self.seats(mine, other, r), seed, first, n)[r] for r in range(self.P)))

    def table(self, mine: np.ndarray, seed: int, first: int, n: int) -> int:
        """Units of ``mine`` on every player seat, summed over the seats (a symmetric table:
        (1 - timeout rate) x SHARE_UNIT x n)."""
        return int(self.units(self.seats(mine, mine, 0), seed, first, n)[:self.P].sum())

    def share(self, units: int, n: int) -> float:
        return units / (layout.SHARE_UNIT * n * self.P)


class Trainer:
    def __init__(self, s: Settings, progress: bool = False):
        self.s = s
        if s.horizon < 0:
            raise SimError(f"--horizon must be 0 (off) or a game length, not {s.horizon}")
        if s.no_win_weight < 0:
            raise SimError(f"--no-win-weight must be 0 or more, not {s.no_win_weight:g}")
        self.arena = Arena(s.game, s.variant, s.players, s.horizon)
        names = list(self.arena.restrictions)
        self.exploits = names if s.exploits is None else list(s.exploits)
        for x in self.exploits:
            if x not in self.arena.restrictions:
                raise SimError(f"--exploits: unknown restriction {x!r} for {s.game}; valid restrictions: "
                               f"{', '.join(names) or '(none)'}")
        s.exploits = self.exploits
        if s.exploit_penalty not in ("sum", "max"):
            raise SimError(f"--exploit-penalty must be sum or max, not {s.exploit_penalty!r}")
        self.pool_rows = {p: (None if p in ("incumbent", "self") else self.arena.policy_row(p))
                          for p in s.pool}
        self.rng = np.random.default_rng(s.seed)
        self.searched = self.arena.knobs
        self.incumbent = self._start()
        self.start_values = dict(self.incumbent)
        if s.search:
            self.searched = self._search_subset(s.search)
        self.fitness = float("nan")
        self.progress = progress
        self.history: list = []

    def _start(self) -> dict:
        if self.s.start == "heuristic":
            return tuned.defaults(self.arena.mod)
        path = Path(self.s.start)
        if not path.is_absolute() and not path.exists():    # recorded relative to the project root
            path = Path(__file__).resolve().parents[2] / path
        values = tuned.load_file(self.arena.mod, path, self.s.players)
        # only the knobs the start file lists are searched: an optional knob it leaves out (added
        # after the file was made) stays at its default, so its recorded command still reproduces it
        self.searched = tuned.listed_knobs(self.arena.mod, path)
        return values

    def _search_subset(self, names: list) -> tuple:
        """``--search``: only these knobs move (in the game's order), whatever the start file lists;
        every other knob keeps its start value (to retune a few knobs after a rule change)."""
        valid = [k.name for k in self.arena.knobs]
        for n in names:
            if n not in valid:
                raise SimError(f"--search: unknown knob {n!r} for {self.s.game}; valid knobs: {', '.join(valid)}")
        return tuple(k for k in self.arena.knobs if k.name in names)

    def mutate(self, base: dict) -> dict:
        knobs = self.searched
        child = dict(base)
        for i in self.rng.choice(len(knobs), size=min(len(knobs), int(self.rng.integers(1, 4))), replace=False):
            k = knobs[int(i)]
            if self.rng.random() < 0.25:
                v = int(self.rng.integers(k.lo, k.hi + 1))
            else:
                step = int(self.rng.integers(1, max(1, (k.hi - k.lo) // 4) + 1))
                v = child[k.name] + (step if self.rng.random() < 0.5 else -step)
            child[k.name] = min(k.hi, max(k.lo, v))
        return child

    def children(self) -> list[dict]:
        seen = {tuple(self.incumbent.values())}
        out = []
        for _ in range(50 * self.s.candidates):
            c = self.mutate(self.incumbent)
            if tuple(c.values()) not in seen:
                seen.add(tuple(c.values()))
                out.append(c)
            if len(out) == self.s.candidates:
                break
        return out

    def pool_share(self, values: dict, first: int, n: int) -> float:
        """Mean win share of these knobs against each pool opponent (seat-rotated; ``self``: the
        knobs' own table, whose timeouts are losses for every seat)."""
        a = self.arena
        mine = a.row(values)
        inc = a.row(self.incumbent)
        shares = [a.share(a.table(mine, self.s.seed, first, n), n) if name == "self" else
                  a.share(a.rotated(mine, inc if row is None else row, self.s.seed, first, n), n)
                  for name, row in self.pool_rows.items()]
        return float(np.mean(shares))

    def gains(self, values: dict, first: int, n: int, base: int) -> dict:
        """Each exploit's gain: share of knobs+R against knobs, minus knobs' own share (paired;
        ``base``: the knobs' own table's units on these games, ``Arena.table``)."""
        a = self.arena
        mine = a.row(values)
        return {x: a.share(a.rotated(a.row(values, x), mine, self.s.seed, first, n) - base, n)
                for x in self.exploits}

    def no_win_rate(self, base: int, n: int) -> float:
        """Share of the knobs' own table's games that nobody wins (within the horizon), from the
        table's units: every won game gives SHARE_UNIT in all, one without a winner nothing."""
        return 1.0 - base / (layout.SHARE_UNIT * n)

    def fitness_of(self, values: dict, first: int) -> tuple[float, float, dict]:
        n = self.s.final_games
        share = self.pool_share(values, first, n)
        base = self.arena.table(self.arena.row(values), self.s.seed, first, n)
        g = self.gains(values, first, n, base)
        pos = [max(0.0, v) for v in g.values()]
        pen = (max(pos, default=0.0) if self.s.exploit_penalty == "max" else sum(pos))
        return (share - self.s.exploit_weight * pen - self.s.no_win_weight * self.no_win_rate(base, n),
                share, g)

    def generation(self, gen: int) -> None:
        first = gen * GEN_STRIDE
        kids = self.children()
        scored = sorted(((self.pool_share(c, first, self.s.games), i) for i, c in enumerate(kids)),
                        key=lambda t: (-t[0], t[1]))
        finalists = [kids[i] for _, i in scored[:self.s.finalists]]
        fb = first + STAGE_B
        best = self.fitness_of(self.incumbent, fb)
        best_vals = self.incumbent
        for c in finalists:
            f = self.fitness_of(c, fb)
            if f[0] > best[0]:
                best, best_vals = f, c
        self.incumbent = best_vals
        self.fitness = best[0]
        self.history.append({"generation": gen, "fitness": best[0], "pool_share": best[1],
                             "gains": best[2], "knobs": dict(best_vals)})

    def snapshot(self) -> dict:
        """Everything the next generation depends on (what the journal keeps)."""
        return {"rng": self.rng.bit_generator.state, "incumbent": dict(self.incumbent),
                "fitness": self.fitness, "history": list(self.history)}

    def restore(self, snap: dict) -> None:
        self.rng.bit_generator.state = snap["rng"]
        self.incumbent, self.fitness = dict(snap["incumbent"]), snap["fitness"]
        self.history = list(snap["history"])

    def run(self, journal=None) -> dict:
        """Every generation; with a ``journal`` the finished ones are restored from it (each
        generation is a pure function of the state the one before left)."""
        from tqdm import tqdm
        bar = tqdm(total=self.s.generations, desc=f"train {self.s.game} {self.s.players}p",
                   disable=not self.progress, file=sys.stderr, unit="gen")
        for gen in range(self.s.generations):
            if journal is None:
                self.generation(gen)
            else:
                self.restore(journal.call("train-generation", (gen,),
                                          lambda: (self.generation(gen), self.snapshot())[1]))
            bar.set_postfix(fitness=f"{self.fitness:.4f}")
            bar.update(1)
        bar.close()
        return self.incumbent


def provenance(s: Settings, arena: Arena, fitness: float, out: str) -> dict:
    import simcli
    d = asdict(s)
    return {"seed": s.seed, "game": s.game, "variant": arena.job.variant, "players": s.players,
            "game_version": int(arena.mod.VERSION), "simcli_version": simcli.__version__,
            "date": time.strftime("%Y-%m-%d"), "command": s.command(out),
            "generations": s.generations, "candidates": s.candidates, "games": s.games,
            "finalists": s.finalists, "final_games": s.final_games, "pool": list(d["pool"]),
            "restrictions": list(s.exploits if s.exploits is not None else arena.restrictions),
            "exploit_weight": float(s.exploit_weight), "fitness": round(float(fitness), 6),
            "start": s.start, **({"exploit_penalty": s.exploit_penalty} if s.exploit_penalty != "sum" else {}),
            **({"horizon": s.horizon} if s.horizon else {}),
            **({"no_win_weight": float(s.no_win_weight)} if s.no_win_weight else {}),
            **({"search": list(s.search)} if s.search else {})}


def settings_from_file(path: Path) -> Settings:
    """The Settings a parameter file's [provenance] records (to reproduce it)."""
    from simcli.config import schema
    p = schema.load(path, "tuned").get("provenance")
    if not p:
        raise SimError(f"tuned parameter file {path} has no [provenance] to reproduce it from")
    return Settings(game=p["game"], players=p["players"], variant=p.get("variant"), seed=p["seed"],
                    generations=p["generations"], candidates=p["candidates"], games=p["games"],
                    finalists=p["finalists"], final_games=p["final_games"], pool=list(p["pool"]),
                    exploits=list(p["restrictions"]), exploit_weight=p["exploit_weight"],
                    start=p.get("start", "heuristic"), exploit_penalty=p.get("exploit_penalty", "sum"),
                    horizon=p.get("horizon", 0), no_win_weight=p.get("no_win_weight", 0.0),
                    search=list(p["search"]) if p.get("search") else None)


def train(s: Settings, progress: bool = False) -> tuple[dict, Trainer]:
    t = Trainer(s, progress)
    return t.run(), t


def _split(text: str | None) -> list[str] | None:
    if text is None:
        return None
    items = [t.strip() for t in text.split(",") if t.strip()]
    return [] if items == ["none"] else items


def default_out(game: str, variant: str | None, players: int) -> Path:
    return tuned.tuned_dir() / (f"{game}-{variant}-{players}p.toml" if variant else f"{game}-{players}p.toml")


def summary_lines(t: Trainer) -> list[str]:
    """What changed from the heuristic, and the last generation's figures."""
    lines = []
    for k in t.arena.knobs:
        v = t.incumbent[k.name]
        if v != k.default:
            lines.append(f"  {k.name} = {v}  (heuristic {k.default})")
    if not lines:
        lines.append("  (every knob at the heuristic's value)")
    if t.s.search:      # what the search moved, from the start values it held the rest at
        moved = [f"{k.name} {t.start_values[k.name]} -> {t.incumbent[k.name]}" for k in t.searched
                 if t.incumbent[k.name] != t.start_values[k.name]]
        lines.append("  searched " + ", ".join(k.name for k in t.searched) + ": "
                     + (", ".join(moved) if moved else "none moved from the start"))
    last = t.history[-1] if t.history else None
    if last:
        gains = ", ".join(f"{x} {g:+.4f}" for x, g in last["gains"].items()) or "none tested"
        lines.append(f"  last generation: fitness {last['fitness']:.4f}, mean pool share "
                     f"{last['pool_share']:.4f}; exploit gains: {gains}")
    return lines


def train_journal(s: "Settings", output, target: str, resume: bool, force: bool):
    """The journal of finished generations beside the parameter file (``simcli.engine.journal``)."""
    from simcli.engine.journal import Journal, code_version, digest
    fp = {"code": code_version(), "analysis": "train", "settings": digest(asdict(s))}
    journal = Journal(output.target, fp, resume=resume, force=force, shown=target,
                      unit="generations").open()
    line = journal.resuming_line()
    if line:
        print(line, file=sys.stderr, flush=True)
    return journal


def train_command(s: "Settings", *, out: str | None, force: bool, threads: int | None, progress: bool,
                  echo, resume: bool = False) -> Path:
    """`simcli train`: check everything, race, and write the parameter file (output contract)."""
    import sys
    import time
    from simcli.config import jobs as cfg
    from simcli.config import tuned
    from simcli.engine import runner
    from simcli.engine.compile import ensure_compiled
    from simcli.engine.journal import kept_on_failure
    from simcli.report.output import OutputFile
    if not s.pool:
        raise SimError("--pool is empty; give opponents such as heuristic,incumbent")
    job = cfg.resolve(s.game, s.variant, s.players or None, policy="heuristic")
    s.players = job.players
    target = out or str(default_out(s.game, s.variant, job.players))
    output = OutputFile(target, force=force).validate()
    trainer = Trainer(s, progress=progress)
    journal = train_journal(s, output, target, resume, force)
    ensure_compiled([job], lambda line: print(line, file=sys.stderr, flush=True))
    runner.set_threads(threads)
    t0 = time.time()
    with kept_on_failure(journal):
        trainer.run(journal)
        shown = target if out else f"configs/{tuned.TUNED_DIR}/{Path(target).name}"   # the default, as typed
        prov = provenance(s, trainer.arena, trainer.fitness, shown)
        output.write_text(tuned.render(s.game, job.players, job.variant, trainer.incumbent,
                                       trainer.arena.knobs, prov))
    journal.close(keep=False)
    wall = time.time() - t0
    echo(f"trained {s.game} {job.players}p ({job.variant}) in {wall:.1f} s:")
    for line in summary_lines(trainer):
        echo(line)
    echo(f"wrote {target}")
    return Path(target)
