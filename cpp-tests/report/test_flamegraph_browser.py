"""The HTML flame graph in a real browser: headless Chromium (Debian chromium), driven through
the DevTools protocol (cdp.py), with real mouse and keyboard input.

The page exposes window.flameGraph (what is drawn, and where) and reports search results in its
DOM; expectations come from the test Profile itself (profile_model.py). Figures for the
1M-sample page are printed as FIGURE lines.
"""
import colorsys
import json
import os
import re
import time

import pytest

import cdp

MIX = "demo.Inline.mix(long)"
DIGEST = "demo.Inline.digest(long[])"
MAIN = "demo.Inline.main(java.lang.String[])"
LEAF = "demo.Inline.leaf(int)"
# Collects what the page's content security policy refused, before any page script runs.
WATCH_VIOLATIONS = ("window.__violations = [];"
                    "document.addEventListener('securitypolicyviolation', e => window.__violations.push(e.blockedURI));")


def figure(name, value):
    print(f"FIGURE {name} {value}", flush=True)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    b = cdp.Browser(str(tmp_path_factory.mktemp("chromium")))
    b.page("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH_VIOLATIONS})
    yield b
    b.close()


def load(browser, path, timeout=300):
    """Opens the page from its file and waits for its first render; returns the wall time in ms."""
    elapsed = browser.navigate("file://" + str(path), timeout=timeout)
    assert browser.exceptions() == [], browser.exceptions()
    assert browser.evaluate("document.documentElement.dataset.ready") == "true", "the page did not finish rendering"
    return elapsed


def fg(browser, call):
    return browser.evaluate("window.flameGraph." + call)


def js_string(text):
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def node(browser, name, kind=None):
    """The single node of frame `name` (of `kind`, when given)."""
    found = [n for n in fg(browser, f"nodes({js_string(name)})") if kind is None or n["kind"] == kind]
    assert len(found) == 1, f"{name} ({kind}): {found}"
    return found[0]


def center(rect):
    return rect["x"] + rect["width"] / 2, rect["y"] + rect["height"] / 2


def pixel(browser, x, y):
    """The canvas's colour at a client point, as (r, g, b)."""
    return tuple(browser.evaluate(
        "(() => { const c = document.getElementById('canvas'); const r = c.getBoundingClientRect();"
        f" const d = c.getContext('2d').getImageData(Math.floor(({x}) - r.left) * devicePixelRatio,"
        f" Math.floor(({y}) - r.top) * devicePixelRatio, 1, 1).data; return [d[0], d[1], d[2]]; }})()"))


def frame_colour(browser, index):
    """The fill of a drawn frame: a pixel just inside its top-left corner, clear of its label."""
    rect = fg(browser, f"rect({index})")
    assert rect, f"node {index} is not drawn"
    return pixel(browser, rect["x"] + 1.5, rect["y"] + 1.5)


def swatch(browser, kind):
    text = browser.evaluate(
        f"getComputedStyle(document.querySelector('#legend li[data-kind=\"{kind}\"]'), '::before').backgroundColor")
    return tuple(int(v) for v in re.findall(r"\d+", text)[:3])


def hue(rgb):
    return colorsys.rgb_to_hls(*(v / 255 for v in rgb))[0] * 360


def hue_distance(a, b):
    d = abs(hue(a) - hue(b)) % 360
    return min(d, 360 - d)


def click_element(browser, selector):
    rect = browser.evaluate(f"(() => {{ const r = document.querySelector('{selector}').getBoundingClientRect();"
                            " return {x: r.x, y: r.y, width: r.width, height: r.height}; })()")
    browser.click(*center(rect))


def type_search(browser, text):
    click_element(browser, "#search")
    browser.evaluate("document.getElementById('search').select()")
    browser.page("Input.insertText", {"text": text})
    return browser.evaluate("document.getElementById('search-result').textContent")


def press(browser, key):
    for kind in ("keyDown", "keyUp"):
        browser.page("Input.dispatchKeyEvent", {"type": kind, "key": key, "code": key,
                                                "windowsVirtualKeyCode": 27 if key == "Escape" else 0})


def path_total(model, path):
    """Samples whose stack, root first and inline chains expanded, starts with `path` (the
    page's root frame "all" left out)."""
    total = 0
    for s in model.samples():
        names = [f[0] for f in reversed(model.frames(s))]
        if names[:len(path)] == path:
            total += s["count"]
    return total


def test_expected_java_frames_are_present_and_drawn(browser, inline_outputs):
    out, manifest, model = inline_outputs
    load(browser, out / "flamegraph.html")
    assert fg(browser, "total") == model.total()
    names = {n for s in model.samples() for n, *_ in model.frames(s)}
    assert names <= {f["name"] for f in fg(browser, "frames()")}
    for name in sorted(names):
        nodes = fg(browser, f"nodes({js_string(name)})")
        assert nodes, f"{name} has no node"
        for n in nodes:
            path = fg(browser, f"path({n['index']})")
            assert path[0] == "all"
            assert n["total"] == path_total(model, path[1:]), f"{path}: {n['total']} samples"
            assert fg(browser, f"rect({n['index']})"), f"{name} is not drawn"
    # The shape: leaf() under caller() inlined into main(); mix() inlined into digest()
    # only, compiled on its own under checksum().
    assert fg(browser, f"path({node(browser, LEAF)['index']})")[-3:] == [MAIN, "demo.Inline.caller()", LEAF]
    assert node(browser, "demo.Inline.caller()")["kind"] == "inlined"
    assert fg(browser, f"path({node(browser, MIX, 'inlined')['index']})")[-2:] == [DIGEST, MIX]
    assert fg(browser, f"path({node(browser, MIX, 'compiled')['index']})")[-2:] == ["demo.Inline.checksum(long[])", MIX]
    assert browser.evaluate("document.title") == manifest["title"]


def test_each_kind_has_its_own_colour_and_legend_entry(browser, inline_outputs):
    out, _, _ = inline_outputs
    load(browser, out / "flamegraph.html")
    examples = {"compiled": (LEAF, None), "inlined": (MIX, "inlined"), "interpreted": ("Interpreter", None),
                "stub": ("StubRoutines::call_stub", None), "native": ("start_thread", None),
                "kernel": ("clear_page_erms", None)}
    drawn = {}
    for kind, (name, want) in examples.items():
        n = node(browser, name, want)
        assert n["kind"] == kind
        drawn[kind] = frame_colour(browser, n["index"])
        assert hue_distance(drawn[kind], swatch(browser, kind)) <= 10, f"{kind}: drawn {drawn[kind]}, legend {swatch(browser, kind)}"
    kinds = list(drawn)
    for i, a in enumerate(kinds):
        for b in kinds[i + 1:]:
            assert hue_distance(drawn[a], drawn[b]) >= 20, f"{a} {drawn[a]} and {b} {drawn[b]} look alike"


def test_tooltip_shows_share_and_source_line(browser, inline_outputs):
    out, _, model = inline_outputs
    load(browser, out / "flamegraph.html")
    mix = node(browser, MIX, "inlined")
    browser.mouse("mouseMoved", *center(fg(browser, f"rect({mix['index']})")))
    assert browser.evaluate("document.getElementById('tooltip').hidden") is False
    text = browser.evaluate("document.getElementById('tooltip').innerText")
    samples = path_total(model, fg(browser, f"path({mix['index']})")[1:])
    assert MIX in text
    assert "inlined Java" in text
    assert f"{samples:,} samples, {100 * samples / model.total():.2f}% of all" in text, text
    assert "demo/Inline.java:41" in text, text
    # A frame with several lines lists each with its share of the frame.
    leaf = node(browser, LEAF)
    browser.mouse("mouseMoved", *center(fg(browser, f"rect({leaf['index']})")))
    text = browser.evaluate("document.getElementById('tooltip').innerText")
    assert "demo/Inline.java:12 (95.24% of this frame)" in text, text  # 600 of 630
    assert "demo/Inline.java:14 (4.76% of this frame)" in text, text
    browser.mouse("mouseMoved", 5, 5)  # over the header: no frame, no tooltip
    assert browser.evaluate("document.getElementById('tooltip').hidden") is True


def test_click_zooms_and_reset_restores(browser, inline_outputs):
    out, _, _ = inline_outputs
    load(browser, out / "flamegraph.html")
    width = browser.evaluate("document.getElementById('scroller').clientWidth")
    digest, mix, leaf = node(browser, DIGEST), node(browser, MIX, "inlined"), node(browser, LEAF)
    assert fg(browser, f"rect({mix['index']})")["width"] < width / 2

    browser.click(*center(fg(browser, f"rect({digest['index']})")))
    assert fg(browser, "state()")["zoom"] == digest["index"]
    assert fg(browser, f"rect({mix['index']})")["width"] == pytest.approx(width, abs=1)  # digest's only callee
    assert fg(browser, f"rect({leaf['index']})") is None  # outside the zoomed frame: not drawn
    assert f"Zoomed into {DIGEST}" in browser.evaluate("document.getElementById('status').textContent")

    main = node(browser, MAIN)  # drawn faded above the zoomed frame: clicking it zooms out to it
    browser.click(*center(fg(browser, f"rect({main['index']})")))
    assert fg(browser, "state()")["zoom"] == main["index"]
    assert fg(browser, f"rect({leaf['index']})") is not None

    press(browser, "Escape")
    assert fg(browser, "state()")["zoom"] == 0

    browser.click(*center(fg(browser, f"rect({digest['index']})")))
    type_search(browser, "mix")
    click_element(browser, "#reset")
    state = fg(browser, "state()")
    assert state["zoom"] == 0 and state["query"] == "" and state["matched"] == 0
    assert browser.evaluate("document.getElementById('search').value") == ""
    assert browser.evaluate("document.getElementById('search-result').textContent") == ""


def test_search_highlights_matches_and_shows_their_share(browser, inline_outputs):
    out, _, model = inline_outputs
    load(browser, out / "flamegraph.html")
    mix, leaf = node(browser, MIX, "inlined"), node(browser, LEAF)
    before = frame_colour(browser, mix["index"])

    matched = model.matching(lambda name: "mix" in name.lower())
    text = type_search(browser, "MIX")  # plain text matches case-insensitively
    assert text == f"Matched {matched:,} samples, {100 * matched / model.total():.2f}% of all"
    assert hue_distance(frame_colour(browser, mix["index"]), swatch(browser, "match")) <= 10
    assert frame_colour(browser, mix["index"]) != before
    assert hue_distance(frame_colour(browser, leaf["index"]), swatch(browser, "match")) > 30

    main = node(browser, MAIN)
    browser.click(*center(fg(browser, f"rect({main['index']})")))
    text = browser.evaluate("document.getElementById('search-result').textContent")
    assert text.endswith(f", {100 * matched / main['total']:.2f}% of the zoomed frame"), text

    pattern = r"^demo\.Inline\.(leaf|digest)"
    matched = model.matching(lambda name: re.search(pattern, name) is not None)
    text = type_search(browser, f"/{pattern}/")
    assert text.startswith(f"Matched {matched:,} samples, {100 * matched / model.total():.2f}% of all"), text
    assert type_search(browser, "/(unclosed/") == "not a valid regular expression"


def page_requests_in_net_log(path):
    """URLs the network stack fetched for pages loaded from files. Chromium also fetches on its
    own behalf (update checks, network time, accounts) whatever the flags; those carry no page
    in their network isolation key, a page's requests carry the page's site (file://)."""
    with open(path) as f:
        log = json.load(f)  # complete once Chromium has shut down cleanly
    start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    urls = []
    for event in log["events"]:
        params = event.get("params", {})
        if event["type"] == start_job and params.get("network_isolation_key", "").startswith("file://"):
            urls.append(params["url"])
    return urls


def network_activity(tmp_path, page, interact=None):
    """Everything a fresh Chromium saw while showing `page`: request URLs from the DevTools
    Network events, URLs the page's security policy refused, and the URLs Chromium's network
    stack fetched for the page, from its own network log (independent of the page and of
    DevTools)."""
    net_log = tmp_path / "netlog.json"
    b = cdp.Browser(str(tmp_path / "profile"), net_log=str(net_log))
    try:
        b.page("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH_VIOLATIONS})
        load(b, page)
        if interact:
            interact(b)
        time.sleep(0.5)  # let late requests (none expected) show up
        b.evaluate("1")  # drain the events that arrived meanwhile
        requests = b.requests()
        violations = b.evaluate("window.__violations")
    finally:
        b.close()
    return requests, violations, page_requests_in_net_log(net_log)


def test_page_makes_no_network_request(inline_outputs, tmp_path):
    out, _, _ = inline_outputs
    page = out / "flamegraph.html"

    def use_the_page(b):
        type_search(b, "mix")
        b.click(*center(fg(b, f"rect({node(b, DIGEST)['index']})")))
        b.mouse("mouseMoved", *center(fg(b, f"rect({node(b, MIX, 'inlined')['index']})")))
        click_element(b, "#reset")

    requests, violations, logged = network_activity(tmp_path, page, use_the_page)
    assert requests == ["file://" + str(page)], requests  # the page itself, nothing else
    assert violations == []
    assert logged == [], logged


def test_the_request_checks_catch_a_request(inline_outputs, tmp_path):
    """The checks above can fail: the same page with one image from the network, once with the
    page's security policy (which refuses it) and once without (the request goes out)."""
    out, _, _ = inline_outputs
    html = (out / "flamegraph.html").read_text()
    probe = "http://127.0.0.1:9/probe.png"
    with_policy = tmp_path / "with_policy.html"
    with_policy.write_text(html.replace("<body>", f'<body><img src="{probe}">', 1))
    requests, violations, _ = network_activity(tmp_path / "a", with_policy)
    assert probe in violations, (requests, violations)

    without_policy = tmp_path / "without_policy.html"
    without_policy.write_text(re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "",
                                     with_policy.read_text(), count=1))
    requests, violations, logged = network_activity(tmp_path / "b", without_policy)
    assert probe in requests, requests
    assert probe in logged, logged


def test_million_samples(browser, million_outputs):
    out, manifest = million_outputs
    page = out / "flamegraph.html"
    wall = load(browser, page, timeout=600)
    timings = fg(browser, "timings")
    nav = browser.evaluate("performance.getEntriesByType('navigation')[0].toJSON()")
    assert fg(browser, "total") == manifest["samples"] == 1000000
    search_ms = []
    for search in manifest["searches"]:
        started = browser.evaluate("performance.now()")
        result = fg(browser, f"search({js_string(search['query'])})")
        search_ms.append(browser.evaluate("performance.now()") - started)
        assert result["samples"] == search["samples"], search
    fg(browser, "search('')")
    # Zoom with a real click into the widest frame three levels down, then back out.
    x = browser.evaluate("document.getElementById('scroller').getBoundingClientRect().left") + 200
    y = browser.evaluate("document.getElementById('scroller').getBoundingClientRect().top") + 3 * 18 + 9
    target = fg(browser, f"nodeAt({x}, {y})")
    assert target > 0
    browser.click(x, y)
    state = fg(browser, "state()")
    assert state["zoom"] == target
    zoom_ms = state["renderMs"]
    press(browser, "Escape")
    assert fg(browser, "state()")["zoom"] == 0

    page_figures("flamegraph_1m", browser, page, manifest, wall, timings, nav)
    figure("flamegraph_1m_search_ms_max", round(max(search_ms)))
    figure("flamegraph_1m_zoom_render_ms", round(zoom_ms))


def page_figures(prefix, browser, page, manifest, wall, timings, nav):
    figure(f"{prefix}_html_bytes", os.path.getsize(page))
    figure(f"{prefix}_tree_nodes", fg(browser, "nodeCount"))
    figure(f"{prefix}_distinct_stacks", manifest["distinct_stacks"])
    figure(f"{prefix}_write_ms", round(manifest["write_html_ms"]))
    figure(f"{prefix}_write_cpu_ms", round(manifest["write_html_cpu_ms"]))
    figure(f"{prefix}_write_peak_rss_growth_kb", manifest["write_html_peak_rss_growth_kb"])
    figure(f"{prefix}_load_event_ms", round(nav["loadEventEnd"]))
    figure(f"{prefix}_first_render_ms", round(timings["script_start_ms"] + timings["first_render_ms"]))
    figure(f"{prefix}_json_parse_ms", round(timings["parse_ms"]))
    figure(f"{prefix}_model_ms", round(timings["model_ms"]))
    figure(f"{prefix}_navigate_wall_ms", round(wall))


def test_million_scattered_samples_worst_case(browser, scattered_outputs):
    """The size worst case: 1M samples whose stacks share little (millions of tree nodes). The
    page must still load, count every sample and answer a search right."""
    out, manifest = scattered_outputs
    page = out / "flamegraph.html"
    wall = load(browser, page, timeout=600)
    assert fg(browser, "total") == manifest["samples"] == 1000000
    search = manifest["searches"][0]
    assert fg(browser, f"search({js_string(search['query'])})")["samples"] == search["samples"]
    page_figures("flamegraph_1m_scattered", browser, page, manifest, wall, fg(browser, "timings"),
                 browser.evaluate("performance.getEntriesByType('navigation')[0].toJSON()"))
