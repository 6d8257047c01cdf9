// The flame graph's data model: decodes the call tree `jitdump report` embedded in the page (the
// format is described in jitdump/report/flamegraph_data.h) into typed arrays, and answers
// searches over it. No DOM here.
//
// The tree arrives aggregated and in preorder, so every subtree is a contiguous index range
// [i, end[i]): drawing, search and hit testing walk ranges and skip whole subtrees.
(function (parts) {
  'use strict';

  // A packed column: little-endian 5-bit digits; alphabet positions 32-63 continue a number,
  // 0-31 end it; signed columns are zigzag-encoded (0, -1, 1, -2, ... as 0, 1, 2, 3, ...).
  const PACK_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const DIGIT = new Int8Array(128).fill(-1);
  for (let i = 0; i < 64; i++) DIGIT[PACK_ALPHABET.charCodeAt(i)] = i;

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

  // Per node: frame, depth, samples (total, and self: not in any child), parent, the left edge
  // (`start`, in samples from the root's left edge), the end of its subtree, and the deepest
  // level below it; per frame: name, file and kind.
  function buildModel(data) {
    const nodes = data.nodes;
    const n = nodes.count;
    const frame = unpack(nodes.frame, n, false, Int32Array);
    const total = unpack(nodes.total, n, false, Float64Array);
    const depthDelta = unpack(nodes.depth, n, true, Int32Array);
    const lineCode = unpack(nodes.line, n, true, Float64Array);
    const self = Float64Array.from(total);
    const depth = new Int32Array(n);
    const start = new Float64Array(n);
    const end = new Int32Array(n);
    const parent = new Int32Array(n);
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
    const moreStart = new Int32Array(n);  // where a node's lines start in moreLine, if there
    for (let i = 0, more = 0; i < n; i++) {
      moreStart[i] = more;
      if (lineCode[i] < 0) more -= lineCode[i];
    }
    const maxDepth = Int32Array.from(depth);
    for (let i = n - 1; i > 0; i--) {
      if (maxDepth[i] > maxDepth[parent[i]]) maxDepth[parent[i]] = maxDepth[i];
    }
    return {
      n, frame, total, self, depth, start, end, parent, maxDepth, lineCode, moreStart,
      moreLine: unpack(nodes.more_line, nodes.more_count, false, Float64Array),
      moreSamples: unpack(nodes.more_samples, nodes.more_count, false, Float64Array),
      names: data.frames.name,
      fileOf: Array.from(data.frames.file, (f) => data.files[f]),
      kindOf: Array.from(data.frames.kind, (k) => data.kinds[k]),
      frameCount: data.frames.name.length,
      all: n ? total[0] : 0,
    };
  }

  // Node i's known lines as [line, samples] pairs, most samples first.
  function linesOf(m, i) {
    const code = m.lineCode[i];
    if (code === 0) return [];
    if (code > 0) return [[code, m.total[i]]];
    const out = [];
    for (let k = m.moreStart[i]; k < m.moreStart[i] - code; k++) out.push([m.moreLine[k], m.moreSamples[k]]);
    return out;
  }

  // Which frames a query matches, one flag per frame. Plain text matches names
  // case-insensitively; /text/flags is a regular expression (throws when it is not one).
  function matchFrames(m, query) {
    const re = /^\/(.+)\/([a-z]*)$/.exec(query);
    let test;
    if (re) {
      const pattern = new RegExp(re[1], re[2].replace(/[gy]/g, ''));  // no lastIndex state
      test = (s) => pattern.test(s);
    } else {
      const lower = query.toLowerCase();
      test = (s) => s.toLowerCase().includes(lower);
    }
    const match = new Uint8Array(m.frameCount);
    for (let f = 0; f < m.frameCount; f++) match[f] = test(m.names[f]) ? 1 : 0;
    return match;
  }

  // Samples under matching frames in root's subtree, each counted once however many matching
  // frames its stack holds: a matching node's subtree is taken whole and skipped.
  function matchedIn(m, match, root) {
    let sum = 0;
    for (let i = root, e = m.end[root]; i < e;) {
      if (match[m.frame[i]]) {
        sum += m.total[i];
        i = m.end[i];
      } else {
        i++;
      }
    }
    return sum;
  }

  Object.assign(parts, {buildModel, linesOf, matchFrames, matchedIn});
})(window.flameGraphParts = window.flameGraphParts || {});
