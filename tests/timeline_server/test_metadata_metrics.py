"""The timeline server exports on ``/metrics`` the work its views did on the served
tables' metadata tables (issue 29: ``hoodie_metadata_*``), scraped from a real server on
127.0.0.1 after it served views of copies of the tables Apache Hudi 0.15 wrote."""
from __future__ import annotations

import urllib.request
from pathlib import Path

import pytest
from mdt_checks import SAMPLE_NAMES, copy_sample
from prometheus_client.parser import text_string_to_metric_families

from hoodie.metadata_table import MetadataTableReader
from hoodie.metadata_table.settings import FILES
from hoodie.server_calls import ServerCallError, ServerClient
from hoodie.table.remote_view import RemoteFileSystemView
from hoodie.table.table import HoodieTable
from hoodie.table.view_stores import StoreSettings
from hoodie.timeline_server import TimelineServer

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def _scrape(server: TimelineServer) -> Samples:
    text = urllib.request.urlopen(f"http://{server.host}:{server.port}/metrics", timeout=10).read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text) for s in family.samples
    }


def _serve(server: TimelineServer, base: str) -> list[str]:
    """Ask the server for every partition's latest slices, as a writer's view does."""
    client = ServerClient(server.address)
    try:
        view = RemoteFileSystemView(client, base, HoodieTable.open(base).timeline)
        partitions = view.all_partition_paths()
        assert view.latest_slices_all()
        return partitions
    finally:
        client.close()


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_metrics_count_the_views_lookups_in_the_metadata_table(tmp_path: Path, name: str) -> None:
    base = str(copy_sample(name, tmp_path))
    with TimelineServer() as server:
        server.add_table(base)
        before = _scrape(server)
        assert before[("hoodie_metadata_compaction_total", ())] == 0  # declared, zero until done
        assert not any(n == "hoodie_metadata_lookup_total" for n, _ in before)
        partitions = _serve(server, base)
        samples = _scrape(server)
    files_slice = MetadataTableReader(HoodieTable.open(base)).file_slices(FILES)[0]
    kind = (("kind", "files"),)
    assert samples[("hoodie_metadata_lookup_total", (("kind", "partitions"),))] == 1
    assert samples[("hoodie_metadata_lookup_hits_total", (("kind", "partitions"),))] == 1
    # each partition looked up once (the server keeps its listing), and found
    assert samples[("hoodie_metadata_lookup_keys_total", kind)] == len(partitions)
    assert samples[("hoodie_metadata_lookup_hits_total", kind)] == len(partitions)
    lookups = samples[("hoodie_metadata_lookup_total", kind)] + 1
    assert samples[("hoodie_metadata_lookup_seconds_total", kind)] > 0
    # the files partition has one file group: each lookup read its slice once
    where = (("partition", FILES),)
    assert samples[("hoodie_metadata_scan_total", where)] == lookups
    assert samples[("hoodie_metadata_scan_log_files_total", where)] == lookups * len(files_slice.log_files)
    assert samples[("hoodie_metadata_scan_log_bytes_total", where)] == lookups * sum(lf.size for lf in files_slice.log_files)
    assert samples[("hoodie_metadata_scan_base_files_total", where)] == lookups * (files_slice.base_file is not None)


def test_a_server_listing_storage_records_no_lookup_and_servers_count_apart(tmp_path: Path) -> None:
    base = str(copy_sample(SAMPLE_NAMES[0], tmp_path))
    with TimelineServer() as listing, TimelineServer() as through_mdt:
        listing.add_table(base, views=StoreSettings(metadata_table=False))
        through_mdt.add_table(base)
        _serve(listing, base)
        assert not any(n.startswith("hoodie_metadata_lookup") for n, _ in _scrape(listing))
        assert not any(n.startswith("hoodie_metadata_lookup") for n, _ in _scrape(through_mdt))
        _serve(through_mdt, base)
        assert _scrape(through_mdt)[("hoodie_metadata_lookup_total", (("kind", "partitions"),))] == 1
        assert not any(n.startswith("hoodie_metadata_lookup") for n, _ in _scrape(listing))


def test_validated_listings_count_comparisons_and_differences(tmp_path: Path) -> None:
    base = copy_sample(SAMPLE_NAMES[0], tmp_path)
    with TimelineServer() as server:
        server.add_table(str(base), views=StoreSettings(validate_metadata=True))
        partitions = _serve(server, str(base))
        samples = _scrape(server)
    # every answer of the metadata table compared once
    assert samples[("hoodie_metadata_validate_total", (("check", "partitions"),))] == 1
    assert samples[("hoodie_metadata_validate_total", (("check", "files"),))] == samples[("hoodie_metadata_lookup_total", (("kind", "files"),))]
    assert samples[("hoodie_metadata_lookup_keys_total", (("kind", "files"),))] == len(partitions)
    assert samples[("hoodie_metadata_validate_errors_total", (("check", "files"),))] == 0

    # a committed base file lost on storage: the comparison finds it, and counts it
    table = HoodieTable.open(str(base))
    gone = next(s.base_file for s in table.local_view().latest_slices_all() if s.base_file is not None)
    Path(gone.path).unlink()
    with TimelineServer() as server:
        server.add_table(str(base), views=StoreSettings(validate_metadata=True))
        with pytest.raises(ServerCallError, match=f"MetadataOutOfSyncError: .*{gone.file_name}' listed by the metadata table, not on storage"):
            _serve(server, str(base))
        samples = _scrape(server)
    assert samples[("hoodie_metadata_validate_errors_total", (("check", "files"),))] == 1
