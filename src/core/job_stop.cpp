#include "core/job_stop.hpp"

#include <signal.h>

#include <atomic>
#include <cctype>
#include <cstring>

#include "common/config.hpp"

namespace weft::core {
namespace {

// Written by the handler: a lock-free atomic is all a signal handler may touch.
std::atomic<bool> g_signalled{false};
static_assert(std::atomic<bool>::is_always_lock_free);

int g_signo = 0;  // the installed signal; 0 when none
std::string g_signal_name, g_dir;
int g_requeue_code = 85;
uint64_t g_epoch = 0;
bool g_stopped = false;
std::string g_stop_file;
uint64_t g_stop_epoch = 0;

extern "C" void on_stop_signal(int) { g_signalled.store(true, std::memory_order_relaxed); }

int signal_number(const std::string& name) {
  if (name == "usr1") return SIGUSR1;
  if (name == "usr2") return SIGUSR2;
  if (name == "term") return SIGTERM;
  if (name == "int") return SIGINT;
  return 0;  // none (the settings table allows nothing else)
}

}  // namespace

void configure_job_stop(const Config& cfg, int rank) {
  g_signalled = false;
  g_stopped = false;
  g_stop_file.clear();
  g_stop_epoch = g_epoch = 0;
  g_dir = cfg.get("job_checkpoint_dir", "");
  g_requeue_code = static_cast<int>(cfg.get_int("requeue_exit_code", 85));
  std::string name = cfg.get("stop_signal", "usr1");
  g_signo = signal_number(name);
  g_signal_name.clear();
  if (g_signo == 0) return;
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  g_signal_name = name;
  struct sigaction sa {};
  sa.sa_handler = rank == 0 ? &on_stop_signal : SIG_IGN;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // a read or a wait it interrupts goes on
  sigaction(g_signo, &sa, nullptr);
}

bool stop_signalled() { return g_signalled.load(std::memory_order_relaxed); }
const std::string& stop_signal_name() { return g_signal_name; }
const std::string& job_checkpoint_dir() { return g_dir; }
int requeue_exit_code() { return g_requeue_code; }

uint64_t next_job_epoch() { return g_epoch + 1; }
void note_job_epoch(uint64_t epoch) {
  if (epoch > g_epoch) g_epoch = epoch;
}

void mark_job_stopped(uint64_t epoch, const std::string& file) {
  g_stopped = true;
  g_stop_epoch = epoch;
  g_stop_file = file;
}
bool job_stopped() { return g_stopped; }
const std::string& stop_checkpoint_file() { return g_stop_file; }
uint64_t stop_checkpoint_epoch() { return g_stop_epoch; }

}  // namespace weft::core
