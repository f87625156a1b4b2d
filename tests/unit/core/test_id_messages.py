"""Id errors quote exactly the part at fault (issue 17): where the colon is looked for, a non-ASCII name shown
as typed, and the local id of a job or run id that is being built."""

from __future__ import annotations

import pytest

from tsumugi_core.ids import InvalidJobIdError, InvalidRunIdError, format_job_id, format_run_id, parse_job_id


@pytest.mark.parametrize(
    ("job_id", "message"),
    [
        ("MAIL#:x", 'shard is not a number: "MAIL#:x"'),  # the colon right after "#" still ends the shard
        ("MA:IL#0", 'missing ":": "MA:IL#0"'),  # a colon before "#" does not count
        ("MA:IL#0:x", 'invalid binding name: "MA:IL" (alphanumeric, must start with a letter or underscore)'),
        ("MÄIL#0:x", 'invalid binding name: "MÄIL" (alphanumeric, must start with a letter or underscore)'),
    ],
)
def test_a_bad_job_id_is_quoted_as_given(job_id: str, message: str) -> None:
    with pytest.raises(InvalidJobIdError) as caught:
        parse_job_id(job_id)
    assert str(caught.value) == message


def test_building_an_id_quotes_the_bad_local_id() -> None:
    rule = 'invalid localId: "bad id" (alphanumeric, hyphen and underscore only)'
    with pytest.raises(InvalidJobIdError) as job:
        format_job_id("MAIL", 0, "bad id")
    with pytest.raises(InvalidRunIdError) as run:
        format_run_id("flow", "bad id")
    assert (str(job.value), str(run.value)) == (rule, rule)
