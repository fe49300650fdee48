class SimError(Exception):
    """Bad input or an unusable environment: shown as one line, exit code 2, no traceback."""
