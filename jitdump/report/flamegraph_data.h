// The flame graph page's data: the call tree as one JSON object, written so it can sit inside a
// <script type="application/json"> element (no '<' anywhere in it, so no name can close the
// element or open a comment).
//
// Columns rather than objects, because a tree of a million nodes must stay a few bytes a node:
//   {"version": 1, "title": "...", "total": SAMPLES, "period_ns": N, "duration_ns": N,
//    "processes": [{"pid": N, "command": "...", "dump": "..."}],
//    "kinds": ["root", "process", "thread", "compiled", ...],   kind names, indexed below
//    "files": ["", "demo/Demo.java", ...],                       file names, indexed below
//    "frames": {"name": [...], "file": [file index], "kind": [kind index]},
//    "nodes": {"frame": [frame index], "depth": [depth minus the previous node's depth],
//              "total": [samples],
//              "line": [0: no known line; N > 0: every sample of the node is at line N;
//                       -K: the node's K lines are the next K entries of more_line/more_samples],
//              "more_line": [line numbers], "more_samples": [samples at that line]}}
// nodes are in preorder (FlameTree). Most nodes have one line holding all their samples, so
// that case costs one number; lines are listed most samples first.
#pragma once

#include <ostream>

#include "jitdump/report/flamegraph_options.h"
#include "jitdump/report/flamegraph_tree.h"
#include "jitdump/report/profile.h"

namespace jitdump::report {

void WriteFlameGraphData(const Profile& profile, const FlameTree& tree, const FlameGraphOptions& options,
                         std::ostream& out);

}  // namespace jitdump::report
