// The flame graph page's controls: reads the embedded data, builds the model (model.js) and the
// view (view.js), and wires the header (summary, legend), zoom (click a frame), search, reset
// (button or Esc) and the tooltip. Runs last, once the other two scripts have defined their parts.
(function (parts) {
  'use strict';

  // A page that fails to draw says so where the status line is, instead of staying blank.
  window.addEventListener('error', (e) => {
    document.getElementById('status').textContent = 'This page could not draw the profile: ' + e.message;
  });

  const LEGEND_KINDS = ['compiled', 'inlined', 'interpreted', 'stub', 'native', 'kernel', 'unknown'];
  const {KINDS, MATCH, hsl} = parts;

  const timings = {script_start_ms: performance.now()};
  const data = JSON.parse(document.getElementById('profile-data').textContent);
  timings.parse_ms = performance.now() - timings.script_start_ms;
  const m = parts.buildModel(data);
  timings.model_ms = performance.now() - timings.script_start_ms - timings.parse_ms;

  const scroller = document.getElementById('scroller');
  const tooltip = document.getElementById('tooltip');
  const search = document.getElementById('search');
  const searchResult = document.getElementById('search-result');
  const status = document.getElementById('status');
  const state = {zoom: 0, query: '', match: null, matched: 0, matchedInZoom: 0, renderMs: 0};
  const view = parts.createView(m, state, document.getElementById('canvas'), scroller,
      document.getElementById('spacer'));

  // ---- formatting ----

  function count(x) {
    return Math.round(x).toLocaleString('en-US');
  }
  function percent(part, whole) {
    return whole > 0 ? (100 * part / whole).toFixed(2) + '%' : '0%';
  }
  function seconds(samples) {
    const s = samples * data.period_ns / 1e9;
    return s >= 1 ? s.toFixed(2) + ' s' : (s * 1000).toFixed(1) + ' ms';
  }

  // ---- zoom, search, reset ----

  function zoom(i) {
    state.zoom = i >= 0 && i < m.n ? i : 0;
    view.resizeSpacer();
    view.revealZoom();
    updateMatched();
    updateStatus();
    view.render();
  }

  function setQuery(query) {
    state.query = query;
    state.match = null;
    search.classList.remove('invalid');
    if (query) {
      try {
        state.match = parts.matchFrames(m, query);
      } catch (e) {
        search.classList.add('invalid');  // not a regular expression: nothing matches
      }
    }
    updateMatched();
    view.render();
  }

  function updateMatched() {
    if (!state.match || !m.n) {
      state.matched = state.matchedInZoom = 0;
      searchResult.textContent = state.query && !state.match ? 'not a valid regular expression' : '';
      return;
    }
    state.matched = parts.matchedIn(m, state.match, 0);
    const z = state.zoom;
    let ancestorMatches = false;
    for (let a = m.parent[z]; a >= 0; a = m.parent[a]) ancestorMatches = ancestorMatches || state.match[m.frame[a]] === 1;
    state.matchedInZoom = ancestorMatches ? m.total[z] : parts.matchedIn(m, state.match, z);
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
    const summary = [count(m.all) + ' samples'];
    if (data.period_ns) summary.push(seconds(m.all) + ' of CPU');
    if (data.duration_ns) summary.push('over ' + (data.duration_ns / 1e9).toFixed(1) + ' s');
    const procs = data.processes.map((p) => (p.command || 'pid') + ' [' + p.pid + ']');
    if (procs.length) summary.push(procs.length > 3 ? procs.length + ' processes' : procs.join(', '));
    document.getElementById('summary').textContent = summary.join(' \u00b7 ');

    // Each kind's share: samples whose own (leaf) frame is of that kind.
    const byKind = {};
    for (let i = 0; i < m.n; i++) {
      const k = m.kindOf[m.frame[i]];
      byKind[k] = (byKind[k] || 0) + m.self[i];
    }
    const legend = document.getElementById('legend');
    const entry = (kind, style, text) => {
      const li = document.createElement('li');
      li.dataset.kind = kind;
      li.style.setProperty('--swatch', hsl(style));
      li.textContent = text;
      legend.appendChild(li);
    };
    for (const k of LEGEND_KINDS) {
      if (k !== 'unknown' || byKind[k]) entry(k, KINDS[k], KINDS[k].label + ' ' + percent(byKind[k] || 0, m.all));
    }
    entry('match', MATCH, MATCH.label);
  }

  // ---- tooltip ----

  function showTooltip(i, clientX, clientY) {
    const f = m.frame[i];
    let share = count(m.total[i]) + ' samples, ' + percent(m.total[i], m.all) + ' of all';
    if (state.zoom !== 0 && i >= state.zoom) share += ', ' + percent(m.total[i], m.total[state.zoom]) + ' of the zoomed frame';
    if (data.period_ns) share += ' (' + seconds(m.total[i]) + ')';
    const lines = [[m.names[f], 'name'], [(KINDS[m.kindOf[f]] || KINDS.unknown).label, 'detail'], [share]];
    if (m.self[i] > 0) lines.push(['self: ' + count(m.self[i]) + ' samples, ' + percent(m.self[i], m.all)]);
    for (const text of sourceLines(i, f)) lines.push([text]);
    tooltip.replaceChildren(...lines.map(([text, cls]) => {
      const div = document.createElement('div');
      if (cls) div.className = cls;
      div.textContent = text;
      return div;
    }));
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
    const lines = parts.linesOf(m, i);
    if (!lines.length) return m.fileOf[f] ? [m.fileOf[f]] : [];
    const out = lines.slice(0, 4).map(([line, samples]) =>
      (m.fileOf[f] || '?') + ':' + line + ' (' + percent(samples, m.total[i]) + ' of this frame)');
    if (lines.length > 4) out.push('and ' + (lines.length - 4) + ' more lines');
    return out;
  }

  // ---- events ----

  scroller.addEventListener('mousemove', (e) => {
    const i = view.nodeAt(e.clientX, e.clientY);
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
    const i = view.nodeAt(e.clientX, e.clientY);
    if (i >= 0) zoom(i);
  });
  scroller.addEventListener('scroll', view.scheduleRender);
  window.addEventListener('resize', view.scheduleRender);
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
  view.resizeSpacer();
  updateStatus();
  view.render();
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
    // Frame names from the root down to node i.
    path: (i) => {
      const out = [];
      for (let a = i; a >= 0; a = m.parent[a]) out.unshift(m.names[m.frame[a]]);
      return out;
    },
    rect: view.rectOf,
    nodeAt: view.nodeAt,
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
})(window.flameGraphParts);
