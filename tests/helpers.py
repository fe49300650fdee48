"""Helpers shared by several test files: driving the real CLI entry point, paired matches."""
from __future__ import annotations

import sys

from click.testing import CliRunner

from kernels import layout

from simcli import cli
from simcli import config as cfg
from simcli import runner
from simcli.stats import paired_difference


class _Main:
    """Adapter so click's test runner drives simcli.cli.main, the real console entry point."""
    name = "simcli"

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        sys.argv = ["simcli", *(args or [])]
        cli.main()


def invoke(*args):
    """Run the CLI as the console script does: errors become one line and an exit code."""
    return CliRunner().invoke(_Main(), list(args))


def paired_match(game: str, seats: str, deals: int, seed: int = 5, players: int | None = None):
    """(policy tally, paired difference of the first two policies) on seat-rotated deals."""
    (res,) = runner.run_jobs([cfg.resolve(game, players=players, seats=seats)], deals, seed,
                             progress=False, rotate=True)
    return res.policy, paired_difference(res.policy, 0, 1)


def without_arc(rows, n_counters: int):
    """Result rows without their arc block (kernels/arc.py), for plain-Python references that
    state the rest of the row; tests/test_arc.py checks the arc block against traces."""
    width = rows.shape[-1]
    S = (width - layout.N_FIXED - n_counters - layout.ARC_FIXED) // 3   # width = 3S + 12 + C
    return rows[..., :layout.col_arc(S, n_counters)]
