"""Where Forge keeps what it builds once and reuses: the assembled bundled
model, the CPU-feature scans of llama-server binaries, the default SQLite run
journal. `FORGE_CACHE_DIR`, else `$XDG_CACHE_HOME/forge`, else
`~/.cache/forge`."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    root = os.environ.get("FORGE_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "forge"
    )
    return Path(root)
