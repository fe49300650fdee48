"""Reports: tables from tallies, printed tables and files, the output contract, the HTML page."""
