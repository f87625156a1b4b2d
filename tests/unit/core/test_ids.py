"""Job ids, shard names, run ids and local id generation (docs/reference/original.md §1.2, §2.14)."""

from __future__ import annotations

import re

import msgspec
import pytest

from tsumugi_core import ids as ids_module
from tsumugi_core.ids import (
    LOCAL_ID_ENTROPY_BYTES,
    LOCAL_ID_LENGTH,
    InvalidJobIdError,
    InvalidRunIdError,
    JobId,
    RunId,
    format_job_id,
    format_run_id,
    is_valid_local_id,
    new_local_id,
    parse_job_id,
    parse_run_id,
    shard_name,
    shard_name_of,
    validate_binding_name,
    validate_flow_name,
)


class TestBindingName:
    @pytest.mark.parametrize("name", ["MAIL", "_private", "a", "Send_Mail2", "_"])
    def test_accepts_identifiers(self, name: str) -> None:
        assert validate_binding_name(name) == name

    @pytest.mark.parametrize(
        "name", ["", "2MAIL", "MA-IL", "MA IL", "MAIL#0", "\uff2d\uff21\uff29\uff2c", "MAIL\n", "é"]
    )
    def test_rejects_non_identifiers_with_the_original_message(self, name: str) -> None:
        with pytest.raises(InvalidJobIdError) as caught:
            validate_binding_name(name)
        assert str(caught.value).startswith("invalid binding name: ")
        assert str(caught.value).endswith("(alphanumeric, must start with a letter or underscore)")

    def test_message_quotes_the_name(self) -> None:
        with pytest.raises(InvalidJobIdError, match=re.escape('invalid binding name: "2X" (')):
            validate_binding_name("2X")


class TestFormatJobId:
    def test_formats_binding_shard_and_local_id(self) -> None:
        assert format_job_id("MAIL", 0, "abc") == "MAIL#0:abc"
        assert format_job_id("_B", 12, "a-b_C9") == "_B#12:a-b_C9"

    def test_rejects_a_negative_shard(self) -> None:
        with pytest.raises(InvalidJobIdError, match=re.escape("invalid shard: -1 (non-negative integer)")):
            format_job_id("MAIL", -1, "abc")

    def test_rejects_a_bool_shard(self) -> None:
        with pytest.raises(InvalidJobIdError, match="invalid shard: True"):
            format_job_id("MAIL", True, "abc")

    @pytest.mark.parametrize("local_id", ["", "a:b", "a b", "a#b", "ü"])
    def test_rejects_an_invalid_local_id(self, local_id: str) -> None:
        with pytest.raises(InvalidJobIdError, match=r"^invalid localId: "):
            format_job_id("MAIL", 0, local_id)

    def test_rejects_an_invalid_binding(self) -> None:
        with pytest.raises(InvalidJobIdError, match=r"^invalid binding name: "):
            format_job_id("MA-IL", 0, "abc")


class TestParseJobId:
    def test_parses_the_three_parts(self) -> None:
        assert parse_job_id("MAIL#3:abc-_Z9") == JobId(binding="MAIL", shard=3, local_id="abc-_Z9")

    def test_round_trips_through_format(self) -> None:
        job_id = format_job_id("Send_Mail", 7, "k2n4")
        parsed = parse_job_id(job_id)
        assert str(parsed) == job_id
        assert format_job_id(parsed.binding, parsed.shard, parsed.local_id) == job_id

    @pytest.mark.parametrize(
        ("job_id", "message"),
        [
            ("MAIL:abc", 'missing "#": "MAIL:abc"'),
            ("MAIL#0", 'missing ":": "MAIL#0"'),
            ("MAIL#x:abc", 'shard is not a number: "MAIL#x:abc"'),
            ("MAIL#-1:abc", 'shard is not a number: "MAIL#-1:abc"'),
            ("#0:abc", 'invalid binding name: "" (alphanumeric, must start with a letter or underscore)'),
            ("MA#IL#0:abc", 'shard is not a number: "MA#IL#0:abc"'),
            ("MAIL#0:a:b", 'invalid localId: "a:b" (alphanumeric, hyphen and underscore only)'),
            ("MAIL#0:", 'invalid localId: "" (alphanumeric, hyphen and underscore only)'),
        ],
    )
    def test_rejects_the_originals_examples(self, job_id: str, message: str) -> None:
        with pytest.raises(InvalidJobIdError) as caught:
            parse_job_id(job_id)
        assert str(caught.value) == message

    @pytest.mark.parametrize("job_id", ["MAIL#\u0663:abc", "MAIL#:abc", "MAIL#0 :abc", "MAIL#0:abc\n"])
    def test_rejects_non_ascii_digits_empty_shards_and_trailing_newlines(self, job_id: str) -> None:
        with pytest.raises(InvalidJobIdError):
            parse_job_id(job_id)

    def test_shard_with_leading_zeros_is_a_number(self) -> None:
        assert parse_job_id("MAIL#007:x").shard == 7

    def test_job_id_is_a_frozen_struct(self) -> None:
        parsed = parse_job_id("MAIL#0:abc")
        with pytest.raises(AttributeError):
            parsed.shard = 1  # type: ignore[misc]
        assert msgspec.json.encode(parsed) == b'{"binding":"MAIL","shard":0,"local_id":"abc"}'


def test_a_formatted_id_parses_to_the_parts_it_was_built_from() -> None:
    job_id = format_job_id("MAIL", 12, "order-7")
    assert parse_job_id(job_id) == JobId(binding="MAIL", shard=12, local_id="order-7")
    with pytest.raises(InvalidJobIdError, match="shard is not a number"):
        parse_job_id("MAIL#x:order-7")


def test_remembered_ids_stay_bounded() -> None:
    for n in range(ids_module._MAX_PARSED + 10):  # pyright: ignore[reportPrivateUsage]
        format_job_id("MAIL", 0, f"j{n}")
    assert len(ids_module._PARSED) <= ids_module._MAX_PARSED  # pyright: ignore[reportPrivateUsage]
    assert parse_job_id("MAIL#0:j1") == JobId(binding="MAIL", shard=0, local_id="j1")


class TestShardNames:
    def test_shard_name(self) -> None:
        assert shard_name("MAIL", 0) == "MAIL#0"
        assert shard_name("MAIL", 15) == "MAIL#15"

    def test_shard_name_validates(self) -> None:
        with pytest.raises(InvalidJobIdError, match="invalid shard"):
            shard_name("MAIL", -2)
        with pytest.raises(InvalidJobIdError, match="invalid binding name"):
            shard_name("", 0)

    def test_a_remembered_name_is_not_given_for_an_equal_value_of_another_type(self) -> None:
        # Names are remembered per (binding, shard); True == 1 and hashes alike, yet it is no shard index.
        assert shard_name("MAIL", 1) == "MAIL#1"
        with pytest.raises(InvalidJobIdError, match="invalid shard"):
            shard_name("MAIL", True)

    def test_shard_name_of_a_job_id(self) -> None:
        assert shard_name_of("MAIL#3:abc") == "MAIL#3"
        assert parse_job_id("MAIL#3:abc").shard_name == "MAIL#3"

    def test_shard_name_of_rejects_bad_ids(self) -> None:
        with pytest.raises(InvalidJobIdError, match='missing "#"'):
            shard_name_of("MAIL:abc")


class TestRunIds:
    def test_format_and_parse(self) -> None:
        assert format_run_id("nightly-report", "r_1") == "nightly-report:r_1"
        parsed = parse_run_id("nightly-report:r_1")
        assert parsed == RunId(flow="nightly-report", local_id="r_1")
        assert str(parsed) == "nightly-report:r_1"

    @pytest.mark.parametrize(
        ("run_id", "message"),
        [
            ("flow", 'missing ":": "flow"'),
            (":abc", 'invalid flow name: "" (alphanumeric, hyphen and underscore only)'),
            ("fl ow:abc", 'invalid flow name: "fl ow" (alphanumeric, hyphen and underscore only)'),
            ("flow:", 'invalid localId: "" (alphanumeric, hyphen and underscore only)'),
            ("flow:a:b", 'invalid localId: "a:b" (alphanumeric, hyphen and underscore only)'),
        ],
    )
    def test_parse_rejects(self, run_id: str, message: str) -> None:
        with pytest.raises(InvalidRunIdError) as caught:
            parse_run_id(run_id)
        assert str(caught.value) == message

    def test_format_rejects(self) -> None:
        with pytest.raises(InvalidRunIdError, match="invalid flow name"):
            format_run_id("a.b", "x")
        with pytest.raises(InvalidRunIdError, match="invalid localId"):
            format_run_id("flow", "x y")

    def test_flow_names_allow_hyphens_unlike_bindings(self) -> None:
        assert validate_flow_name("my-flow") == "my-flow"
        with pytest.raises(InvalidJobIdError):
            validate_binding_name("my-flow")


class TestNewLocalId:
    def test_zero_entropy_gives_the_smallest_id(self) -> None:
        assert new_local_id(bytes(LOCAL_ID_ENTROPY_BYTES)) == "a" + "0" * 23

    def test_is_deterministic_in_its_input(self) -> None:
        entropy = bytes(range(LOCAL_ID_ENTROPY_BYTES))
        assert new_local_id(entropy) == new_local_id(entropy)

    def test_is_the_mixed_radix_reading_of_its_bytes(self) -> None:
        # One letter (radix 26), then 23 base-36 digits, least significant first: the ids a given entropy
        # made before stay the same (the simulator's seeds replay by them).
        def reference(entropy: bytes) -> str:
            number, first = divmod(int.from_bytes(entropy, "big"), 26)
            chars = ["abcdefghijklmnopqrstuvwxyz"[first]]
            for _ in range(23):
                number, digit = divmod(number, 36)
                chars.append("0123456789abcdefghijklmnopqrstuvwxyz"[digit])
            return "".join(chars)

        samples = [bytes(LOCAL_ID_ENTROPY_BYTES), b"\xff" * LOCAL_ID_ENTROPY_BYTES, b"\xff" * 30]
        samples += [
            bytes((seed * 131 + i * 71) % 256 for i in range(LOCAL_ID_ENTROPY_BYTES)) for seed in range(500)
        ]
        for entropy in samples:
            assert new_local_id(entropy) == reference(entropy)

    def test_different_entropy_gives_different_ids(self) -> None:
        ids = {new_local_id(i.to_bytes(LOCAL_ID_ENTROPY_BYTES, "big")) for i in range(2000)}
        assert len(ids) == 2000

    @pytest.mark.parametrize("seed", [0, 1, 255, 7919])
    def test_shape(self, seed: int) -> None:
        entropy = bytes((seed * 31 + i * 17) % 256 for i in range(LOCAL_ID_ENTROPY_BYTES))
        local_id = new_local_id(entropy)
        assert len(local_id) == LOCAL_ID_LENGTH == 24
        assert re.fullmatch(r"[a-z][a-z0-9]{23}", local_id)
        assert is_valid_local_id(local_id)

    def test_all_ones_entropy_uses_late_letters(self) -> None:
        local_id = new_local_id(b"\xff" * LOCAL_ID_ENTROPY_BYTES)
        assert re.fullmatch(r"[a-z][a-z0-9]{23}", local_id)
        assert local_id != "a" + "0" * 23

    def test_extra_entropy_is_accepted(self) -> None:
        assert len(new_local_id(b"\x01" * 64)) == 24

    def test_too_little_entropy_is_refused(self) -> None:
        with pytest.raises(ValueError, match="random_bytes must hold at least 24 bytes, got 8"):
            new_local_id(bytes(8))

    def test_usable_as_a_job_id_local_part(self) -> None:
        local_id = new_local_id(b"\x5a" * LOCAL_ID_ENTROPY_BYTES)
        assert parse_job_id(format_job_id("MAIL", 1, local_id)).local_id == local_id


# Id errors quote exactly the part at fault: where the colon is looked for, a non-ASCII name shown as typed,
# and the local id of a job or run id that is being built.


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
