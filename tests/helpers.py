"""Helpers shared by several test files: driving the real CLI entry point, paired matches."""
from __future__ import annotations

import contextlib
import io
import sys
import traceback
from dataclasses import dataclass

from kernels import layout

from simcli import cli
from simcli.config import jobs as cfg
from simcli.engine import runner
from simcli.stats import paired_difference


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str
    output: str  # stdout and stderr interleaved, as a terminal shows them
    exception: BaseException | None = None  # an uncaught error (its traceback is in stderr)


class _Tee(io.StringIO):
    def __init__(self, both: io.StringIO):
        super().__init__()
        self.both = both

    def write(self, text):
        self.both.write(text)
        return super().write(text)

    def isatty(self):
        return False


def invoke(*args) -> CliResult:
    """Run simcli.cli.main, the real console entry point, as the console script does: errors
    become one line on stderr and an exit code."""
    both = io.StringIO()
    out, err = _Tee(both), _Tee(both)
    argv = sys.argv
    sys.argv = ["simcli", *map(str, args)]
    code, exc = 0, None
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                cli.main()
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            except Exception as e:  # what the console script would show as a traceback
                traceback.print_exc()
                code, exc = 1, e
    finally:
        sys.argv = argv
    return CliResult(code, out.getvalue(), err.getvalue(), both.getvalue(), exc)


def paired_match(game: str, seats: str, deals: int, seed: int = 5, players: int | None = None):
    """(policy tally, paired difference of the first two policies) on seat-rotated deals."""
    (res,) = runner.run_jobs([cfg.resolve(game, players=players, seats=seats)], deals, seed,
                             progress=False, rotate=True)
    return res.policy, paired_difference(res.policy, 0, 1)


def without_arc(rows, n_counters: int):
    """Result rows without their arc block (kernels/arc.py), for plain-Python references that
    state the rest of the row; tests/test_arc.py checks the arc block against traces."""
    return rows[..., :layout.RowLayout.of_width(rows.shape[-1], n_counters).arc.start]
