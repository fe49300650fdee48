"""Property tests of issue #28's families, beside tests/test_cli_fuzz.py (whole command lines).

* paths and symlinks: any destination among ancestors of the current and home folder, earlier
  results, files, symlinks (to folders, files, nowhere, themselves) and over-long names is either
  refused in one line with nothing changed, or written with nothing outside it changed;
* config depth and size: any nesting depth and size of any config kind is a dict or one line;
* concurrent writers: writers of one target commit in any order; the outcome is the contract's
  (a writer without --force wins only an empty target; every loser is one line; nothing is left);
* API types: any wrongly typed or out-of-range argument of ``simcli.run`` is a one-line ValueError.

Nothing here simulates a game: the output contract and the checks run before any kernel.
"""
from __future__ import annotations

import hashlib
import multiprocessing
import os
import tempfile
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import simcli
from simcli.config import schema
from simcli.errors import SimError
from simcli.report.output import OutputFile, OutputFolder

# ------------------------------------------------------------------------ paths and symlinks

# destinations, relative to the scratch area ("{cwd}" entries are given relative to the cwd)
DESTS = ["", ".", "{cwd}..", "{cwd}.", "proj", "proj/work", "home", "home/me", "prev", "prev/sub",
         "empty", "afile", "to_prev", "to_empty", "dangling", "loop", "loop/x", "to_file",
         "to_proj", "to_proj/work", "new", "new/deeper", "afile/below", "n" * 250, "n" * 300,
         "new/" + "d" * 300 + "/x"]


def _area(root: Path) -> Path:
    """A scratch area: the current folder proj/work, HOME home/me, an earlier result, links."""
    a = root / "area"
    for d in ("proj/work", "home/me", "prev/sub", "empty"):
        (a / d).mkdir(parents=True)
    (a / "proj/work/notes.txt").write_text("notes")
    (a / "home/me/.profile").write_text("profile")
    (a / "prev/seats.parquet").write_text("earlier result")
    (a / "prev/sub/x").write_text("x")
    (a / "afile").write_text("a file")
    for name, target in (("to_prev", "prev"), ("to_empty", "empty"), ("dangling", "later"),
                         ("loop", "loop"), ("to_file", "afile"), ("to_proj", "proj")):
        (a / name).symlink_to(a / target)
    return a


def _snapshot(area: Path) -> dict:
    """path -> what it is (folder, file content hash, link target), symlinks not followed."""
    snap = {}
    for root, dirs, files in os.walk(area):
        for n in dirs + files:
            p = Path(root) / n
            rel = str(p.relative_to(area))
            if p.is_symlink():
                snap[rel] = ("link", os.readlink(p))
            elif p.is_dir():
                snap[rel] = ("dir",)
            else:
                snap[rel] = ("file", hashlib.sha1(p.read_bytes()).hexdigest())
    return snap


def _inside(rel: str, area: Path, target: Path) -> bool:
    p = area / rel
    return p == target or target in p.parents


def _write(kind: str, dest: str, force: bool) -> Path:
    """Validate, stage, write a marker and commit; returns the destination's real path."""
    if kind == "folder":
        out = OutputFolder(dest, force=force).validate()
        (out.stage() / "marker.txt").write_text("new result")
        out.commit()
        return out.target
    out = OutputFile(dest, force=force).validate()
    out.write_text("new result")
    return out.target


@settings(max_examples=150, deadline=None)
@given(dest=st.sampled_from(DESTS), force=st.booleans(), kind=st.sampled_from(["folder", "file"]),
       absolute=st.booleans())
def test_any_destination_is_refused_untouched_or_written_touching_nothing_else(dest, force, kind, absolute):
    cwd, home = os.getcwd(), os.environ.get("HOME")
    with tempfile.TemporaryDirectory() as tmp:
        area = _area(Path(tmp))
        os.chdir(area / "proj/work")
        os.environ["HOME"] = str(area / "home/me")
        if dest.startswith("{cwd}"):
            dest = dest[5:]
        elif dest:
            dest = str(area / dest) if absolute else os.path.relpath(area / dest)
        before = _snapshot(area)
        try:
            target = _write(kind, dest, force)
        except SimError as e:
            assert "\n" not in str(e)
            assert _snapshot(area) == before, f"{dest!r}: refused but changed the area"
            return
        finally:
            os.chdir(cwd)
            if home is None:
                os.environ.pop("HOME", None)
            else:
                os.environ["HOME"] = home
        after = _snapshot(area)
        assert (area / "proj/work/notes.txt").read_text() == "notes"
        assert (area / "home/me/.profile").read_text() == "profile"
        changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
        outside = [k for k in changed if not _inside(k, area, target)]
        made = [k for k in outside if k not in before and target.is_relative_to(area / k)]  # new parents
        assert sorted(set(outside) - set(made)) == [], f"{dest!r} -> {target}: changed {outside}"
        assert not [k for k in after if ".partial-" in k or ".old-" in k], after
        written = target / "marker.txt" if kind == "folder" else target
        assert written.read_text() == "new result"


# ------------------------------------------------------------------- config depth and size

@st.composite
def nested_config(draw) -> str:
    depth = draw(st.integers(0, 4000))
    shape = draw(st.sampled_from(["array", "table", "mixed"]))
    opens, closes = [], []
    for i in range(depth):
        arr = shape == "array" or (shape == "mixed" and i % 2 == 0)
        opens.append("[" if arr else "{ a = ")
        closes.append("]" if arr else " }")
    value = "".join(opens) + "1" + "".join(reversed(closes))
    pad = "#" + "x" * draw(st.sampled_from([0, 10, 1 << 20, (1 << 20) + 10])) + "\n"
    return draw(st.sampled_from([f"games = {value}\n", f"[[grid]]\ngame = {value}\n",
                                 f"[[job]]\ngame = \"forecasts-cubes\"\nrules = {{ x = {value} }}\n"])) + pad


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                               HealthCheck.data_too_large])
@given(text=nested_config(), kind=st.sampled_from(sorted(schema.SCHEMAS)))
def test_any_nesting_depth_and_size_of_any_config_is_a_dict_or_one_line(text, kind):
    box = {}
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "c.toml"
        f.write_text(text)

        def load():  # in a worker thread, as the command line runs every command
            try:
                box["data"] = schema.load(f, kind)
            except BaseException as e:  # noqa: BLE001 - the property is about what escapes
                box["error"] = e
        t = threading.Thread(target=load)
        t.start()
        t.join()
    e = box.get("error")
    assert e is None or isinstance(e, SimError), f"{type(e).__name__}: {str(e)[:200]}"
    if e is not None:
        assert "\n" not in str(e) and len(str(e)) < 2000


# -------------------------------------------------------------------------- concurrent writers

def _make_target(parent: Path, kind: str, state: str) -> Path:
    target = parent / ("t" if kind == "folder" else "t.txt")
    if state == "earlier":
        if kind == "folder":
            target.mkdir()
            (target / "marker.txt").write_text("earlier")
        else:
            target.write_text("earlier")
    elif state == "empty" and kind == "folder":
        target.mkdir()
    return target


def _content(target: Path, kind: str) -> str | None:
    p = target / "marker.txt" if kind == "folder" else target
    return p.read_text() if p.exists() else None


@settings(max_examples=120, deadline=None)
@given(kind=st.sampled_from(["folder", "file"]), state=st.sampled_from(["absent", "empty", "earlier"]),
       forces=st.lists(st.booleans(), min_size=2, max_size=4), data=st.data())
def test_writers_of_one_target_in_any_order_follow_the_contract(kind, state, forces, data):
    with tempfile.TemporaryDirectory() as tmp:
        parent = Path(tmp)
        target = _make_target(parent, kind, state)
        filled = state == "earlier"
        live = []  # writers that passed validation and staged
        for i, force in enumerate(forces):
            out = (OutputFolder if kind == "folder" else OutputFile)(target, force=force)
            try:
                out.validate()
            except SimError:
                assert filled and not force  # only a used target is refused up front
                continue
            if kind == "folder":
                (out.stage() / "marker.txt").write_text(f"writer {i}")
                live.append((i, force, out, None))
            else:
                cm = out.open()
                cm.__enter__().write(f"writer {i}")
                live.append((i, force, out, cm))
        winner = "earlier" if filled else None
        for i, force, out, cm in data.draw(st.permutations(live)):
            expect_win = force or winner is None  # without --force only an unfilled target is won
            try:
                out.commit() if cm is None else cm.__exit__(None, None, None)
            except SimError as e:
                assert not expect_win, f"writer {i} (force={force}) lost to {winner}: {e}"
                assert str(target) in str(e) and "\n" not in str(e)
                continue
            assert expect_win, f"writer {i} without --force replaced {winner}"
            winner = f"writer {i}"
        assert _content(target, kind) == winner
        assert [p.name for p in parent.iterdir() if p.name.startswith(".")] == []


def _racer(target: str, kind: str, i: int, barrier, results) -> None:
    try:
        out = (OutputFolder if kind == "folder" else OutputFile)(target).validate()
        if kind == "folder":
            (out.stage() / "marker.txt").write_text(f"writer {i}")
            barrier.wait()
            out.commit()
        else:
            with out.open() as f:
                f.write(f"writer {i}")
                barrier.wait()
        results.put((i, "won"))
    except SimError as e:
        results.put((i, "lost" if target in str(e) else f"other: {e}"))
    except BaseException as e:  # noqa: BLE001
        results.put((i, f"{type(e).__name__}: {e}"))


@pytest.mark.parametrize("kind", ["folder", "file"])
def test_processes_racing_for_one_new_target_exactly_one_wins(tmp_path, kind):
    ctx = multiprocessing.get_context("fork")
    for round_ in range(5):
        target = str(tmp_path / f"r{round_}{'' if kind == 'folder' else '.txt'}")
        barrier, results = ctx.Barrier(4), ctx.Queue()
        procs = [ctx.Process(target=_racer, args=(target, kind, i, barrier, results)) for i in range(4)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        outcome = dict(results.get(timeout=5) for _ in procs)
        assert sorted(outcome.values()) == ["lost", "lost", "lost", "won"], outcome
        won = next(i for i, o in outcome.items() if o == "won")
        assert _content(Path(target), kind) == f"writer {won}"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


# ------------------------------------------------------------------------------- API types

OTHER_TYPES = [None, True, 3, -1, 2**64, 2.5, float("nan"), "3", "", b"x", ["base"], ("a",),
               {"a": 1}, {1: 2}, object()]
KINDS = {"players": "int", "games": "int", "seed": "int", "threads": "int", "chunk": "int",
         "until_ci": "number", "variant": "str", "policy": "str", "seats": "seats",
         "rules": "rules", "rotate": "bool", "progress": "bool"}
DAILY = {"year": "int", "date": "str", "birthday": "str", "cards": "path"}
OUT_OF_RANGE = {"games": [0, -5, 10**30], "seed": [-1, 2**63, 2**64], "threads": [0, -2],
                "chunk": [0, 2**21], "until_ci": [0, 2.0, float("nan"), float("inf"), -1e-3]}


def _wrong(kind: str, v) -> bool:
    """Whether ``v`` has a type an argument of ``kind`` does not take (None is "not given")."""
    if v is None:
        return False
    ok = {"int": isinstance(v, int) and not isinstance(v, bool),
          "number": isinstance(v, (int, float)) and not isinstance(v, bool),
          "str": isinstance(v, str), "bool": isinstance(v, bool),
          "seats": isinstance(v, str) or (isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v)),
          "rules": isinstance(v, dict) and all(isinstance(k, str) for k in v),
          "path": isinstance(v, (str, os.PathLike))}[kind]
    return not ok


@st.composite
def bad_argument(draw):
    game = draw(st.sampled_from(["forecasts-cubes", "daily-weather"]))
    kinds = {**KINDS, **(DAILY if game == "daily-weather" else {})}
    name = draw(st.sampled_from(sorted(kinds)))
    wrong = [v for v in OTHER_TYPES if _wrong(kinds[name], v)] + OUT_OF_RANGE.get(name, [])
    return game, name, draw(st.sampled_from(wrong))


@settings(max_examples=150, deadline=None)
@given(bad_argument())
def test_any_wrongly_typed_or_out_of_range_api_argument_is_a_one_line_value_error(case):
    game, name, value = case
    with pytest.raises(ValueError) as e:
        simcli.run(game, games=10, **{name: value}) if name != "games" else simcli.run(game, games=value)
    msg = str(e.value)
    assert "\n" not in msg
    assert name in msg or name.replace("_", "-") in msg, msg
