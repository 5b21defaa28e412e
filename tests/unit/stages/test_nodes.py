"""update.nnodes: the node names, and the config's refusals (the runs themselves: tests/integration/test_update.py
and tests/e2e/test_nodes.py)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from rlvr.config import Config
from rlvr.schema import base_stage, node_stage, part_stage, split_node


@pytest.mark.parametrize(
    ("node", "nodes", "name"),
    [(0, 2, "update.node-1-of-2"), (1, 2, "update.node-2-of-2"), (0, 16, "update.node-01-of-16")],
)
def test_node_names(node: int, nodes: int, name: str) -> None:
    assert node_stage("update", node, nodes) == name
    assert split_node(name) == ("update", node, nodes) and base_stage(name) == "update"


@pytest.mark.parametrize("stage", ["update", "rollout", part_stage("rollout", 0, 2)])
def test_other_names_are_no_node(stage: str) -> None:
    assert split_node(stage) == (stage, None, None)
    assert base_stage(stage) == stage.split(".part-")[0]


def test_a_node_outside_its_gang_is_refused() -> None:
    with pytest.raises(ValueError, match="node 2 of 2"):
        node_stage("update", 2, 2)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"update": {"nnodes": 2}}, "update.nnodes = 2 runs the update on 2 workers of a pool: set placement.update"),
        (
            {"update": {"nnodes": 2, "lora": {}}, "placement": {"update": "t"}},
            "update.lora with update.nproc = 1, update.nnodes = 2",
        ),
        ({"update": {"nnodes": 0}}, "greater than or equal to 1"),
    ],
)
def test_the_config_refuses_nodes_that_cannot_work(data: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Config.model_validate(data)


def test_nodes_on_a_pool_are_accepted() -> None:
    cfg = Config.model_validate({"update": {"nnodes": 2, "strategy": "fsdp2"}, "placement": {"update": "train"}})
    assert (cfg.update.nnodes, cfg.placement.update) == (2, "train")
