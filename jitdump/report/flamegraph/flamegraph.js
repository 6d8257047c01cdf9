// The flame graph page: reads the call tree `jitdump report` embedded in the page (its format is
// described in jitdump/report/flamegraph_data.h), draws it on a canvas, and handles zoom, search,
// reset and tooltips. No library and no request of any kind: the page must open from a file,
// offline, in any browser.
//
// Speed with millions of samples comes from the data's shape: the tree arrives aggregated in
// preorder, so every subtree is a contiguous index range. Drawing walks that range once and skips
// a whole subtree as soon as its frame is too narrow to see; search is one pass over the names
// and one over the nodes; hit testing descends from the zoomed frame.
(function () {
  'use strict';

  // A page that fails to draw says so where the status line is, instead of staying blank.
  window.addEventListener('error', (e) => {
    document.getElementById('status').textContent = 'This page could not draw the profile: ' + e.message;
  });

  const ROW = 18;  // px per stack level
  const MIN_WIDTH = 0.5;  // px: a narrower frame, and everything above it, is not drawn
  const FONT = '12px ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace';
  // One hue per kind of frame, so compiled, inlined, interpreted, stub, native and kernel code
  // read apart at a glance; the lightness varies a little per name so neighbours separate.
  const KINDS = {
    compiled: {label: 'compiled Java', hue: 115, sat: 50, light: 52},
    inlined: {label: 'inlined Java', hue: 185, sat: 62, light: 52},
    interpreted: {label: 'interpreted', hue: 0, sat: 70, light: 64},
    stub: {label: 'stub / adapter', hue: 270, sat: 50, light: 70},
    native: {label: 'native', hue: 48, sat: 75, light: 50},
    kernel: {label: 'kernel', hue: 25, sat: 90, light: 58},
    unknown: {label: 'unknown', hue: 0, sat: 0, light: 72},
    root: {label: 'all samples', hue: 215, sat: 15, light: 78},
    process: {label: 'process', hue: 215, sat: 15, light: 72},
    thread: {label: 'thread', hue: 215, sat: 25, light: 66},
  };
  const LEGEND_KINDS = ['compiled', 'inlined', 'interpreted', 'stub', 'native', 'kernel', 'unknown'];
  const MATCH = {hue: 300, sat: 85, light: 62};

  // One packed column of the data (flamegraph_data.h): little-endian 5-bit digits, alphabet
  // positions 32-63 continuing a number and 0-31 ending it; signed columns are zigzag-encoded.
  const PACK_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const DIGIT = new Int8Array(128).fill(-1);
  for (let i = 0; i < 64; i++) DIGIT[PACK_ALPHABET.charCodeAt(i)] = i;

  const timings = {script_start_ms: performance.now()};
  const data = JSON.parse(document.getElementById('profile-data').textContent);
  timings.parse_ms = performance.now() - timings.script_start_ms;
  const m = buildModel(data);
  timings.model_ms = performance.now() - timings.script_start_ms - timings.parse_ms;

  const canvas = document.getElementById('canvas');
  const ctx = canvas.getContext('2d');
  const scroller = document.getElementById('scroller');
  const spacer = document.getElementById('spacer');
  const tooltip = document.getElementById('tooltip');
  const search = document.getElementById('search');
  const searchResult = document.getElementById('search-result');
  const status = document.getElementById('status');

  const state = {zoom: 0, query: '', match: null, matched: 0, matchedInZoom: 0, renderMs: 0};
  const fills = new Array(m.frameCount);  // fill colour per frame, made on first use
  ctx.font = FONT;
  const charWidth = ctx.measureText('m').width || 7;
  let framePending = false;

  // ---- the model: typed arrays over the preorder nodes ----

  function unpack(text, count, signed, Type) {
    const out = new Type(count);
    let value = 0;
    let scale = 1;
    let k = 0;
    for (let i = 0; i < text.length; i++) {
      const digit = DIGIT[text.charCodeAt(i)];
      if (digit < 0) throw new Error('flame graph data: bad character in a packed column');
      if (digit >= 32) {
        value += (digit - 32) * scale;
        scale *= 32;
        continue;
      }
      value += digit * scale;
      out[k++] = !signed ? value : value % 2 ? -(value + 1) / 2 : value / 2;
      value = 0;
      scale = 1;
    }
    if (k !== count) throw new Error('flame graph data: a packed column holds ' + k + ' numbers, not ' + count);
    return out;
  }

  function buildModel(data) {
    const nodes = data.nodes;
    const n = nodes.count;
    const frame = unpack(nodes.frame, n, false, Int32Array);
    const total = unpack(nodes.total, n, false, Float64Array);
    const depthDelta = unpack(nodes.depth, n, true, Int32Array);
    const lineCode = unpack(nodes.line, n, true, Float64Array);
    const self = Float64Array.from(total);
    const depth = new Int32Array(n);
    const start = new Float64Array(n);  // in samples, from the left edge of the root
    const end = new Int32Array(n);  // one past the last node of the subtree
    const parent = new Int32Array(n);
    const moreStart = new Int32Array(n);  // where a node's lines start in more_line, if there
    const path = [];  // path[d]: the open node at depth d
    const nextX = [];  // nextX[d]: where the next child of path[d] starts
    let d = 0;
    for (let i = 0; i < n; i++) {
      d += depthDelta[i];
      while (path.length > d) end[path.pop()] = i;
      depth[i] = d;
      if (d > 0) {
        const p = path[d - 1];
        parent[i] = p;
        start[i] = nextX[d - 1];
        nextX[d - 1] += total[i];
        self[p] -= total[i];
      } else {
        parent[i] = -1;
      }
      nextX[d] = start[i];
      path.push(i);
    }
    while (path.length) end[path.pop()] = n;
    for (let i = 0, more = 0; i < n; i++) {
      moreStart[i] = more;
      if (lineCode[i] < 0) more -= lineCode[i];
    }
    const maxDepth = Int32Array.from(depth);  // deepest level in each subtree
    for (let i = n - 1; i > 0; i--) {
      if (maxDepth[i] > maxDepth[parent[i]]) maxDepth[parent[i]] = maxDepth[i];
    }
    const kindOf = Array.from(data.frames.kind, (k) => data.kinds[k]);
    return {
      n, frame, total, self, depth, start, end, parent, moreStart, maxDepth, kindOf,
      names: data.frames.name,
      fileOf: Array.from(data.frames.file, (f) => data.files[f]),
      frameCount: data.frames.name.length,
      lineCode,
      moreLine: unpack(nodes.more_line, nodes.more_count, false, Float64Array),
      moreSamples: unpack(nodes.more_samples, nodes.more_count, false, Float64Array),
      all: n ? total[0] : 0,
    };
  }

  // ---- formatting ----

  function count(x) {
    return Math.round(x).toLocaleString('en-US');
  }
  function percent(part, whole) {
    return whole > 0 ? (100 * part / whole).toFixed(2) + '%' : '0%';
  }
  function seconds(samples) {
    if (!data.period_ns) return '';
    const s = samples * data.period_ns / 1e9;
    return s >= 1 ? s.toFixed(2) + ' s' : (s * 1000).toFixed(1) + ' ms';
  }
  function hsl(c, light) {
    return 'hsl(' + c.hue + ',' + c.sat + '%,' + light + '%)';
  }
  function nameHash(s) {
    let h = 2166136261;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
    return h >>> 0;
  }
  function fillOf(f) {
    if (state.match && state.match[f]) return hsl(MATCH, MATCH.light);
    let fill = fills[f];
    if (fill === undefined) {
      const c = KINDS[m.kindOf[f]] || KINDS.unknown;
      fill = fills[f] = hsl(c, c.light - 6 + (nameHash(m.names[f]) % 13));
    }
    return fill;
  }

  // ---- drawing ----

  function resizeSpacer() {
    spacer.style.height = (m.n ? (m.maxDepth[state.zoom] + 1) * ROW + ROW : 0) + 'px';
  }

  function render() {
    const began = performance.now();
    framePending = false;
    const width = scroller.clientWidth;
    const height = scroller.clientHeight;
    const dpr = window.devicePixelRatio || 1;
    if (canvas.width !== Math.round(width * dpr) || canvas.height !== Math.round(height * dpr)) {
      canvas.width = Math.round(width * dpr);
      canvas.height = Math.round(height * dpr);
      canvas.style.width = width + 'px';
      canvas.style.height = height + 'px';
    }
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    if (!m.n || !m.all) {
      state.renderMs = performance.now() - began;
      return;
    }
    ctx.font = FONT;
    ctx.textBaseline = 'middle';
    const z = state.zoom;
    const top = scroller.scrollTop;
    const scale = width / m.total[z];
    const x0 = m.start[z];
    const firstRow = Math.floor(top / ROW);
    const lastRow = Math.floor((top + height) / ROW);
    // The zoomed frame's ancestors span the width, faded: the way back out.
    ctx.globalAlpha = 0.55;
    for (let a = m.parent[z]; a >= 0; a = m.parent[a]) {
      if (m.depth[a] >= firstRow && m.depth[a] <= lastRow) drawFrame(a, 0, width, top);
    }
    ctx.globalAlpha = 1;
    for (let i = z, e = m.end[z]; i < e;) {
      const w = m.total[i] * scale;
      const d = m.depth[i];
      if (w < MIN_WIDTH || d > lastRow) {
        i = m.end[i];
        continue;
      }
      if (d >= firstRow) drawFrame(i, (m.start[i] - x0) * scale, w, top);
      i++;
    }
    state.renderMs = performance.now() - began;
  }

  function drawFrame(i, x, w, top) {
    const y = m.depth[i] * ROW - top;
    const f = m.frame[i];
    ctx.fillStyle = fillOf(f);
    ctx.fillRect(x, y, w > 2 ? w - 1 : w, ROW - 1);
    const chars = Math.floor((w - 6) / charWidth);
    if (chars < 3) return;
    const name = m.names[f];
    ctx.fillStyle = '#000';
    ctx.fillText(name.length <= chars ? name : name.slice(0, chars - 1) + '\u2026', x + 3, y + ROW / 2);
  }

  function scheduleRender() {
    if (framePending) return;
    framePending = true;
    requestAnimationFrame(render);
  }

  // ---- hit testing ----

  // The node drawn at a point of the scroller (client coordinates), or -1.
  function nodeAt(clientX, clientY) {
    const r = scroller.getBoundingClientRect();
    const x = clientX - r.left;
    const d = Math.floor((clientY - r.top + scroller.scrollTop) / ROW);
    if (!m.n || !m.all || x < 0 || x >= scroller.clientWidth || d < 0) return -1;
    const z = state.zoom;
    if (d <= m.depth[z]) {
      let a = z;
      while (m.depth[a] > d) a = m.parent[a];
      return a;
    }
    const scale = scroller.clientWidth / m.total[z];
    const at = m.start[z] + x / scale;
    let node = z;
    while (m.depth[node] < d) {
      let next = -1;
      for (let c = node + 1; c < m.end[node]; c = m.end[c]) {
        if (at >= m.start[c] && at < m.start[c] + m.total[c]) {
          next = c;
          break;
        }
      }
      if (next < 0 || m.total[next] * scale < MIN_WIDTH) return -1;
      node = next;
    }
    return node;
  }

  // Where node i is drawn, in client coordinates, scrolling its row into view; null when it is
  // not drawn (outside the zoomed frame, or too narrow).
  function rectOf(i) {
    const z = state.zoom;
    let inside = i >= z && i < m.end[z];
    for (let a = m.parent[z]; a >= 0 && !inside; a = m.parent[a]) inside = a === i;
    if (!inside) return null;
    const width = scroller.clientWidth;
    const scale = width / m.total[z];
    const x = i >= z ? (m.start[i] - m.start[z]) * scale : 0;
    const w = i >= z ? m.total[i] * scale : width;
    if (w < MIN_WIDTH) return null;
    for (let a = m.parent[i]; a >= z && i > z; a = m.parent[a]) {
      if (m.total[a] * scale < MIN_WIDTH) return null;
    }
    const y = m.depth[i] * ROW;
    if (y < scroller.scrollTop || y + ROW > scroller.scrollTop + scroller.clientHeight) {
      scroller.scrollTop = Math.max(0, y - scroller.clientHeight / 2);
      render();
    }
    const r = scroller.getBoundingClientRect();
    return {x: r.left + x, y: r.top + y - scroller.scrollTop, width: w, height: ROW - 1};
  }

  // ---- zoom, search, reset ----

  function zoom(i) {
    state.zoom = i >= 0 && i < m.n ? i : 0;
    resizeSpacer();
    const y = m.depth[state.zoom] * ROW;
    if (y < scroller.scrollTop || y > scroller.scrollTop + scroller.clientHeight - 2 * ROW) {
      scroller.scrollTop = Math.max(0, y - 2 * ROW);
    }
    updateMatched();
    updateStatus();
    render();
  }

  // Plain text matches names case-insensitively; /text/flags is a regular expression.
  function matcherOf(query) {
    const re = /^\/(.+)\/([a-z]*)$/.exec(query);
    if (!re) {
      const lower = query.toLowerCase();
      return (s) => s.toLowerCase().includes(lower);
    }
    const pattern = new RegExp(re[1], re[2].replace(/[gy]/g, ''));  // no lastIndex state
    return (s) => pattern.test(s);
  }

  function setQuery(query) {
    state.query = query;
    state.match = null;
    search.classList.remove('invalid');
    if (query) {
      let test;
      try {
        test = matcherOf(query);
      } catch (e) {
        search.classList.add('invalid');
      }
      if (test) {
        state.match = new Uint8Array(m.frameCount);
        for (let f = 0; f < m.frameCount; f++) state.match[f] = test(m.names[f]) ? 1 : 0;
      }
    }
    updateMatched();
    render();
  }

  // Samples under matching frames, each counted once however many matching frames its stack
  // holds: a matching node's subtree is taken whole and skipped.
  function matchedIn(root) {
    let sum = 0;
    for (let i = root, e = m.end[root]; i < e;) {
      if (state.match[m.frame[i]]) {
        sum += m.total[i];
        i = m.end[i];
      } else {
        i++;
      }
    }
    return sum;
  }

  function updateMatched() {
    if (!state.match || !m.n) {
      state.matched = state.matchedInZoom = 0;
      searchResult.textContent = state.query && !state.match ? 'not a valid regular expression' : '';
      return;
    }
    state.matched = matchedIn(0);
    const z = state.zoom;
    let ancestorMatches = false;
    for (let a = m.parent[z]; a >= 0; a = m.parent[a]) ancestorMatches = ancestorMatches || state.match[m.frame[a]] === 1;
    state.matchedInZoom = ancestorMatches ? m.total[z] : matchedIn(z);
    let text = 'Matched ' + count(state.matched) + ' samples, ' + percent(state.matched, m.all) + ' of all';
    if (z !== 0) text += ', ' + percent(state.matchedInZoom, m.total[z]) + ' of the zoomed frame';
    searchResult.textContent = text;
  }

  function reset() {
    search.value = '';
    setQuery('');
    scroller.scrollTop = 0;
    zoom(0);
  }

  function updateStatus() {
    const z = state.zoom;
    if (!m.all) {
      status.textContent = 'No samples.';
    } else if (z === 0) {
      status.textContent = 'Click a frame to zoom into it; hover for details.';
    } else {
      status.textContent = 'Zoomed into ' + m.names[m.frame[z]] + ' (' + percent(m.total[z], m.all) +
          ' of all samples). Click a faded frame, Reset or Esc to zoom out.';
    }
  }

  // ---- header: summary and legend ----

  function fillHeader() {
    const parts = [count(m.all) + ' samples'];
    if (data.period_ns) parts.push(seconds(m.all) + ' of CPU');
    if (data.duration_ns) parts.push('over ' + (data.duration_ns / 1e9).toFixed(1) + ' s');
    const procs = data.processes.map((p) => (p.command || 'pid') + ' [' + p.pid + ']');
    if (procs.length) parts.push(procs.length > 3 ? procs.length + ' processes' : procs.join(', '));
    document.getElementById('summary').textContent = parts.join(' \u00b7 ');

    // Each kind's share: samples whose own (leaf) frame is of that kind.
    const byKind = {};
    for (let i = 0; i < m.n; i++) {
      const k = m.kindOf[m.frame[i]];
      byKind[k] = (byKind[k] || 0) + m.self[i];
    }
    const legend = document.getElementById('legend');
    for (const k of LEGEND_KINDS) {
      if (k === 'unknown' && !byKind[k]) continue;
      const li = document.createElement('li');
      li.dataset.kind = k;
      li.style.setProperty('--swatch', hsl(KINDS[k], KINDS[k].light));
      li.textContent = KINDS[k].label + ' ' + percent(byKind[k] || 0, m.all);
      legend.appendChild(li);
    }
    const li = document.createElement('li');
    li.dataset.kind = 'match';
    li.style.setProperty('--swatch', hsl(MATCH, MATCH.light));
    li.textContent = 'search match';
    legend.appendChild(li);
  }

  // ---- tooltip ----

  function showTooltip(i, clientX, clientY) {
    const f = m.frame[i];
    const kind = KINDS[m.kindOf[f]] || KINDS.unknown;
    const lines = [];
    let share = count(m.total[i]) + ' samples, ' + percent(m.total[i], m.all) + ' of all';
    if (state.zoom !== 0 && i >= state.zoom) share += ', ' + percent(m.total[i], m.total[state.zoom]) + ' of the zoomed frame';
    if (data.period_ns) share += ' (' + seconds(m.total[i]) + ')';
    lines.push(share);
    if (m.self[i] > 0) lines.push('self: ' + count(m.self[i]) + ' samples, ' + percent(m.self[i], m.all));
    lines.push(...sourceLines(i, f));
    tooltip.replaceChildren();
    const name = document.createElement('div');
    name.className = 'name';
    name.textContent = m.names[f];
    tooltip.appendChild(name);
    const kindLine = document.createElement('div');
    kindLine.className = 'detail';
    kindLine.textContent = kind.label;
    tooltip.appendChild(kindLine);
    for (const text of lines) {
      const div = document.createElement('div');
      div.textContent = text;
      tooltip.appendChild(div);
    }
    tooltip.hidden = false;
    const pad = 14;
    const x = Math.min(clientX + pad, window.innerWidth - tooltip.offsetWidth - 4);
    const y = clientY + pad + tooltip.offsetHeight > window.innerHeight ? clientY - pad - tooltip.offsetHeight : clientY + pad;
    tooltip.style.left = Math.max(0, x) + 'px';
    tooltip.style.top = Math.max(0, y) + 'px';
  }

  // "demo/Inline.java:41 (87.00% of this frame)" per known line, most samples first (at most
  // four), or just the file when no line is known.
  function sourceLines(i, f) {
    const file = m.fileOf[f] || '?';
    const code = m.lineCode[i];
    if (code === 0) return m.fileOf[f] ? [m.fileOf[f]] : [];
    if (code > 0) return [file + ':' + code + ' (100.00% of this frame)'];
    const from = m.moreStart[i];
    const out = [];
    for (let k = from; k < from - code && k < from + 4; k++) {
      out.push(file + ':' + m.moreLine[k] + ' (' + percent(m.moreSamples[k], m.total[i]) + ' of this frame)');
    }
    if (-code > 4) out.push('and ' + (-code - 4) + ' more lines');
    return out;
  }

  // ---- events ----

  scroller.addEventListener('mousemove', (e) => {
    const i = nodeAt(e.clientX, e.clientY);
    if (i < 0) {
      tooltip.hidden = true;
    } else {
      showTooltip(i, e.clientX, e.clientY);
    }
  });
  scroller.addEventListener('mouseleave', () => {
    tooltip.hidden = true;
  });
  scroller.addEventListener('click', (e) => {
    const i = nodeAt(e.clientX, e.clientY);
    if (i >= 0) zoom(i);
  });
  scroller.addEventListener('scroll', scheduleRender);
  window.addEventListener('resize', scheduleRender);
  search.addEventListener('input', () => setQuery(search.value));
  document.getElementById('reset').addEventListener('click', reset);
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') {
      reset();
    } else if (e.key === '/' && document.activeElement !== search) {
      e.preventDefault();
      search.focus();
    }
  });

  // ---- start ----

  fillHeader();
  resizeSpacer();
  updateStatus();
  render();
  timings.first_render_ms = performance.now() - timings.script_start_ms;

  // For scripts and tests driving the page (headless browsers): what is drawn and where, and
  // the same actions the controls perform.
  window.flameGraph = {
    timings,
    total: m.all,
    nodeCount: m.n,
    // Every distinct frame: {name, kind, file}.
    frames: () => m.names.map((name, f) => ({name, kind: m.kindOf[f], file: m.fileOf[f]})),
    // The nodes of frames named `name`: {index, depth, total, self, kind}.
    nodes: (name) => {
      const out = [];
      for (let i = 0; i < m.n; i++) {
        const f = m.frame[i];
        if (m.names[f] === name) out.push({index: i, depth: m.depth[i], total: m.total[i], self: m.self[i], kind: m.kindOf[f]});
      }
      return out;
    },
    path: (i) => {
      const out = [];
      for (let a = i; a >= 0; a = m.parent[a]) out.unshift(m.names[m.frame[a]]);
      return out;
    },
    rect: rectOf,
    nodeAt,
    fillOf: (i) => fillOf(m.frame[i]),
    kindColor: (kind) => hsl(KINDS[kind], KINDS[kind].light),
    kindHue: (kind) => KINDS[kind].hue,
    search: (query) => {
      search.value = query;
      setQuery(query);
      return {samples: state.matched, share: m.all ? state.matched / m.all : 0, text: searchResult.textContent};
    },
    zoom,
    reset,
    state: () => ({
      zoom: state.zoom,
      zoomName: m.n ? m.names[m.frame[state.zoom]] : '',
      query: state.query,
      matched: state.matched,
      matchedInZoom: state.matchedInZoom,
      renderMs: state.renderMs,
    }),
  };
  document.documentElement.dataset.ready = 'true';
})();
