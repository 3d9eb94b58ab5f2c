"""The ``hoodie`` command line: a thin adapter over the public API.

Every command opens tables through :class:`hoodie.HoodieTable` and reads rows through
:func:`hoodie.read`; nothing here knows file layouts or writes to a table.

* :mod:`~hoodie.cli.main` — the typer application and its commands' signatures;
* :mod:`~hoodie.cli.timeline`, :mod:`~hoodie.cli.show`, :mod:`~hoodie.cli.read` — one
  module per command: collect plain data from the API, then render it;
* :mod:`~hoodie.cli.rows` — Arrow rows as a rich table, JSON or CSV;
* :mod:`~hoodie.cli.instants` — parsing the instant times users type;
* :mod:`~hoodie.cli.output` — consoles, progress display, size formatting, JSON output;
* :mod:`~hoodie.cli.errors` — turning errors into one red line and exit code 1.
"""
