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


NAME_MAX = 255          # bytes in one file name (ext4, tmpfs, xfs, btrfs)
_HIDDEN_STEM = 64       # characters of the name kept in hidden staging / .old names


def _hidden(path: Path, tag: str) -> str:
    """A hidden sibling's name prefix (``.NAME.partial-``), short enough for any legal NAME."""
    return f".{path.name[:_HIDDEN_STEM]}.{tag}-"


def _probe(path: Path, option: str) -> tuple[bool, bool, bool]:
    """(exists, is a folder, is a symlink) of ``path``; a name the OS refuses is one line."""
    if len(os.fsencode(path.name)) > NAME_MAX:
        raise SimError(f"{option} {path}: the name is longer than file systems allow "
                       f"({NAME_MAX} bytes); choose a shorter name")
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False, False, path.is_symlink()
    except NotADirectoryError:
        return False, False, False
    except OSError as e:
        raise SimError(f"{option} {path}: {e.strerror or e}") from None
    import stat
    return True, stat.S_ISDIR(st.st_mode), path.is_symlink()


def _real(path: Path, option: str) -> Path:
    """The absolute path with every symlink followed (a dangling one: where it points)."""
    try:
        return Path(os.path.realpath(path, strict=False))
    except FileNotFoundError:
        raise SimError(f"{option} {path}: the current folder no longer exists; give an absolute "
                       f"path") from None
    except (OSError, RuntimeError) as e:
        why = "a symlink loop" if isinstance(e, RuntimeError) or getattr(e, "errno", 0) == errno.ELOOP \
            else (e.strerror or str(e))
        raise SimError(f"{option} {path}: {why}; choose another path") from None


def _cwd() -> Path | None:
    try:
        return Path(os.getcwd()).resolve()
    except FileNotFoundError:
        return None


def _refuse_protected(path: Path, real: Path, option: str, inputs=()) -> None:
    """Refuse a destination that is, or contains, the current, home or root folder, an input,
    the game configs every command reads or simcli itself: replacing it would remove what is not
    the command's result."""
    from simcli.config.jobs import configs_dir
    named = [("the root folder", Path("/")), ("the current folder", _cwd()),
             ("the home folder", _real(Path.home(), "HOME")),
             ("simcli's game configs", _real(configs_dir(), "configs")),
             ("the simcli installation", _real(Path(__file__).parents[1], "simcli"))]
    named += [(f"the input {p}", _real(Path(p), "input")) for p in inputs]
    for what, prot in named:
        if prot is not None and (prot == real or real in prot.parents):
            raise SimError(f"{option} {path} is or contains {what}; give a new folder for the "
                           f"results, e.g. {option} my-run")


def _refuse_unremovable(path: Path, option: str) -> None:
    """--force replaces a folder whole: refuse it up front when its contents cannot be removed."""
    for root, dirs, _ in os.walk(path):
        for d in [root, *(os.path.join(root, x) for x in dirs)]:
            if not os.path.islink(d) and not os.access(d, os.W_OK | os.X_OK):
                raise SimError(f"{option} {path} cannot be replaced: folder {d} is not writable "
                               f"(its files could not be removed); choose a new folder")


def _taken(e: OSError) -> bool:
    return e.errno in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR, errno.EISDIR)


def _lost_race(option: str, path: Path) -> SimError:
    return SimError(f"{option} {path} was written by another command while this one ran; "
                    f"nothing written. Rerun with a new {option}")


def _missing_ancestors(path: Path) -> list[Path]:
    """The folders above ``path`` that do not exist yet, nearest last."""
    missing = []
    p = path.parent
    while not os.path.lexists(p) and p != p.parent:
        missing.append(p)
        p = p.parent
    return list(reversed(missing))


def _existing_ancestor(path: Path) -> Path:
    p = path.parent
    while not os.path.lexists(p) and p != p.parent:
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


class ScratchFolder(_Staged):
    """A private temporary folder (e.g. a local Dask cluster's ``local_directory``), removed by
    ``remove`` and, on an interrupt, by ``abandon_all`` like any staged output."""

    def __init__(self, prefix: str = "simcli-"):
        self._made = []
        try:
            self.staging = Path(tempfile.mkdtemp(prefix=prefix))
        except OSError as e:
            raise _os_error(Path(tempfile.gettempdir()), e) from None
        self.path = self.staging
        self._register()

    def remove(self) -> None:
        self.abandon()


def _refuse_long_names(p: Path, opt: str) -> None:
    """One line for a path with a name longer than file systems allow (folders and files alike)."""
    if any(len(os.fsencode(part)) > NAME_MAX for part in p.parts):
        raise SimError(f"{opt} {p}: a name in it is longer than file systems allow "
                       f"({NAME_MAX} bytes); choose a shorter name")


class OutputFolder(_Staged):
    """A result folder written under the output contract.

    ``path`` None means the default ``reports/run-<time>`` (unique: a taken name gets ``-2``,
    ``-3`` ...). ``option`` names the flag in messages. ``inputs``: files or folders the command
    reads, which the destination must not contain. A symlink as ``path`` is followed: the
    result goes where it points, and the link stays.
    """

    def __init__(self, path: Path | str | None, force: bool = False, option: str = "--out",
                 default_prefix: str = "run", inputs=()):
        self.option = option
        self.force = force
        self.default = path is None
        self.inputs = [p for p in inputs if p is not None]
        if path is not None and str(path).strip() == "":
            raise SimError(f"{option} is empty; give a folder path (or leave {option} out for "
                           f"reports/{default_prefix}-<time>)")
        self.path = Path(path) if path is not None else Path("reports") / time.strftime(
            f"{default_prefix}-%Y%m%d-%H%M%S")
        self.target: Path | None = None   # the real destination (symlinks followed), once validated
        self._made = []

    def validate(self) -> "OutputFolder":
        """Refuse an unusable destination before anything runs. Creates nothing."""
        p, opt = self.path, self.option
        _refuse_long_names(p, opt)
        real = _real(p, opt)
        _refuse_protected(p, real, opt, self.inputs)
        exists, is_dir, _ = _probe(real, opt)
        if exists and not is_dir and not self.default:
            raise SimError(f"{opt} {p} exists and is not a folder (a file); choose a folder path")
        if is_dir and not self.default and any(real.iterdir()):
            if not self.force:
                raise SimError(f"{opt} {p} is not empty; choose a new folder, or add "
                               f"--force to replace it whole")
            _refuse_unremovable(real, opt)
        _check_parent(real, opt)
        self.target = real
        return self

    def stage(self) -> Path:
        """Create the hidden staging folder (beside the destination) and return it. Validates
        first if that was not done; after validation an OS error here is a failed write (exit 1)."""
        if self.staging is not None:
            return self.staging
        if self.target is None:
            self.validate()
        try:
            self._made = _missing_ancestors(self.target)
            for d in self._made:
                d.mkdir(exist_ok=True)
            self.staging = Path(tempfile.mkdtemp(prefix=_hidden(self.target, "partial"),
                                                 dir=self.target.parent))
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
                    self._replace(self.target)
            except OSError as e:
                self.abandon()
                raise _os_error(dest, e) from None
            except BaseException:
                self.abandon()
                raise
            self.committed = dest
            self.staging = None
            self._unregister()
            return dest

    def _replace(self, dest: Path) -> None:
        """Rename the staging folder onto ``dest``: an empty folder or nothing is replaced
        atomically; a non-empty one only with --force (swapped out, then removed). If another
        command filled ``dest`` meanwhile, the rename fails: exactly one writer wins."""
        old = None
        if self.force and dest.is_dir() and any(dest.iterdir()):
            old = Path(tempfile.mkdtemp(prefix=_hidden(dest, "old"), dir=dest.parent))
            try:
                os.rename(dest, old / "x")
            except FileNotFoundError:  # another --force writer swapped it out first
                old.rmdir()
                old = None
        try:
            os.rename(self.staging, dest)
        except OSError as e:
            if old is not None:
                try:
                    os.rename(old / "x", dest)  # put the earlier result back
                    old.rmdir()
                except OSError:  # another writer replaced it meanwhile: it is gone either way
                    shutil.rmtree(old, ignore_errors=True)
            if _taken(e):
                raise _lost_race(self.option, self.path) from None
            raise
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
            if os.path.lexists(old):
                raise WriteError(f"{self.option} {self.path} was replaced, but the earlier result "
                                 f"could not be removed completely: {old} is left")

    def _rename_unique(self) -> Path:
        base = self.path
        for k in range(1, 10_000):
            dest = base if k == 1 else base.with_name(f"{base.name}-{k}")
            if os.path.lexists(dest):
                continue
            try:
                os.rename(self.staging, dest)  # atomic; fails if another run took the name
                return dest
            except OSError as e:
                if _taken(e):
                    continue
                raise
        raise OSError(errno.EEXIST, "no free run folder name")


class OutputFile(_Staged):
    """A single output file (trace JSON Lines, HTML page) written to a hidden sibling, then renamed.

    An existing file is refused unless ``force`` or ``replace_ok`` (a page regenerated from its
    own folder). Without either, the rename cannot replace a file another command wrote
    meanwhile (a hard link, which fails if the name is taken): exactly one writer wins.
    """

    def __init__(self, path: Path | str, force: bool = False, option: str = "--out",
                 replace_ok: bool = False):
        if str(path).strip() == "":
            raise SimError(f"{option} is empty; give a file path")
        self.path, self.force, self.option, self.replace_ok = Path(path), force, option, replace_ok
        self.target: Path | None = None
        self._made = []

    def validate(self) -> "OutputFile":
        p, opt = self.path, self.option
        _refuse_long_names(p, opt)
        real = _real(p, opt)
        exists, is_dir, _ = _probe(real, opt)
        if is_dir:
            raise SimError(f"{opt} {p} is a folder; give a file path such as {p / 'out'}")
        if exists and not (self.force or self.replace_ok):
            raise SimError(f"{opt} {p} already exists; choose a new file, or add --force "
                           f"to replace it")
        _check_parent(real, opt)
        self.target = real
        return self

    def write_text(self, text: str) -> Path:
        with self.open() as f:
            f.write(text)
        return self.path

    def _stage(self):
        if self.target is None:
            self.validate()
        try:
            self._made = _missing_ancestors(self.target)
            for d in self._made:
                d.mkdir(exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=_hidden(self.target, "partial"), dir=self.target.parent)
        except OSError as e:
            self.abandon()
            raise _os_error(self.path, e) from None
        self.staging = Path(tmp)
        self._register()
        return os.fdopen(fd, "w", encoding="utf-8")

    def _commit(self) -> None:
        with COMMIT_LOCK:
            os.chmod(self.staging, 0o644)
            if self.force or self.replace_ok:
                os.replace(self.staging, self.target)
            else:
                _link_new(self.staging, self.target, self.option, self.path)
            self.committed, self.staging = self.path, None
            self._unregister()

    @contextlib.contextmanager
    def open(self):
        """A text file handle on the hidden sibling; renamed into place when the block ends
        without an error, removed otherwise."""
        f = self._stage()
        try:
            yield f
            f.close()
            self._commit()
        except OSError as e:
            _close_quietly(f)
            self.abandon()
            raise _os_error(self.path, e) from None
        except BaseException:
            _close_quietly(f)
            self.abandon()
            raise


def _link_new(staging: Path, target: Path, option: str, shown: Path) -> None:
    """Give ``staging`` the name ``target`` only if no file has it (hard link, then unlink)."""
    try:
        os.link(staging, target)
    except OSError as e:
        if e.errno == errno.EEXIST:
            raise _lost_race(option, shown) from None
        if e.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            raise
        if os.path.lexists(target):  # no hard links here (e.g. FAT): check, then rename
            raise _lost_race(option, shown) from None
        os.rename(staging, target)
        return
    os.unlink(staging)


def _close_quietly(f) -> None:
    try:
        f.close()
    except OSError:  # the disk filled while the buffer was flushed: the file is removed anyway
        pass
