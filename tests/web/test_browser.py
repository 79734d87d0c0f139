"""`hud web` in a real headless browser (Debian's chromium, driven by its chromedriver):
the approver follows a notification's link, signs in, approves with a reason, and the
decision on disk names them and is signed by the server's key; the reviewer's write keys
change nothing; a wrong token, no token and a page of another origin are refused.

Screenshots of the walk go to $HUD_SHOTS (default /tmp/i26-shots). What the HUD draws
is read from the websocket's frames (a script the test adds to each page), since the
terminal draws on a canvas.
"""

from __future__ import annotations

import http.server
import os
import threading
import time
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from store.format.records import Decision
from store.trust import sshsig
from store.trust.signatures import NAMESPACE, decision_payload
from tests.e2e.serve_support import tree_digest
from tests.web.support import Web, served

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(
        not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()),
        reason="needs Debian's chromium and chromium-driver (.ci/run installs them)",
    ),
]
webdriver = pytest.importorskip("selenium.webdriver")
SHOTS = Path(os.environ.get("HUD_SHOTS", "/tmp/i26-shots"))
DECISION = "missions/beta/approvals/r1.toml"
RECORDER = """
(() => {
  const Native = window.WebSocket;
  window.__drawn = "";
  window.__socket = "none";
  window.WebSocket = function (url, protocols) {
    const socket = protocols === undefined ? new Native(url) : new Native(url, protocols);
    const text = new TextDecoder();
    socket.addEventListener("open", () => { window.__socket = "open"; });
    socket.addEventListener("error", () => { window.__socket = "error"; });
    socket.addEventListener("close", () => {
      if (window.__socket !== "error") window.__socket = "closed";
    });
    socket.addEventListener("message", (event) => {
      if (typeof event.data !== "string") {
        window.__drawn = (window.__drawn + text.decode(event.data, {stream: true})).slice(-400000);
      }
    });
    return socket;
  };
  window.WebSocket.prototype = Native.prototype;
})();
"""


@pytest.fixture
def web(tmp_path: Path) -> Iterator[Web]:
    with served(tmp_path) as running:
        yield running


@pytest.fixture
def browser() -> Iterator[webdriver.Chrome]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1100,700"):
        options.add_argument(argument)
    service = webdriver.ChromeService(executable_path=CHROMEDRIVER)
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(30)
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORDER})
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        yield driver
    finally:
        driver.quit()


def wait(condition: Callable[[], object], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not in {timeout:g} s: {what}")
        time.sleep(0.1)


def drawn(driver: webdriver.Chrome) -> str:
    return str(driver.execute_script("return window.__drawn"))


def sign_in(driver: webdriver.Chrome, web: Web, token: str, shot: str) -> None:
    """Follow a notification's link to r1, then sign in with `token` on the form."""
    by = webdriver.common.by.By
    driver.get(f"{web.url}/?open=beta/r1")
    assert "After signing in: request beta/r1" in driver.page_source
    driver.find_element(by.ID, "token").send_keys(token)
    driver.save_screenshot(str(SHOTS / shot))
    driver.find_element(by.ID, "sign-in").click()


def keys(driver: webdriver.Chrome, *pressed: str) -> None:
    """Type into the terminal, as a person would, a moment between keys."""
    by = webdriver.common.by.By
    area = driver.find_element(by.CSS_SELECTOR, ".xterm-helper-textarea")
    area.click()
    for key in pressed:
        area.send_keys(key)
        time.sleep(0.3)


def request_shown(driver: webdriver.Chrome) -> bool:
    return "Earlier decisions on beta" in drawn(driver)


def test_the_link_opens_the_request_and_an_approver_decides(
    web: Web, browser: webdriver.Chrome
) -> None:
    sign_in(browser, web, web.tokens["bob"], "01-sign-in.png")
    wait(lambda: request_shown(browser), "the request's screen")
    keys(browser)  # the terminal has the focus (the footer shows y and n then)
    time.sleep(0.5)
    browser.save_screenshot(str(SHOTS / "02-request-from-link.png"))
    keys(browser, "y")
    wait(lambda: "reason (optional)" in drawn(browser), "the reason dialog")
    keys(browser, "fine to list /srv")
    browser.save_screenshot(str(SHOTS / "03-reason.png"))
    keys(browser, "\ue007")  # Enter
    wait(lambda: (web.root / DECISION).exists(), "the decision file")
    wait(lambda: "approved" in drawn(browser), "the decision on screen")
    time.sleep(0.5)
    browser.save_screenshot(str(SHOTS / "04-approved.png"))
    record = tomllib.loads((web.root / DECISION).read_text())
    assert record["decision"] == "approve" and record["reason"] == "fine to list /srv"
    assert record["decided_by"] == "bob"
    assert record["origin"] == "hud web token from 127.0.0.1"
    signed = sshsig.parse(record["signature"])
    decision = Decision.model_validate(record)
    workspace = tomllib.loads((web.root / "workspace.toml").read_text())["id"]
    sshsig.verify(signed, decision_payload("beta", decision, workspace), NAMESPACE)
    import asyncssh

    key = asyncssh.read_private_key(web.tmp / "sign_key")
    assert signed.fingerprint == key.get_fingerprint("sha256")
    keys(browser, "q")
    wait(lambda: not web.huds(), "the HUD to end")


def test_a_reviewer_cannot_write(web: Web, browser: webdriver.Chrome) -> None:
    before = tree_digest(web.root)
    sign_in(browser, web, web.tokens["alice"], "05-reviewer-sign-in.png")
    wait(lambda: request_shown(browser), "the request's screen")
    assert "READ-ONLY" in drawn(browser)
    keys(browser, "y", "\ue007", "n", "no\ue007", "\ue00c")  # approve, reject, escape
    keys(browser, "\ue00c", "n", "\ue007", "\ue00c", "c", "\ue007")  # new mission, make
    keys(browser, "\ue00c", "\ue00c", "\ue007", "e", "\ue007", "E", "\ue007", "b", "\ue007")
    time.sleep(1)
    browser.save_screenshot(str(SHOTS / "06-reviewer-after-write-keys.png"))
    assert "reason (optional)" not in drawn(browser)
    assert tree_digest(web.root) == before
    keys(browser, "q")
    wait(lambda: not web.huds(), "the HUD to end")
    assert tree_digest(web.root) == before


def test_a_wrong_token_and_no_token_are_refused(web: Web, browser: webdriver.Chrome) -> None:
    by = webdriver.common.by.By
    browser.get(f"{web.url}/")
    assert browser.find_elements(by.ID, "terminal") == []  # no HUD without a session
    browser.find_element(by.ID, "sign-in").click()  # empty: the browser does not send it
    assert browser.find_elements(by.ID, "problem") == []
    sign_in(browser, web, "hudw_guessed", "07-wrong-token.png")
    wait(lambda: browser.find_elements(by.ID, "problem"), "the refusal")
    assert "That token is not valid here." in browser.find_element(by.ID, "problem").text
    browser.save_screenshot(str(SHOTS / "08-wrong-token-refused.png"))
    assert browser.find_elements(by.ID, "terminal") == []
    assert not web.huds()
    assert "a wrong token" in web.log()


class _Page(http.server.BaseHTTPRequestHandler):
    """Another origin's page that opens a websocket to the HUD with the visitor's cookie."""

    target = ""

    def do_GET(self) -> None:
        body = f"<script>new WebSocket({self.target!r});</script>".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_a_page_of_another_origin_gets_no_hud(web: Web, browser: webdriver.Chrome) -> None:
    """Same site (127.0.0.1, another port): the strict cookie goes along, the Origin
    check alone refuses."""
    sign_in(browser, web, web.tokens["bob"], "09-sign-in-before-foreign.png")
    wait(lambda: request_shown(browser), "the request's screen")
    keys(browser, "q")
    wait(lambda: not web.huds(), "the HUD to end")
    _Page.target = web.url.replace("http", "ws", 1) + "/ws"
    other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=other.serve_forever, daemon=True)
    thread.start()
    try:
        browser.get(f"http://127.0.0.1:{other.server_address[1]}/")
        wait(lambda: browser.execute_script("return window.__socket") == "error", "a refusal")
    finally:
        other.shutdown()
        other.server_close()
    assert not web.huds()
    assert f"Origin 'http://127.0.0.1:{other.server_address[1]}' on /ws" in web.log()
