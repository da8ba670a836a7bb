"""Model backends: what the loop calls to get the next response."""

from forge_core.backends.base import (
    Backend,
    BackendInfo,
    BackendReply,
    ChatRequest,
    ChunkSink,
    ChunkType,
    LLMResponse,
    StreamChunk,
    TextResponse,
    ToolCall,
    Usage,
)

__all__ = [
    "Backend",
    "BackendInfo",
    "BackendReply",
    "ChatRequest",
    "ChunkSink",
    "ChunkType",
    "LLMResponse",
    "StreamChunk",
    "TextResponse",
    "ToolCall",
    "Usage",
]
