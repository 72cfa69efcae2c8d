#include "core/scheduler.hpp"

namespace vf {

Scheduler::~Scheduler() {
  for (Timer* t : heap_) t->heap_index = Timer::kNotArmed;
}

void Scheduler::arm(Timer& t, Nanos deadline) {
  if (deadline < now_) deadline = now_;
  if (t.armed()) {
    const Nanos old = t.deadline;
    t.deadline = deadline;
    if (deadline < old)
      sift_up(t.heap_index);
    else
      sift_down(t.heap_index);
    return;
  }
  t.deadline = deadline;
  heap_.push_back(&t);
  t.heap_index = static_cast<uint32_t>(heap_.size() - 1);
  sift_up(t.heap_index);
}

void Scheduler::disarm(Timer& t) {
  if (t.armed()) remove_at(t.heap_index);
}

void Scheduler::remove_at(uint32_t i) {
  Timer* victim = heap_[i];
  Timer* last = heap_.back();
  heap_.pop_back();
  victim->heap_index = Timer::kNotArmed;
  if (victim == last) return;
  place(i, last);
  sift_up(i);
  sift_down(last->heap_index);
}

// Ties fire in arming order is not promised; equal deadlines fire in heap order.
static bool earlier(const Timer* a, const Timer* b) { return a->deadline < b->deadline; }

void Scheduler::sift_up(uint32_t i) {
  Timer* t = heap_[i];
  while (i > 0) {
    uint32_t parent = (i - 1) / 2;
    if (!earlier(t, heap_[parent])) break;
    place(i, heap_[parent]);
    i = parent;
  }
  place(i, t);
}

void Scheduler::sift_down(uint32_t i) {
  Timer* t = heap_[i];
  const uint32_t n = static_cast<uint32_t>(heap_.size());
  for (;;) {
    uint32_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && earlier(heap_[child + 1], heap_[child])) ++child;
    if (!earlier(heap_[child], t)) break;
    place(i, heap_[child]);
    i = child;
  }
  place(i, t);
}

std::size_t Scheduler::advance_to(Nanos t) {
  std::size_t fired = 0;
  while (!heap_.empty() && heap_.front()->deadline <= t) {
    Timer* due = heap_.front();
    if (due->deadline > now_) now_ = due->deadline;
    remove_at(0);
    due->fire(*due, now_);  // may re-arm itself or others
    ++fired;
  }
  if (t > now_) now_ = t;
  return fired;
}

std::size_t Scheduler::run_next() {
  if (heap_.empty()) return 0;
  return advance_to(heap_.front()->deadline);
}

std::size_t Scheduler::run_until_idle(Nanos limit) {
  std::size_t fired = 0;
  while (!heap_.empty() && heap_.front()->deadline <= limit) fired += run_next();
  return fired;
}

}  // namespace vf
