"""The compile report (minitorch/compile/report/) in a real browser: headless Chromium, driven
by Playwright, opens each report from file:// and clicks a source line; every stage must light
up what came from it ([Note: the page's contract] in render.py).

Needs Debian's `chromium` (`make test` installs it where it can) and the `playwright` package
(the dev extra); without either the tests skip, saying which. Screenshots are kept in
tests/browser/artifacts/ (not committed); each test prints its path.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

try:
    from playwright.sync_api import sync_playwright
except ImportError:  # the dev extra is not installed
    sync_playwright = None

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
ARTIFACTS = HERE / "artifacts"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
EVERY_STAGE = ("captured", "joint", "forward", "backward", "loop_ir", "kernel", "code")

pytestmark = [
    pytest.mark.skipif(
        sync_playwright is None,
        reason="playwright is not installed (pip install -e '.[dev]')",
    ),
    pytest.mark.skipif(
        CHROMIUM is None,
        reason="no chromium on PATH (apt-get install -y chromium; make test does it as root)",
    ),
]


@pytest.fixture(scope="module")
def page():
    with sync_playwright() as p:
        # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        yield page
        browser.close()


def write_report(out: Path, *command: str, env: dict | None = None) -> Path:
    """Run `command` (python's arguments) in the repository; returns the report's index.html."""
    environ = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    done = subprocess.run(
        [sys.executable, *command], cwd=ROOT, env=environ, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    index = out / "index.html"
    assert index.is_file(), done.stdout[-2000:] + done.stderr[-3000:]
    return index


def walkthrough(out: Path, script: str) -> Path:
    return write_report(out, "-m", "minitorch.compile", script, "--html", str(out))


def open_report(page, index: Path) -> float:
    """Load the report; returns the seconds until its load event."""
    start = time.perf_counter()
    page.goto(index.as_uri())
    page.wait_for_load_state("load")
    return time.perf_counter() - start


def click_line(page, text: str) -> None:
    lines = page.locator(".src-line", has_text=text)
    assert lines.count() >= 1, f"no source line shows {text!r}"
    lines.first.click()
    assert "hl" in lines.first.get_attribute("class")


def lit_stages(page) -> dict[str, int]:
    return {stage: page.locator(f'[data-stage="{stage}"].hl').count() for stage in EVERY_STAGE}


def screenshot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path))
    print(f"screenshot: {path}")


def test_sincos_line_lights_every_stage(page, tmp_path):
    open_report(page, walkthrough(tmp_path, "examples/sincos.py"))
    click_line(page, "torch.sin(x) ** 2")
    lit = lit_stages(page)
    assert all(lit.values()), f"highlighted per stage: {lit}"
    screenshot(page, "sincos")
    # clicked again: everything goes dark
    page.locator(".src-line", has_text="torch.sin(x) ** 2").first.click()
    assert page.locator(".hl").count() == 0


def test_kernel_lights_its_lines_and_nodes(page, tmp_path):
    open_report(page, walkthrough(tmp_path, "examples/softmax.py"))
    click_line(page, "torch.softmax(x, dim=-1)")
    lit = lit_stages(page)
    assert all(lit.values()), f"highlighted per stage: {lit}"
    page.locator(".src-line.hl").first.click()  # off again
    kernel = page.locator("tr.kernel").first
    kernel.click()
    assert page.locator(".src-line.hl", has_text="torch.softmax").count() == 1
    assert page.locator('[data-stage="forward"][data-node].hl').count() >= 1  # nodes it fused
    assert page.locator('[data-stage="backward"][data-node].hl').count() == 0  # not the others
    assert page.locator('[data-stage="code"].hl').count() >= 1  # and its code
    screenshot(page, "softmax_kernel")


def test_graph_break_shown_at_its_line(page, tmp_path):
    open_report(page, walkthrough(tmp_path, "tests/browser/graph_break.py"))
    broken = page.locator(".src-line.graph-break")
    assert broken.count() == 1
    assert "y.sum() > 0" in broken.inner_text()
    assert "a branch on a tensor" in broken.locator(".why").inner_text()
    click_line(page, "torch.sin(x) ** 2")
    lit = lit_stages(page)
    assert all(lit.values()), f"highlighted per stage: {lit}"
    click_line(page, "torch.cos(y) * 3")  # captured after the break, in a graph of its own
    assert page.locator('[data-stage="captured"].hl').count() >= 2
    screenshot(page, "graph_break")


def test_user_strings_are_escaped(page, tmp_path):
    index = walkthrough(tmp_path, "tests/browser/escaping.py")
    open_report(page, index)
    assert page.title() == "minitorch: escaping.py"  # the user's <script> never ran
    assert page.locator("script").count() == 1  # report.js alone
    assert page.locator("img").count() == 0
    banner = page.locator(".src-line", has_text="<script>document.title")
    assert banner.count() == 1
    assert '"quoted" </pre>' in page.locator(".src-line", has_text="quoted").inner_text()
    assert "<script>document" not in index.read_text()


def test_gpt_report_opens_quickly(page, tmp_path):
    # a short run: one step of a one-layer model, a two-character sample
    short = ["--steps", "1", "--layers", "1", "--sample", "2", "--batch-size", "4"]
    index = write_report(
        tmp_path, "examples/gpt.py", *short, env={"MINITORCH_REPORT": str(tmp_path)}
    )
    seconds = open_report(page, index)
    size = sum(f.stat().st_size for f in tmp_path.iterdir())
    print(f"gpt report: {size / 1e6:.2f} MB, opened in {seconds:.2f} s")
    assert seconds < 2.0
    start = time.perf_counter()
    click_line(page, "att = att.masked_fill")
    assert time.perf_counter() - start < 2.0
    lit = lit_stages(page)
    assert lit["captured"] and lit["forward"] and lit["backward"], lit
    screenshot(page, "gpt")
