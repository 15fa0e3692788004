// Large blocks of memory, mapped at 2 MiB boundaries and kept once freed, for the executable's
// global operator new (app/large_pages.cpp).
//
// A steady run's set-up writes gigabytes once: the coefficient fields, the heat-flow operator,
// the hierarchy's levels, the level operations' arrays and vectors. Each block freed went back
// to the kernel (glibc unmaps blocks of more than 32 MiB), and each new one was then cleared by
// the kernel page by page at its first touch: half of the multigrid hierarchy's set-up at 257^3
// on a 2-core VM, more when the VM's host had taken the freed memory back
// (docs/performance.md, issue 23). A freed block is kept here instead, its pages in place, and
// the next block that fits in it takes them (the first of its free stretches that is the
// smallest of those that fit, split where larger). A block that fits in none first unmaps every
// kept stretch and then maps its own. Blocks are kept only while the caller says so
// (set_keep): memory kept while other memory grows (malloc's small blocks, HDF5's file images)
// adds to the resident set, and so do kept pages handed to a block whose owner never writes
// them (the hierarchy's staging, sized for a whole plane and written where rows do not
// repeat); the executable keeps them through the set-up's phases that free large blocks and
// make others written in full (kernels/kept_blocks.hpp).
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>
#include <new>

namespace heatsim::app {

class BlockCache {
 public:
  static constexpr std::size_t kPage = std::size_t{2} << 20;

  // A newly mapped block's pages, made ready as its owner wants them (huge pages advised, or
  // populated: app/large_pages.cpp); a kept stretch's are in place already.
  using Prepare = void (*)(void* block, std::size_t bytes);

  // keep = false: freed blocks are unmapped at once, as malloc's are, until set_keep(true).
  explicit BlockCache(bool keep = true, Prepare prepare = nullptr)
      : keep_(keep), prepare_(prepare) {}

  // Whether blocks freed from now on are kept; false also unmaps those kept.
  void set_keep(bool keep) {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    keep_ = keep;
    if (!keep) release_idle();
  }

  // A block of at least `bytes`, 2 MiB aligned, its pages made ready by `prepare`; its contents are
  // unset (a kept block's are what its last owner left). Throws std::bad_alloc. map = false:
  // nullptr where no kept stretch fits (the kept stretches unmapped all the same), for a
  // caller that makes such blocks otherwise.
  void* take(std::size_t bytes, bool map = true) {
    const std::size_t size = rounded(bytes);
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    auto best = idle_.end();
    for (auto it = idle_.begin(); it != idle_.end(); ++it)
      if (it->second >= size && (best == idle_.end() || it->second < best->second)) best = it;
    char* p = nullptr;
    if (best != idle_.end()) {
      p = best->first;
      const std::size_t rest = best->second - size;
      idle_.erase(best);
      if (rest > 0) idle_.emplace(p + size, rest);
      idle_bytes_ -= size;
      ++reused_;
    } else {
      release_idle();
      if (!map) return nullptr;
      p = map_block(size);
      if (prepare_) prepare_(p, size);
    }
    live_.emplace(p, size);
    return p;
  }

  // Keeps block p if it is one of this cache's, and says whether it was.
  bool give(void* block) {
    char* p = static_cast<char*>(block);
    if (reinterpret_cast<std::uintptr_t>(p) % kPage != 0) return false;  // not one of these
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    const auto it = live_.find(p);
    if (it == live_.end()) return false;
    std::size_t size = it->second;
    live_.erase(it);
    if (!keep_) {
      munmap(p, size);
      return true;
    }
    // Joined with the kept stretches just before and after it.
    auto next = idle_.lower_bound(p);
    if (next != idle_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == p) {
        p = prev->first;
        size += prev->second;
        idle_bytes_ -= prev->second;
        idle_.erase(prev);
      }
    }
    if (next != idle_.end() && p + size == next->first) {
      size += next->second;
      idle_bytes_ -= next->second;
      idle_.erase(next);
    }
    idle_.emplace(p, size);
    idle_bytes_ += size;
    return true;
  }

  // Unmaps every kept stretch.
  void release_idle() {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    for (const auto& [p, size] : idle_) munmap(p, size);
    idle_.clear();
    idle_bytes_ = 0;
  }

  std::size_t idle_bytes() const { return idle_bytes_; }
  std::size_t idle_stretches() const { return idle_.size(); }
  std::size_t reused() const { return reused_; }

 private:
  static std::size_t rounded(std::size_t bytes) {
    if (bytes > SIZE_MAX - kPage) throw std::bad_alloc();
    return (bytes + kPage - 1) / kPage * kPage;
  }

  // `size` bytes (a multiple of kPage) at a 2 MiB boundary.
  static char* map_block(std::size_t size) {
    const std::size_t span = size + kPage;
    void* m = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) throw std::bad_alloc();
    char* base = static_cast<char*>(m);
    const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(base);
    char* p = base + ((kPage - at % kPage) % kPage);
    if (p > base) munmap(base, static_cast<std::size_t>(p - base));
    char* end = p + size;
    if (base + span > end) munmap(end, static_cast<std::size_t>(base + span - end));
    return p;
  }

  bool keep_;
  Prepare prepare_;
  std::recursive_mutex mutex_;
  std::map<char*, std::size_t> live_, idle_;  // block or stretch -> bytes
  std::size_t idle_bytes_ = 0;
  std::size_t reused_ = 0;
};

}  // namespace heatsim::app
