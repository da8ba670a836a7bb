"""Rejecting requests: gRPC status plus google.rpc details naming the field."""

from __future__ import annotations

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2

DOMAIN = "forge.v1"
STATUS_DETAILS_KEY = "grpc-status-details-bin"


class RequestRejected(Exception):
    """A request the server cannot accept; ends only its own stream."""

    def __init__(self, code: grpc.StatusCode, reason: str, field: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.field = field
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


def _pack(msg: error_details_pb2.ErrorInfo | error_details_pb2.BadRequest) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(msg)
    return packed
