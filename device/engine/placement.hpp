// Placement stage: writes the receive placement queue (batches.hpp) into the
// apps -- one process_vm_writev per app for the whole queue -- then hands
// each entry, in arrival order, to the stage that accepted it: READ
// responses and atomic ACKs to the completer, requests to the responder
// (RC/UC and UD). Everything that could observe the queue's state calls
// flush() first. See placement.cpp.
#pragma once

#include "device/engine/engine.hpp"

namespace vf::engine {

class Completer;
class Responder;

class Placement {
 public:
  // The two stages it finishes entries for are constructed after it: only
  // their addresses are taken here.
  Placement(Engine& eng, Completer& comp, Responder& resp) : eng_(eng), comp_(comp), resp_(resp) {}

  // Places every queued payload, then runs what waited for it. True if
  // anything was queued.
  bool flush();
  // Frees the queue unplaced (engine teardown only).
  void drop();

 private:
  void place_client(unsigned first);

  Engine& eng_;
  Completer& comp_;
  Responder& resp_;
};

}  // namespace vf::engine
