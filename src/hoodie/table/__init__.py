"""Read-only model of a table: config, timeline, file groups, file slices and views.

:class:`~hoodie.table.table.HoodieTable` opens or creates a table;
:class:`~hoodie.table.fs_view.FileSystemView` says which files make up the table as of an
instant. Nothing here writes data. Its public API is what this package exports.
"""
from __future__ import annotations

from hoodie.table.file_group import BaseFile, FileGroup, FileSlice, LogFile
from hoodie.table.fs_view import FileSystemView, TableView
from hoodie.table.table import HoodieTable
from hoodie.table.validate import ValidationReport, validate_table

__all__ = ["BaseFile", "FileGroup", "FileSlice", "FileSystemView", "HoodieTable", "TableView", "LogFile", "ValidationReport", "validate_table"]
