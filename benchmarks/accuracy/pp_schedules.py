"""ScheduleInterleaved1F1B's per-rank action lists under torch 2.x.

vram-opt replays a rank's actions to build its step under
--pp-schedule=interleaved-1f1b (lib/Transforms/PipelineSchedule.cpp
computes them as schedules.py does). This script asks torch itself: each
rank's compute actions (ScheduleInterleaved1F1B's
_calculate_single_rank_operations) lowered with the communication actions
as _PipelineScheduleRuntime._prepare_schedule_with_comms lowers them for
a model without FSDP (_add_unshard_reshard, _add_reduce_grad with the
default max_active_stages=3 / unshard_lookahead="full",
_add_send_recv, _add_wait_send), without a process group: the same
functions the schedule's constructor calls, given what it computes from
the stages (pp_group_size, n_local_stages, rounds).

    benchmarks/accuracy/truth-env.sh python3 benchmarks/accuracy/pp_schedules.py

writes results/pp-schedules-torch-<version>.txt, one line per rank:
`ranks stages_per_rank microbatches rank: action ...` in torch's
spelling (str(_Action)); unittests/Transforms/PipelineScheduleTest.cpp
compares vram-opt's lists with it.
"""
import pathlib
import types

import torch
from torch.distributed.pipelining import schedules as S

ROOT = pathlib.Path(__file__).resolve().parents[2]
# (ranks, stages per rank, micro-batches): the measured pp.py rows (2, 2,
# 2 and 4) and others, including micro-batches that are not a multiple of
# the ranks and fewer than the ranks.
CASES = [(2, 2, 1), (2, 2, 2), (2, 2, 3), (2, 2, 4), (2, 2, 6), (2, 2, 8), (2, 3, 4),
         (2, 4, 4), (3, 2, 3), (3, 2, 6), (3, 3, 9), (4, 2, 2), (4, 2, 4), (4, 2, 8),
         (4, 2, 12), (4, 4, 8), (8, 2, 8), (8, 2, 16)]


def actions(ranks, local, microbatches):
    self = types.SimpleNamespace(n_local_stages=local, pp_group_size=ranks,
                                 _n_microbatches=microbatches)
    self.number_of_rounds = max(1, microbatches // ranks)
    self.microbatches_per_round = microbatches // self.number_of_rounds
    if microbatches % self.number_of_rounds:
        return None  # ScheduleInterleaved1F1B raises ValueError
    compute = {}
    for rank in range(ranks):
        ops = S.ScheduleInterleaved1F1B._calculate_single_rank_operations(self, rank)
        ops = S._add_unshard_reshard(ops, max_active_stages=3, unshard_lookahead=3)
        compute[rank] = S._add_reduce_grad(ops, microbatches)
    comms = S._add_send_recv(compute, stage_to_rank=lambda s: s % ranks,
                             num_stages=ranks * local)
    return S._add_wait_send(comms)


def main():
    lines = [f"# torch {torch.__version__}: ScheduleInterleaved1F1B, "
             "ranks stages_per_rank microbatches rank: actions"]
    for ranks, local, microbatches in CASES:
        lowered = actions(ranks, local, microbatches)
        if lowered is None:
            continue
        for rank in sorted(lowered):
            lines.append(f"{ranks} {local} {microbatches} {rank}: " +
                         " ".join(str(a) for a in lowered[rank]))
    version = torch.__version__.split("+")[0]
    out = ROOT / "benchmarks" / "accuracy" / "results" / f"pp-schedules-torch-{version}.txt"
    out.write_text("\n".join(lines) + "\n")
    print(out, len(lines) - 1, "ranks")


if __name__ == "__main__":
    main()
