"""Integrity of a committed run: damage to a committed file or record is detected by every
reader (verify-store, resume, the next stage, `rlvr sql`), named by file and stage, and
`--redo STAGE:ITERATION` recomputes exactly the bytes an undamaged run holds (so no later stage
has to be recomputed: their fingerprints still match)."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from rlvr.flows.cli import app
from typer.testing import CliRunner

from rlvr import stages
from rlvr.checks.start import create_or_open
from rlvr.config import Config
from rlvr.schema import SCORES, RunPaths
from rlvr.store.commit import write_table
from rlvr.store.integrity import check_store, redo
from rlvr.store.records import CorruptRecordError, IntegrityError, read_record
from rlvr.store.run import RunError, open_run
from rlvr.views.sql import run_sql
from rlvr.views.status import status_rows

runner = CliRunner()
STAGE_FUNCTIONS = {
    "prepare": stages.prepare,
    "rollout": stages.rollout,
    "verify": stages.verify,
    "update": stages.update,
    "evaluate": stages.evaluate,
}


def _complete(run_dir: Path) -> list[str]:
    """What `resume` does, without Prefect: every stage in the flow's order; the computed ones."""
    done = []
    for stage, i in open_run(run_dir).config.stage_plan():
        res = STAGE_FUNCTIONS[stage](run_dir) if i is None else STAGE_FUNCTIONS[stage](run_dir, i)
        if not res.skipped:
            done.append(stage if i is None else f"{stage}:{i}")
    return done


TIMING = ["seconds", "peak_memory_mb"]  # the only columns of a stage's outputs that a rerun may change


def _outputs(root: Path) -> dict[str, object]:
    """sha256 of every committed output (records left out: they hold times); updates shards by
    their rows without the timing columns."""
    out: dict[str, object] = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if not p.is_file() or p.name.startswith(".") or rel.parts[0] in ("_stages", "run.toml"):
            continue
        out[str(rel)] = (
            pq.read_table(p).drop(TIMING).to_pylist() if rel.parts[0] == "updates" else hashlib.sha256(p.read_bytes()).hexdigest()
        )
    return out


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory, small_config: Config, tiny_model: Path) -> Path:
    """One complete, undamaged 1-iteration run (16 prompts x G=4, the tiny model, CPU)."""
    d = tmp_path_factory.mktemp("pristine") / "run"
    create_or_open(d, small_config, 1)
    _complete(d)
    return d


@pytest.fixture()
def run(pristine: Path, tmp_path: Path) -> RunPaths:
    d = tmp_path / "run"
    shutil.copytree(pristine, d)
    return RunPaths(d.resolve())


def truncate(p: Path) -> None:
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])


def flip_a_bit(p: Path) -> None:
    data = bytearray(p.read_bytes())
    data[len(data) // 2] ^= 0x01
    p.write_bytes(bytes(data))


def alter_rewards(p: Path) -> None:
    """A valid Parquet file, same schema, every reward 1.0: only the checksum can tell."""
    t = pq.read_table(p)
    t = t.set_column(t.schema.get_field_index("reward"), "reward", pc.add(pc.multiply(t["reward"], 0.0), 1.0))
    write_table(t, SCORES, p)


DAMAGE = {  # name: (file, how, the stage to redo, what check_store says)
    "truncated shard": ("rollouts/iteration=000000/part-000000.parquet", truncate, "rollout:0", "bytes, its record says"),
    "bit-flipped shard": ("scores/iteration=000000/part-000000.parquet", flip_a_bit, "verify:0", "sha256 differs"),
    "altered rewards": ("scores/iteration=000000/part-000000.parquet", alter_rewards, "verify:0", ""),
    "deleted policy file": ("policy/v000001/model.safetensors", Path.unlink, "update:0", "missing"),
    "deleted policy v0": ("policy/v000000/config.json", Path.unlink, "prepare", "missing"),
    "truncated record": ("_stages/iteration=000000/verify.json", truncate, "verify:0", "corrupt commit record"),
}


def test_an_undamaged_run_verifies_clean(pristine: Path) -> None:
    problems, checked = check_store(pristine)
    assert problems == [] and checked > 5
    res = runner.invoke(app, ["verify-store", str(pristine)])
    assert res.exit_code == 0 and "match their commit records" in res.output


@pytest.mark.parametrize("name", list(DAMAGE))
def test_damage_is_detected_named_and_redone_byte_exact(name: str, run: RunPaths, pristine: Path) -> None:
    rel, damage, spec, what = DAMAGE[name]
    expected = _outputs(pristine.resolve())
    damage(run.root / rel)

    problems, _ = check_store(run.root)
    assert [(p.path, p.redo) for p in problems] == [(rel, spec)], problems
    assert what in problems[0].what
    res = runner.invoke(app, ["verify-store", str(run.root)], env={"COLUMNS": "300"})
    assert res.exit_code == 1 and rel in res.output and f"--redo {spec}" in res.output
    # resume stops before any stage runs (no Prefect is started), in one line naming file and fix
    res = runner.invoke(app, ["resume", str(run.root)], env={"COLUMNS": "1000"})
    assert res.exit_code == 2 and rel in res.output and f"--redo {spec}" in res.output, res.output
    assert len(res.output.strip().splitlines()) == 1
    # every reader refuses the damaged stage too: the stage functions and `rlvr sql`
    error = CorruptRecordError if "record" in name else IntegrityError
    with pytest.raises(error, match=f"--redo {spec}"):
        _complete(run.root)
    if rel.endswith(".parquet"):
        with pytest.raises(error):
            run_sql(run.root, "SELECT count(*) FROM scores")
    notes = [r["note"] for r in status_rows(run.root) if not r["committed"]]  # status: no traceback
    assert notes == ([f"corrupt commit record: rlvr resume {run.root} --redo {spec}"] if "record" in name else [])

    assert redo(run.root, spec)
    # only the damaged stage is recomputed: it writes the same bytes, so no later fingerprint changes
    assert _complete(run.root) == [spec]
    assert check_store(run.root)[0] == []
    assert _outputs(run.root) == expected  # the same bytes as the undamaged run


def test_an_edited_config_without_its_hash_line_is_refused(run: RunPaths) -> None:
    text = run.config.read_text().splitlines()
    assert text[0].startswith("# config_hash")
    edited = "\n".join(text[1:]).replace("group_size = 4", "group_size = 6")
    assert edited != "\n".join(text[1:])
    run.config.write_text(edited)
    with pytest.raises(RunError, match="does not match the config hash .* recorded in"):
        open_run(run.root)
    for args in (["resume", str(run.root)], ["verify-store", str(run.root)], ["train", "--run", str(run.root)]):
        res = runner.invoke(app, args, env={"COLUMNS": "300"})
        assert res.exit_code == 2 and "edited after the run started" in res.output, args
    with pytest.raises(RunError):
        stages.rollout(run.root, 0)


def test_redo_names_the_stages_it_accepts(run: RunPaths) -> None:
    for bad in ("rollout", "rollout:7", "train:0", "verify:x"):
        res = runner.invoke(app, ["resume", str(run.root), "--redo", bad], env={"COLUMNS": "300"})
        assert res.exit_code == 2 and "is not a stage of this run" in res.output and "--redo rollout:0" in res.output
    assert read_record(run.record("rollout", 0)) is not None  # nothing was removed


@pytest.mark.slow
def test_cli_resume_redo_repairs_the_run_through_prefect(run: RunPaths, pristine: Path, prefect_api: str) -> None:
    """The whole user path in subprocesses: verify-store finds the damage, resume refuses, resume --redo
    (a real Prefect flow) recomputes, and verify-store then passes."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PREFECT_API_URL": prefect_api, "COLUMNS": "300"}

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "rlvr.flows.cli", *args], env=env, capture_output=True, text=True, timeout=900
        )

    expected = _outputs(pristine.resolve())
    flip_a_bit(run.root / "rollouts/iteration=000000/part-000000.parquet")
    assert cli("verify-store", str(run.root)).returncode == 1
    refused = cli("resume", str(run.root))
    assert refused.returncode == 2 and "--redo rollout:0" in refused.stderr and "Traceback" not in refused.stderr
    fixed = cli("resume", str(run.root), "--redo", "rollout:0")
    assert fixed.returncode == 0, fixed.stderr[-3000:]
    assert "redo rollout:0: its commit record is removed" in fixed.stdout
    assert "1 stages computed" in fixed.stdout
    clean = cli("verify-store", str(run.root))
    assert clean.returncode == 0 and "match their commit records" in clean.stdout
    assert _outputs(run.root) == expected


def test_every_reader_checks_the_files_it_reads(run: RunPaths) -> None:
    """rescore and `rlvr prompts` read committed files through the verifying path: a damaged
    rollouts shard or problems shard stops them with the stage to redo, as it stops resume."""
    from rlvr.stages.rescore import rescore
    from rlvr.views.preview import preview

    rescore(run.root, ["verify.weights.arithmetic.format=0.5"], "half")
    flip_a_bit(next((run.root / "scorings/half").rglob("*.parquet")))
    with pytest.raises(IntegrityError):  # the scorings view reads a rescore's shards through the check too
        run_sql(run.root, "SELECT count(*) FROM scorings")
    truncate(run.root / "rollouts/iteration=000000/part-000000.parquet")
    with pytest.raises(IntegrityError, match="rollout:0"):
        rescore(run.root, ["verify.weights.arithmetic.format=0.5"], "damaged")
    assert not (run.root / "scorings/damaged").exists()
    flip_a_bit(run.root / "problems/part-000000.parquet")
    with pytest.raises(IntegrityError, match="prepare"):
        preview(run.root, n=1)
