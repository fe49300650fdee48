"""The errors a command turns into one line on stderr (never a traceback).

Exit codes: 2 = bad input or an unusable environment (``SimError``), 1 = the command could not
write its result (``WriteError``: disk full, permissions; nothing partial is left) or ``check``
found that balance moved, 130 / 143 = interrupted by SIGINT / SIGTERM (nothing written).
"""


class SimError(ValueError):
    """Bad input or an unusable environment: shown as one line, exit code 2, no traceback.

    A ``ValueError``, so the Python API (``simcli.run``) raises what callers expect for bad
    arguments, with the same one-line message the command line prints.
    """


class WriteError(Exception):
    """Writing the result failed (disk full, permissions): one line naming the path, exit code 1."""
