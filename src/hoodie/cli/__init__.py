"""The ``hoodie`` command line: a thin adapter over the public API.

Every command opens tables through :class:`hoodie.HoodieTable`, reads rows through
:func:`hoodie.read` and runs table services through :mod:`hoodie.services`; nothing here
knows file layouts or decides what a service does.

* :mod:`~hoodie.cli.main` — the typer application and its commands' signatures;
* :mod:`~hoodie.cli.timeline`, :mod:`~hoodie.cli.show`, :mod:`~hoodie.cli.read` — one
  module per inspecting command: collect plain data from the API, then render it;
* :mod:`~hoodie.cli.metadata` — ``hoodie metadata ...``: the metadata table through
  :mod:`hoodie.metadata_table` (its reader and its stats), with each command's duration;
* :mod:`~hoodie.cli.explain`, :mod:`~hoodie.cli.compaction`, :mod:`~hoodie.cli.clean`,
  :mod:`~hoodie.cli.archive`, :mod:`~hoodie.cli.savepoint`, :mod:`~hoodie.cli.restore` —
  one module per table-service command: call the service's plan or run function, then
  render its result or its reason for not running;
* :mod:`~hoodie.cli.options` — Hudi options given as ``-o key=value``, validated through
  :class:`hoodie.config.HoodieConfig`;
* :mod:`~hoodie.cli.rows` — Arrow rows as a rich table, JSON or CSV;
* :mod:`~hoodie.cli.instants` — parsing the instant times users type;
* :mod:`~hoodie.cli.output` — consoles, progress display, size formatting, JSON output;
* :mod:`~hoodie.cli.errors` — turning errors into one red line and exit code 1.
"""
