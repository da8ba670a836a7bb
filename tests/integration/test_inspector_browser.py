"""The run inspector in a real headless Chromium (issue 35).

A real `forge-server` process (scripted backend, SQLite journal, token
file) serves the inspector on loopback; the Python SDK runs workflows
against it from a thread; Selenium drives Debian's `chromium` through
`chromedriver` (both from apt, see .ci/run; nothing is downloaded). The
test also takes the screenshots the README shows: into the test's temporary
directory, or into docs/images/ with FORGE_SCREENSHOTS=docs/images (how the
committed ones were made; a plain test run leaves the tree unchanged).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from forge_client import ForgeClient, RunFailedError, Workflow
from forge_core.llama_host.process import free_port

selenium = pytest.importorskip("selenium", reason="selenium is in the dev extra")
from selenium import webdriver  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None or CHROMEDRIVER is None,
    reason="needs Debian's chromium and chromium-driver (apt-get install chromium "
    "chromium-driver; .ci/run installs them)",
)

ROOT = Path(__file__).resolve().parents[2]
ADMIN, ALICE = "admin-s3cret", "alice-s3cret"
# Long enough for a slow shared machine; WebDriverWait polls until then.
WAIT_S = 60

SCRIPTS = {
    # The tool waits until the test lets it go.
    "slow_lookup": [
        {"tool_calls": [{"name": "lookup", "args": {"order_id": "A-17"}}]},
        {"tool_calls": [{"name": "report", "args": {"status": "shipped"}}]},
    ],
    # report before the required step: a step nudge, then the right order.
    "guarded_orders": [
        {"tool_calls": [{"name": "report", "args": {"status": "shipped"}}]},
        {"tool_calls": [{"name": "lookup", "args": {"order_id": "A-17"}}]},
        {"tool_calls": [{"name": "report", "args": {"status": "shipped"}}]},
    ],
    # Free text every turn: retry nudges, then the run fails (TOOL_CALL).
    "chatty_orders": [{"text": "I think the order has shipped."}] * 6,
}


def orders_workflow(name: str, release: threading.Event | None = None) -> Workflow:
    wf = Workflow(name, "Look up an order and report its status.")

    @wf.tool(required=True)
    def lookup(order_id: str) -> str:
        """Look up an order by id."""
        if release is not None:
            release.wait(WAIT_S)
        return f"order {order_id}: shipped"

    @wf.tool(terminal=True)
    def report(status: str) -> str:
        """Report the order's status."""
        return status

    return wf


class Server:
    def __init__(self, tmp: Path) -> None:
        script = tmp / "script.json"
        script.write_text(json.dumps(SCRIPTS))
        tokens = tmp / "tokens"
        tokens.write_text(f"{ADMIN} name=ops admin\n{ALICE} name=alice\n")
        self.grpc_port, self.ui_port = free_port(), free_port()
        self.proc = subprocess.Popen(
            [
                sys.executable, "-m", "forge_server", "--backend", "scripted",
                "--script", str(script), "--port", str(self.grpc_port),
                "--ui-port", str(self.ui_port), "--journal", f"sqlite:///{tmp / 'j.db'}",
                "--auth-token-file", str(tokens), "--event-loop", "asyncio",
            ],
            stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert self.proc.stderr is not None
        self.log: list[str] = []
        for line in self.proc.stderr:
            self.log.append(line)
            if "run inspector on" in line:
                break
        else:
            raise AssertionError("forge-server did not start:\n" + "".join(self.log))
        # Keep draining stderr so the server never blocks on a full pipe.
        threading.Thread(target=self._drain, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.ui_port}"

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("inspector"))
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                "--window-size=1500,1000", "--disable-gpu"):  # fmt: skip
        options.add_argument(arg)
    driver = webdriver.Chrome(service=webdriver.ChromeService(str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def run_in_thread(
    server: Server, token: str, workflow: Workflow, session_id: str = ""
) -> Future[Any]:
    """The SDK runs `workflow` in a thread of its own (Selenium blocks)."""

    async def go() -> Any:
        async with ForgeClient(f"127.0.0.1:{server.grpc_port}", token=token) as client:
            try:
                return await client.run(
                    workflow,
                    "Where is order A-17?",
                    labels={"ticket": "T-1042"},
                    session_id=session_id,
                )
            except RunFailedError as exc:
                return exc

    pool = ThreadPoolExecutor(1)
    future = pool.submit(asyncio.run, go())
    pool.shutdown(wait=False)
    return future


def row_status(driver: Any, workflow: str) -> str:
    rows = driver.find_elements(By.CSS_SELECTOR, "#run-rows tr.run")
    for row in rows:
        if row.find_elements(By.XPATH, f"./td[text()='{workflow}']"):
            return str(row.get_attribute("data-status"))
    return ""


def sign_in(driver: Any, server: Server, token: str) -> None:
    driver.delete_all_cookies()
    driver.get(f"{server.url}/runs?token={token}")
    # The token moved into an HttpOnly cookie and out of the address.
    assert "token=" not in driver.current_url


def test_the_runs_list_shows_a_run_go_from_running_to_completed(
    server: Server, browser: Any
) -> None:
    sign_in(browser, server, ALICE)
    release = threading.Event()
    done = run_in_thread(server, ALICE, orders_workflow("slow_lookup", release))
    try:
        WebDriverWait(browser, WAIT_S).until(lambda d: row_status(d, "slow_lookup") == "running")
        loaded = browser.execute_script("return performance.timeOrigin")
        release.set()
        WebDriverWait(browser, WAIT_S).until(lambda d: row_status(d, "slow_lookup") == "completed")
        # The same document: the rows changed without a reload.
        assert browser.execute_script("return performance.timeOrigin") == loaded
    finally:
        release.set()
    assert done.result(WAIT_S).value == "shipped"


def test_a_running_runs_page_follows_its_events_live(server: Server, browser: Any) -> None:
    sign_in(browser, server, ALICE)
    release = threading.Event()
    done = run_in_thread(server, ALICE, orders_workflow("slow_lookup", release))
    try:
        browser.get(f"{server.url}/runs?q=slow_lookup&status=running")
        link = WebDriverWait(browser, WAIT_S).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, "#run-rows tr.run a")
        )
        link[0].click()
        WebDriverWait(browser, WAIT_S).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, "li.tool-call")
        )
        assert browser.find_element(By.ID, "run-status").text == "running"
        assert not browser.find_elements(By.CSS_SELECTOR, "li.outcome")
        release.set()
        WebDriverWait(browser, WAIT_S).until(
            lambda d: d.find_element(By.ID, "run-status").text == "completed"
        )
        outcome = browser.find_element(By.CSS_SELECTOR, "li.outcome.completed")
        assert "report" in outcome.text
    finally:
        release.set()
    done.result(WAIT_S)


def test_a_guardrail_intervention_is_shown_with_its_reason(server: Server, browser: Any) -> None:
    sign_in(browser, server, ALICE)
    result = run_in_thread(server, ALICE, orders_workflow("guarded_orders")).result(WAIT_S)
    assert result.value == "shipped"
    browser.get(f"{server.url}/runs?q=guarded_orders")
    browser.find_element(By.CSS_SELECTOR, "#run-rows tr.run a").click()
    nudge = WebDriverWait(browser, WAIT_S).until(
        lambda d: d.find_element(By.CSS_SELECTOR, "li.guardrail[data-guardrail='step-nudge']")
    )
    # The reason is the correction the model was sent: call lookup first.
    assert "lookup" in nudge.find_element(By.CLASS_NAME, "reason").text


def test_a_failed_run_shows_its_typed_error_and_screenshots_are_saved(
    server: Server, browser: Any, tmp_path: Path
) -> None:
    chosen = os.environ.get("FORGE_SCREENSHOTS")
    images = ROOT / chosen if chosen else tmp_path
    sign_in(browser, server, ADMIN)
    chatty = orders_workflow("chatty_orders")
    failed = run_in_thread(server, ALICE, chatty, session_id="support-7").result(WAIT_S)
    assert isinstance(failed, RunFailedError)
    browser.get(f"{server.url}/runs")
    # The admin sees alice's runs, with their caller.
    WebDriverWait(browser, WAIT_S).until(lambda d: row_status(d, "chatty_orders") == "failed")
    assert "alice" in browser.find_element(By.ID, "run-rows").text
    images.mkdir(parents=True, exist_ok=True)
    browser.set_window_size(1500, 620)
    try:
        browser.save_screenshot(str(images / "inspector-runs.png"))
    finally:
        browser.set_window_size(1500, 1000)
    browser.get(f"{server.url}/runs?status=failed")
    browser.find_element(By.CSS_SELECTOR, "#run-rows tr.run a").click()
    outcome = WebDriverWait(browser, WAIT_S).until(
        lambda d: d.find_element(By.CSS_SELECTOR, "li.outcome.failed")
    )
    assert "TOOL_CALL" in outcome.text
    assert "TOOL_CALL" in browser.find_element(By.ID, "run-error").text
    assert browser.find_elements(By.CSS_SELECTOR, "li[data-guardrail='retry-nudge']")
    assert browser.find_elements(By.CSS_SELECTOR, "li[data-guardrail='rejected-reply']")
    assert "support-7" in browser.find_element(By.CLASS_NAME, "summary").text
    # Tall enough for the nudges and the outcome (a screenshot is the window).
    browser.set_window_size(1500, 1900)
    try:
        browser.save_screenshot(str(images / "inspector-failed-run.png"))
    finally:
        browser.set_window_size(1500, 1000)


def test_without_a_token_the_pages_are_refused(server: Server, browser: Any) -> None:
    browser.delete_all_cookies()
    pages = {"/runs": "bearer token", "/runs?token=not-a-token": "unknown token"}
    for path, said in pages.items():
        browser.get(server.url + path)
        refused = browser.find_element(By.ID, "refused")
        assert refused.get_attribute("data-status") == "401"
        assert said in refused.text
        assert not browser.find_elements(By.ID, "runs")


def test_a_token_sees_only_its_own_runs_and_exports_them_as_json(
    server: Server, browser: Any
) -> None:
    theirs = run_in_thread(server, ADMIN, orders_workflow("guarded_orders")).result(WAIT_S)
    mine = run_in_thread(server, ALICE, orders_workflow("guarded_orders")).result(WAIT_S)
    assert theirs.value == mine.value == "shipped"
    sign_in(browser, server, ALICE)
    browser.get(f"{server.url}/runs?q=guarded_orders")
    shown = {
        r.get_attribute("data-run-id") for r in browser.find_elements(By.CSS_SELECTOR, "tr.run")
    }
    assert mine.run_id in shown
    assert theirs.run_id not in shown
    browser.get(f"{server.url}/runs/{theirs.run_id}")
    assert browser.find_element(By.ID, "refused").get_attribute("data-status") == "404"

    def export(run_id: str, token: str) -> tuple[int, Any]:
        request = urllib.request.Request(
            f"{server.url}/runs/{run_id}/events.json",
            headers={"Authorization": f"Bearer {token}"},
        )
        try:
            with urllib.request.urlopen(request, timeout=WAIT_S) as response:
                return response.status, json.load(response)
        except urllib.error.HTTPError as exc:
            return exc.code, json.load(exc)

    status, body = export(mine.run_id, ALICE)
    assert status == 200
    kinds = [next(k for k in event if k != "seq") for event in body["events"]]
    assert kinds[0] == "run_started" and kinds[-1] == "run_completed"
    assert "tool_call" in kinds
    assert export(theirs.run_id, ALICE)[0] == 404
    assert export(theirs.run_id, ADMIN)[0] == 200
