"""The JSONL results file: one RunRecord per line, appended as runs finish.

Appending line by line (flushed and fsynced) makes an interrupted eval
resumable: `load` skips a torn last line, and `done_keys` tells the runner
which (config, scenario, ablation, run index) already have a result.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from forge_evals.metrics import RunRecord

log = logging.getLogger(__name__)


def load(path: Path) -> list[RunRecord]:
    """Every complete record in `path` (none if it does not exist)."""
    if not path.exists():
        return []
    records = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.strip()
            if not line:
                continue
            try:
                records.append(RunRecord.from_dict(json.loads(line)))
            except (ValueError, TypeError) as exc:
                log.warning("%s:%d: skipping unreadable record (%s)", path, lineno, exc)
    return records


def done_keys(records: list[RunRecord]) -> set[tuple[str, str, str, int]]:
    return {r.key for r in records}


class ResultsWriter:
    """Appends records to a JSONL file, one durable line per run."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._heal()

    def _heal(self) -> None:
        """A run killed mid-write leaves a line without its newline; end it so
        the next record starts on a line of its own."""
        if not self.path.exists() or self.path.stat().st_size == 0:
            return
        with self.path.open("rb+") as fh:
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) != b"\n":
                fh.write(b"\n")

    def append(self, record: RunRecord) -> None:
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(record.to_json() + "\n")
            fh.flush()
            os.fsync(fh.fileno())
