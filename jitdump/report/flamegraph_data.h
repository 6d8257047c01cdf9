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
//              "total": [samples], "lines": [number of line entries],
//              "line": [line numbers], "line_samples": [samples at that line]}}
// nodes are in preorder (FlameTree); node i owns the next lines[i] entries of line/line_samples.
#pragma once

#include <ostream>

#include "jitdump/report/flamegraph_options.h"
#include "jitdump/report/flamegraph_tree.h"
#include "jitdump/report/profile.h"

namespace jitdump::report {

void WriteFlameGraphData(const Profile& profile, const FlameTree& tree, const FlameGraphOptions& options,
                         std::ostream& out);

}  // namespace jitdump::report
