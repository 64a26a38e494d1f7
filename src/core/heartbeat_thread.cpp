#include "core/heartbeat_thread.hpp"

#include "common/thread_name.hpp"

namespace weft::core {

HeartbeatThread::HeartbeatThread(std::chrono::milliseconds interval, std::function<void()> beat)
    : interval_(interval), beat_(std::move(beat)), thread_([this] {
        name_this_thread("heartbeat");
        run();
      }) {}

HeartbeatThread::~HeartbeatThread() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void HeartbeatThread::run() {
  // Beats at fixed times (start + k × interval), so a late wake-up does not push every later
  // beat back; after a long pause (the process was stopped) it starts again from now.
  auto next = std::chrono::steady_clock::now() + interval_;
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (cv_.wait_until(lock, next, [this] { return stop_; })) break;
    lock.unlock();
    beat_();
    lock.lock();
    const auto now = std::chrono::steady_clock::now();
    next += interval_;
    if (next <= now) next = now + interval_;
  }
}

}  // namespace weft::core
