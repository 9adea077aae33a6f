"""`--current FILE`: one configuration or a fleet map, validated by schemas/current.v1.schema.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from sessaudit.formats.tiny_agent.build.session import Configuration
from sessaudit.formats.tiny_agent.read.digests import sha256_digest
from sessaudit.formats.tiny_agent.recover.current import (
    CurrentConfiguration,
    CurrentFileError,
    CurrentTool,
    configuration_from_json,
    load_current,
    parse_current,
)
from sessaudit.resources import load_schema
from tests.shared import conformance_dir

SNAPSHOT = Configuration(tools=("read", "bash")).snapshot()
SESSION = "01a029fc-5d80-71a2-8001-00005eed0001"


def configuration(**changes: Any) -> dict[str, Any]:
    document: dict[str, Any] = {
        "configurationDigest": sha256_digest(SNAPSHOT),
        "environmentIdentity": "/home/dev/shop",
        "tools": [
            {
                "name": tool["name"],
                "definitionDigest": tool["definitionDigest"],
                "replay": "safe" if tool["name"] == "read" else "never",
                "replayKey": f"builtin:{tool['name']}:v1",
            }
            for tool in SNAPSHOT["tools"]
        ],
    }
    document.update(changes)
    return document


def write(tmp_path: Path, document: Any, name: str = "current.json") -> Path:
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else json.dumps(document), encoding="utf-8")
    return path


def problem(tmp_path: Path, document: Any) -> CurrentFileError:
    path = write(tmp_path, document)
    with pytest.raises(CurrentFileError) as caught:
        load_current(path)
    assert str(path) in str(caught.value)
    return caught.value


def test_the_schema_is_draft_2020_12_with_its_id() -> None:
    schema = load_schema("current.v1.schema.json")
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == "https://sessaudit.dev/schemas/current.v1.schema.json"


def test_one_configuration_applies_to_every_session(tmp_path: Path) -> None:
    source = load_current(write(tmp_path, configuration()))
    loaded = source.for_session(SESSION)
    assert loaded is not None and loaded is source.for_session(None) is source.for_session("another")
    assert loaded.configuration_digest == sha256_digest(SNAPSHOT)
    assert loaded.environment_identity == "/home/dev/shop"
    assert loaded.tool("read") == CurrentTool(
        "read", SNAPSHOT["tools"][0]["definitionDigest"], "safe", "builtin:read:v1"
    )
    assert loaded.tool("lint") is None
    assert loaded.configuration_snapshot is None
    assert loaded.as_json() == configuration()


def test_a_fleet_map_gives_each_session_its_own(tmp_path: Path) -> None:
    other = configuration(environmentIdentity="/srv/other")
    source = load_current(write(tmp_path, {SESSION: configuration(), "session-b": other}))
    first, second = source.for_session(SESSION), source.for_session("session-b")
    assert first is not None and first.environment_identity == "/home/dev/shop"
    assert second is not None and second.environment_identity == "/srv/other"
    assert source.for_session("unknown") is None  # planned as if nothing changed
    assert source.for_session(None) is None
    assert load_current(write(tmp_path, {}, "empty.json")).for_session(SESSION) is None


def test_a_snapshot_is_kept_when_it_digests_to_the_configuration_digest(tmp_path: Path) -> None:
    loaded = load_current(write(tmp_path, configuration(configurationSnapshot=SNAPSHOT))).for_session(None)
    assert loaded is not None and loaded.configuration_snapshot == SNAPSHOT


def test_the_planner_fixtures_currents_are_valid() -> None:
    directory = conformance_dir("tiny-agent") / "planner-fixtures"
    manifest = json.loads((directory / "manifest.json").read_text())
    for fixture in manifest["fixtures"]:
        question = json.loads((directory / fixture["input"]).read_text())
        loaded = configuration_from_json(question["current"], source=fixture["input"])
        assert isinstance(loaded, CurrentConfiguration)
        assert loaded.as_json() == question["current"]


@pytest.mark.parametrize(
    ("document", "pointer", "words"),
    [
        (configuration(tools=[{"name": "read"}]), "/tools/0", "'definitionDigest' is a required property"),
        (
            configuration(tools=[dict(configuration()["tools"][0], replay="sometimes")]),
            "/tools/0/replay",
            "'sometimes' is not one of",
        ),
        (configuration(configurationDigest="sha256:ABC"), "/configurationDigest", "does not match"),
        (configuration(environmentIdentity=""), "/environmentIdentity", "should be non-empty"),
        (configuration(extra=1), "/extra", "unknown key (known: configurationDigest, environmentIdentity,"),
        (
            {"configurationDigest": sha256_digest(SNAPSHOT)},
            "",
            "'environmentIdentity' is a required property",
        ),
        (
            {SESSION: configuration(tools=[dict(configuration()["tools"][0], name="")])},
            f"/{SESSION}/tools/0/name",
            "should be non-empty",
        ),
        ({"a/b": {"tools": 1}}, "/a~1b", "is a required property"),
        ([configuration()], "", "expected object, found an array"),
        (
            configuration(tools=[*configuration()["tools"], configuration()["tools"][0]]),
            "/tools/2/name",
            "declared twice",
        ),
        (
            configuration(configurationSnapshot=SNAPSHOT, configurationDigest=sha256_digest("other")),
            "/configurationDigest",
            "does not match configurationSnapshot",
        ),
        (
            configuration(configurationSnapshot=SNAPSHOT, tools=configuration()["tools"][:1]),
            "/configurationSnapshot/tools",
            "differ from the declared tools",
        ),
        (
            configuration(configurationSnapshot={"model": "m"}),
            "/configurationSnapshot",
            "is a required property",
        ),
    ],
)
def test_an_invalid_configuration_names_the_file_and_the_pointer(
    tmp_path: Path, document: Any, pointer: str, words: str
) -> None:
    error = problem(tmp_path, document)
    assert error.pointer == pointer, error
    assert words in error.reason, error
    assert (pointer or "(the document)") in str(error)


def test_a_file_that_is_not_strict_json_is_refused(tmp_path: Path) -> None:
    assert "is not JSON" in problem(tmp_path, "{not json").reason
    duplicate = '{"configurationDigest": "sha256:' + "0" * 64 + '", "configurationDigest": "x"}'
    assert "is not JSON" in problem(tmp_path, duplicate).reason
    assert "is not JSON" in problem(tmp_path, '{"a": NaN}').reason


def test_an_unreadable_file_is_refused(tmp_path: Path) -> None:
    missing = tmp_path / "absent.json"
    with pytest.raises(CurrentFileError, match=r"absent\.json.*cannot be read"):
        load_current(missing)
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe{}")
    with pytest.raises(CurrentFileError, match="not UTF-8"):
        load_current(binary)


def test_a_byte_order_mark_is_tolerated(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(configuration()).encode())
    assert load_current(path).for_session(None) is not None


def test_configuration_from_json_wants_one_configuration() -> None:
    with pytest.raises(CurrentFileError, match="one configuration object"):
        configuration_from_json({SESSION: configuration()})
    assert parse_current(configuration()).default == configuration_from_json(configuration())


def test_the_first_declaration_of_a_name_would_win() -> None:
    """Names are unique in a file; built directly, the lookup keeps tiny-agent's `find` (the first)."""
    first, second = (
        CurrentTool("read", "sha256:" + "1" * 64, "safe", "k1"),
        CurrentTool("read", "sha256:" + "2" * 64, "never", "k2"),
    )
    assert CurrentConfiguration("sha256:" + "0" * 64, "env", (first, second)).tool("read") is first


def test_every_problem_of_a_current_file_is_reported_at_once(tmp_path: Path) -> None:
    document = configuration(extra=1, environmentIdentity=3)
    document["tools"][1]["replay"] = "sometimes"
    document["tools"][0]["replayky"] = "k"
    error = problem(tmp_path, document)
    assert [pointer for pointer, _ in error.problems] == [
        "/environmentIdentity",
        "/extra",
        "/tools/0/replayky",
        "/tools/1/replay",
    ]
    assert str(error).count("; ") == 3
