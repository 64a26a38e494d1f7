// The thread that makes a rank's heartbeats: every `interval` it calls `beat`, on its own
// thread, whatever the rank's event loop and its task bodies are doing. It only sleeps and wakes
// (a futex wait per interval); what `beat` does is the caller's (heartbeats.cpp: run the loop's
// heartbeat turn when the loop's token is free, else queue it for the next turn).
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace weft::core {

class HeartbeatThread {
 public:
  HeartbeatThread(std::chrono::milliseconds interval, std::function<void()> beat);
  ~HeartbeatThread();  // stops it (at once, not after the interval) and joins
  HeartbeatThread(const HeartbeatThread&) = delete;
  HeartbeatThread& operator=(const HeartbeatThread&) = delete;

 private:
  void run();

  const std::chrono::milliseconds interval_;
  std::function<void()> beat_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace weft::core
