"""The command line: the Typer app (``app``) and the console entry point (``main``)."""
from simcli.cli.app import app, main

__all__ = ["app", "main"]
