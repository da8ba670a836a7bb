"""Rejecting requests: gRPC status plus google.rpc details naming the field."""

from __future__ import annotations

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2

DOMAIN = "forge.v1"
STATUS_DETAILS_KEY = "grpc-status-details-bin"

# The message travels three times in the trailers (grpc-message, Status and
# BadRequest), percent- or base64-encoded, and clients refuse trailers over
# 8 KiB: an echoed 5,000-character call id would turn INVALID_ARGUMENT into
# RESOURCE_EXHAUSTED on the client.
MAX_MESSAGE_BYTES = 512


class RequestRejected(Exception):
    """A request the server cannot accept; ends only its own stream."""

    def __init__(self, code: grpc.StatusCode, reason: str, field: str, message: str) -> None:
        message = clip(message, MAX_MESSAGE_BYTES)
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.field = clip(field, MAX_MESSAGE_BYTES // 4)
        self.message = message

    def trailing_metadata(self) -> tuple[tuple[str, bytes], ...]:
        info = error_details_pb2.ErrorInfo(reason=self.reason, domain=DOMAIN)
        if self.field:
            info.metadata["field"] = self.field
        details = [_pack(info)]
        if self.field:
            bad = error_details_pb2.BadRequest(
                field_violations=[
                    error_details_pb2.BadRequest.FieldViolation(
                        field=self.field, description=self.message
                    )
                ]
            )
            details.append(_pack(bad))
        status = status_pb2.Status(code=self.code.value[0], message=self.message, details=details)
        return ((STATUS_DETAILS_KEY, status.SerializeToString()),)


def clip(text: str, max_bytes: int) -> str:
    """`text` cut to at most `max_bytes` of UTF-8, marked when cut."""
    encoded = text.encode()
    if len(encoded) <= max_bytes:
        return text
    marker = "… (truncated)"
    keep = max_bytes - len(marker.encode())
    return encoded[:keep].decode(errors="ignore") + marker


def _pack(msg: error_details_pb2.ErrorInfo | error_details_pb2.BadRequest) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(msg)
    return packed
