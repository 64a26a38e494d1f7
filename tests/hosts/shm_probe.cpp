// Each namespace host is its own Weft node with its own /dev/shm (tests/hosts/README.md).
//   mpirun … -H h1:2,h2:2 -n 4 ./weft_hosts_shm_probe 2
// The driver (on h1) plants a marker file in its /dev/shm, then runs one task on every node. Each
// task reports its hostname, the device of its /dev/shm and the device of the store segment its
// rank has mapped (from /proc/self/maps), and whether it sees the marker. Passes when there are as
// many nodes as hosts (argv[1]), one per hostname; every node's store segment lives on that
// host's own tmpfs, no two hosts share one, and the marker is visible on h1 only. A value put on
// h1 and read on every other host checks the bytes crossed the hosts' network intact.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <vector>
#include <weft/weft.hpp>

namespace {

std::string hostname() {
  char buf[256] = {0};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

// "major:minor" of the file system holding `path`, as /proc/self/maps writes devices.
std::string device_of(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return "none";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02x:%02x", major(st.st_dev), minor(st.st_dev));
  return buf;
}

// The device of this rank's mapping of its node's store segment, /dev/shm/weft-<job>-n<node>
// (unlinked once every rank of the node has mapped it, so maps says "(deleted)").
std::string store_segment_device() {
  const std::string suffix = "-n" + std::to_string(weft::node());
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    std::string range, perms, offset, dev, inode, path;
    in >> range >> perms >> offset >> dev >> inode >> path;
    if (path.rfind("/dev/shm/weft-", 0) != 0 || path.find("-net-n") != std::string::npos) continue;
    if (path.size() >= suffix.size() &&
        path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0)
      return dev;
  }
  return "none";
}

std::string report(const std::string& marker) {
  std::ostringstream out;
  out << hostname() << ' ' << weft::node() << ' ' << device_of("/dev/shm") << ' '
      << store_segment_device() << ' ' << (access(marker.c_str(), F_OK) == 0 ? "seen" : "unseen");
  return out.str();
}

long checksum(const std::vector<char>& v) {
  return std::accumulate(v.begin(), v.end(), 0L, [](long s, char c) { return s * 31 + c; });
}

}  // namespace

WEFT_REMOTE(report);
WEFT_REMOTE(checksum);

int main(int argc, char** argv) {
  const int hosts = argc > 1 ? std::atoi(argv[1]) : 2;
  return weft::run(argc, argv, [&]() -> int {
    int failures = 0;
    auto fail = [&](const std::string& what) {
      std::printf("FAIL: %s\n", what.c_str());
      ++failures;
    };
    const std::string marker = "/dev/shm/weft-hosts-marker-" + std::to_string(getpid());
    { std::ofstream(marker) << "h1\n"; }

    std::vector<char> value(4 << 20);
    for (size_t i = 0; i < value.size(); ++i) value[i] = static_cast<char>(i * 7 + i / 4096);
    auto ref = weft::put(value);

    const int nodes = weft::num_nodes();
    if (nodes != hosts)
      fail(std::to_string(nodes) + " Weft nodes for " + std::to_string(hosts) + " hosts");
    std::set<std::string> hostnames, shm_devices;
    for (int n = 0; n < nodes; ++n) {
      weft::TaskOptions here{.scheduling_strategy = weft::NodeAffinity{.node = n}};
      std::istringstream in(weft::get(weft::task(report).options(here).remote(marker)));
      std::string host, shm_dev, store_dev, seen;
      int node = -1;
      in >> host >> node >> shm_dev >> store_dev >> seen;
      std::printf("node %d: host %s, /dev/shm on %s, store segment on %s, h1's marker %s\n", n,
                  host.c_str(), shm_dev.c_str(), store_dev.c_str(), seen.c_str());
      if (node != n) fail("the task for node " + std::to_string(n) + " ran on node " + std::to_string(node));
      if (host != "h" + std::to_string(n + 1)) fail("node " + std::to_string(n) + " is on host " + host);
      if (!hostnames.insert(host).second) fail("two nodes on host " + host);
      if (store_dev == "none") fail("no store segment mapped on " + host);
      if (store_dev != shm_dev)
        fail(host + "'s store segment is not on its own /dev/shm (" + store_dev + " vs " + shm_dev + ")");
      if (!shm_devices.insert(shm_dev).second) fail(host + " shares its /dev/shm with another host");
      if ((seen == "seen") != (n == 0))
        fail("h1's /dev/shm marker is " + seen + " on " + host);
      if (n > 0) {
        const long got = weft::get(weft::task(checksum).options(here).remote(ref));
        if (got != checksum(value)) fail("a 4 MiB value read on " + host + " differs from h1's");
      }
    }
    unlink(marker.c_str());
    std::printf("%s\n", failures == 0 ? "HOSTS_SHM_PROBE PASS" : "HOSTS_SHM_PROBE FAIL");
    return failures == 0 ? 0 : 1;
  });
}
