"""Checks shared by the command line and the Python API, before anything runs.

* ``check_environment``: environment variables simcli (or Numba, on import) reads; a hostile
  value is one line (``SimError``), not a traceback from deep inside Numba.
* ``api_arguments``: the Python types of ``simcli.run``'s arguments (the command line only ever
  has text), then the numeric ranges through the very option declarations of ``simcli run``,
  so the API and the CLI refuse the same value with the same words.
"""
from __future__ import annotations

import os

from simcli.errors import SimError

# environment variable -> (what it must be, test)
ENVIRONMENT = {
    "NUMBA_NUM_THREADS": ("a whole number >= 1 (the most threads a run may use)",
                          lambda v: v.strip().isdecimal() and v.strip().isascii() and int(v) >= 1),
}

_INT = ("players", "games", "seed", "threads", "chunk", "year")
_NUMBER = ("until_ci",)
_TEXT = ("game", "variant", "policy", "date", "birthday")
_FLAG = ("rotate", "progress")


def check_environment(env=None) -> None:
    """Refuse a set but unusable environment variable in one line naming it and what is valid."""
    env = os.environ if env is None else env
    for name, (valid, ok) in ENVIRONMENT.items():
        value = env.get(name)
        if value is not None and value != "" and not ok(value):
            raise SimError(f"environment variable {name}={value!r} is not {valid}; unset it or "
                           f"set e.g. {name}=2")


def _kind(v) -> str:
    return f"{type(v).__name__} {v!r}"[:60]


def _check_type(name: str, v) -> None:
    if v is None:
        return
    if name in _INT and (isinstance(v, bool) or not isinstance(v, int)):
        raise SimError(f"{name} must be a whole number (int), not {_kind(v)}")
    if name in _NUMBER and (isinstance(v, bool) or not isinstance(v, (int, float))):
        raise SimError(f"{name} must be a number, not {_kind(v)}")
    if name in _TEXT and not isinstance(v, str):
        raise SimError(f"{name} must be a string, not {_kind(v)}")
    if name in _FLAG and not isinstance(v, bool):
        raise SimError(f"{name} must be True or False, not {_kind(v)}")
    if name in ("seats", "skill") and not (isinstance(v, str) or (isinstance(v, (list, tuple))
                                                                   and all(isinstance(x, str) for x in v))):
        raise SimError(f"{name} must be a comma-separated string or a list of policy names, not {_kind(v)}")
    if name == "cards" and not isinstance(v, (str, os.PathLike)):
        raise SimError(f"cards must be a file path (str or Path), not {_kind(v)}")
    if name == "rules" and not (isinstance(v, dict) and all(isinstance(k, str) for k in v)):
        raise SimError(f"rules must be a dict of rule name -> value, not {_kind(v)}")


def _cli_ranges(values: dict) -> None:
    """The ranges ``simcli run`` declares for its numeric options, checked by those declarations
    (one message for one value, whichever way it came in)."""
    import typer.main
    from simcli.cli.app import app
    from typer._click.exceptions import BadParameter
    run = typer.main.get_command(app).commands["run"]
    ctx = run.make_context("run", [], resilient_parsing=True)
    for param in run.params:
        v = values.get(param.name)
        if param.name in (*_INT, *_NUMBER) and v is not None:
            try:
                param.process_value(ctx, v)
            except BadParameter as e:
                raise SimError(" ".join(e.format_message().split())) from None


def api_arguments(**values) -> None:
    """Types first (a list where a name belongs is one line), then the CLI's ranges."""
    for name, v in values.items():
        _check_type(name, v)
    _cli_ranges(values)
