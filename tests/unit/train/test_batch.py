"""micro_batches and rank_micro_batches (rlvr.train.batch): the budget, and one process's micro-batches
dealt over data-parallel ranks by cost (rlvr.train.distributed.Dist.share takes each rank's places)."""

from __future__ import annotations

import pytest

from rlvr.train.batch import TrainRow, micro_batches, rank_micro_batches
from rlvr.train.distributed import Dist


def _rows(lengths: list[int]) -> list[TrainRow]:
    return [TrainRow([1] * (n - 3), [2] * 3, [0.0] * 3, 1.0) for n in lengths]


def _padded(mbs: list) -> int:
    """The tokens the forward passes compute, padding included."""
    return sum(len(mb) * max(r.length for r in mb) for mb in mbs)


def _lengths(mbs: list) -> list[tuple[int, ...]]:
    return [tuple(r.length for r in mb) for mb in mbs]


LENGTHS = [100, 104, 96, 120, 110, 98, 130, 101, 99, 125, 97, 115, 103, 102, 118]  # 15 rows of 96..130 tokens


@pytest.mark.parametrize("packed", [False, True], ids=["padded", "packed"])
@pytest.mark.parametrize("ranks", [1, 2, 3, 4])
def test_the_ranks_share_one_processs_micro_batches(ranks: int, packed: bool) -> None:
    rows = _rows(LENGTHS)
    dealt = rank_micro_batches(rows, 512, packed=packed, ranks=ranks)
    assert len(dealt) % ranks == 0  # each rank's places, None where it has no more
    shares = [mb for rank in range(ranks) for mb in Dist(rank, ranks).share(dealt)]
    one = micro_batches(rows, 512, packed=packed)  # what one process runs: the same micro-batches, each on one rank
    assert sorted(_lengths(shares)) == sorted(_lengths(one))


def test_the_costliest_rank_does_less_than_when_they_were_dealt_in_turn() -> None:
    """15 rows in 4 micro-batches of 500, 416, 480 and 260 padded tokens: dealt in turn, rank 0 of 2 ran
    980 and rank 1 676; by cost, 760 and 896."""
    rows = _rows(LENGTHS)
    in_turn = micro_batches(rows, 512)
    assert [_padded(Dist(k, 2).share(in_turn)) for k in (0, 1)] == [980, 676]
    by_cost = rank_micro_batches(rows, 512, ranks=2)
    assert [_padded(Dist(k, 2).share(by_cost)) for k in (0, 1)] == [760, 896]


def test_one_rank_is_the_budgets_cut_and_a_sharded_rank_gets_fillers() -> None:
    rows = _rows(LENGTHS)
    assert rank_micro_batches(rows, 512, ranks=1) == micro_batches(rows, 512)
    dealt = rank_micro_batches(_rows([300, 300, 300]), 512, ranks=2)  # a micro-batch a row: 2 for one rank, 1 for the other
    assert [len(Dist(k, 2).share(dealt)) for k in (0, 1)] == [2, 1]
    # FSDP2's ranks run as many passes: the short one gets a None (a filler whose gradient is zero)
    assert [len(Dist(k, 2, sharded=True).share(dealt)) for k in (0, 1)] == [2, 2]
    assert Dist(1, 2, sharded=True).share(dealt)[1] is None
