"""The status page in a real browser: Debian's Chromium, headless.

Renders the HTML report of the simulated fleet's four hosts (one failing) from
tests/unit/fixtures/status/sim-fleet-records.json, loads it with `chromium --headless
--dump-dom` and checks the DOM the browser built: every host is a row of the table, the
failing host is marked failed (class, badge) and sorted first, the counts are right. Also takes
a screenshot (kept under tests/output/ for people to look at) and checks it is a PNG of the
requested size. `make unit` installs Chromium first (scripts/ensure-chromium.sh); without it
the test skips and says so.
"""
import html.parser
import json
import pathlib
import shutil
import subprocess

import pytest

from ansible_collections.ascendfleet.llm.plugins.module_utils._fleet_status import evaluate, render_html

ROOT = pathlib.Path(__file__).resolve().parents[2]
RECORDS = ROOT / "tests" / "unit" / "fixtures" / "status" / "sim-fleet-records.json"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
         "--disable-extensions", "--disable-background-networking", "--hide-scrollbars"]

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed: run scripts/ensure-chromium.sh (make unit does)")


class Rows(html.parser.HTMLParser):
    """Rows of table#fleet and the summary counts, from the DOM Chromium serialised."""

    def __init__(self):
        super().__init__()
        self.rows, self.counts, self.badges = [], {}, []
        self._in_fleet = False
        self._count = None
        self._badge = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and a.get("id") == "fleet":
            self._in_fleet = True
        if self._in_fleet and tag == "tr" and "data-host" in a:
            self.rows.append((a["data-host"], a["data-verdict"], a.get("class")))
        if tag == "div" and "count" in (a.get("class") or "").split():
            self._count = a["data-verdict"]
        if self._in_fleet and tag == "span" and "badge" in (a.get("class") or "").split():
            self._badge = True

    def handle_endtag(self, tag):
        if tag == "table":
            self._in_fleet = False

    def handle_data(self, data):
        if self._count and data.strip():
            self.counts[self._count] = int(data.strip())
            self._count = None
        if self._badge and data.strip():
            self.badges.append((self.rows[-1][0], data.strip()))
            self._badge = False


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    fleet = evaluate(json.loads(RECORDS.read_text()), "2026-11-30 16:00:00 UTC")
    path = tmp_path_factory.mktemp("status") / "status.html"
    path.write_text(render_html(fleet))
    return path


def _chromium(*args, cwd):
    return subprocess.run([CHROMIUM] + FLAGS + list(args), cwd=str(cwd), capture_output=True, text=True,
                          timeout=120, check=False)


def test_browser_renders_every_host_and_marks_the_failing_one(page):
    result = _chromium("--dump-dom", page.as_uri(), cwd=page.parent)
    assert result.returncode == 0, result.stderr[-2000:]
    dom = result.stdout
    assert "<table" in dom, "chromium printed no DOM: %s" % result.stderr[-2000:]
    rows = Rows()
    rows.feed(dom)
    assert sorted(r[0] for r in rows.rows) == ["sim-310p-duo", "sim-910b2-seed", "sim-910b3-idle", "sim-a3-16chips"]
    # Worst first: the failing host heads the table, marked by class and badge.
    assert rows.rows[0] == ("sim-310p-duo", "failed", "host-failed")
    assert ("sim-310p-duo", "FAILED") in rows.badges
    assert dict((h, v) for h, v, dummy in rows.rows) == {
        "sim-310p-duo": "failed", "sim-910b3-idle": "attention", "sim-910b2-seed": "ok", "sim-a3-16chips": "ok"}
    assert rows.counts == {"failed": 1, "attention": 1, "ok": 2}
    assert "container qwen-vllm-ascend-1 is restarting" in dom


def test_browser_screenshot(page):
    out = ROOT / "tests" / "output" / "status-page"
    out.mkdir(parents=True, exist_ok=True)
    shot = out / "status.png"
    if shot.exists():
        shot.unlink()
    shutil.copy(str(page), str(out / "status.html"))
    result = _chromium("--screenshot=%s" % shot, "--window-size=1400,900", page.as_uri(), cwd=out)
    assert result.returncode == 0, result.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1400, 900)
