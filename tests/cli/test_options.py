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
        (["header=true"], r"^unknown option header for --option \(Hudi options start with 'hoodie.'\)$"),
        (["cleaner.commits.retained=5"], r"^unknown option cleaner.commits.retained for --option; did you mean hoodie.cleaner.commits.retained\?$"),
        # a key outside hoodie.* that nearly spells an option names it
        (["as.of.instnt=0"], "^unknown option as.of.instnt for --option; did you mean as.of.instant\\?$"),
        (["hoodi.cleaner.commits.retained=5"], "did you mean hoodie.cleaner.commits.retained\\?$"),
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
    # a value out of an option's range is refused where it is parsed, saying what is expected
    with pytest.raises(ConfigError, match="^invalid value '-1' for option hoodie.cleaner.hours.retained: expected an integer from 0$"):
        service_settings(clean_settings, parse_options(["hoodie.cleaner.hours.retained=-1"]))


def test_unused_options_are_noted(capsys):
    config = parse_options(["hoodie.compact.inline.max.delta.commits=2", "hoodie.keep.min.commits=2"])
    service_settings(compaction_settings, config)
    note_unused(config, "compaction schedule")
    err = capsys.readouterr().err
    assert err.strip() == "note: option hoodie.keep.min.commits has no effect on compaction schedule"


@pytest.mark.parametrize(
    ("option", "message"),
    [
        # issue 27 items 9 and 14, through the command line
        ("as.of.instnt=0", "unknown option as.of.instnt for --option; did you mean as.of.instant?"),
        ("hoodie.cleaner.commits.retaind=2", "unknown option hoodie.cleaner.commits.retaind; did you mean hoodie.cleaner.commits.retained?"),
        ("hoodie.cleaner.commits.retained=two", "invalid value 'two' for option hoodie.cleaner.commits.retained: expected an integer from 1"),
        ("hoodie.cleaner.policy=KEEP_SOME", "invalid value 'KEEP_SOME' for option hoodie.cleaner.policy: expected one of KEEP_LATEST_COMMITS"),
        ("hoodie.cleaner.incremental.mode=sometimes", "invalid value 'sometimes' for option hoodie.cleaner.incremental.mode: expected true or false"),
        ("hoodie.index.bloom.fpp=1.5", "invalid value '1.5' for option hoodie.index.bloom.fpp: expected a number greater than 0 and less than 1"),
    ],
)
def test_bad_options_on_the_command_line_name_the_option_value_and_expectation(cli, table, option: str, message: str) -> None:
    result = cli("clean", table.path, "--dry-run", "-o", option)
    assert result.exit_code != 0
    assert message in " ".join(result.stderr.split()), result.stderr
    assert "Traceback" not in result.stderr and "invalid literal" not in result.stderr
