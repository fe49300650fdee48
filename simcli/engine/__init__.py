"""The engine: run specification and execute, chunk planning and tallies, backends, compile, interrupt."""
