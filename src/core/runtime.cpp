// Starting and stopping a rank: MPI bootstrap, topology, resources, transport, event loop; and
// the collective shutdown that gives every rank the driver's exit code.
#include "weft/runtime.hpp"

#include <mpi.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/config.hpp"
#include "common/log.hpp"
#include "core/event_loop.hpp"
#include "core/gpu_resources.hpp"
#include "core/job_stop.hpp"
#include "core/nvlink_domains.hpp"
#include "core/object_store_client.hpp"
#include "core/session.hpp"
#include "common/thread_name.hpp"
#include "common/timeline.hpp"
#include "net/allgather.hpp"
#include "net/topology.hpp"
#include "net/transport.hpp"
#include "sched/resource_spec.hpp"
#include "weft/detail/registry.hpp"
#include "weft/errors.hpp"

namespace weft {
namespace {

struct RankRuntime {
  bool owns_mpi = false;
  Config cfg;
  net::Topology topo;
  std::unique_ptr<net::Transport> transport;
  std::unique_ptr<core::Session> session;          // its folder holds the store's spill files
  std::unique_ptr<core::ObjectStoreClient> store;  // after the transport: it registers there
  std::unique_ptr<core::EventLoop> loop;
  bool finished = false;
  int exit_code = 0;
};

RankRuntime* g_rt = nullptr;
// The application's own arguments (argv without the --weft-* flags), kept for weft::args().
std::vector<std::string> g_args;
// Set when the settings stopped the start-up (read_settings): weft::run then reports the error
// once, on the rank that was chosen to, and returns 2 instead of throwing.
bool g_settings_rejected = false;
bool g_report_settings_error = false;
bool g_in_run_driver = false;  // weft::run reports a settings error itself (read_settings)

int cores_available() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

// This rank's resources: detected defaults, then --weft-resources / WEFT_RESOURCES on top.
sched::ResourceSet local_resources(const Config& cfg, const net::Topology& topo,
                                   const gpu::RankGpus& gpus) {
  int local = std::max<int>(1, topo.local_ranks.size());
  double cpus = std::max(1, cores_available() / local);
  if (cfg.has("num_cpus")) cpus = cfg.get_double("num_cpus", cpus);
  sched::ResourceSet r;
  r.set("CPU", cpus);
  core::add_local_gpus(cfg, topo.rank, gpus, r);
  sched::ResourceSet spec = sched::parse_resource_spec(cfg.get("resources", ""), topo.rank);
  for (const auto& [name, units] : spec) r.set_units(name, units);
  return r;
}

std::vector<sched::RankInfo> gather_ranks(const net::Topology& topo, const sched::ResourceSet& mine) {
  std::vector<std::string> all = net::allgather_bytes(MPI_COMM_WORLD, mine.to_bytes());
  std::vector<sched::RankInfo> ranks(topo.size);
  for (int i = 0; i < topo.size; ++i) {
    ranks[i].rank = i;
    ranks[i].node = topo.node_of_rank[i];
    ranks[i].nvlink_domain = topo.node_of_rank[i];
    ranks[i].total = sched::ResourceSet::from_bytes(all[i]);
  }
  return ranks;
}

// Reads and checks the settings on every rank, then agrees on the outcome, so that a bad flag or
// variable stops every rank at the same point: the first rank that rejected them (rank 0 when all
// did, as they do when they read the same flags) is the one that reports it, MPI is finalized
// when Weft initialised it, and every rank throws. Nothing collective has happened before.
// Under weft::run the reporting rank prints the message here, before MPI_Finalize: its fence
// holds every rank until then, so no rank's exit code 2 can make mpirun kill the reporter before
// it has printed (a print after MPI_Finalize lost that race now and then).
Config read_settings(RankRuntime& rt, int* argc, char*** argv) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Config cfg;
  std::string error;
  try {
    cfg = Config::from_env_and_args(argc, argv);
    // The resource spec is parsed whole (every item, for every rank) wherever it is read.
    sched::parse_resource_spec(cfg.get("resources", ""), rank);
  } catch (const ConfigError& e) {
    error = e.what();
  }
  int mine = error.empty() ? size : rank, first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first == size) return cfg;
  g_settings_rejected = true;
  g_report_settings_error = first == rank;
  if (error.empty()) error = "the settings were rejected on rank " + std::to_string(first);
  if (g_report_settings_error && g_in_run_driver) {
    std::fprintf(stderr, "[weft] error: %s\n", error.c_str());
    std::fflush(stderr);
  }
  if (rt.owns_mpi) MPI_Finalize();
  throw ConfigError(error);
}

// More virtual nodes than a host has ranks cannot be made: each host is split into at most one
// virtual node per rank. Rank 0 says so once, with both numbers.
void warn_capped_virtual_nodes(const Config& cfg, const net::Topology& topo) {
  const int64_t asked = cfg.get_int("virtual_nodes", 1);
  if (topo.rank != 0 || asked <= 1) return;
  std::map<int, int> ranks_of_host;
  for (int h : topo.host_of_rank) ++ranks_of_host[h];
  int fewest = topo.size;
  for (const auto& [host, n] : ranks_of_host) fewest = std::min(fewest, n);
  if (asked <= fewest) return;
  WEFT_LOG(Warn) << "virtual_nodes=" << asked << " is more than the " << fewest
                 << " rank(s) on a host: a host is split into at most one virtual node per rank, "
                 << "so this job runs on " << topo.num_nodes << " node(s), not "
                 << asked * static_cast<int64_t>(ranks_of_host.size());
}

void start(int* argc, char*** argv) {
  g_settings_rejected = g_report_settings_error = false;
  if (g_rt) {
    throw Error(
        "Weft is already running in this process: start it once (one weft::run, or one "
        "weft::Runtime that lives as long as Weft is needed), not again from inside it");
  }
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) {
    throw Error(
        "Weft cannot start again in this process: MPI was finalized when the previous "
        "weft::run or weft::Runtime ended, and MPI cannot be initialised twice. Start Weft once "
        "per process: one weft::run whose driver does all the work, or one weft::Runtime kept "
        "alive as long as it is needed");
  }
  // Before MPI: every rank runs the same binary, so every rank finds the same collisions and
  // throws alike, and nothing collective is left waiting.
  detail::check_registrations();
  auto rt = std::make_unique<RankRuntime>();
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited) {
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    rt->owns_mpi = true;
    if (provided < MPI_THREAD_MULTIPLE)
      WEFT_LOG(Warn) << "MPI provides thread level " << provided
                     << " < MPI_THREAD_MULTIPLE; Weft uses MPI only at startup and shutdown";
  }
  rt->cfg = read_settings(*rt, argc, argv);
  g_args.clear();
  if (argc && argv && *argv) {
    for (int i = 0; i < *argc; ++i) g_args.emplace_back((*argv)[i]);
  }
  timeline::configure(rt->cfg.get_bool("timeline", true),
                      static_cast<size_t>(rt->cfg.get_int("timeline_events", 16384)));
  log::Level lvl;
  if (rt->cfg.has("log_level") && log::parse_level(rt->cfg.get("log_level", ""), &lvl))
    log::set_level(lvl);
  rt->topo = net::discover_topology(MPI_COMM_WORLD, rt->cfg);
  log::set_rank(rt->topo.rank);
  warn_capped_virtual_nodes(rt->cfg, rt->topo);
  core::configure_job_stop(rt->cfg, rt->topo.rank);
  gpu::RankGpus gpus = core::plan_local_gpus(rt->cfg, rt->topo);
  auto ranks = gather_ranks(rt->topo, local_resources(rt->cfg, rt->topo, gpus));
  core::set_local_gpu_ids(rt->cfg, rt->topo.rank, gpus, ranks);
  core::assign_nvlink_domains(rt->cfg, rt->topo, ranks);
  rt->transport = std::make_unique<net::Transport>(MPI_COMM_WORLD, rt->topo, rt->cfg);
  rt->session = core::Session::open(MPI_COMM_WORLD, rt->topo, rt->cfg);
  rt->store = core::ObjectStoreClient::start(MPI_COMM_WORLD, rt->topo, rt->cfg, *rt->transport,
                                             rt->session->dir().string());
  core::set_store_client(rt->store.get());
  double cpus = ranks[rt->topo.rank].total.get("CPU");
  // Threads beyond the CPU slots serve actors whose calls block (sleeping, waiting on I/O);
  // CPU-bound work is still bounded by the CPU resource, not by the thread count.
  int threads = static_cast<int>(rt->cfg.get_int("worker_threads", std::max(4, 2 * (int)std::ceil(cpus))));
  rt->loop = std::make_unique<core::EventLoop>(rt->cfg, rt->topo, *rt->transport, std::move(ranks),
                                               threads);
  core::set_current_loop(rt->loop.get());
  // Published before the loop starts: a task that another rank sends the moment this loop runs
  // calls weft::rank() and friends, which read g_rt (they would answer 0 otherwise).
  g_rt = rt.get();
  try {
    rt->loop->start();
    if (core::ControlServer* c = rt->session->control()) c->attach(rt->loop.get());
    MPI_Barrier(MPI_COMM_WORLD);
    rt->loop->start_heartbeats();  // every loop runs now: nobody is timed from before its start
  } catch (...) {
    g_rt = nullptr;
    throw;
  }
  WEFT_LOG(Info) << "rank " << rt->topo.rank << "/" << rt->topo.size << " up on node "
                 << rt->topo.node << " of " << rt->topo.num_nodes << ", job " << rt->topo.job_id;
  rt.release();  // g_rt owns it now; finish() deletes it
}

int finish() {
  if (!g_rt || g_rt->finished) return g_rt ? g_rt->exit_code : 0;
  RankRuntime* rt = g_rt;
  // A job stopped at its checkpoint ends with the requeue code everywhere, also under
  // weft::Runtime, whose serve() returns it on the other ranks.
  if (rt->topo.rank == 0 && core::job_stopped()) rt->exit_code = core::requeue_exit_code();
  if (rt->topo.rank == 0) core::drop_job_checkpoint_hook();
  const bool keep_session = rt->cfg.get_bool("keep_session", false);
  if (rt->topo.rank == 0 && keep_session) rt->session->keep_final_state(*rt->loop);
  if (rt->topo.rank == 0) rt->loop->shutdown_job(rt->exit_code);
  rt->exit_code = rt->loop->wait_stopped();
  // A failed rank never reaches a collective. With one known (here, or named in the head's
  // shutdown message), the ranks left end without waiting for each other: no barrier here or in
  // the store's close, and no MPI_Finalize, whose fence in Open MPI 4 waits forever for the dead
  // rank about one time in twenty (mpirun --enable-recovery accepts an exit without it).
  const std::vector<int> failed = rt->loop->failed_ranks();
  const bool fenced = rt->loop->fenced();
  if (!failed.empty() && rt->loop->ended_by_failure()) {
    // This rank was fenced, or lost the head: the loop said why, once.
  } else if (!failed.empty()) {
    std::string ranks;
    for (int f : failed) ranks += (ranks.empty() ? "" : ", ") + std::to_string(f);
    WEFT_LOG(Warn) << "ranks gone (" << ranks << "): this rank ends without waiting for others";
  } else {
    // Every rank's loop has stopped sending before any transport goes away.
    MPI_Barrier(MPI_COMM_WORLD);
  }
  rt->session->stop_control();  // before the loop goes; the folder goes with the store's close
  rt->session->end_log(keep_session);
  core::set_current_loop(nullptr);
  core::set_store_client(nullptr);  // the job is over: the store's creator drops everything
  rt->loop.reset();
  rt->transport.reset();
  // Attached ranks first, the creator after a barrier (none when a rank failed). A fenced rank
  // leaves its node's files alone: the live ranks there still use them, and the head removes
  // the folder of a failed creator at the end.
  if (!fenced) rt->store->close(MPI_COMM_WORLD, failed);
  rt->store.reset();
  rt->finished = true;
  int code = rt->exit_code;
  if (rt->owns_mpi && failed.empty()) MPI_Finalize();
  g_rt = nullptr;
  delete rt;
  return code;
}

}  // namespace

Runtime::Runtime(int* argc, char*** argv) { start(argc, argv); }
Runtime::~Runtime() { finish(); }
bool Runtime::is_driver() const { return g_rt && g_rt->topo.rank == 0; }
void Runtime::set_exit_code(int code) {
  if (g_rt) g_rt->exit_code = code;
}
int Runtime::serve() {
  if (!g_rt) throw Error("Weft is not running");
  if (g_rt->topo.rank == 0) throw Error("serve() is for ranks other than 0; rank 0 is the driver");
  return finish();
}

int run_driver(int& argc, char** argv, const std::function<int()>& driver) {
  std::optional<Runtime> rt;
  try {
    g_in_run_driver = true;
    rt.emplace(&argc, &argv);
    g_in_run_driver = false;
  } catch (const ConfigError&) {
    g_in_run_driver = false;
    if (!g_settings_rejected) throw;
    // Every rank stopped at read_settings' agreement, and MPI is finalized when Weft started it:
    // one message (printed there by the rank chosen), exit code 2 everywhere, no abort.
    return 2;
  } catch (...) {
    g_in_run_driver = false;
    throw;
  }
  if (!rt->is_driver()) return rt->serve();
  int code = 1;
  try {
    name_this_thread("driver");
    code = driver();
  } catch (const JobStopped&) {
    // Reported below: the stop is whatever the driver did after it.
  } catch (const std::exception& e) {
    std::fprintf(stderr, "[weft] the driver failed: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "[weft] the driver failed with an unknown exception\n");
  }
  if (core::job_stopped()) {  // checkpoint_point() wrote the stop checkpoint: a requeue
    code = core::requeue_exit_code();
    std::fprintf(stderr,
                 "[weft] stopped on SIG%s at job checkpoint %llu (%s); exit code %d on every "
                 "rank, for a requeue\n",
                 core::stop_signal_name().c_str(),
                 static_cast<unsigned long long>(core::stop_checkpoint_epoch()),
                 core::stop_checkpoint_file().c_str(), code);
  }
  rt->set_exit_code(code);
  return finish();
}

const std::vector<std::string>& args() { return g_args; }

int rank() { return g_rt ? g_rt->topo.rank : 0; }
int world_size() { return g_rt ? g_rt->topo.size : 1; }
int node() { return g_rt ? g_rt->topo.node : 0; }
int num_nodes() { return g_rt ? g_rt->topo.num_nodes : 1; }

std::map<std::string, double> rank_resources(int r) {
  if (!g_rt || !g_rt->loop) throw Error("rank_resources: Weft is not running");
  if (r < 0 || r >= g_rt->topo.size)
    throw Error("rank_resources: no rank " + std::to_string(r) + " in a job of " +
                std::to_string(g_rt->topo.size) + " ranks");
  std::map<std::string, double> out;
  for (const auto& [name, units] : g_rt->loop->rank_total(r))
    out[name] = static_cast<double>(units) / sched::ResourceSet::kUnit;
  return out;
}

}  // namespace weft
