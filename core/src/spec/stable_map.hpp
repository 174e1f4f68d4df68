// StableMap: a hash map whose values keep their addresses, for the search's caches (looked up
// per group of every candidate and entry, where a prime-modulo hash map's division and node
// walk showed): open addressing over a power-of-two table of indices, values owned by pointer.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace hapmoe {

// FNV-1a, one word at a time: the hash of the caches' keys (small integers and pointers).
class Fnv1a {
 public:
  void add(uint64_t x) { h_ = (h_ ^ x) * 1099511628211ull; }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 1469598103934665603ull;
};

// Hash of a list of small integers (group ids, option lists), by Fnv1a.
struct IntsHash {
  size_t operator()(const std::vector<int>& v) const {
    Fnv1a h;
    for (int x : v) h.add(static_cast<uint32_t>(x));
    return static_cast<size_t>(h.value());
  }
};

template <class Key, class Value, class Hash>
class StableMap {
 public:
  // The value of `key`, made by make() the first time.
  template <class Make>
  Value& get(const Key& key, Make&& make) {
    uint64_t h = static_cast<uint64_t>(Hash()(key)) * 0x9E3779B97F4A7C15ull;  // spread (pointers are aligned)
    h ^= h >> 32;
    if (!slots_.empty()) {
      for (size_t at = h & (slots_.size() - 1); slots_[at].item >= 0; at = (at + 1) & (slots_.size() - 1)) {
        const Slot& slot = slots_[at];
        if (slot.hash == h && items_[slot.item].first == key) return *items_[slot.item].second;
      }
    }
    if (2 * (items_.size() + 1) > slots_.size()) {  // at most half full
      std::vector<Slot> old = std::move(slots_);
      slots_.assign(std::max<size_t>(64, 2 * old.size()), Slot{});
      for (const Slot& slot : old) {
        if (slot.item >= 0) place(slot);
      }
    }
    items_.emplace_back(key, std::make_unique<Value>(make()));
    place(Slot{h, static_cast<long long>(items_.size() - 1)});
    return *items_.back().second;
  }
  size_t size() const { return items_.size(); }
  // Drops every value (references to them dangle).
  void clear() {
    slots_.clear();
    items_.clear();
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    long long item = -1;  // -1 = free
  };
  void place(const Slot& slot) {
    size_t at = slot.hash & (slots_.size() - 1);
    while (slots_[at].item >= 0) at = (at + 1) & (slots_.size() - 1);
    slots_[at] = slot;
  }
  std::vector<Slot> slots_;
  std::vector<std::pair<Key, std::unique_ptr<Value>>> items_;
};

}  // namespace hapmoe
