"""Limits on what clients send and what the server sends back (issue 13)."""

from __future__ import annotations

import grpc
import pytest

from forge.v1 import forge_service_pb2 as pb
from forge.v1 import messages_pb2 as mpb
from forge_core.json_limits import JsonLimitError, json_depth_exceeds, loads_bounded
from forge_server.errors import RequestRejected, clip
from forge_server.events import fit


def test_depth_counts_brackets_outside_strings_only() -> None:
    assert not json_depth_exceeds('{"a": [[1]]}', 3)
    assert json_depth_exceeds('{"a": [[[1]]]}', 3)
    assert not json_depth_exceeds('{"a": "[[[[[[", "b": "\\"[[[["}', 1)


def test_loads_bounded_rejects_deep_and_invalid_json_with_a_reason() -> None:
    assert loads_bounded('{"a": [1, {"b": 2}]}') == {"a": [1, {"b": 2}]}
    with pytest.raises(JsonLimitError, match="deeper than 64"):
        loads_bounded("[" * 65 + "]" * 65)
    assert loads_bounded("[" * 64 + "]" * 64) is not None
    with pytest.raises(JsonLimitError, match="not valid JSON"):
        loads_bounded("{nope")


def test_clip_keeps_short_text_and_marks_cut_text_within_the_byte_budget() -> None:
    assert clip("short", 512) == "short"
    cut = clip("é" * 1000, 100)
    assert len(cut.encode()) <= 100
    assert cut.endswith("(truncated)")


def test_a_rejection_never_carries_more_than_512_bytes_of_message() -> None:
    rejected = RequestRejected(
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_REQUEST",
        "f" * 5000,
        "x" * 50_000,
    )
    assert len(rejected.message.encode()) <= 512
    assert len(rejected.field.encode()) <= 128
    ((_, trailer),) = rejected.trailing_metadata()
    assert len(trailer) < 2048


def _failed_with(transcript_bytes: int) -> pb.RunResponse:
    return pb.RunResponse(
        run_failed=pb.RunFailed(
            reason=pb.FAILURE_REASON_TOOL_EXECUTION,
            message="tools kept failing",
            transcript=[mpb.Message(role=mpb.ROLE_TOOL, content="z" * transcript_bytes)],
        )
    )


def test_fit_leaves_a_message_within_the_limit_alone() -> None:
    response = _failed_with(1000)
    assert fit(response, 10_000) is response
    assert not response.run_failed.transcript_omitted
    assert len(response.run_failed.transcript) == 1


def test_fit_drops_the_transcript_of_a_final_message_over_the_limit_and_says_so() -> None:
    response = fit(_failed_with(20_000), 10_000)
    assert response.ByteSize() <= 10_000
    assert response.run_failed.transcript_omitted
    assert len(response.run_failed.transcript) == 0
    assert response.run_failed.message == "tools kept failing"


def test_fit_cuts_a_streamed_message_that_alone_is_over_the_limit() -> None:
    response = pb.RunResponse(
        message_appended=pb.MessageAppended(
            message=mpb.Message(role=mpb.ROLE_TOOL, content="q" * 20_000), index=3
        )
    )
    fitted = fit(response, 10_000)
    assert fitted.ByteSize() <= 10_000
    assert fitted.message_appended.message.content.endswith("(truncated)")
    assert fitted.message_appended.index == 3
