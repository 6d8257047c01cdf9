// The flame graph's drawing: the model (model.js) on a canvas, root at the top, one row per
// stack level, and the reverse (which node is at a point, where a node is drawn).
//
// The canvas only covers the visible part of the graph and is redrawn on scroll; a scroller
// above it provides the scroll range (its spacer is as tall as the graph) and gets the mouse.
// A redraw walks the zoomed frame's subtree once, skipping every subtree narrower than
// MIN_WIDTH and every level below the visible rows.
(function (parts) {
  'use strict';

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
  const MATCH = {label: 'search match', hue: 300, sat: 85, light: 62};

  function hsl(c, light) {
    return 'hsl(' + c.hue + ',' + c.sat + '%,' + (light === undefined ? c.light : light) + '%)';
  }

  function nameHash(s) {
    let h = 2166136261;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
    return h >>> 0;
  }

  // `state` holds what the page's controls set: zoom (the node spanning the width) and match
  // (one flag per frame, or null). The view records how long its last redraw took (renderMs).
  function createView(m, state, canvas, scroller, spacer) {
    const ctx = canvas.getContext('2d');
    ctx.font = FONT;
    const charWidth = ctx.measureText('m').width || 7;
    const fills = new Array(m.frameCount);  // fill colour per frame, made on first use
    let framePending = false;

    function fillOf(f) {
      if (state.match && state.match[f]) return hsl(MATCH);
      let fill = fills[f];
      if (fill === undefined) {
        const c = KINDS[m.kindOf[f]] || KINDS.unknown;
        fill = fills[f] = hsl(c, c.light - 6 + (nameHash(m.names[f]) % 13));
      }
      return fill;
    }

    // The scroll range: the zoomed frame's deepest level, plus a row of margin.
    function resizeSpacer() {
      spacer.style.height = (m.n ? (m.maxDepth[state.zoom] + 2) * ROW : 0) + 'px';
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
      if (m.n && m.all) draw(width, height);
      state.renderMs = performance.now() - began;
    }

    function draw(width, height) {
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

    // The node drawn at a point (client coordinates), or -1.
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

    // Where node i is drawn, in client coordinates, scrolling its row into view; null when it
    // is not drawn (outside the zoomed frame and its ancestors, or too narrow).
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

    // Keeps the zoomed frame's row in view after a zoom.
    function revealZoom() {
      const y = m.depth[state.zoom] * ROW;
      if (y < scroller.scrollTop || y > scroller.scrollTop + scroller.clientHeight - 2 * ROW) {
        scroller.scrollTop = Math.max(0, y - 2 * ROW);
      }
    }

    return {render, scheduleRender, resizeSpacer, revealZoom, nodeAt, rectOf, fillOf};
  }

  Object.assign(parts, {createView, KINDS, MATCH, hsl});
})(window.flameGraphParts = window.flameGraphParts || {});
