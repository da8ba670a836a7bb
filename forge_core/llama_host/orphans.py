"""A managed llama-server must not outlive the forge-server that started it.

Two parts:

* `die_with_parent`: the child runs under `setpriv --pdeathsig KILL`, which
  asks the kernel (Linux `prctl(PR_SET_PDEATHSIG)`) for SIGKILL when its
  parent dies, so a SIGKILLed or OOM-killed forge-server
  takes its model server with it instead of leaving it re-parented to PID 1,
  holding the port, the cores and the memory. The kernel sends the signal
  when the *thread* that forked exits: that is the event loop's thread, which
  in forge-server is the main thread and lives as long as the process (a loop
  run in a thread of its own that ends also ends its llama-server, which is
  what that owner wants too).
* An owner record (`OWNER_FILE`) in the server's temporary slot directory
  names the forge-server and the llama-server by pid *and* start time. A
  starting server reads the records under the temporary directory
  (`reap_leftovers`): where the owner is gone it kills the recorded
  llama-server if that very process still runs (pid and start time match, so
  a reused pid is never hit; nothing is ever matched by name) and removes the
  directory. Directories without a record are left alone: nothing says whose
  they are.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import signal
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

log = logging.getLogger(__name__)

SLOT_DIR_PREFIX = "forge-slots-"
OWNER_FILE = "forge-owner.json"


def die_with_parent(argv: list[str]) -> list[str]:
    """`argv` run under util-linux's `setpriv --pdeathsig KILL`, which sets
    the parent-death signal and then execs it (same pid, the signal kept
    across exec), so the child gets SIGKILL when this process dies; `argv`
    as it is where there is no setpriv (not Linux) or the binary itself
    cannot be run (the start-up error stays Python's own).

    Not a `preexec_fn` calling prctl: Python code between fork and exec in
    a process with threads (gRPC's, the journal's) is unsafe, and it
    crashed the test process with SIGSEGV in fork_exec."""
    setpriv = shutil.which("setpriv") if sys.platform.startswith("linux") else None
    if setpriv is None or not argv or not os.access(argv[0], os.X_OK):
        return argv
    return [setpriv, "--pdeathsig", "KILL", "--", *argv]


def pid_namespace() -> str:
    """This process's PID namespace ("pid:[4026531836]"); "" where unknown."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (/proc/PID/stat
    field 22); None when no such live process (a zombie counts as gone: it
    holds no port, no memory and no cores)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces.
    fields = stat[stat.rindex(")") + 2 :].split()
    if fields[0] in ("Z", "X"):
        return None
    return int(fields[19])


@dataclass(frozen=True)
class OwnerRecord:
    """Who a slot directory belongs to: the forge-server and its llama-server."""

    owner_pid: int
    owner_start: int | None
    child_pid: int | None = None
    child_start: int | None = None
    # The PID namespace the pids are in: a /tmp shared with a container (or
    # its host) holds records whose pids mean other processes here.
    pid_namespace: str = ""

    def owner_alive(self) -> bool:
        started = start_time(self.owner_pid)
        return started is not None and started == self.owner_start

    def child_alive(self) -> bool:
        if self.child_pid is None:
            return False
        started = start_time(self.child_pid)
        return started is not None and started == self.child_start


def write_owner(directory: Path, child_pid: int | None = None) -> None:
    """Record this process (and its llama-server) as `directory`'s owner;
    written to a temporary file and renamed, so a reader never sees half."""
    record = OwnerRecord(
        os.getpid(),
        start_time(os.getpid()),
        child_pid,
        start_time(child_pid) if child_pid is not None else None,
        pid_namespace(),
    )
    partial = directory / (OWNER_FILE + ".tmp")
    partial.write_text(json.dumps(asdict(record)))
    partial.replace(directory / OWNER_FILE)


def read_owner(directory: Path) -> OwnerRecord | None:
    try:
        data = json.loads((directory / OWNER_FILE).read_text())
        return OwnerRecord(
            int(data["owner_pid"]),
            data.get("owner_start"),
            data.get("child_pid"),
            data.get("child_start"),
            str(data.get("pid_namespace", "")),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def reap_leftovers(root: Path | None = None) -> list[Path]:
    """Clean up after forge-servers that died without stopping: kill the
    llama-server each one recorded if it still runs, and remove its slot
    directory. Returns the directories removed."""
    base = Path(root) if root is not None else Path(tempfile.gettempdir())
    removed: list[Path] = []
    here = pid_namespace()
    if start_time(os.getpid()) is None or not here:
        return removed  # no /proc: no owner can be told alive, so none is judged dead
    try:
        candidates = sorted(base.glob(SLOT_DIR_PREFIX + "*"))
    except OSError:
        return removed
    for directory in candidates:
        record = read_owner(directory)
        if record is None or record.pid_namespace != here or record.owner_alive():
            continue
        if record.child_alive() and record.child_pid is not None:
            log.warning(
                "killing llama-server pid %d left running by forge-server pid %d, which died",
                record.child_pid, record.owner_pid,
            )  # fmt: skip
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(record.child_pid, signal.SIGKILL)
        shutil.rmtree(directory, ignore_errors=True)
        if not directory.exists():
            log.info("removed %s, left by forge-server pid %d", directory, record.owner_pid)
            removed.append(directory)
    return removed
