"""Starting, supervising and stopping a managed llama-server.

The bundled binary and model it starts by default are found by install.py;
why a start failed is worked out by startup.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import socket
import tempfile
import time
from collections import deque
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from forge_core.llama_host.devices import (
    CPU,
    UNKNOWN,
    DeviceReport,
    LlamaDevice,
    is_device_line,
    list_devices,
    resolve,
)
from forge_core.llama_host.failures import LlamaStartupError, StartupFailure
from forge_core.llama_host.install import bundled_binary, launch_env
from forge_core.llama_host.orphans import (
    SLOT_DIR_PREFIX,
    die_with_parent,
    reap_leftovers,
    write_owner,
)
from forge_core.llama_host.slot_count import AUTO_SLOTS, chosen_slots
from forge_core.llama_host.startup import (
    StartupContext,
    check_before_start,
    diagnose,
    timeout_error,
)
from forge_core.modes import BudgetMode

if TYPE_CHECKING:
    from forge_core.backends.llama.server import LlamaServerBackend

log = logging.getLogger(__name__)


def available_cpus() -> int:
    """CPUs this process may use: its affinity mask, capped by a cgroup v2
    CPU quota (a container's `resources.limits.cpu`) rounded up."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            cpus = min(cpus, max(1, -(-int(quota) // int(period))))
    except (OSError, ValueError):
        pass
    return max(1, cpus)


def default_threads(cpus: int | None = None) -> int:
    """llama-server's thread count when none is configured: one less than the
    CPUs available, at least 1.

    llama.cpp's workers spin-wait for each other at every barrier, so a single
    worker preempted by another process stalls the whole matrix product: on 2
    shared cores, 2 threads took 4.6-129 s for a completion that 1 thread did
    in 1.8-2.9 s (bench/RESULTS.md, "llama-server threads"). A sidecar always
    shares its host with the gRPC server and the caller's tools, so the spare
    core is kept for them.
    """
    return max(1, (cpus if cpus is not None else available_cpus()) - 1)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class LlamaServerConfig:
    model_path: Path
    binary: Path
    host: str = "127.0.0.1"
    port: int = 0
    # Total KV context; llama-server splits it evenly across slots.
    ctx_size: int = 8192
    # AUTO_SLOTS (0): chosen by the host when the server starts (slot_count.py).
    slots: int = AUTO_SLOTS
    # 0: default_threads() (CPUs available - 1).
    threads: int = 0
    # Gemma 3 uses sliding-window attention; without a full-size SWA cache any
    # edit older than the window forces a full re-evaluation of the prompt.
    swa_full: bool = True
    # Reuse cached KV chunks of at least this many tokens after a removed span
    # by shifting them: compaction that deletes old rounds then costs almost no
    # re-evaluation (context.py). 0 disables.
    cache_reuse: int = 64
    cache_type_k: str = ""
    cache_type_v: str = ""
    # Where llama-server may save slot files (--slot-save-path): Forge keeps
    # each workflow's first prompt there (backends/llama/prefix_snapshots.py). None with
    # prefix_snapshots: a temporary directory that lives as long as the server.
    slot_save_path: Path | None = None
    prefix_snapshots: bool = True
    extra_args: list[str] = field(default_factory=list)
    startup_timeout_s: float = 180.0
    # Answer one tiny completion before counting as ready, so the first
    # caller does not pay for lazy start-up work (on a GPU the first
    # request took 20 s: shader compilation, buffer allocation).
    warm_up: bool = True

    def argv(self, port: int, slot_save_path: Path | None = None) -> list[str]:
        args = [
            str(self.binary),
            "--model", str(self.model_path),
            "--host", self.host,
            "--port", str(port),
            "--ctx-size", str(self.ctx_size),
            "--parallel", str(self.slots),
            "--jinja",
            "--no-webui",
        ]  # fmt: skip
        args += ["--threads", str(self.threads or default_threads())]
        if self.swa_full:
            args.append("--swa-full")
        if self.cache_reuse:
            args += ["--cache-reuse", str(self.cache_reuse)]
        if self.cache_type_k:
            args += ["--cache-type-k", self.cache_type_k]
        if self.cache_type_v:
            args += ["--cache-type-v", self.cache_type_v]
        if slot_save_path is not None:
            args += ["--slot-save-path", str(slot_save_path)]
        return args + self.extra_args


# Prompt sizes a managed llama-server on a GPU evaluates before it counts as
# ready (ManagedLlamaServer._warm_up_batches).
WARM_UP_BATCHES = (*range(1, 17), 24, 32, 48, 64, 96, 128, 192, 256, 384, 512)

# More restarts than this within RESTART_WINDOW_S means the server cannot run
# (bad model, out of memory): stop trying and let runs fail with BackendError.
MAX_RESTARTS = 5
RESTART_WINDOW_S = 300.0


class ManagedLlamaServer:
    """A supervised llama-server child process that lives as long as this object.

    If the process dies it is started again on the same port; requests that
    were in flight wait for `wait_ready()` and retry (see LlamaServerBackend).
    """

    def __init__(self, config: LlamaServerConfig) -> None:
        self.config = config
        self.port = config.port or free_port(config.host)
        self._proc: asyncio.subprocess.Process | None = None
        self._log_tail: deque[str] = deque(maxlen=40)
        self._pump: asyncio.Task[None] | None = None
        self._watch: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._stopping = False
        self._restart_times: deque[float] = deque()
        self.restarts = 0
        self._own_slot_dir = False
        self.slot_dir: Path | None = config.slot_save_path
        # What `--list-devices` said (None: it could not say), and the
        # start-up log's device lines of the latest spawn.
        self.listed_devices: list[LlamaDevice] | None = None
        self._device_lines: list[str] = []
        # Seconds the latest warm-up took; None when none succeeded.
        self.warm_up_s: float | None = None
        # Why the server has config.slots slots (slot_count.chosen_slots).
        self.slots_reason = "--slots"

    def attach(self, backend: LlamaServerBackend, *, wait_for_restarts: bool = True) -> None:
        """Let `backend` wait out restarts and use this server's slot files.

        Without `wait_for_restarts` a call that finds the server dead fails at
        once (retriable): in a fallback chain the next backend answers while
        this one restarts, instead of the call waiting for the model to load.
        """
        if wait_for_restarts:
            backend.supervise(self.wait_ready)
        if self.slot_dir is not None and self.config.prefix_snapshots:
            backend.enable_prefix_snapshots(self.slot_dir)
        # With a full-size sliding-window cache the server can serve a prompt
        # from the part of a slot's cache it shares with it.
        backend.reuses_prefixes = self.config.swa_full

    @property
    def url(self) -> str:
        return f"http://{self.config.host}:{self.port}"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def startup_context(self) -> StartupContext:
        try:
            bundled = self.config.binary.resolve() == bundled_binary().resolve()
        except (LlamaStartupError, OSError):
            bundled = False
        return StartupContext(
            binary=self.config.binary,
            model=self.config.model_path,
            host=self.config.host,
            port=self.port,
            ctx_size=self.config.ctx_size,
            bundled_binary=bundled,
        )

    def device(self) -> DeviceReport:
        """The device the model runs on (devices.resolve)."""
        argv = self.config.argv(self.port, self.slot_dir)
        return resolve(self.listed_devices, argv, os.environ, self._device_lines)

    async def start(self) -> None:
        """Start the server and wait until it serves; a failure raises
        LlamaStartupError saying why (startup.py)."""
        self._stopping = False
        check_before_start(self.startup_context())
        if self.listed_devices is None:
            self.listed_devices = await list_devices(
                self.config.binary, launch_env(self.config.binary)
            )
        self._choose_slots()
        if self.slot_dir is None and self.config.prefix_snapshots:
            # What a forge-server that died without stopping left here goes
            # first (orphans.py): its directory, and its llama-server
            # where the parent-death signal could not reach it.
            reap_leftovers()
            self.slot_dir = Path(tempfile.mkdtemp(prefix=SLOT_DIR_PREFIX))
            self._own_slot_dir = True
            write_owner(self.slot_dir)
        try:
            await self._spawn()
        except BaseException:
            self._remove_slot_dir()
            raise
        self._ready.set()
        self._watch = asyncio.create_task(self._supervise())

    def _choose_slots(self) -> None:
        """Settle an AUTO_SLOTS count by the host: its CPUs and the device
        --list-devices and the flags point to (the start-up log comes later)."""
        if self.config.slots != AUTO_SLOTS:
            return
        argv = self.config.argv(self.port, self.slot_dir)
        device = resolve(self.listed_devices, argv, os.environ).device
        choice = chosen_slots(self.config.slots, available_cpus(), device)
        self.config = replace(self.config, slots=choice.slots)
        self.slots_reason = choice.reason

    async def wait_ready(self, timeout_s: float | None = None) -> None:
        """Return once the server answers health checks (after a restart).

        Checks /health itself rather than trusting the ready flag alone: right
        after a crash the supervisor may not have seen the exit yet, and a
        restarted server answers 503 while it loads the model.
        """
        timeout = timeout_s if timeout_s is not None else self.config.startup_timeout_s
        deadline = time.monotonic() + timeout
        async with httpx.AsyncClient(base_url=self.url, timeout=2.0) as http:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"llama-server at {self.url} not ready after {timeout:.0f}s")
                await asyncio.wait_for(self._ready.wait(), remaining)
                with contextlib.suppress(httpx.HTTPError):
                    if (await http.get("/health")).status_code == 200:
                        return
                await asyncio.sleep(0.2)

    async def _supervise(self) -> None:
        while not self._stopping:
            proc = self._proc
            if proc is None:
                return
            code = await proc.wait()
            if self._stopping:
                return
            self._ready.clear()
            now = time.monotonic()
            while self._restart_times and now - self._restart_times[0] > RESTART_WINDOW_S:
                self._restart_times.popleft()
            if len(self._restart_times) >= MAX_RESTARTS:
                log.error(
                    "llama-server exited with code %s; %d restarts in %.0fs, giving up:\n%s",
                    code, MAX_RESTARTS, RESTART_WINDOW_S, "\n".join(self._log_tail),
                )  # fmt: skip
                return
            self._restart_times.append(now)
            self.restarts += 1
            log.warning("llama-server exited with code %s; restarting it", code)
            try:
                await self._spawn()
            except (RuntimeError, TimeoutError, OSError):
                log.exception("llama-server restart failed")
                continue
            self._ready.set()

    async def _spawn(self) -> None:
        if self._pump is not None:
            self._pump.cancel()
            await asyncio.gather(self._pump, return_exceptions=True)
        argv = self.config.argv(self.port, self.slot_dir)
        log.info("starting llama-server: %s", " ".join(argv))
        try:
            self._proc = await asyncio.create_subprocess_exec(
                # Killed with this process, even by SIGKILL (orphans.py).
                *die_with_parent(argv),
                env=launch_env(self.config.binary),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:  # not found, not executable, wrong architecture
            raise LlamaStartupError(
                StartupFailure.BINARY_MISSING,
                f"llama-server binary {self.config.binary} could not be executed: {exc}",
            ) from exc
        if self._own_slot_dir and self.slot_dir is not None:
            write_owner(self.slot_dir, self._proc.pid)
        self._device_lines = []
        self._pump = asyncio.create_task(self._read_output())
        await self._wait_healthy()
        if self.config.warm_up:
            await self._warm_up()

    async def _read_output(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        async for raw in self._proc.stdout:
            line = raw.decode(errors="replace").rstrip()
            self._log_tail.append(line)
            if is_device_line(line):
                self._device_lines.append(line)
            log.debug("llama-server: %s", line)

    async def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.config.startup_timeout_s
        async with httpx.AsyncClient(base_url=self.url, timeout=5.0) as http:
            while time.monotonic() < deadline:
                assert self._proc is not None
                if self._proc.returncode is not None:
                    # Its last lines say why: read them all before judging.
                    if self._pump is not None:
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(asyncio.shield(self._pump), 5.0)
                    raise diagnose(
                        self._proc.returncode, list(self._log_tail), self.startup_context()
                    )
                with contextlib.suppress(httpx.HTTPError):
                    resp = await http.get("/health")
                    if resp.status_code == 200:
                        log.info("llama-server ready at %s", self.url)
                        return
                await asyncio.sleep(0.25)
        if self._proc is not None and self._proc.returncode is None:
            self._proc.kill()
            await self._proc.wait()
        raise timeout_error(self.config.startup_timeout_s, list(self._log_tail))

    async def _warm_up(self) -> None:
        """One short completion on slot 0, then the slot erased so the first
        real prompt finds an empty cache, as it would have without this
        (llama-server allows slot actions only with --slot-save-path; without
        one, at most the BOS token of the warm-up prompt matches a chat one).
        A failure is logged: the server still serves, only slower at first."""
        started = time.monotonic()
        try:
            async with httpx.AsyncClient(
                base_url=self.url, timeout=self.config.startup_timeout_s
            ) as http:
                resp = await http.post(
                    "/completion",
                    json={"prompt": "Hello", "n_predict": 2, "id_slot": 0, "cache_prompt": False},
                )
                resp.raise_for_status()
                if self.device().device not in (CPU, UNKNOWN):
                    await self._warm_up_batches(http)
                if self.slot_dir is not None:
                    with contextlib.suppress(httpx.HTTPError):
                        await http.post("/slots/0", params={"action": "erase"})
        except httpx.HTTPError as exc:
            log.warning(
                "llama-server warm-up failed after %.1fs (%s); serving anyway",
                time.monotonic() - started, str(exc) or type(exc).__name__,
            )  # fmt: skip
            return
        self.warm_up_s = time.monotonic() - started
        log.info("llama-server warm-up took %.2fs", self.warm_up_s)

    async def _warm_up_batches(self, http: httpx.AsyncClient) -> None:
        """On a GPU, prompts of the sizes real traffic brings. llama.cpp's
        Vulkan backend builds a pipeline the first time it meets a batch
        shape: measured on an H200, 1-8 s each for 3, 4, 7, 14 and 74 new
        tokens and 23 s for 178, paid by whichever caller met it first (a
        call in pieces evaluates a few new tokens at a time; several slots
        decoding together make other sizes)."""
        took: dict[int, float] = {}
        for n in WARM_UP_BATCHES:
            started = time.monotonic()
            resp = await http.post(
                "/completion",
                json={"prompt": " x" * n, "n_predict": 1, "id_slot": 0, "cache_prompt": False},
            )
            resp.raise_for_status()
            took[n] = time.monotonic() - started
        slowest = sorted(took, key=took.__getitem__, reverse=True)[:4]
        log.info(
            "GPU warm-up: %d prompt sizes in %.1fs; slowest %s",
            len(took), sum(took.values()),
            ", ".join(f"{n} tokens {took[n]:.2f}s" for n in slowest),
        )  # fmt: skip

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.returncode is None

    async def stop(self, grace_s: float = 10.0) -> None:
        self._stopping = True
        self._ready.clear()
        if self._watch is not None:
            self._watch.cancel()
            await asyncio.gather(self._watch, return_exceptions=True)
            self._watch = None
        proc, self._proc = self._proc, None
        if proc is not None and proc.returncode is None:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), grace_s)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        if self._pump is not None:
            self._pump.cancel()
            await asyncio.gather(self._pump, return_exceptions=True)
            self._pump = None
        self._remove_slot_dir()

    def _remove_slot_dir(self) -> None:
        if self._own_slot_dir and self.slot_dir is not None:
            shutil.rmtree(self.slot_dir, ignore_errors=True)
            self.slot_dir, self._own_slot_dir = None, False


async def start_managed(config: LlamaServerConfig, budget_mode: str) -> ManagedLlamaServer:
    """Start a managed llama-server sized for the budget mode.

    forge-full: the model's full trained context (`--ctx-size 0`).
    forge-fast: find that maximum first, then restart with half of it —
    less KV cache to fill and attend over, so each token is cheaper.
    Other modes: the configured --ctx-size.
    """
    if budget_mode in (BudgetMode.FORGE_FULL, BudgetMode.FORGE_FAST):
        config = replace(config, ctx_size=0)
    # forge-fast's first server only tells the model's maximum: no warm-up.
    server = ManagedLlamaServer(
        replace(config, warm_up=config.warm_up and budget_mode != BudgetMode.FORGE_FAST)
    )
    await server.start()
    if budget_mode != BudgetMode.FORGE_FAST:
        return server
    from forge_core.backends.llama.props import parse_props, read_props

    n_ctx, slots, _ = parse_props(await read_props(server.url))
    await server.stop()
    half = max(n_ctx * slots // 2, 512 * slots)
    log.info("forge-fast: model maximum %d tokens, restarting with %d", n_ctx * slots, half)
    listed = server.listed_devices
    server = ManagedLlamaServer(replace(config, ctx_size=half, port=server.port))
    server.listed_devices = listed
    await server.start()
    return server
