// The job's stop signal and the state of whole-job checkpoints in this process: which signal asks
// the job to stop (setting stop_signal), where job checkpoints go (job_checkpoint_dir), the exit
// code of a job stopped at a checkpoint (requeue_exit_code), the epoch reached so far, and
// whether the stop checkpoint was written. The public side is weft/job_checkpoint.hpp
// (job_checkpoint.cpp); this is what the runtime's start and weft::run read.
#pragma once

#include <cstdint>
#include <string>

namespace weft {
class Config;
}

namespace weft::core {

// At start, on every rank: reads the settings and installs the signal's handler. Rank 0 marks the
// job as asked to stop; the other ranks ignore it (mpirun and srun forward the signal to every
// rank, and its default action would end them). stop_signal = none leaves the signal alone.
// The handler stays until the process exits: a signal that arrives late, while the ranks end,
// must not kill one of them and turn the job's exit code into a signal's.
void configure_job_stop(const Config& cfg, int rank);

// At the job's end, on rank 0, while the loop still runs: drops the driver's checkpoint hook, so
// the refs and handles it captured are released now, not by a static destructor after the
// runtime is gone (job_checkpoint.cpp).
void drop_job_checkpoint_hook();

bool stop_signalled();
// The signal's name as the settings spell it ("USR1"), or "" when there is none.
const std::string& stop_signal_name();
const std::string& job_checkpoint_dir();  // the setting; "" when unset
int requeue_exit_code();

// The epoch the next checkpoint gets is one more than the last one written or restored.
uint64_t next_job_epoch();
void note_job_epoch(uint64_t epoch);

// checkpoint_point() wrote the stop checkpoint: weft::run returns requeue_exit_code().
void mark_job_stopped(uint64_t epoch, const std::string& file);
bool job_stopped();
const std::string& stop_checkpoint_file();
uint64_t stop_checkpoint_epoch();

}  // namespace weft::core
