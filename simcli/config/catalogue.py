"""What `simcli list` shows: every game with its variants, player counts, rules, policies and
restrictions, read from the game modules' declarations and configs/<game>.toml.

Reading the declarations imports every game module, hence Numba (about 0.7 s of CPU before
anything is printed), so ``cached_games`` keeps the description as JSON beside the kernels'
compiled code (``kernels/__pycache__``), under a key made of the name, size and modification
time of every file it is read from (the kernel modules, simcli/config/*.py and the configs
folder's *.toml): any edit gives a new key. A folder that cannot be written just means no cache.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from simcli.config import jobs as cfg


def describe_games() -> list[dict]:
    """One dict per game (the `--json` form)."""
    import kernels
    info = []
    for gid in cfg.known_games():
        mod = kernels.load(gid)
        default_variant, variants = cfg.variants_of(gid)
        info.append({
            "game": gid, "version": mod.VERSION, "default_variant": default_variant,
            "variants": {v: {"players": d["players"], "rules": d.get("rules", {}),
                             "description": d.get("description", "")} for v, d in variants.items()},
            "rules": [{"name": r.name, "default": r.default, "domain": r.domain(), "help": r.help}
                      for r in mod.RULES],
            "policies": [p for p in mod.POLICIES if p not in getattr(mod, "FIXED_POLICIES", ())],
            "restrictions": [{"name": r.name, "help": r.help} for r in getattr(mod, "RESTRICTIONS", ())],
            "policy_args": {p: [{"name": a[0], "default": a[1], "lo": a[2], "hi": a[3],
                                 "means": a[4] if len(a) > 4 else ""} for a in args]
                            for p, args in getattr(mod, "POLICY_ARGS", {}).items()},
            "designed_play": cfg.designed_play(gid),
            "knobs": [{"name": k.name, "default": k.default, "lo": k.lo, "hi": k.hi, "help": k.help}
                      for k in getattr(mod, "KNOBS", ())],
        })
    return info


def _sources() -> list[Path]:
    """Every file ``describe_games`` reads (or whose code it runs)."""
    import kernels
    here = Path(__file__).resolve().parent
    return sorted([*Path(kernels.__file__).resolve().parent.glob("*.py"), *here.glob("*.py"),
                   *cfg.configs_dir().glob("*.toml")])


def _cache_folder() -> Path:
    import kernels
    return Path(kernels.__file__).resolve().parent / "__pycache__"


def _cache_path() -> Path:
    h = hashlib.sha256()
    for f in _sources():
        st = f.stat()
        h.update(f"{f}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return _cache_folder() / f"simcli-catalogue-{h.hexdigest()[:20]}.json"


def cached_games() -> list[dict]:
    """``describe_games()``, from the cache when no source file changed since it was written."""
    try:
        path = _cache_path()
    except OSError:
        return describe_games()
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        pass
    info = describe_games()
    try:
        path.parent.mkdir(exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text(json.dumps(info))
        os.replace(tmp, path)
        for old in path.parent.glob("simcli-catalogue-*.json"):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError:
        pass
    return info


def restriction_example(g: dict) -> str:
    """A restricted policy `simcli list` shows as an example: the designed play + the first name."""
    return f"{g['designed_play']}+{g['restrictions'][0]['name']}"


def _value(v) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def lines(info: list[dict]) -> list[str]:
    """The printed listing."""
    out = []
    for g in info:
        out += [f"{g['game']}  (version {g['version']})", "  variants:"]
        for v, d in g["variants"].items():
            mark = " (default)" if v == g["default_variant"] else ""
            rules = ", ".join(f"{k}={val}" for k, val in d["rules"].items())
            out.append(f"    {v}{mark}: players {', '.join(map(str, d['players']))}"
                       + (f"; {rules}" if rules else "") + (f" - {d['description']}" if d['description'] else ""))
        out.append("  rules:")
        out += [f"    {r['name']} = {_value(r['default'])}  [{r['domain']}]  {r['help']}" for r in g["rules"]]
        out.append(f"  policies: {', '.join(g['policies'])} (designed play: {g['designed_play']})")
        pargs = g.get("policy_args", {})
        if pargs:
            out.append("  policy arguments: " + ", ".join(
                p + "".join(f":{a['name'].upper()}" for a in args) for p, args in pargs.items()))
            seen = set()
            for args in pargs.values():
                for a in args:
                    key = (a["name"], a["lo"], a["hi"], a["means"])
                    if key in seen:
                        continue
                    seen.add(key)
                    dom = f"{a['lo']}..{a['hi']}" if a["lo"] is not None else "a policy"
                    out.append(f"    {a['name'].upper()} = {a['default']}  [{dom}]"
                               + (f"  {a['means']}" if a["means"] else ""))
        if g["restrictions"]:
            out.append(f"  restrictions (POLICY+NAME, e.g. {restriction_example(g)}):")
            out += [f"    {r['name']}  {r['help']}" for r in g["restrictions"]]
        if g["knobs"]:
            out.append("  tuned knobs (heuristic default [range]; trained values: configs/tuned/):")
            out += [f"    {k['name']} = {k['default']}  [{k['lo']}..{k['hi']}]  {k['help']}" for k in g["knobs"]]
    return out
