"""The dashboard in a real browser: Debian's Chromium driven by Playwright, against the
local stack of `make run` started on free ports (as the end-to-end tests start it).

No browser is ever downloaded: `make chromium` installs the system package, and the path
can be overridden with CHROMIUM. Every test saves a screenshot under build/screenshots/.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, expect, sync_playwright

from chalicelib.dashboard import assets
from local.running import running_stack
from tests.e2e.conftest import Stack
from tests.e2e.waiting import StackLog

PROJECT_DIR = Path(__file__).resolve().parents[2]
SCREENSHOTS = PROJECT_DIR / "build" / "screenshots"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# Headless, and quiet on the network: without the background-networking flags Chromium
# keeps calling home, and each of those calls is refused here.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
AXE = PROJECT_DIR / "dashboard" / "node_modules" / "axe-core" / "axe.min.js"


@pytest.fixture(scope="session")
def stack() -> Iterator[Stack]:
    if not assets.is_built():
        pytest.fail("The dashboard is not built: run `make dashboard` (make test-dashboard does).")
    log = StackLog()  # its log lines, which the usage test waits on
    with running_stack(on_output=log.append) as info:
        running = Stack(info, log)
        yield running
        running.http.close()


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="session")
def browser(playwright: Playwright) -> Iterator[Browser]:
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"No Chromium at {CHROMIUM}: run `make chromium` (as root), or set CHROMIUM.")
    # Playwright gives every launch a fresh, temporary user-data-dir of its own.
    launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    try:
        yield launched
    finally:
        launched.close()


class Person:
    """One person's browser (its own context: storage, clipboard, cookies) on the dashboard."""

    def __init__(self, context: BrowserContext, stack: Stack, name: str):
        self.context = context
        self.stack = stack
        self.name = name
        self.page: Page = context.new_page()
        self.console: list[str] = []
        self.page.on("console", lambda message: self.console.append(message.text))
        self.page.on("pageerror", lambda error: self.console.append(f"page error: {error}"))

    @property
    def dashboard(self) -> str:
        return f"{self.stack.endpoint}/dashboard/"

    def sign_in(self, subject: str | None = None, name: str | None = None) -> str:
        """Signs in through the development provider's form (subject, email and, when given,
        name); returns the user id the header's "Copy user id" holds."""
        page = self.page
        page.goto(self.dashboard)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(re.compile(r"/authorize\?"))
        page.get_by_label("Subject (user name)").fill(subject or self.name)
        page.get_by_label("Email").fill(self.email(subject))
        if name is not None:
            page.get_by_label("Name", exact=True).fill(name)
        page.get_by_role("button", name="Sign in").click()
        user_id = page.locator("#user-id")
        expect(user_id).to_have_attribute("data-user-id", re.compile(r"^usr_"))
        return str(user_id.get_attribute("data-user-id"))

    def email(self, subject: str | None = None) -> str:
        return f"{subject or self.name}@example.test"

    def storage(self, kind: str) -> dict[str, str]:
        return dict(self.page.evaluate(f"() => Object.fromEntries(Object.entries({kind}))"))

    def dialog(self, name: str | re.Pattern[str]) -> Any:
        return self.page.get_by_role("dialog", name=name)

    def screenshot_path(self, name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        return SCREENSHOTS / f"{name}.png"

    def screenshot(self, name: str) -> Path:
        """The page now; a key's field, should one be on show, is masked."""
        path = self.screenshot_path(name)
        self.page.screenshot(
            path=str(path), full_page=True, mask=[self.page.locator("input.secret")]
        )
        return path

    def access_token(self) -> str:
        """The access token the tab holds (for checks over HTTP as the same user)."""
        stored = json.loads(self.storage("sessionStorage")["memory-dashboard.tokens"])
        return str(stored["accessToken"])

    def csp_violations(self) -> list[str]:
        return [line for line in self.console if "Content Security Policy" in line]


@pytest.fixture
def people(browser: Browser, stack: Stack, request: pytest.FixtureRequest) -> Iterator[Any]:
    """Makes a Person per call, each in a fresh context. Afterwards, each one's last screen is
    saved as build/screenshots/<test>-<person>.png and its context closed."""
    made: list[Person] = []

    def make(name: str, viewport: dict[str, int] = DESKTOP, **options: Any) -> Person:
        context = browser.new_context(viewport=viewport, **options)
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=stack.endpoint)
        made.append(Person(context, stack, name))
        return made[-1]

    yield make
    test = re.sub(r"[^A-Za-z0-9_-]+", "-", request.node.name).strip("-")
    for person in made:
        try:
            person.screenshot(f"{test}-{person.name}")
        finally:
            person.context.close()
