"""A forge-server that dies leaves nothing running and nothing behind.

Real processes throughout: `forge-server` started as users start it, with a
managed llama-server and the bundled model, then SIGKILLed (as the OOM killer
would); a second one started in the same temporary directory. Each server gets
TMPDIR of its own so that nothing another server on this machine keeps in
/tmp is looked at.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

import pytest

from forge_core.llama_host.orphans import (
    OWNER_FILE,
    SLOT_DIR_PREFIX,
    OwnerRecord,
    pid_namespace,
    read_owner,
    reap_leftovers,
    start_time,
    write_owner,
)
from forge_core.llama_host.process import free_port
from tests.helpers import wait_for_server

# The bound: the kernel delivers the parent-death signal at once, so
# this is the longest a gone parent's llama-server may still be running.
GONE_WITHIN_S = 2.0


def children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def running(pid: int) -> bool:
    """Alive and not a zombie (PID 1 here may be slow to reap the dead)."""
    return start_time(pid) is not None


async def launch(port: int, tmpdir: Path, log: Path) -> asyncio.subprocess.Process:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "forge_server",
        "--host", "127.0.0.1", "--port", str(port), "--journal", "none",
        "--ctx-size", "1024", "--slots", "1", "--threads", "1",
        stdout=asyncio.subprocess.DEVNULL, stderr=log.open("ab"),
        env={**os.environ, "TMPDIR": str(tmpdir), "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    try:
        await wait_for_server(f"127.0.0.1:{port}", 240)
    except BaseException:
        proc.kill()
        await proc.wait()
        raise
    return proc


def llama_child(proc: asyncio.subprocess.Process) -> tuple[int, Path]:
    """The managed llama-server's pid and its --slot-save-path."""
    (pid,) = children(proc.pid)
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    return pid, Path(argv[argv.index("--slot-save-path") + 1])


async def stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), 60)
        except TimeoutError:
            proc.kill()
            await proc.wait()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parent-death signal: Linux")
async def test_a_sigkilled_servers_llama_server_dies_and_its_directory_goes(
    tmp_path: Path,
) -> None:
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    log = tmp_path / "forge.log"
    first = await launch(free_port(), tmpdir, log)
    llama: int | None = None
    try:
        llama, slot_dir = llama_child(first)
        assert slot_dir.parent == tmpdir and slot_dir.is_dir()
        first.send_signal(signal.SIGKILL)
        await first.wait()
        deadline = time.monotonic() + GONE_WITHIN_S
        for _ in range(int(GONE_WITHIN_S / 0.05)):
            if not running(llama) or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.05)
        assert not running(llama), "the dead forge-server's llama-server is still running"
    finally:
        if first.returncode is None:
            first.kill()
            await first.wait()
        if llama is not None and running(llama):
            os.kill(llama, signal.SIGKILL)  # the old behaviour: do not leak it
    # Nothing could remove the directory at the kill; the next start does.
    assert slot_dir.is_dir()
    second = await launch(free_port(), tmpdir, log)
    try:
        second_llama, second_dir = llama_child(second)
        assert not slot_dir.exists(), log.read_text()[-2000:]
        assert second_dir.is_dir()
        assert f"removed {slot_dir}" in log.read_text()
    finally:
        await stop(second)
    # A clean stop leaves nothing either.
    assert second.returncode == 0, log.read_text()[-2000:]
    assert not second_dir.exists()
    assert not running(second_llama)


def exited_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def slot_dir(root: Path, name: str, record: OwnerRecord | None) -> Path:
    directory = root / (SLOT_DIR_PREFIX + name)
    directory.mkdir()
    (directory / "slot0.bin").write_bytes(b"kv")
    if record is not None:
        (directory / OWNER_FILE).write_text(json.dumps(asdict(record)))
    return directory


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_reap_kills_only_the_recorded_child_of_a_dead_owner(tmp_path: Path) -> None:
    """A dead owner's live child is killed and its directory removed; a live
    owner's directory, one with no record, one recorded in another PID
    namespace, and a recorded pid that now belongs to another process
    (start time differs) are left alone."""
    orphan = subprocess.Popen(["sleep", "600"], start_new_session=True)
    bystander = subprocess.Popen(["sleep", "600"], start_new_session=True)
    try:
        dead = exited_pid()
        ns = pid_namespace()
        stale = slot_dir(
            tmp_path, "stale", OwnerRecord(dead, 1, orphan.pid, start_time(orphan.pid), ns)
        )
        reused = slot_dir(
            tmp_path,
            "reused",
            OwnerRecord(dead, 1, bystander.pid, (start_time(bystander.pid) or 0) + 1, ns),
        )
        # Another PID namespace's record: its pids are not this one's.
        elsewhere = slot_dir(
            tmp_path,
            "elsewhere",
            OwnerRecord(dead, 1, bystander.pid, start_time(bystander.pid), "pid:[1]"),
        )
        live = slot_dir(tmp_path, "live", None)
        write_owner(live, bystander.pid)
        unknown = slot_dir(tmp_path, "unknown", None)
        other = tmp_path / "not-forge"
        other.mkdir()

        removed = reap_leftovers(tmp_path)

        assert sorted(removed) == sorted([stale, reused])
        assert orphan.wait(timeout=30) == -signal.SIGKILL
        assert bystander.poll() is None
        assert live.is_dir() and unknown.is_dir() and other.is_dir() and elsewhere.is_dir()
        record = read_owner(live)
        assert record is not None and record.owner_alive() and record.child_alive()
    finally:
        for proc in (orphan, bystander):
            if proc.poll() is None:
                proc.kill()
                proc.wait()


@pytest.mark.parametrize("flag", ["--port", "--openai-port", "--metrics-port"])
async def test_a_taken_port_stops_the_start_before_any_model_loads(
    tmp_path: Path, flag: str
) -> None:
    """One message naming the port and the flag, exit status 3, and no
    llama-server started (its start is logged at INFO)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        ports = {"--port": str(free_port()), "--openai-port": "-1", "--metrics-port": "-1"}
        ports[flag] = str(taken)
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "forge_server", "--host", "127.0.0.1",
            *(arg for pair in ports.items() for arg in pair),
            "--journal", "none", "--ctx-size", "1024", "--slots", "1", "--threads", "1",
            "--log-level", "INFO",
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "TMPDIR": str(tmp_path)},
        )  # fmt: skip
        _, err = await asyncio.wait_for(proc.communicate(), 240)
    text = err.decode()
    assert proc.returncode == 3, text
    assert "starting llama-server" not in text
    assert "Traceback" not in text
    (message,) = [line for line in text.splitlines() if line.startswith("forge-server:")]
    assert f"port {taken} on 127.0.0.1 ({flag}) is already in use" in message
