// A Timer that knows its owner, so one static fire function serves every
// instance of an element without virtual dispatch or a lookup.
#pragma once

#include <cstddef>  // before scheduler.hpp, which uses size_t unqualified

#include "core/scheduler.hpp"

namespace vf::dp {

struct CtxTimer : Timer {
  CtxTimer(Fire f, void* owner) : Timer(f), ctx(owner) {}
  void* ctx;

  template <class T>
  static T& owner(Timer& t) {
    return *static_cast<T*>(static_cast<CtxTimer&>(t).ctx);
  }
};

}  // namespace vf::dp
