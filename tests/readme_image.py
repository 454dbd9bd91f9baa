"""The README's picture of HDDS-16932's bug, and how it is made again.

``make readme-image`` (``python -m tests.readme_image``; needs Chromium) checks the bug
variant, draws its counterexample as ``mcheck show --format html`` does and has a
headless Chromium photograph the page into ``docs/img/hdds-16932-bug.png``, with the
SHA-256 of the page written into the PNG (a ``tEXt`` chunk).  tests/test_readme.py
compares that digest with today's page, so the image cannot fall behind the
renderer or the spec unnoticed: when it fails, run the target and commit the image.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from checker import CompiledSpec, Options
from checker import run as check
from checker.authoring.loader import load_spec_class
from checker.traces.picture import html_page
from checker.traces.tracefile import timeline_of_run
from checker.values.show import STYLE_VARIABLE, set_value_style

IMAGE = Path(__file__).resolve().parent.parent / "docs" / "img" / "hdds-16932-bug.png"
#: The PNG text chunk that holds the page's digest.
DIGEST_KEY = "mcheck-page-sha256"
#: The browser window the README's image is taken in.
WINDOW = "1300,700"


def page() -> str:
    """Today's HTML picture of HDDS-16932's shortest counterexample in the report's
    timing (values in TLA+'s form, as every screen shows them by default)."""
    saved = os.environ.get(STYLE_VARIABLE)
    set_value_style("tla")
    try:
        # The bug as `mcheck run` tells it: the variant's story (the report's timing).
        cls = load_spec_class("scm_install_snapshot_leader_change")
        story = cls.story_for("bug")
        told = dict(story.constants) if story is not None else {}
        model = CompiledSpec(cls(variant="bug", **told))
        return html_page(timeline_of_run(check(model, Options()), model))
    finally:
        if saved is None:
            os.environ.pop(STYLE_VARIABLE, None)
        else:
            os.environ[STYLE_VARIABLE] = saved


def digest(text: str) -> str:
    """The digest the image records of the page it shows."""
    return hashlib.sha256(text.encode()).hexdigest()


def recorded_digest(image: Path = IMAGE) -> str | None:
    """The page digest written into ``image`` (None: none is)."""
    from PIL import Image

    with Image.open(image) as img:
        text = getattr(img, "text", {}) or {}
        value = text.get(DIGEST_KEY)
        return str(value) if value is not None else None


def browser_path() -> str | None:
    """Chromium on PATH, if any."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def screenshot(browser: str, html: Path, png: Path) -> subprocess.CompletedProcess[str]:
    """Headless Chromium's picture of the page ``html`` in the README's window size
    (tests/test_picture.py takes its rendering test the same way)."""
    return subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--disable-dev-shm-usage",
            f"--screenshot={png}",
            f"--window-size={WINDOW}",
            html.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


def render(out: Path = IMAGE) -> None:
    """Photograph today's page with headless Chromium into ``out``, digest included."""
    from PIL import Image
    from PIL.PngImagePlugin import PngInfo

    browser = browser_path()
    if browser is None:
        sys.exit("readme-image: needs chromium on PATH")
    text = page()
    with tempfile.TemporaryDirectory() as tmp:
        html = Path(tmp) / "hdds-16932.html"
        html.write_text(text)
        shot = Path(tmp) / "shot.png"
        screenshot(browser, html, shot).check_returncode()
        info = PngInfo()
        info.add_text(DIGEST_KEY, digest(text))
        with Image.open(shot) as img:
            img.save(out, pnginfo=info, optimize=True)
    print(f"wrote {out} ({out.stat().st_size:,} bytes), page {digest(text)[:12]}")


if __name__ == "__main__":
    render()
