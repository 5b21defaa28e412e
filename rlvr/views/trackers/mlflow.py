"""MLflow: one MLflow run per rlvr run on a tracking server, through mlflow-skinny's MlflowClient (the
`mlflow` extra): metrics by step, the config as params once, each iteration's responses as a table
artifact (responses/iteration_NNNNNN.json, MLflow's log_table). The run id is kept in the rlvr run's
tracking state, so a resumed run logs into the same MLflow run.

    mlflow server --host 127.0.0.1 --port 5000    # a server (its own venv: scripts/setup-mlflow.sh)

Test: tests/integration/test_tracking.py (a real `mlflow server` on 127.0.0.1, read back with MlflowClient).
"""

from __future__ import annotations

import time

from rlvr.views.trackers import Target, TrackingError, flat_params, require

PARAM_BATCH = 100  # MLflow's limit of params per log_batch
PARAM_VALUE_CHARS = 6000  # MLflow 3's limit of a param value


class MlflowTracker:
    durable = True

    def __init__(self, target: Target, state: dict) -> None:
        require("mlflow", "mlflow")
        require("mlflow", "pandas")  # log_table builds a DataFrame
        from mlflow.entities import Param
        from mlflow.tracking import MlflowClient

        self._client = MlflowClient(tracking_uri=target.where)
        self._run_id = state.get("run_id")
        if self._run_id is not None:
            self._client.update_run(self._run_id, status="RUNNING")
            return
        exp = self._client.get_experiment_by_name(target.group)
        exp_id = exp.experiment_id if exp is not None else self._client.create_experiment(target.group)
        run = self._client.create_run(exp_id, run_name=target.name, tags={"rlvr.run": target.location})
        self._run_id = run.info.run_id
        params = [Param(k, v[:PARAM_VALUE_CHARS]) for k, v in flat_params(target.config).items()]
        for k in range(0, len(params), PARAM_BATCH):
            self._client.log_batch(self._run_id, params=params[k : k + PARAM_BATCH])

    @property
    def run_id(self) -> str:
        if self._run_id is None:
            raise TrackingError("the MLflow run was not created")
        return self._run_id

    def log(self, step: int, metrics: dict[str, float], responses: list[dict]) -> None:
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        self._client.log_batch(self.run_id, metrics=[Metric(k, v, now, step) for k, v in metrics.items()])
        if responses:
            table = {c: [r[c] for r in responses] for c in responses[0]}
            self._client.log_table(self.run_id, data=table, artifact_file=f"responses/iteration_{step:06d}.json")

    def flush(self) -> None:
        pass  # every call above returned only once the server had stored it

    def state(self) -> dict:
        return {"run_id": self._run_id}

    def close(self) -> None:
        self._client.set_terminated(self.run_id)
