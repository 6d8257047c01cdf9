// The flame graph page's data: the call tree as one JSON object, written so it can sit inside a
// <script type="application/json"> element (no '<' anywhere in it, so no name can close the
// element or open a comment).
//
// Columns rather than objects, and the node columns packed, because a tree of millions of nodes
// must stay a few bytes a node (the browser reads, parses and decodes every byte on load):
//   {"version": 2, "title": "...", "total": SAMPLES, "period_ns": N, "duration_ns": N,
//    "processes": [{"pid": N, "command": "...", "dump": "..."}],
//    "kinds": ["root", "process", "thread", "compiled", ...],   kind names, indexed below
//    "files": ["", "demo/Demo.java", ...],                       file names, indexed below
//    "frames": {"name": [...], "file": [file index], "kind": [kind index]},
//    "nodes": {"count": N,
//              "frame": P(frame index), "depth": S(depth minus the previous node's depth),
//              "total": P(samples),
//              "line": S(0: no known line; L > 0: every sample of the node is at line L;
//                        -K: the node's K lines are the next K entries of more_line/more_samples),
//              "more_count": M, "more_line": P(line number), "more_samples": P(samples)}}
// Nodes are in preorder (FlameTree). Most nodes have one line holding all their samples, so
// that case costs one number; lines are listed most samples first.
//
// P(...) is a string of unsigned numbers, each written little-endian in 5-bit digits over the
// alphabet kPackAlphabet: the characters at 32-63 are digits followed by more, those at 0-31
// end a number (so 0-31 take one character, up to 1023 two, up to 32767 three). S(...) packs
// signed numbers zigzag-encoded first (0, -1, 1, -2, ... as 0, 1, 2, 3, ...). The alphabet needs
// no escaping in JSON or HTML.
#pragma once

#include <ostream>

#include "jitdump/report/flamegraph_options.h"
#include "jitdump/report/flamegraph_tree.h"
#include "jitdump/report/profile.h"

namespace jitdump::report {

inline constexpr char kPackAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

void WriteFlameGraphData(const Profile& profile, const FlameTree& tree, const FlameGraphOptions& options,
                         std::ostream& out);

}  // namespace jitdump::report
