"""One module per command that measures: sweep, ladder, tune, ablate, check, calendar, bench, trace."""
