"""The train/test split of a shipped problem set: one rule for every task read from a fixed set.

    split_indices(n, seed=..., n_train=..., n_test=...) -> {index: "train" | "test"}

The set's indices are shuffled by `seed` (random.Random, so a split is a function of the seed and
the set's size only); the first n_test are held out, the next n_train train, the rest are left
out. humaneval, stdio, logic and retrieval split this way; arithmetic is generated to order and
numbers its problems in shuffled order (data/arithmetic.py). Test: pytest tests/unit/data/test_datasets.py
"""

from __future__ import annotations

import random


def split_indices(n: int, *, seed: int, n_train: int, n_test: int) -> dict[int, str]:
    """Index -> split of the problems kept of a set of n, in index order (see the module docstring)."""
    if n_train < 0 or n_test < 0 or n_train + n_test > n:
        raise ValueError(f"n_train={n_train}, n_test={n_test}: need 0 <= n_train + n_test <= {n}")
    order = list(range(n))
    random.Random(seed).shuffle(order)
    split = {i: "test" for i in order[:n_test]} | {i: "train" for i in order[n_test : n_test + n_train]}
    return dict(sorted(split.items()))
