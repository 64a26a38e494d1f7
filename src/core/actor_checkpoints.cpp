// Actor checkpoints: the policy, the state's layout and the durable write (src/ft does the file).
#include "core/actor_checkpoints.hpp"

#include <cstring>

#include "common/timeline.hpp"
#include "ft/build_id.hpp"
#include "ft/checkpoint_file.hpp"
#include "weft/errors.hpp"

namespace weft::core {
namespace {

constexpr uint64_t kStateMagic = 0x31545043544645ULL;  // "WEFTCPT1" minus a byte: layout v1

template <class T>
void put(std::vector<char>& out, const T& v) {
  const char* p = reinterpret_cast<const char*>(&v);
  out.insert(out.end(), p, p + sizeof v);
}

template <class T>
T take(std::span<const char> bytes, size_t& pos, const std::string& what) {
  if (bytes.size() - pos < sizeof(T))
    throw Error(what + ": the checkpoint state ends early (byte " + std::to_string(pos) + " of " +
                std::to_string(bytes.size()) + ")");
  T v;
  std::memcpy(&v, bytes.data() + pos, sizeof v);
  pos += sizeof v;
  return v;
}

}  // namespace

std::vector<char> CheckpointState::encode() const {
  std::vector<char> out;
  out.reserve(32 + done_next.size() * 12 + object.size());
  put(out, kStateMagic);
  put(out, calls);
  put(out, static_cast<uint64_t>(done_next.size()));
  for (const auto& [caller, next] : done_next) {
    put(out, static_cast<int32_t>(caller));
    put(out, next);
  }
  size_t kept = 0;
  for (const auto& [caller, rs] : results) kept += rs.size();
  put(out, static_cast<uint64_t>(kept));
  for (const auto& [caller, rs] : results) {
    for (const Result& r : rs) {
      put(out, static_cast<int32_t>(caller));
      put(out, r.seq);
      put(out, static_cast<uint64_t>(r.value.size()));
      out.insert(out.end(), r.value.begin(), r.value.end());
    }
  }
  put(out, static_cast<uint64_t>(object.size()));
  out.insert(out.end(), object.begin(), object.end());
  return out;
}

CheckpointState CheckpointState::decode(std::span<const char> bytes, const std::string& what) {
  size_t pos = 0;
  if (take<uint64_t>(bytes, pos, what) != kStateMagic)
    throw Error(what + ": the state is not in the layout this build writes");
  CheckpointState s;
  s.calls = take<uint64_t>(bytes, pos, what);
  const uint64_t callers = take<uint64_t>(bytes, pos, what);
  if (callers > (bytes.size() - pos) / 12)
    throw Error(what + ": the state names more callers than it has bytes for");
  for (uint64_t i = 0; i < callers; ++i) {
    const int32_t caller = take<int32_t>(bytes, pos, what);
    s.done_next[caller] = take<uint64_t>(bytes, pos, what);
  }
  const uint64_t kept = take<uint64_t>(bytes, pos, what);
  if (kept > (bytes.size() - pos) / 20)
    throw Error(what + ": the state names more results than it has bytes for");
  for (uint64_t i = 0; i < kept; ++i) {
    const int32_t caller = take<int32_t>(bytes, pos, what);
    Result r;
    r.seq = take<uint64_t>(bytes, pos, what);
    const uint64_t n = take<uint64_t>(bytes, pos, what);
    if (n > bytes.size() - pos) throw Error(what + ": a kept result runs past the state's end");
    r.value.assign(bytes.data() + pos, bytes.data() + pos + n);
    pos += n;
    s.results[caller].push_back(std::move(r));
  }
  const uint64_t size = take<uint64_t>(bytes, pos, what);
  if (size != bytes.size() - pos)
    throw Error(what + ": the state says " + std::to_string(size) + " bytes of object, " +
                std::to_string(bytes.size() - pos) + " follow");
  s.object.assign(bytes.data() + pos, bytes.data() + bytes.size());
  return s;
}

ActorCheckpointer::ActorCheckpointer(std::filesystem::path file, std::string class_name,
                                     const detail::ClassEntry* cls, CheckpointPolicy policy)
    : file_(std::move(file)),
      class_name_(std::move(class_name)),
      cls_(cls),
      policy_(policy),
      last_write_(std::chrono::steady_clock::now()) {}

void ActorCheckpointer::note_call(int caller, uint64_t seq, const std::vector<char>* value) {
  uint64_t& next = state_.done_next[caller];
  if (seq + 1 > next) next = seq + 1;
  if (value && value->size() <= CheckpointState::kMaxResultBytes) {
    auto& rs = state_.results[caller];
    if (rs.size() == CheckpointState::kResultsPerCaller) rs.erase(rs.begin());
    rs.push_back({seq, *value});
  }
  ++state_.calls;
  ++since_;
}

bool ActorCheckpointer::due(std::chrono::steady_clock::time_point now) const {
  if (since_ == 0) return false;  // nothing changed since the last write
  if (policy_.every > 0 && since_ >= static_cast<uint64_t>(policy_.every)) return true;
  return policy_.interval.count() > 0 && now - last_write_ >= policy_.interval;
}

void ActorCheckpointer::write(const void* object) {
  if (!cls_ || !cls_->save_state)
    throw Error("actor class " + class_name_ + " is not serializable: it cannot be checkpointed");
  timeline::Span span(timeline::Kind::kCheckpoint, cls_->id);
  serde::Buffer out;
  cls_->save_state(object, out);
  state_.object = out.take();
  const std::vector<char> bytes = state_.encode();
  state_.object.clear();
  span.set_arg(bytes.size());
  ft::write_checkpoint(
      file_, ft::CheckpointHeader{class_name_, ft::current_build_id(), state_.calls}, bytes);
  since_ = 0;
  last_write_ = std::chrono::steady_clock::now();
  if (!written_) written_ = first_write_ = true;
}

bool ActorCheckpointer::restore(void* object, bool expected) {
  if (!cls_ || !cls_->load_state) return false;  // never checkpointed: nothing to restore
  ft::remove_checkpoint_temporaries(file_);      // its writer died with the old rank
  // The creator never heard of a checkpoint of this actor: a file under its key is another
  // run's (actor ids and names repeat in every run of a program), not this actor's state.
  if (!expected) return false;
  ft::Checkpoint c;
  try {
    c = ft::read_checkpoint(file_, class_name_, ft::current_build_id());
  } catch (const CheckpointError& e) {
    if (e.kind() != CheckpointError::Kind::kMissing) throw;
    throw CheckpointError(CheckpointError::Kind::kMissing, file_.string(),
                          "an earlier incarnation of this actor wrote its checkpoint, but the "
                          "file is not there on this host",
                          "set actor_checkpoint_dir to a file system every host of the job sees");
  }
  const std::string what = "checkpoint file " + file_.string();
  CheckpointState s = CheckpointState::decode(c.state, what);
  serde::Reader in(s.object.data(), s.object.size());
  try {
    cls_->load_state(object, in);
  } catch (const std::exception& e) {
    throw Error(what + ": its state does not load into a " + class_name_ + ": " + e.what());
  }
  s.object.clear();
  state_ = std::move(s);
  written_ = true;  // the file exists: the creator knows already
  since_ = 0;
  last_write_ = std::chrono::steady_clock::now();
  return true;
}

const std::vector<char>* ActorCheckpointer::result_of(int caller, uint64_t seq) const {
  auto it = state_.results.find(caller);
  if (it == state_.results.end()) return nullptr;
  for (const auto& r : it->second)
    if (r.seq == seq) return &r.value;
  return nullptr;
}

bool ActorCheckpointer::completed(int caller, uint64_t seq) const {
  auto it = state_.done_next.find(caller);
  return it != state_.done_next.end() && seq < it->second;
}

}  // namespace weft::core
