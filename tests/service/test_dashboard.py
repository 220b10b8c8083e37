"""The dashboard in a real browser: headless Chromium (Debian's ``chromium``) on a running study."""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from servers import SPEC, TOKEN

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def browse(url: str, profile: Path, screenshot: Path | None = None) -> str:
    """The DOM Chromium renders for ``url`` (and a screenshot of it, if asked)."""
    base = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--no-first-run", "--disable-dev-shm-usage", f"--user-data-dir={profile}",
            "--window-size=1200,1300"]
    if screenshot is not None:
        subprocess.run([*base, f"--screenshot={screenshot}", url], capture_output=True,
                       timeout=60, check=True)
    out = subprocess.run([*base, "--dump-dom", url], capture_output=True, text=True,
                         timeout=60, check=True)
    return out.stdout


def work(client, study: str, n: int) -> None:
    """Run ``n`` pulls of the synthetic objective as a worker would (ask, compute, tell)."""
    for _ in range(n):
        pull = client.ask(study, "browser-test", wait=30)
        assert pull is not None
        x, steps = pull["config"]["x"], pull["fidelity"]["value"]
        score = 1.0 - 4.0 * (x - 0.7) ** 2 - 0.3 / steps + 0.01 * math.sin(pull["seed"])
        client.tell(study, pull["pull_id"], score=score, seconds=0.1 * steps,
                    lease=pull["lease"])


def progress(dom: str) -> int:
    m = re.search(r'id="progress"><b>(\d+)</b> pulls finished', dom)
    assert m, dom[:2000]
    return int(m.group(1))


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed "
                    "(apt-get install chromium; .ci/run installs it)")
def test_dashboard_renders_a_running_study_and_a_refresh_shows_new_pulls(shared_server,
                                                                          tmp_path):
    client = shared_server.client
    client.create("live-demo", SPEC)
    work(client, "live-demo", 6)
    url = f"{shared_server.url}/studies/live-demo?token={TOKEN}"
    shot = Path(os.environ.get("MFTUNE_SCREENSHOT_DIR", tmp_path)) / "dashboard.png"
    dom = browse(url, tmp_path / "profile", screenshot=shot)

    assert re.search(r'<h1 id="study-name">live-demo</h1>', dom)
    assert 'http-equiv="refresh"' in dom  # the page refreshes itself
    first = progress(dom)
    assert first == 6
    table = re.search(r'<table id="candidates">(.*?)</table>', dom, re.S).group(1)
    assert table.count("<tr") == 1 + 6  # header + one row per candidate
    assert re.search(r"steps=1</th>.*steps=4</th>", table, re.S)
    assert re.search(r"\d\.\d+ ± [\d.e-]+", table)  # means with their half-widths
    best = re.search(r'<svg id="chart-best".*?</svg>', dom, re.S).group(0)
    assert "<path d=" in best and "best so far" in best  # a drawn chart
    for chart in ("chart-survivors", "chart-cost"):
        assert f'<svg id="{chart}"' in dom
    assert 'id="certificate"' in dom and "No certificate yet" in dom
    assert shot.stat().st_size > 10_000

    work(client, "live-demo", 5)
    again = browse(url, tmp_path / "profile")
    assert progress(again) == first + 5 == client.status("live-demo")["pulls"]

    index = browse(f"{shared_server.url}/?token={TOKEN}", tmp_path / "profile")
    assert re.search(r'<table id="studies">.*live-demo', index, re.S)
