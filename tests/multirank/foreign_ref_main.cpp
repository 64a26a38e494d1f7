// A ref or an actor handle saved by one job and read back by another names the first job's
// object or actor, which the second job does not have; its ids may even be those of one of the
// second job's own (ids are small counters). `foreign_ref_probe --write FILE` saves a ref and a
// handle from one job (FILE.ref, FILE.handle); `foreign_ref_probe --read FILE`, in a second job
// that made an object with
// the same id first, must refuse both with a SerializationError saying so, never return its own
// object in place of the first job's.
#include <weft/weft.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

class Box {
 public:
  int get() const { return 7; }
};
WEFT_ACTOR(Box);
WEFT_REMOTE(&Box::get);

int main(int argc, char** argv) {
  return weft::run(argc, argv, [&]() -> int {
    const auto& args = weft::args();
    if (args.size() != 3) {
      std::fprintf(stderr, "usage: foreign_ref_probe --write|--read FILE\n");
      return 2;
    }
    const std::string& file = args[2];
    // The same first object in both jobs: job A's ref names obj(0:1), and so does job B's own.
    weft::ObjectRef<std::string> mine =
        weft::put(std::string(args[1] == "--write" ? "job A's value" : "job B's value"));
    if (args[1] == "--write") {
      auto box = weft::actor<Box>().remote();
      weft::serde::Buffer ref, handle;
      weft::serde::encode(ref, mine);
      weft::serde::encode(handle, box);
      std::ofstream(file + ".ref", std::ios::binary)
          .write(ref.data(), static_cast<std::streamsize>(ref.size()));
      std::ofstream(file + ".handle", std::ios::binary)
          .write(handle.data(), static_cast<std::streamsize>(handle.size()));
      std::printf("wrote %s.ref (%s) and %s.handle\n", file.c_str(), mine.id().str().c_str(),
                  file.c_str());
      return 0;
    }
    auto read = [](const std::string& path) {
      std::ifstream in(path, std::ios::binary);
      return std::vector<char>((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
    };
    int refused = 0;
    try {
      const std::vector<char> bytes = read(file + ".ref");
      auto theirs = weft::serde::from_bytes<weft::ObjectRef<std::string>>(bytes.data(), bytes.size());
      std::printf("NOT REFUSED: job A's ref read back here gives \"%s\"\n", theirs.get().c_str());
    } catch (const weft::SerializationError& e) {
      std::printf("refused the ref: %s\n", e.what());
      ++refused;
    }
    try {
      const std::vector<char> bytes = read(file + ".handle");
      auto box = weft::serde::from_bytes<weft::ActorHandle<Box>>(bytes.data(), bytes.size());
      std::printf("NOT REFUSED: job A's actor handle read back here (%s)\n",
                  box.id().str().c_str());
    } catch (const weft::SerializationError& e) {
      std::printf("refused the handle: %s\n", e.what());
      ++refused;
    }
    if (refused == 2) std::printf("foreign refs refused\n");
    return refused == 2 ? 0 : 1;
  });
}
