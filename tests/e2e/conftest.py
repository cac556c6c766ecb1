"""Real-browser fixtures: a Streamlit server on a free port and Debian's Chromium.

Never downloads a browser (no ``playwright install``): Chromium comes from apt
(``scripts/test.sh`` installs it). When it is missing the tests FAIL with that message.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CLUSTERPLAN_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = ROOT / "test-artifacts"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def app_url():
    port = _free_port()
    log = open(ARTIFACTS.mkdir(exist_ok=True) or ARTIFACTS / "streamlit-e2e.log", "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
         "--server.headless", "true", "--server.address", "127.0.0.1", "--server.port", str(port),
         "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read() == b"ok":
                break
        except OSError:
            time.sleep(0.3)
        if proc.poll() is not None:
            pytest.fail(f"streamlit exited early; see {ARTIFACTS / 'streamlit-e2e.log'}")
    else:
        proc.terminate()
        pytest.fail("streamlit did not become healthy in 60 s")
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


@pytest.fixture(scope="session")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} not found: install Debian's chromium (apt-get install -y chromium); "
                    "never `playwright install`")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                              args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--disable-dev-shm-usage"])
        yield b
        b.close()
