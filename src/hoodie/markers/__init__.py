"""Markers: one per data file a write creates, made before the file, so that a commit can
delete the files of failed or duplicate task attempts and a rollback can find everything a
failed write left. Written by the write handles; read by the commit and by rollback and
restore, which is why they sit below both ``writer`` and ``services``.

``direct``: a marker file per data file; ``timeline_based``: the ``MARKERS<n>`` files a
timeline server batches marker names into (read here, whoever wrote them).
"""
from hoodie.markers.direct import DirectMarkers, MarkerEntry, log_file_written_by

__all__ = ["DirectMarkers", "MarkerEntry", "log_file_written_by"]
