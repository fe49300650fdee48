"""Config resolution in one place: configs/*.toml + CLI flags -> validated Jobs.

A Job is one (game, variant, player count, seat policies, rule values) to simulate. Every
error is a SimError whose one-line message names the problem and the valid choices.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import kernels
from kernels.spec import MAX_KNOBS, SEAT_FORBID, SEAT_KNOBS, SEAT_WIDTH
from simcli.errors import SimError


def configs_dir() -> Path:
    package = Path(__file__).resolve().parents[1]     # simcli/
    for cand in (package.parent / "configs", package / "_configs"):
        if cand.is_dir():
            return cand
    raise SimError("configs folder not found next to the simcli package (reinstall simcli)")


def load_toml(path: Path) -> dict:
    """A game's config file, through the one bounded TOML reader (``schema.read_toml``)."""
    from simcli.config import schema
    return schema.read_toml(path, "config file")


def known_games() -> list[str]:
    """Games with both a kernel module and a configs/<game>.toml."""
    d = configs_dir()
    return [g for g in kernels.available() if (d / f"{g}.toml").is_file()]


def game_module(game: str):
    games = known_games()
    if game not in games:
        raise SimError(f"unknown game {game!r}; valid games: {', '.join(games)}")
    return kernels.load(game)


def variants_of(game: str) -> tuple[str, dict]:
    """(default variant, {variant: {players, rules, description}}) from configs/<game>.toml."""
    data = load_toml(configs_dir() / f"{game}.toml")
    variants = data.get("variants", {})
    if not variants:
        raise SimError(f"configs/{game}.toml declares no variants")
    return data.get("default_variant", next(iter(variants))), variants


def designed_play(game: str) -> str:
    """The policy a game is designed to be played with (``designed_play`` in configs/<game>.toml):
    what `run`, `sweep` and `tune` give every seat unless told otherwise. A game whose config does
    not say plays its policy with code 1 (the heuristic), else random."""
    mod = game_module(game)          # an unknown game: one line naming the valid ones
    named = load_toml(configs_dir() / f"{game}.toml").get("designed_play")
    if isinstance(named, str) and named.split(":")[0].split("+")[0] in mod.POLICIES:
        return named
    if named is not None:
        raise SimError(f"configs/{game}.toml: designed_play {named!r} is not a policy of {game}; "
                       f"valid policies: {', '.join(mod.POLICIES)}")
    return next((k for k, v in mod.POLICIES.items() if v == 1), "random")


def user_policies(mod, players: int, params) -> dict[str, int]:
    """Policies a player seat may take: all but automata reserved for fixed seats."""
    fixed = set(getattr(mod, "FIXED_POLICIES", ())) | set(mod.extra_seats(players, params))
    return {k: v for k, v in mod.POLICIES.items() if k not in fixed}


@dataclass
class Job:
    game: str
    variant: str
    players: int
    rules: dict            # every rule in force: name -> value as the user writes it
    params: np.ndarray     # int64, the kernel's view of ``rules``
    policies: list[str]    # one per seat row (players, then fixed seats such as the Rival)
    seats: np.ndarray      # int64 (S, SEAT_WIDTH)
    labels: dict = field(default_factory=dict)  # extra key columns (sweep axes, dates)
    notes: tuple = ()      # lines for meta.json and the HTML report (the game's REPORT_NOTES, card data)

    @property
    def module(self):
        return kernels.load(self.game)

    @property
    def row(self):
        """The result row's columns for this job (``kernels.layout.RowLayout``)."""
        from kernels.layout import RowLayout
        return RowLayout.of(self.seats, self.module.COUNTERS)

    @property
    def policy_label(self) -> str:
        return ",".join(self.policies)

    def describe(self) -> str:
        return f"{self.game}/{self.variant}/{self.players}p [{self.policy_label}]"


def parse_policy(spec: str, valid: dict[str, int], arg_specs: dict | None = None,
                 restrictions: tuple = (), knobs=None) -> tuple[str, np.ndarray]:
    """``name[:arg:arg][+restriction...]`` -> (canonical text with every argument, seats row).

    ``arg_specs`` (a module's ``POLICY_ARGS``) gives, per parameterised policy, its arguments as
    ``(name, default, lo, hi)`` for numbers (optionally a fifth item, the text naming what each
    value means, quoted when a value is refused) or ``(name, default_policy_name, None, None)``
    for a policy argument (stored as that policy's code). Missing arguments take their defaults.
    ``restrictions`` (a module's ``RESTRICTIONS``) are the names allowed after ``+``: their bits
    go to the row's forbid mask, and the label lists them in declaration order.
    ``tuned@FILE`` names a knob file for a ``tuned`` seat, ``mc:16:tuned@FILE`` one for a search's
    tuned rollouts (so a train pool that names such a search does not change when the committed
    file does); ``knobs(FILE or None)`` (simcli/config/tuned.py,
    bound to the job's game, variant and player count) gives the knob columns of a row whose
    policy, or whose policy-valued argument (an mc rollout), is ``tuned``. Without ``knobs`` they
    stay zero (the caller fills them, e.g. ablate from the base row).
    """
    text, knob_path = _split_knob_file(spec)
    base, _, tail = text.lower().partition("+")
    base = base.strip()
    rnames = _restriction_names(tail, [r.name for r in restrictions]) if tail else []
    parts = [p.strip() for p in base.split(":")]
    name = parts[0]
    if name not in valid:
        raise SimError(f"unknown policy {spec.strip()!r}; valid policies: {', '.join(valid)}")
    row = np.zeros(SEAT_WIDTH, dtype=np.int64)
    row[0] = valid[name]
    args = parts[1:]
    specs = (arg_specs or {}).get(name, ())
    if len(args) > len(specs):
        allowed = ":".join(a[0].upper() for a in specs)
        raise SimError(f"policy {spec.strip()!r} takes at most {len(specs)} argument(s)"
                       + (f" ({name}:{allowed})" if specs else ""))
    words = [name]
    for i, arg_spec in enumerate(specs):
        aname, default, lo, hi = arg_spec[:4]
        means = f" ({arg_spec[4]})" if len(arg_spec) > 4 else ""
        a = args[i] if i < len(args) and args[i] != "" else str(default)
        if lo is None:  # a policy-valued argument
            inner = {k: v for k, v in valid.items() if k not in (arg_specs or {})}
            if a not in inner:
                raise SimError(f"policy {spec.strip()!r}: {aname} {a!r} is not one of {', '.join(inner)}")
            row[1 + i] = valid[a]
        else:
            try:
                v = int(a)
            except ValueError:
                raise SimError(f"policy {spec.strip()!r}: {aname} {a!r} is not a whole number in {lo}..{hi}{means}") from None
            if not lo <= v <= hi:
                raise SimError(f"policy {spec.strip()!r}: {aname} {v} is outside {lo}..{hi}{means}")
            row[1 + i] = v
        words.append(a)
    # an argument whose default is 0 means "as the rules say": left out of the label when unset
    while len(words) > 1 and specs[len(words) - 2][1] == 0 and words[-1] == "0":
        words.pop()
    by_name = {r.name: r for r in restrictions}
    for r in rnames:
        if r not in by_name:
            raise SimError(f"policy {spec.strip()!r}: unknown restriction {r!r}; valid restrictions: "
                           f"{', '.join(by_name) or '(none for this game)'}")
        row[SEAT_FORBID] |= 1 << by_name[r].bit
    label = ":".join(words)
    tuned_code = valid.get("tuned")
    uses_knobs = tuned_code is not None and (row[0] == tuned_code or any(
        a[2] is None and row[1 + i] == tuned_code for i, a in enumerate(specs)))
    if knob_path is not None:
        if not uses_knobs:
            raise SimError(f"policy {spec.strip()!r}: only tuned, or a search whose rollouts are tuned "
                           f"(mc:16:tuned@FILE), takes a knob file")
        label += "@" + knob_path
    if uses_knobs and knobs is not None:
        row[SEAT_KNOBS:SEAT_KNOBS + MAX_KNOBS] = knobs(knob_path)
    for r in restrictions:  # declaration order, each once
        if (int(row[SEAT_FORBID]) >> r.bit) & 1:
            label += "+" + r.name
    return label, row


def _split_knob_file(spec: str) -> tuple[str, str | None]:
    """``tuned@FILE+r`` -> (``tuned+r``, FILE): the file name keeps its case; it runs to the
    next ``+`` (or the end)."""
    text = spec.strip()
    if "@" not in text:
        return text, None
    head, _, rest = text.partition("@")
    path, plus, tail = rest.partition("+")
    if not path.strip():
        raise SimError(f"policy {spec.strip()!r}: give a knob file after @ (tuned@FILE)")
    return head + plus + tail, path.strip()


def _restriction_names(text: str, known: list[str]) -> list[str]:
    """``a+b+c`` -> [a, b, c], where a name may itself end in ``+`` (pgc's ``no-sets-of-4+``):
    at each step the longest known name followed by ``+`` or the end is taken; an unknown word
    runs to the next ``+``."""
    names, i = [], 0
    text = text.strip()
    while i < len(text):
        match = next((k for k in sorted(known, key=len, reverse=True)
                      if text.startswith(k, i) and (i + len(k) == len(text) or text[i + len(k)] == "+")), None)
        if match is None:
            j = text.find("+", i)
            match = text[i:] if j < 0 else text[i:j]
        names.append(match.strip())
        i += len(match) + 1
    return names


def encode_rules(mod, overrides: dict) -> tuple[dict, np.ndarray]:
    by_name = {r.name: r for r in mod.RULES}
    params = np.zeros(len(mod.RULES), dtype=np.int64)
    values = {}
    for name in overrides:
        if name not in by_name:
            raise SimError(f"unknown rule {name!r} for {mod.GAME_ID}; valid rules: "
                           f"{', '.join(by_name) or '(none)'}")
    for r in mod.RULES:
        raw = overrides.get(r.name, r.default)
        try:
            params[r.index] = r.encode(raw)
        except ValueError as e:
            raise SimError(str(e)) from None
        values[r.name] = r.decode(int(params[r.index]))
    return values, params


def parse_rule_flags(flags: list[str] | None) -> dict:
    rules = {}
    for f in flags or []:
        if "=" not in f:
            raise SimError(f"--rule {f!r} is not NAME=VALUE")
        k, v = f.split("=", 1)
        if k.strip() in rules:
            raise SimError(f"--rule {k.strip()} is given twice ({rules[k.strip()]!r} and {v.strip()!r}); give it once")
        rules[k.strip()] = v.strip()
    return rules


def resolve(game: str, variant: str | None = None, players: int | None = None,
            policy: str | None = None, seats: str | None = None,
            rules: dict | None = None, labels: dict | None = None) -> Job:
    """One validated Job from the user's words."""
    mod = game_module(game)
    default_variant, variants = variants_of(game)
    if variant is None:
        variant = default_variant
        if players is not None and players not in variants[variant]["players"]:
            variant = next((v for v, d in variants.items() if players in d["players"]), variant)
    if variant not in variants:
        raise SimError(f"unknown variant {variant!r} for {game}; valid variants: {', '.join(variants)}")
    vdef = variants[variant]
    counts = list(vdef["players"])
    if players is None:
        players = counts[0]
    if players not in counts:
        raise SimError(f"{game} variant {variant} is not played by {players} players; "
                       f"valid player counts: {', '.join(map(str, counts))}")
    merged = dict(vdef.get("rules", {}))
    merged.update(rules or {})
    values, params = encode_rules(mod, merged)
    try:
        mod.check(players, params)
    except ValueError as e:
        raise SimError(str(e)) from None
    valid = user_policies(mod, players, params)
    if policy is not None and seats is not None:
        raise SimError("give either --policy or --seats, not both")
    if seats is not None:
        specs = [s for s in seats.split(",")]
        if len(specs) != players:
            raise SimError(f"--seats lists {len(specs)} policies but {game} {variant} has {players} "
                           f"seats to fill; valid policies: {', '.join(valid)}")
    else:
        specs = ["random" if policy is None else policy] * players
    names, rows = [], []
    arg_specs = getattr(mod, "POLICY_ARGS", {})
    knobs = knob_source(mod, variant, players)
    for spec in specs:
        name, row = parse_policy(spec, valid, arg_specs, getattr(mod, "RESTRICTIONS", ()), knobs)
        checked_seat(mod, spec, row)
        names.append(name)
        rows.append(row)
    for fixed in mod.extra_seats(players, params):
        row = np.zeros(SEAT_WIDTH, dtype=np.int64)
        row[0] = mod.POLICIES[fixed]
        names.append(fixed)
        rows.append(row)
    job = Job(game, variant, players, values, params, names, np.stack(rows), dict(labels or {}),
              tuple(getattr(mod, "REPORT_NOTES", ())))
    if game == "daily-weather":  # the kernel reads its card data from the tail of params
        from simcli.config import cards   # imports Numba: not before check_environment has run
        cards.attach(job)
    return job


def checked_seat(mod, spec: str, row: np.ndarray) -> np.ndarray:
    """``row`` after the game's own check of a seat's arguments (``check_seat(row)``, optional in a
    game module: e.g. forecasts-bid's sift schedules); every path from policy text to a seat row
    (``resolve``, ``--skill`` levels, ``train``'s opponents) goes through here."""
    if hasattr(mod, "check_seat"):
        try:
            mod.check_seat(row)
        except ValueError as e:
            raise SimError(f"policy {spec.strip()!r}: {e}") from None
    return row


def knob_source(mod, variant: str, players: int):
    """``knobs(FILE or None)`` for parse_policy: the knob columns of a tuned seat of this job."""
    from simcli.config import tuned

    def knobs(path):
        return tuned.row_of(mod, tuned.load_for(mod, variant, players, path))
    return knobs


def expand(game: str, variant: str | None, players: int | None, **kw) -> list[Job]:
    """Jobs for a game: one variant/player count when named, else the default ones."""
    return [resolve(game, variant, players, **kw)]


def jobs_from_entries(entries: list[dict], where: str, default_games: int | None = None,
                      counts: list | None = None) -> list[Job]:
    """Expand [[job]] tables (game; optional variants, players, policy, seats, rules, games).

    When ``counts`` is given, each job's game count (the entry's ``games`` or
    ``default_games``) is appended to it.
    """
    jobs = []
    available = known_games()
    for entry in entries:
        game = entry.get("game")
        if game is None:
            raise SimError(f"{where}: a [[job]] has no 'game'")
        if game not in available:
            continue  # a game not built in this checkout
        _, variants = variants_of(game)
        for v in entry.get("variants", list(variants)):
            if v not in variants:
                raise SimError(f"{where}: unknown variant {v!r} for {game}; valid variants: {', '.join(variants)}")
            for p in entry.get("players", variants[v]["players"]):
                if p in variants[v]["players"]:
                    jobs.append(resolve(game, v, p, policy=entry.get("policy"), seats=entry.get("seats"),
                                        rules=entry.get("rules")))
                    if counts is not None:
                        counts.append(int(entry.get("games", default_games)))
    return jobs


def suite_jobs(path: Path | None = None) -> tuple[list[Job], list[int], int]:
    """The default suite: (jobs, games for each job, seed)."""
    from simcli.config import schema
    path = path or configs_dir() / "suite.toml"
    data = schema.load(path, "suite")
    counts: list[int] = []
    jobs = jobs_from_entries(data.get("job", []), str(path), int(data.get("games", 10000)), counts)
    return jobs, counts, int(data.get("seed", 0))
