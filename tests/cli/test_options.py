"""``-o key=value`` options of the table-service commands: parsing and validation."""
from __future__ import annotations

import pytest

from hoodie.cli.errors import UsageError
from hoodie.cli.options import note_unused, parse_options, service_settings
from hoodie.errors import ConfigError
from hoodie.services.inline import archive_settings, clean_settings, compaction_settings


def test_parse_options():
    config = parse_options(["hoodie.cleaner.commits.retained=5", " hoodie.keep.min.commits = 3 ", "hoodie.table.name=a=b"])
    assert dict(config.raw) == {"hoodie.cleaner.commits.retained": "5", "hoodie.keep.min.commits": "3", "hoodie.table.name": "a=b"}
    assert parse_options(None).raw == {}
    # aliases are read under Hudi's current key
    assert dict(parse_options(["hoodie.table.type=MERGE_ON_READ"]).raw) == {"hoodie.datasource.write.table.type": "MERGE_ON_READ"}


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (["hoodie.cleaner.commits.retained"], "expected key=value"),
        (["=5"], "expected key=value"),
        (["cleaner.commits.retained=5"], "unknown option cleaner.commits.retained for --option"),
        (["hoodie.keep.min.commits=1", "hoodie.keep.min.commits=2"], "given twice"),
    ],
)
def test_usage_errors(values, message):
    with pytest.raises(UsageError, match=message):
        parse_options(values)


def test_hoodie_config_validates():
    with pytest.raises(ConfigError, match="did you mean hoodie.cleaner.policy"):
        parse_options(["hoodie.cleaner.polic=KEEP_LATEST_COMMITS"])
    with pytest.raises(ConfigError, match="invalid value 'x' for option hoodie.keep.max.commits"):
        parse_options(["hoodie.keep.max.commits=x"])


def test_service_settings_name_the_options():
    config = parse_options(["hoodie.cleaner.commits.retained=5", "hoodie.keep.min.commits=2", "hoodie.keep.max.commits=3"])
    assert service_settings(clean_settings, config).commits_retained == 5
    archive = service_settings(archive_settings, config)
    assert (archive.min_commits, archive.max_commits) == (2, 3)
    with pytest.raises(ConfigError, match=r"^hoodie.keep.max.commits \(3\) must be greater than hoodie.keep.min.commits \(3\)$"):
        service_settings(archive_settings, parse_options(["hoodie.keep.min.commits=3", "hoodie.keep.max.commits=3"]))
    with pytest.raises(ConfigError, match="hoodie.cleaner.hours.retained must not be negative"):
        service_settings(clean_settings, parse_options(["hoodie.cleaner.hours.retained=-1"]))


def test_unused_options_are_noted(capsys):
    config = parse_options(["hoodie.compact.inline.max.delta.commits=2", "hoodie.keep.min.commits=2"])
    service_settings(compaction_settings, config)
    note_unused(config, "compaction schedule")
    err = capsys.readouterr().err
    assert err.strip() == "note: option hoodie.keep.min.commits has no effect on compaction schedule"
