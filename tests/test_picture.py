"""Pictures of counterexamples: Mermaid text, a self-contained HTML page, and that page
rendered by a real browser (Chromium, headless)."""

from __future__ import annotations

import itertools
import os
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from click.testing import CliRunner

from checker import CompiledSpec, Options, Spec, action, invariant
from checker import run as check
from checker.authoring.loader import load_spec_class
from checker.cli.commands import main
from checker.traces.picture import html_page, mermaid, picture_of
from checker.traces.timeline import TimelineData
from checker.traces.tracefile import save_trace, timeline_of_run
from checker.values import ModelValue, named_values
from tests.readme_image import browser_path, screenshot

SNAP = "scm_install_snapshot_leader_change"


def _timeline(spec: str, variant: str, **consts: object) -> TimelineData:
    model = CompiledSpec(load_spec_class(spec)(variant=variant, **consts))
    result = check(model, Options())
    assert result.trace is not None
    return timeline_of_run(result, model)


def test_mermaid_of_the_hdds_16932_story() -> None:
    text = mermaid(_timeline(SNAP, "bug"))
    lines = text.splitlines()
    assert lines[0] == "sequenceDiagram"
    for k, lane in enumerate(["L1", "L2", "F", "env"]):
        assert f"    participant P{k} as {lane}" in lines
    # L2's append reaches F at step 6; F's INCONSISTENCY reply is still in flight.
    assert any(
        line.startswith("    P1->>P2: Append L2\u2192F t2") and "(sent at step 5)" in line
        for line in lines
    )
    assert any("AppendReply F\u2192L2 t2 INCONSISTENCY" in x and "in flight" in x for x in lines)
    assert "    Note over P2: installInProgressIndex -1\u21923" in "\n".join(lines).replace(
        ", download Idle\u2192Running, downloadLeader Nil\u2192L1", ""
    )
    assert any("NoStuckInstallInProgress is violated" in x for x in lines)


def test_mermaid_marks_the_loop_of_a_lasso() -> None:
    data = _timeline(SNAP, "bug")  # a safety trace: no loop
    assert "loop repeats forever" not in mermaid(data)
    model = CompiledSpec(
        load_spec_class(SNAP)(variant="bug"), properties=["FollowerEventuallyCatchesUp"]
    )
    result = check(model, Options())
    assert result.trace is not None and result.trace.loop is not None
    text = mermaid(timeline_of_run(result, model))
    body = text.split("    loop repeats forever\n", 1)
    assert len(body) == 2 and "    end\n" in body[1]


def test_html_page_is_self_contained_and_draws_every_message() -> None:
    data = _timeline(SNAP, "bug")
    page = html_page(data)
    assert "<script" not in page and "http://" not in page.replace(
        'xmlns="http://www.w3.org/2000/svg"', ""
    )
    svg = ET.fromstring(page[page.index("<svg") : page.index("</svg>") + 6])
    texts = [t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")]
    for lane in ("L1", "L2", "F", "env"):
        assert lane in texts
    arrows = [
        e for e in svg.iter("{http://www.w3.org/2000/svg}polyline") if e.get("class") == "msg"
    ]
    assert len(arrows) == len(picture_of(data).arrows) == 5
    assert any(t and "NoStuckInstallInProgress is violated" in t for t in texts)


class Hostile(NamedTuple):
    """A message whose contents and route try to break out of the page."""

    src: ModelValue
    dst: ModelValue
    text: str


NODES = named_values(["a", "b"], "Node")


class HostileSpec(Spec):
    """Sends one message holding markup, then breaks its invariant."""

    lanes = "Node"
    constants = {"Node": NODES}

    def init(self) -> list[frozenset[Hostile]]:
        return [frozenset()]

    @action
    def Send(self, s: frozenset[Hostile]) -> frozenset[Hostile] | None:
        if s:
            return None
        return s | {Hostile(NODES[0], NODES[1], "</svg><script>x")}

    @invariant
    def Quiet(self, s: frozenset[Hostile]) -> bool:
        return not s


def test_html_and_mermaid_escape_what_the_trace_holds() -> None:
    model = CompiledSpec(HostileSpec())
    result = check(model, Options())
    data = timeline_of_run(result, model)
    page = html_page(data)
    assert "<script" not in page and "&lt;script&gt;" in page
    assert page.count("</svg>") == 1
    assert "<script" not in mermaid(data)


def test_show_and_run_write_pictures(tmp_path: Path) -> None:
    runner = CliRunner()
    trace = tmp_path / "bug.itf.json"
    page = tmp_path / "bug.html"
    r = runner.invoke(main, ["run", SNAP, "--trace-out", str(trace), "--picture", str(page)])
    assert r.exit_code == 12, r.output
    assert page.read_text().startswith("<!DOCTYPE html>")
    r = runner.invoke(main, ["show", str(trace), "--format", "mermaid"])
    assert r.exit_code == 0 and r.stdout.startswith("sequenceDiagram")
    out = tmp_path / "again.html"
    r = runner.invoke(main, ["show", str(trace), "--format", "html", "--out", str(out)])
    assert r.exit_code == 0 and out.read_text() == page.read_text()


def _chromium() -> str | None:
    return browser_path()


@pytest.mark.skipif(
    _chromium() is None and os.environ.get("MCHECK_BROWSER_TEST") != "1",
    reason="no Chromium here (CI installs it and sets MCHECK_BROWSER_TEST=1)",
)
def test_a_browser_renders_the_hdds_16932_picture(tmp_path: Path) -> None:
    """Chromium, headless, draws the page to a PNG that is not blank and shows the
    lanes' header boxes and the arrows in colour."""
    image = pytest.importorskip("PIL.Image")
    browser = _chromium()
    assert browser is not None, "MCHECK_BROWSER_TEST=1 but no chromium on PATH"
    model = CompiledSpec(load_spec_class(SNAP)(variant="bug"))
    result = check(model, Options())
    page = tmp_path / "hdds-16932.html"
    page.write_text(html_page(timeline_of_run(result, model)))
    save_trace(result, model, tmp_path / "bug.itf.json")
    png = tmp_path / "hdds-16932.png"
    run = screenshot(browser, page, png)
    assert png.is_file(), run.stderr[-2000:]
    img = image.open(png).convert("RGB")
    colours = img.getcolors(maxcolors=1 << 20) or []
    assert len(colours) > 20  # text, boxes, arrows: not a blank page
    # The lane header boxes are filled #e8eef7 and the arrows #1f5fa8.
    present = {c for _, c in colours}
    assert (0xE8, 0xEE, 0xF7) in present
    assert any(abs(r - 0x1F) + abs(g - 0x5F) + abs(b - 0xA8) < 60 for r, g, b in present)
    dom = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    for lane in ("L1", "L2", "F"):
        assert f">{lane}</text>" in dom


def test_the_values_that_break_the_property_are_never_clipped() -> None:
    long = tuple(range(200))  # drawn as <<0, 1, ..., 199>>: about 900 characters
    data = TimelineData(
        spec="s",
        variant="v",
        var_names=("log",),
        states=[{"log": ()}, {"log": long}],
        actions=[None, "Grow"],
        actors=[None, None],
        lanes=[],
        property="ShortLog",
        reads=["log"],
    )
    pic = picture_of(data)
    assert pic.values and pic.values[0].endswith("198, 199>>")
    page = html_page(data)
    assert "198, 199&gt;&gt;" in page or "198, 199>>" in page


#: Monospace 12 px: a character's width, a line's height (for the boxes of notes).
_CHAR, _TEXT_H = 7.3, 12


@pytest.mark.parametrize(
    ("spec", "consts", "props"),
    [
        (SNAP, {}, None),
        (SNAP, {"TIMING": "report"}, None),
        # Drawn straight, 1 arrow of this lasso crossed a later step's notes ...
        (SNAP, {}, ["FollowerEventuallyCatchesUp"]),
        # ... 2 of this counterexample's, and 3 of this lasso's.
        ("ratis_heartbeat_match_index", {}, None),
        ("ratis_heartbeat_match_index", {"MaxMsgs": 1}, ["FollowersEventuallyMatchLeader"]),
    ],
)
def test_no_message_arrow_crosses_a_note(
    spec: str, consts: dict[str, Any], props: list[str] | None
) -> None:
    """Every arrow segment stays clear of every note's text box (in-flight messages
    were drawn straight across the notes of later steps)."""
    model = CompiledSpec(load_spec_class(spec)(variant="bug", **consts), properties=props)
    result = check(model, Options())
    assert result.trace is not None
    page = html_page(timeline_of_run(result, model))
    svg = ET.fromstring(page[page.index("<svg") : page.index("</svg>") + 6])
    ns = "{http://www.w3.org/2000/svg}"
    notes = [
        (float(t.get("x", 0)), float(t.get("y", 0)), len(t.text or ""))
        for t in svg.iter(ns + "text")
        if t.get("fill") == "#5a3d00"
    ]
    boxes = [(x, y - _TEXT_H + 2, x + n * _CHAR, y + 2) for x, y, n in notes]
    arrows = [e for e in svg.iter(ns + "polyline") if e.get("class") == "msg"]
    assert arrows
    for arrow in arrows:
        pts = [tuple(map(float, p.split(","))) for p in (arrow.get("points") or "").split()]
        for (ax, ay), (bx, by) in itertools.pairwise(pts):
            lo_x, hi_x, lo_y, hi_y = min(ax, bx), max(ax, bx), min(ay, by), max(ay, by)
            for x0, y0, x1, y1 in boxes:
                crosses = lo_x <= x1 and hi_x >= x0 and lo_y <= y1 and hi_y >= y0
                assert not crosses, (arrow.get("points"), (x0, y0, x1, y1))
