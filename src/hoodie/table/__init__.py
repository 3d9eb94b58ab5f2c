"""Read-only model of a table: config, timeline, file groups, file slices and views.

:class:`~hoodie.table.table.HoodieTable` opens or creates a table;
:class:`~hoodie.table.fs_view.FileSystemView` says which files make up the table as of an
instant. Nothing here writes data.
"""
