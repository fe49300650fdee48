"""The output contract shared by every command that writes: nothing is lost, mixed or half-written.

* Everything is validated before anything is created (``OutputFolder.validate``).
* Results are written into a hidden staging folder beside the destination and renamed into place
  only when complete (``commit``), so a failed or interrupted command leaves no trace and an
  earlier result is never half-replaced.
* A non-empty destination is refused unless ``--force``, which replaces it whole (no stale files).
* Default folders (``reports/run-<time>``) get a suffix when the name is taken, so two runs started
  in the same second keep both results.
* Single files (``trace --out``, ``report --out``) are written to a hidden sibling and renamed.

Interrupts (``simcli.interrupt``) call ``abandon`` on every registered output: staged data is
removed, folders the command created are removed again, and the destination is untouched.
"""
from __future__ import annotations

import contextlib
import errno
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

from simcli.errors import SimError, WriteError

# One lock for every commit and every abandon: an interrupt either happens before a commit (and
# removes the staged data) or after it (and the result is complete), never in the middle.
COMMIT_LOCK = threading.RLock()
_LIVE: list["_Staged"] = []


def abandon_all() -> list[Path]:
    """Remove every staged output of this process (on an interrupt). Returns committed paths."""
    with COMMIT_LOCK:
        done = []
        for staged in list(_LIVE):
            if staged.committed is not None:
                done.append(staged.committed)
            else:
                staged.abandon()
        return done


def _os_error(path: Path, e: OSError) -> WriteError:
    return WriteError(f"cannot write {path}: {e.strerror or e}")


def _missing_ancestors(path: Path) -> list[Path]:
    """The folders above ``path`` that do not exist yet, nearest last."""
    missing = []
    p = path.parent
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    return list(reversed(missing))


def _existing_ancestor(path: Path) -> Path:
    p = path.parent
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def _check_parent(path: Path, option: str) -> None:
    base = _existing_ancestor(path)
    if not base.is_dir():
        raise SimError(f"{option} {path}: {base} is a file, not a folder")
    if not os.access(base, os.W_OK | os.X_OK):
        raise SimError(f"{option} {path}: folder {base} is not writable; choose a writable place")


class _Staged:
    """Bookkeeping shared by folder and file outputs."""
    committed: Path | None = None
    _made: list[Path]
    staging: Path | None = None

    def _register(self) -> None:
        with COMMIT_LOCK:
            _LIVE.append(self)

    def _unregister(self) -> None:
        with COMMIT_LOCK:
            if self in _LIVE:
                _LIVE.remove(self)

    def abandon(self) -> None:
        """Remove staged data and the folders this output created; the destination is untouched."""
        with COMMIT_LOCK:
            if self.committed is not None:
                return
            if self.staging is not None:
                if self.staging.is_dir():
                    shutil.rmtree(self.staging, ignore_errors=True)
                else:
                    try:
                        self.staging.unlink()
                    except OSError:
                        pass
                self.staging = None
            for d in reversed(self._made):
                try:
                    d.rmdir()
                except OSError:
                    pass
            self._made = []
            self._unregister()


class OutputFolder(_Staged):
    """A result folder written under the output contract.

    ``path`` None means the default ``reports/run-<time>`` (unique: a taken name gets ``-2``,
    ``-3`` ...). ``option`` names the flag in messages.
    """

    def __init__(self, path: Path | str | None, force: bool = False, option: str = "--out",
                 default_prefix: str = "run"):
        self.option = option
        self.force = force
        self.default = path is None
        if path is not None and str(path).strip() == "":
            raise SimError(f"{option} is empty; give a folder path (or leave {option} out for "
                           f"reports/{default_prefix}-<time>)")
        self.path = Path(path) if path is not None else Path("reports") / time.strftime(
            f"{default_prefix}-%Y%m%d-%H%M%S")
        self._made = []

    def validate(self) -> "OutputFolder":
        """Refuse an unusable destination before anything runs. Creates nothing."""
        p = self.path
        if not self.default and p.resolve() in (Path.cwd().resolve(), Path.home().resolve(), Path("/")):
            raise SimError(f"{self.option} {p} is the current, home or root folder; give a new "
                           f"folder for the results, e.g. {self.option} my-run")
        if p.exists() and not p.is_dir():
            raise SimError(f"{self.option} {p} exists and is not a folder (a file); choose a folder path")
        if p.is_dir() and not self.default and any(p.iterdir()):
            if not self.force:
                raise SimError(f"{self.option} {p} is not empty; choose a new folder, or add "
                               f"--force to replace it whole")
        _check_parent(p, self.option)
        if p.is_dir() and not os.access(p.parent if str(p.parent) else Path("."), os.W_OK):
            raise SimError(f"{self.option} {p}: its parent folder is not writable")
        return self

    def stage(self) -> Path:
        """Create the hidden staging folder (beside the destination) and return it."""
        if self.staging is not None:
            return self.staging
        self.validate()
        try:
            self._made = _missing_ancestors(self.path)
            for d in self._made:
                d.mkdir(exist_ok=True)
            self.staging = Path(tempfile.mkdtemp(prefix=f".{self.path.name}.partial-",
                                                 dir=self.path.parent))
        except OSError as e:
            self.abandon()
            raise _os_error(self.path, e) from None
        self._register()
        return self.staging

    def commit(self) -> Path:
        """Rename the complete staging folder into place; returns the final path."""
        with COMMIT_LOCK:
            if self.staging is None:
                raise RuntimeError("commit before stage")
            dest = self.path
            try:
                if self.default:
                    dest = self._rename_unique()
                else:
                    self._replace(dest)
            except OSError as e:
                self.abandon()
                raise _os_error(dest, e) from None
            self.committed = dest
            self.staging = None
            self._unregister()
            return dest

    def _replace(self, dest: Path) -> None:
        old = None
        if dest.exists():
            if dest.is_dir() and any(dest.iterdir()):
                if not self.force:  # appeared while we ran
                    raise SimError(f"{self.option} {dest} was filled by someone else while this "
                                   f"command ran; nothing written. Rerun with a new folder")
                old = dest.with_name(f".{dest.name}.old-{os.getpid()}")
                os.rename(dest, old)
            else:
                dest.rmdir()
        os.rename(self.staging, dest)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)

    def _rename_unique(self) -> Path:
        base = self.path
        for k in range(1, 10_000):
            dest = base if k == 1 else base.with_name(f"{base.name}-{k}")
            if dest.exists():
                continue
            try:
                os.rename(self.staging, dest)  # atomic; fails if another run took the name
                return dest
            except OSError as e:
                if e.errno in (errno.EEXIST, errno.ENOTEMPTY):
                    continue
                raise
        raise OSError(errno.EEXIST, "no free run folder name")


class OutputFile(_Staged):
    """A single output file (trace JSON Lines, HTML page) written to a hidden sibling, then renamed.

    An existing file is refused unless ``force`` or ``replace_ok`` (a page regenerated from its
    own folder).
    """

    def __init__(self, path: Path | str, force: bool = False, option: str = "--out",
                 replace_ok: bool = False):
        if str(path).strip() == "":
            raise SimError(f"{option} is empty; give a file path")
        self.path, self.force, self.option, self.replace_ok = Path(path), force, option, replace_ok
        self._made = []

    def validate(self) -> "OutputFile":
        p = self.path
        if p.is_dir():
            raise SimError(f"{self.option} {p} is a folder; give a file path such as {p / 'out'}")
        if p.exists() and not (self.force or self.replace_ok):
            raise SimError(f"{self.option} {p} already exists; choose a new file, or add --force "
                           f"to replace it")
        _check_parent(p, self.option)
        return self

    def write_text(self, text: str) -> Path:
        with self.open() as f:
            f.write(text)
        return self.path

    @contextlib.contextmanager
    def open(self):
        """A text file handle on the hidden sibling; renamed into place when the block ends
        without an error, removed otherwise."""
        self.validate()
        try:
            self._made = _missing_ancestors(self.path)
            for d in self._made:
                d.mkdir(exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.partial-", dir=self.path.parent)
        except OSError as e:
            self.abandon()
            raise _os_error(self.path, e) from None
        self.staging = Path(tmp)
        self._register()
        f = os.fdopen(fd, "w", encoding="utf-8")
        try:
            yield f
            f.close()
            with COMMIT_LOCK:
                os.chmod(self.staging, 0o644)
                os.replace(self.staging, self.path)
                self.committed, self.staging = self.path, None
                self._unregister()
        except OSError as e:
            f.close()
            self.abandon()
            raise _os_error(self.path, e) from None
        except BaseException:
            f.close()
            self.abandon()
            raise
