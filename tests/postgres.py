"""A real PostgreSQL server for the tests (the journal's, the replicas').

`start_postgres()` runs initdb into a fresh directory under the system temp
dir (trust authentication, no fsync), starts `postgres` on a free loopback
port with its unix socket in that directory, waits until it accepts
connections and stops it (fast shutdown) at the end. Nothing is mocked and
nothing skips: without PostgreSQL's binaries, or when the server does not
come up, the fixture fails with the reason and the server's log.

The binaries come from Debian's packages (/usr/lib/postgresql/<N>/bin, the
newest version there), else from $PATH (initdb and postgres next to each
other). PostgreSQL refuses to run as root: when the tests do, initdb and
postgres run as the `postgres` account (created by Debian's package), else
as `nobody`, and the directory belongs to that user. It lives under /tmp
rather than pytest's tmp_path because pytest makes that one 0700 for root.

Fixtures (tests/integration/conftest.py imports them for the integration
tests; elsewhere, import them into a conftest.py):

- `postgres_server` (session): the running server.
- `postgres_url`: a fresh, empty database on it for each test,
  postgresql://forge@127.0.0.1:PORT/NAME.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path

import psycopg
import pytest

# The superuser initdb creates (trust auth: no password).
SUPERUSER = "forge"
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 15.0


class PostgresUnavailable(RuntimeError):
    """PostgreSQL could not be found or started (the message says why)."""


def find_bindir() -> Path:
    """The directory with initdb and postgres: Debian's newest, else $PATH's."""
    candidates = sorted(
        (Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/initdb")),
        key=lambda d: _version_key(d.parent.name),
        reverse=True,
    )
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(on_path).resolve().parent)
    for bindir in candidates:
        if (bindir / "initdb").is_file() and (bindir / "postgres").is_file():
            return bindir
    raise PostgresUnavailable(
        "PostgreSQL is not installed: no /usr/lib/postgresql/*/bin/initdb and no initdb on"
        " $PATH (Debian/Ubuntu: apt-get install -y postgresql; .ci/run does it)"
    )


def _version_key(name: str) -> tuple[int, ...]:
    return tuple(int(part) for part in name.split(".") if part.isdigit())


def _run_as() -> pwd.struct_passwd | None:
    """The account to run PostgreSQL as: None for ourselves (not root)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(name)
    raise PostgresUnavailable(
        "the tests run as root, which PostgreSQL refuses, and there is neither a"
        " `postgres` nor a `nobody` account to run it as"
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class PostgresServer:
    bindir: Path
    base: Path
    port: int
    user: str
    process: subprocess.Popen[bytes]
    _databases: Iterator[int] = field(default_factory=lambda: count(1))

    @property
    def data_dir(self) -> Path:
        return self.base / "data"

    @property
    def log_path(self) -> Path:
        return self.base / "postgres.log"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str | None = None) -> str:
        """A new empty database; its URL."""
        name = name or f"test_{next(self._databases)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"'.encode())
        return self.url(name)

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError as e:
            return f"(no log: {e})"
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        if self.process.poll() is None:
            # SIGINT: "fast" shutdown (disconnects clients, no waiting).
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _ids(account: pwd.struct_passwd | None) -> tuple[int | None, int | None, list[int] | None]:
    """user, group and extra_groups for subprocess: None, None, None for ourselves."""
    if account is None:
        return None, None, None
    return account.pw_uid, account.pw_gid, []


def _subprocess_env(account: pwd.struct_passwd | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["LC_ALL"] = "C"
    env["LANG"] = "C"
    if account is not None:
        env["HOME"] = account.pw_dir
        env["USER"] = env["LOGNAME"] = account.pw_name
    return env


def _initdb(bindir: Path, base: Path, account: pwd.struct_passwd | None) -> None:
    uid, gid, groups = _ids(account)
    result = subprocess.run(
        [
            str(bindir / "initdb"),
            "--pgdata",
            str(base / "data"),
            "--username",
            SUPERUSER,
            "--auth",
            "trust",
            "--encoding",
            "UTF8",
            "--no-sync",
        ],
        cwd=base,
        env=_subprocess_env(account),
        capture_output=True,
        timeout=120,
        check=False,
        user=uid,
        group=gid,
        extra_groups=groups,
    )
    if result.returncode != 0:
        raise PostgresUnavailable(
            f"initdb failed (exit {result.returncode}):\n"
            + (result.stdout + result.stderr).decode(errors="replace")[-4000:]
        )


def _launch(
    bindir: Path, base: Path, port: int, account: pwd.struct_passwd | None
) -> subprocess.Popen[bytes]:
    uid, gid, groups = _ids(account)
    # The child keeps its own copy of the descriptor.
    log = open(base / "postgres.log", "ab")
    try:
        return subprocess.Popen(
            [
                str(bindir / "postgres"),
                "-D",
                str(base / "data"),
                "-p",
                str(port),
                "-k",
                str(base),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "fsync=off",
                "-c",
                "synchronous_commit=off",
                "-c",
                "full_page_writes=off",
                "-c",
                "max_connections=200",
                "-c",
                "shared_buffers=32MB",
            ],
            cwd=base,
            env=_subprocess_env(account),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            # Its own process group: a Ctrl-C in the terminal stops pytest,
            # which then shuts PostgreSQL down itself.
            start_new_session=True,
            user=uid,
            group=gid,
            extra_groups=groups,
        )
    finally:
        log.close()


def _wait_ready(server: PostgresServer) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise PostgresUnavailable(
                f"postgres exited with {server.process.returncode} while starting;"
                f" its log:\n{server.log_tail()}"
            )
        try:
            with psycopg.connect(server.url(), connect_timeout=2) as conn:
                conn.execute("SELECT 1")
            return
        except psycopg.OperationalError as e:
            last_error = e
            time.sleep(0.1)
    raise PostgresUnavailable(
        f"postgres did not accept connections within {START_TIMEOUT_S:.0f} s"
        f" (last error: {last_error}); its log:\n{server.log_tail()}"
    )


@contextlib.contextmanager
def start_postgres() -> Iterator[PostgresServer]:
    """A running PostgreSQL server in a temporary directory, removed after."""
    bindir = find_bindir()
    account = _run_as()
    base = Path(tempfile.mkdtemp(prefix="forge-pg-"))
    server: PostgresServer | None = None
    try:
        if account is not None:
            os.chown(base, account.pw_uid, account.pw_gid)
        _initdb(bindir, base, account)
        user = account.pw_name if account else pwd.getpwuid(os.geteuid()).pw_name
        # free_port() may race another process for the port: try a few.
        for attempt in range(3):
            port = free_port()
            server = PostgresServer(bindir, base, port, user, _launch(bindir, base, port, account))
            try:
                _wait_ready(server)
                break
            except PostgresUnavailable:
                server.stop()
                if attempt == 2 or "could not bind" not in server.log_tail():
                    raise
        assert server is not None
        yield server
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    unavailable: PostgresUnavailable | None = None
    try:
        with start_postgres() as server:
            yield server
    except PostgresUnavailable as e:
        unavailable = e
    if unavailable is not None:
        # Fail, not skip: these tests need it (and CI installs it).
        pytest.fail(f"PostgreSQL for the tests: {unavailable}", pytrace=False)


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """A fresh empty database on the session's server."""
    return postgres_server.create_database()
