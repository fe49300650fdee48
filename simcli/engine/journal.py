"""Finished work survives an interruption: a journal of task results beside the output.

Every command that simulates describes its work as a sequence of pure tasks (a chunk of games of
one job, a race round's chunk, a restriction's deals, a training generation). The journal records
each finished task's result (integer tallies, never per-game rows) in a hidden folder beside the
destination, ``.NAME.journal``, as the command goes. ``--resume`` replays the command: the first
tasks are answered from the journal instead of being played again, in the same order, and the
rest are played as usual. Because every task is a pure function of its arguments and every fold
happens in task order, a resumed run's tables are bit-identical to an uninterrupted run's.

Safety:

* ``spec.json`` holds the run's fingerprint (jobs, games, seed, chunk, rotation, stopping rule,
  the analysis' settings, the code's hash). A journal from other options or other code is refused
  with one line naming the first difference; each record also carries a digest of its task's
  arguments, checked again at replay, so results are never mixed.
* Records are written to a temporary name, flushed to disk and renamed: a kill leaves whole
  records only. Each ends with a checksum; a corrupt or truncated record is refused.
* Results are written at most every ``FLUSH_S`` seconds (and when the run stops), so the cost
  is bounded whatever the chunk size; at most that much finished work is lost to a SIGKILL.
* A lock file stops a second command from writing the same destination at the same time.
* A command stopped within ``KEEP_MIN_S`` seconds of its start (and not itself resumed) keeps
  nothing: the output contract is then exactly as without a journal.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pickle
import shutil
import threading
import time
import types
import zlib
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from simcli.errors import SimError, WriteError

FORMAT = 1
FLUSH_S = float(os.environ.get("SIMCLI_JOURNAL_FLUSH_S", "1"))  # at most one record this often
# A run that fails or is interrupted keeps its journal only once it has run this long: before
# that, rerunning costs no more than resuming, and a short command leaves nothing behind.
KEEP_MIN_S = float(os.environ.get("SIMCLI_JOURNAL_KEEP_S", "10"))
_MAGIC = b"SIMCLI-JOURNAL-1\n"
_ACTIVE: list["Journal"] = []
_KEPT: list["Journal"] = []     # closed with work kept (an interrupt still reports them)


# ------------------------------------------------------------------------------------ digests

def _feed(h, obj: Any, depth: int = 0) -> None:
    """Feed a stable description of ``obj`` to hash ``h`` (no ids, no memory addresses)."""
    if depth > 12:
        h.update(b"<deep>")
        return
    if obj is None or isinstance(obj, (bool, int, float, str, bytes)):
        h.update(repr((type(obj).__name__, obj)).encode())
    elif isinstance(obj, np.ndarray):
        a = np.ascontiguousarray(obj)
        h.update(f"nd{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes())
    elif isinstance(obj, np.generic):
        h.update(repr((obj.dtype.str, obj.item())).encode())
    elif isinstance(obj, (list, tuple)):
        h.update(f"{type(obj).__name__}{len(obj)}[".encode())
        for x in obj:
            _feed(h, x, depth + 1)
        h.update(b"]")
    elif isinstance(obj, dict):
        h.update(f"dict{len(obj)}{{".encode())
        for k in sorted(obj, key=repr):
            _feed(h, k, depth + 1)
            _feed(h, obj[k], depth + 1)
        h.update(b"}")
    elif isinstance(obj, (set, frozenset)):
        _feed(h, sorted(obj, key=repr), depth + 1)
    elif isinstance(obj, types.ModuleType):
        h.update(f"module:{obj.__name__}".encode())
    elif callable(obj) and hasattr(obj, "__qualname__"):
        h.update(f"fn:{getattr(obj, '__module__', '')}.{obj.__qualname__}".encode())
    elif hasattr(obj, "__dict__") or hasattr(obj, "__slots__"):
        h.update(f"obj:{type(obj).__module__}.{type(obj).__qualname__}".encode())
        fields = dict(vars(obj)) if hasattr(obj, "__dict__") else {
            s: getattr(obj, s) for s in obj.__slots__ if hasattr(obj, s)}
        _feed(h, {k: v for k, v in fields.items() if not k.startswith("_")}, depth + 1)
    else:
        h.update(repr(obj).encode())


def digest(obj: Any) -> str:
    """A stable hex digest of a task's arguments (or any settings)."""
    h = hashlib.blake2b(digest_size=16)
    _feed(h, obj)
    return h.hexdigest()


def code_version() -> str:
    """A hash of the code that produces results (kernels and simcli): another code version's
    journal is refused."""
    import kernels
    import simcli
    h = hashlib.blake2b(digest_size=12)
    for root in (Path(kernels.__file__).parent, Path(simcli.__file__).parent):
        for p in sorted(root.rglob("*.py")):
            h.update(str(p.relative_to(root.parent)).encode())
            h.update(p.read_bytes())
    return f"{simcli.__version__}+{h.hexdigest()}"


def games_of(result: Any) -> int:
    """The games (deals) a task result holds, when it says (chunk tallies); else 0."""
    g = getattr(result, "games", None)
    if isinstance(g, (int, np.integer)):
        return int(g)
    if isinstance(result, dict) and isinstance(result.get("games"), (int, np.integer)):
        return int(result["games"])
    if isinstance(result, tuple) and result:
        return games_of(result[0])
    return 0


# ------------------------------------------------------------------------------------ journal

def journal_path(target: Path) -> Path:
    """The journal folder of an output ``target`` (a folder or a file): ``.NAME.journal``."""
    return target.parent / f".{target.name[:64]}.journal"


# which option a fingerprint key comes from, for the one-line refusal
_OPTION = {"games": "--games", "seed": "--seed", "chunk": "--chunk", "rotate": "--rotate",
           "until_ci": "--until-ci", "per_game": "--per-game", "analysis": "the command",
           "settings": "the command's settings (candidates, restrictions, metric, budgets...)",
           "jobs": "the games, variants, player counts, policies or rules",
           "code": "simcli's code or rules version", "format": "the journal format"}


class Journal:
    """The journal of one command writing ``target`` (``--out``), identified by ``fingerprint``.

    ``open`` takes the lock and, with ``resume``, loads the finished results; ``call`` answers a
    task from the journal or runs it and records it; ``finish`` removes the journal once the
    result is committed; ``keep`` flushes what is pending (on an interruption or error).
    """

    def __init__(self, target: Path, fingerprint: dict, *, resume: bool = False, force: bool = False,
                 option: str = "--out", shown: str | Path | None = None, total_games: int | None = None,
                 unit: str = "finished tasks"):
        self.folder = journal_path(Path(target))
        self.fingerprint = {"format": FORMAT, **fingerprint}
        self.resume, self.force, self.option = resume, force, option
        self.shown = str(shown if shown is not None else target)
        self.total_games = total_games
        self.unit = unit
        self.done: list[tuple[str, Any]] = []   # (task digest, stored result) loaded at resume
        self.n = 0                              # tasks answered so far (replayed or played)
        self.records = 0                        # record files on disk
        self.pending: list[tuple[str, Any]] = []
        self.kept_games = 0                     # games in records on disk
        self.pending_games = 0
        self.last_flush = time.monotonic()
        self.bytes = 0
        self._lock_fd: int | None = None
        self._mutex = threading.RLock()
        self._closed = False   # after close a late result (the command thread, a Dask future) is dropped
        self._created = False
        self._made: list[Path] = []     # folders above the journal it created (removed with it)
        self.opened = time.monotonic()

    # ---------------------------------------------------------------- opening and refusing
    def open(self) -> "Journal":
        """Lock the journal; load it (``resume``) or refuse/discard an existing one."""
        if self.folder.exists() and not self.folder.is_dir():
            raise SimError(f"{self.option} {self.shown}: {self.folder} is in the way of the journal "
                           f"(a file); remove it")
        existing = self.folder.is_dir()
        if existing:
            self._lock()
        try:
            if existing and not self.resume:
                kept = self._peek_kept()
                if kept and not self.force:
                    raise SimError(f"{self.option} {self.shown} has the journal of an interrupted "
                                   f"run ({kept}); add --resume to continue it, or --force to "
                                   f"discard it")
                self._discard_files()
            elif existing:
                self._load()
        except BaseException:
            self._unlock()
            raise
        _KEPT.clear()      # a new command: earlier commands' kept journals are theirs to report
        _ACTIVE.append(self)
        return self

    def _unlock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def _lock(self) -> None:
        import fcntl
        p, missing = self.folder.parent, []
        while not p.exists() and p != p.parent:   # e.g. reports/ before the first run
            missing.append(p)
            p = p.parent
        try:
            for d in reversed(missing):
                d.mkdir(exist_ok=True)
                self._made.append(d)
            self.folder.mkdir(parents=False, exist_ok=True)
            fd = os.open(self.folder / "lock", os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise WriteError(f"cannot write {self.option} {self.shown}'s journal {self.folder}: "
                             f"{e.strerror or e}") from None
        self._created = True
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise SimError(f"{self.option} {self.shown} is being written by another simcli command "
                           f"right now (its journal is locked); wait for it or choose another "
                           f"{self.option}") from None
        self._lock_fd = fd

    def _records(self) -> list[Path]:
        return sorted(self.folder.glob("r*.rec"))

    def _peek_kept(self) -> str:
        """What an existing journal holds, in words ("" when it holds nothing)."""
        recs = self._records()
        if not recs:
            return ""
        try:
            done = [r for p in recs for r in self._read(p)]
        except SimError:
            return f"{len(recs)} records, some unreadable"
        games = sum(games_of(r) for _, r in done)
        return f"{games:,} games kept" if games else f"{len(done):,} {self.unit} kept"

    def _refuse(self, why: str) -> SimError:
        return SimError(f"--resume: the journal of {self.option} {self.shown} {why}; rerun without "
                        f"--resume and with --force to discard it and start again")

    def _load(self) -> None:
        try:
            old = json.loads((self.folder / "spec.json").read_text())
        except FileNotFoundError:
            old = None  # killed before its first record: nothing was kept
        except (OSError, ValueError) as e:
            raise self._refuse(f"has an unreadable spec.json ({e.__class__.__name__})") from None
        if old is None:
            self._discard_files()
            return
        for key in self.fingerprint:
            if old.get(key) != self.fingerprint[key]:
                raise self._refuse(f"was written with other {_OPTION.get(key, key)}"
                                   + _values(key, old.get(key), self.fingerprint[key]))
        for k, p in enumerate(self._records()):
            if p.name != f"r{k:06d}.rec":
                raise self._refuse(f"is missing record {k} (found {p.name}): it is corrupt")
            self.done += self._read(p)
            self.records += 1
            self.bytes += p.stat().st_size
        self.kept_games = sum(games_of(r) for _, r in self.done)
        for tmp in self.folder.glob(".tmp-*"):
            tmp.unlink(missing_ok=True)

    def _read(self, p: Path) -> list:
        data = p.read_bytes()
        body, check = data[:-32], data[-32:]
        if len(data) < len(_MAGIC) + 32 or not body.startswith(_MAGIC) \
                or hashlib.blake2b(body, digest_size=32).digest() != check:
            raise self._refuse(f"has a corrupt or truncated record {p.name}")
        try:
            return pickle.loads(zlib.decompress(body[len(_MAGIC):]))
        except Exception:  # noqa: BLE001 - any failure to decode is corruption
            raise self._refuse(f"has a record {p.name} that cannot be decoded") from None

    # ---------------------------------------------------------------- tasks
    def call(self, name: str, args: tuple, compute: Callable[[], Any],
             store: Callable = None, load: Callable = None) -> Any:
        """Task ``name(args)``: its journaled result (the next one, whose digest must match), or
        ``compute()``'s, recorded. ``store``/``load`` convert a result to and from what is kept."""
        d = digest((name, args))
        if self.n < len(self.done):
            return self.replay(d, load)
        res = compute()
        self.record(d, res if store is None else store(res))
        return res

    def replay(self, d: str, load: Callable | None = None) -> Any:
        kept_d, res = self.done[self.n]
        if kept_d != d:
            raise self._refuse(f"holds another task at position {self.n} (the options or inputs differ)")
        self.n += 1
        return res if load is None else load(res)

    def has_next(self) -> bool:
        return self.n < len(self.done)

    def record(self, d: str, stored: Any) -> None:
        with self._mutex:
            if self._closed:
                return
            self.n += 1
            self.pending.append((d, stored))
            self.pending_games += games_of(stored)
            if time.monotonic() - self.last_flush >= FLUSH_S:
                self.flush()

    def flush(self) -> None:
        """Write the pending results as one record (temporary name, fsync, rename)."""
        with self._mutex:
            if self._closed or not self.pending:
                return
            if not self._created or not self.folder.is_dir():
                self._lock()
            if not (self.folder / "spec.json").exists():
                self._write(self.folder / "spec.json", json.dumps(self.fingerprint, indent=1).encode())
            body = _MAGIC + zlib.compress(pickle.dumps(self.pending, protocol=5), 1)
            data = body + hashlib.blake2b(body, digest_size=32).digest()
            self._write(self.folder / f"r{self.records:06d}.rec", data)
            self.records += 1
            self.bytes += len(data)
            self.kept_games += self.pending_games
            self.pending, self.pending_games = [], 0
            self.last_flush = time.monotonic()

    def _write(self, path: Path, data: bytes) -> None:
        tmp = path.with_name(f".tmp-{path.name}")
        try:
            with open(tmp, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except OSError as e:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise WriteError(f"cannot write {self.option} {self.shown}'s journal: "
                             f"{e.strerror or e}") from None

    # ---------------------------------------------------------------- ending
    def kept(self) -> int:
        """Records on disk after flushing what is pending (0: nothing kept)."""
        with self._mutex:
            try:
                self.flush()
            except Exception:  # noqa: BLE001 - keep what is already on disk
                pass
            return self.records

    def kept_line(self) -> str:
        """``12,345 of 100,000 games kept; resume with --resume ...`` (after ``kept``)."""
        if self.kept_games and self.total_games:
            what = f"{self.kept_games:,} of {self.total_games:,} games kept"
        elif self.kept_games:
            what = f"{self.kept_games:,} games kept"
        else:
            what = f"{self.n:,} {self.unit} kept"
        return (f"{what} in {self.folder} ({_size(self.bytes)}); resume with --resume (the same options and "
                f"{self.option} {self.shown}), or discard it with --force")

    def describe(self) -> dict:
        """meta.json's account of the journal: what was resumed, what was written."""
        return {"resumed_tasks": len(self.done), "resumed_games": sum(games_of(r) for _, r in self.done),
                "tasks": self.n, "records": self.records, "bytes": self.bytes}

    def resuming_line(self) -> str | None:
        """What a resumed run starts from (None: nothing was kept)."""
        if not self.done:
            return None
        if self.kept_games and self.total_games:
            return (f"resuming: {self.kept_games:,} games done, "
                    f"{max(self.total_games - self.kept_games, 0):,} to go")
        if self.kept_games:
            return f"resuming: {self.kept_games:,} games done ({len(self.done):,} finished tasks)"
        return f"resuming: {len(self.done):,} {self.unit} from the journal"

    def close(self, keep: bool) -> bool:
        """Stop journaling; ``keep``: flush and leave it (returns True if anything is kept),
        else remove it. Either way the lock is released."""
        with self._mutex:
            if self._closed:                  # closed already (the command thread, then an
                return self in _KEPT          # interrupt): what the first close kept
            worth = bool(self.done) or time.monotonic() - self.opened >= KEEP_MIN_S
            kept = self.kept() if keep and worth else 0
            self._closed = True
            if not kept:
                self._discard_files()
            else:
                _KEPT.append(self)
            self._unlock()
            # leaves the active list last: an interrupt that arrives while the command thread is
            # closing it waits on the mutex above instead of missing it
            if self in _ACTIVE:
                _ACTIVE.remove(self)
            return bool(kept)

    def _discard_files(self) -> None:
        if self.folder.is_dir():
            for p in self.folder.iterdir():
                if p.name != "lock":
                    if p.is_dir():
                        shutil.rmtree(p, ignore_errors=True)
                    else:
                        p.unlink(missing_ok=True)
            if self._lock_fd is None:
                shutil.rmtree(self.folder, ignore_errors=True)
            else:
                (self.folder / "lock").unlink(missing_ok=True)
                with contextlib.suppress(OSError):
                    self.folder.rmdir()
                self._created = False
        for d in reversed(self._made):     # nearest first; a folder with a result in it stays
            with contextlib.suppress(OSError):
                d.rmdir()
        self._made = []
        self.records, self.bytes, self.kept_games = 0, 0, 0


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.1f} KB"


def _values(key: str, old, new) -> str:
    if key in ("jobs", "settings", "code", "analysis", "format"):
        if key == "code":
            return f" (journal: {str(old).split('+')[0]}..., this run: {str(new).split('+')[0]}...)"
        return ""
    return f" (journal: {old}, this run: {new})"


def keep_journal(journal: "Journal | None", echo: bool = True) -> bool:
    """After a failure: keep the journal's finished work (``echo``: and say how to resume it)."""
    if journal is not None and journal.close(keep=True):
        if echo:
            import sys
            print(journal.kept_line(), file=sys.stderr, flush=True)
        return True
    return False


@contextlib.contextmanager
def kept_on_failure(journal: "Journal | None"):
    """A block whose failure keeps the journal's work: a bad-input or write error gains the
    resume hint in its one line; anything else (an interrupt, a crash) prints it after."""
    try:
        yield
    except (SimError, WriteError) as e:
        if not keep_journal(journal, echo=False):
            raise
        raise type(e)(f"{e}; {journal.kept_line()}") from None  # still one line
    except BaseException:
        keep_journal(journal)
        raise


def interrupted_lines() -> list[str]:
    """On an interruption: flush every active journal; one line per journal that kept work
    (including one the command thread closed and kept a moment before, after an error)."""
    for j in list(_ACTIVE):
        j.close(keep=True)
    return [f"interrupted: {j.kept_line()}" for j in _KEPT]


# ------------------------------------------------------------------------------------ executor

class JournaledExecutor:
    """An executor whose tasks are answered from the journal first, then run and recorded."""

    def __init__(self, inner, journal: Journal):
        self.inner, self.journal = inner, journal
        self.name, self.threads = inner.name, inner.threads

    def __getattr__(self, attr):
        return getattr(self.inner, attr)

    def map(self, fn: Callable, tasks: Iterable[tuple], key: Callable | None = None,
            name: str | None = None, store: Callable | None = None,
            load: Callable | None = None) -> Iterator:
        """``inner.map``, the journaled prefix answered here. ``name`` names the task kind in
        digests (default the function's); ``store(result)`` is what is kept and
        ``load(kept, args)`` turns it back into a result."""
        j = self.journal
        name = name or f"{fn.__module__}.{fn.__qualname__}"
        it = iter(tasks)
        for args in it:
            d = digest((name, args))
            if j.has_next():
                yield j.replay(d, None if load is None else (lambda r, a=args: load(r, a)))
                continue
            order = [d]

            def rest(first=args):
                yield first
                for a in it:
                    order.append(digest((name, a)))
                    yield a

            for k, res in enumerate(self.inner.map(fn, rest(), key)):
                j.record(order[k], res if store is None else store(res))
                yield res
            return


def journaled(ex, journal: Journal | None):
    return ex if journal is None else JournaledExecutor(ex, journal)
