// Builds samply's inline debug-info record (SAMPLY_JIT_CODE_DEBUG_INFO2) for one compiled
// method from HotSpot's PcDesc scope chains. Pure C++.
//
// Conventions (shared with BuildLineRows, see line_map.h): PcDescs come in ascending pc order
// and each pc marks the END of the run it describes, so site i covers [pc_{i-1}, pc_i) (the
// first starts at the code start). Sites that are empty,
// out of order or end past the code are skipped. frames[0] is the innermost (leaf) method,
// frames[n-1] the compiled root.
//
// What the record holds:
//  - functions: one per distinct MethodLines (pointer identity), the outer `root` first; a
//    frame whose method is null becomes one "<unknown>" function. A method without a source
//    file gets file "" so its file index stays valid.
//  - inline calls: for a site the chain outer->inner is frames[n-2] ... frames[0]; a node is
//    (parent node, callee method, caller bci = frames[k+1].bci), call line = the caller's
//    LineAt(caller bci) (0 when the caller has no table), column 0. Emitted in DFS order,
//    children in order of their first address; ranges sorted, adjacent ones merged, so an
//    inlined call whose code is split gets range_count > 1.
//  - line records: per range the innermost frame that has lines (as BuildLineRows), merged
//    when consecutive rows carry the same file and line.
//
// The record obeys the rules samply's reader and `jitdump check` apply (the tests check every
// record they build with jitdump's reader; nothing re-validates at run time) and, beyond them:
// every range is non-empty, a call's ranges ascend without overlapping, and line records ascend
// strictly.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "agent/core/line_map.h"
#include "jitdump/write/encoder.h"

namespace jitdump_agent {

class InlineTreeBuilder {
 public:
  // Returns a record view valid until the next Build or until this builder dies, or nullptr
  // when there is nothing to describe (no site inside the code) or the code is too large for
  // the record's 32-bit offsets. `root` is the compiled method; sites as for BuildLineRows.
  // The builder keeps its vectors between builds; memory is proportional to the PcDescs.
  const jitdump::InlineDebugInfo* Build(uint64_t timestamp, uint64_t code_start, uint64_t code_size,
                                        const MethodLines& root, std::span<const PcSite> sites);

 private:
  static constexpr uint32_t kNoNode = UINT32_MAX;
  struct Node {
    uint32_t parent;          // kNoNode for calls made by the outer function
    uint32_t function_index;
    uint32_t call_line;
    uint32_t first_child;
    uint32_t last_child;
    uint32_t next_sibling;
    uint32_t last_range;      // index into pending_ranges_ of this node's latest range
    uint32_t range_count;
  };
  struct PendingRange {
    uint32_t node;
    uint32_t start;
    uint32_t end;
  };
  // Open-addressing map from a key (compared through a callback) to a dense id. Sized once per
  // build for the most entries it can get, so it never grows; its slots are reused.
  class FlatIndex {
   public:
    void Reset(size_t max_entries) {
      size_t capacity = 16;
      while (capacity < 2 * max_entries) capacity <<= 1;
      slots_.assign(capacity, kNoNode);
      mask_ = capacity - 1;
    }
    // The id of the entry equal to the key (`equal(id)`), or `new_id` after inserting it.
    template <typename Equal>
    uint32_t FindOrInsert(uint64_t hash, uint32_t new_id, const Equal& equal, bool* inserted) {
      for (size_t i = Mix(hash) & mask_;; i = (i + 1) & mask_) {
        if (slots_[i] == kNoNode) {
          slots_[i] = new_id;
          *inserted = true;
          return new_id;
        }
        if (equal(slots_[i])) {
          *inserted = false;
          return slots_[i];
        }
      }
    }

   private:
    static uint64_t Mix(uint64_t h) {
      h ^= h >> 33;
      h *= 0xff51afd7ed558ccdull;
      h ^= h >> 33;
      return h;
    }
    std::vector<uint32_t> slots_;
    size_t mask_ = 0;
  };

  void Reset(size_t max_entries);
  uint32_t FileIndex(std::string_view file);
  uint32_t FunctionIndex(const MethodLines* method);
  uint32_t ChildNode(uint32_t parent, uint32_t function_index, int64_t caller_bci, uint32_t call_line);
  void AddRange(uint32_t node, uint32_t start, uint32_t end);
  void EmitTree();

  jitdump::InlineDebugInfo info_;
  std::vector<std::string_view> files_;
  std::vector<std::string_view> function_names_;
  std::vector<jitdump::SamplyFunctionRecord> functions_;
  std::vector<jitdump::SamplyInlineCallRecord> calls_;
  std::vector<jitdump::SamplyRangeRecord> ranges_;
  std::vector<jitdump::SamplyLineRecord> lines_;

  // Scratch, cleared (not freed) per build.
  FlatIndex file_ids_;
  FlatIndex name_ids_;
  FlatIndex function_ids_;
  FlatIndex node_ids_;
  std::vector<const MethodLines*> function_methods_;  // per function: its method (null: unknown)
  std::vector<Node> nodes_;
  std::vector<int64_t> node_bcis_;  // per node: the caller bci that identifies it
  std::vector<PendingRange> pending_ranges_;
  std::vector<uint32_t> node_range_begin_;  // per node: first slot in sorted_ranges_
  std::vector<jitdump::SamplyRangeRecord> sorted_ranges_;
  std::vector<uint32_t> stack_;
  uint32_t root_first_child_ = kNoNode;
  uint32_t root_last_child_ = kNoNode;
};

}  // namespace jitdump_agent
