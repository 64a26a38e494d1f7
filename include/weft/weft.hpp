// Weft: Ray's tasks, actors and object store for MPI batch jobs. One header for all of it.
#pragma once

#include "weft/actor.hpp"
#include "weft/errors.hpp"
#include "weft/job_checkpoint.hpp"
#include "weft/nccl_gang.hpp"
#include "weft/object_ref.hpp"
#include "weft/options.hpp"
#include "weft/placement_group.hpp"
#include "weft/progress.hpp"
#include "weft/remote.hpp"
#include "weft/runtime.hpp"
#include "weft/scheduling_strategy.hpp"
#include "weft/serialization.hpp"
#include "weft/view.hpp"
