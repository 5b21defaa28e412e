"""TensorBoard: scalars and a markdown table of responses in event files, written with tensorboard's own
EventFileWriter and protos (no torch, no TensorFlow). The tracker run is the log dir: a resumed run
adds an event file beside the first, and TensorBoard shows them as one run.

    tensorboard --logdir runs/demo/tracking/tensorboard

Test: tests/integration/test_tracking.py (read back with tensorboard's EventAccumulator).
"""

from __future__ import annotations

import time

from rlvr.views.trackers import Target, flat_params, require

TEXT_PLUGIN = "text"  # tensorboard.plugins.text.metadata.PLUGIN_NAME


def markdown_table(rows: list[dict]) -> str:
    """Rows as a markdown table (TensorBoard's text plugin renders it); pipes escaped, newlines as <br>."""

    def cell(v: object) -> str:
        text = "NULL" if v is None else f"{v:.4g}" if isinstance(v, float) else str(v)
        return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", "").replace("\n", "<br>")

    cols = list(rows[0])
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(cell(r[c]) for c in cols) + " |" for r in rows]
    return "\n".join(lines)


class TensorBoardTracker:
    durable = True

    def __init__(self, target: Target, state: dict) -> None:
        require("tensorboard", "tensorboard")
        from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2
        from tensorboard.summary.writer.event_file_writer import EventFileWriter

        self._pb = (event_pb2, summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2)
        self._writer = EventFileWriter(target.where, flush_secs=30)
        self._started = state.get("started", False)
        if not self._started:  # the config, once, at step 0
            params = flat_params(target.config)
            self._write(0, [self._text("config", markdown_table([{"field": k, "value": v} for k, v in params.items()]))])
            self._started = True

    def _text(self, tag: str, markdown: str):
        event_pb2, summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2 = self._pb
        meta = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name=TEXT_PLUGIN))
        tensor = tensor_pb2.TensorProto(
            dtype=types_pb2.DT_STRING, string_val=[markdown.encode()], tensor_shape=tensor_shape_pb2.TensorShapeProto()
        )
        return summary_pb2.Summary.Value(tag=tag, metadata=meta, tensor=tensor)

    def _write(self, step: int, values: list) -> None:
        event_pb2, summary_pb2 = self._pb[:2]
        self._writer.add_event(event_pb2.Event(wall_time=time.time(), step=step, summary=summary_pb2.Summary(value=values)))

    def log(self, step: int, metrics: dict[str, float], responses: list[dict]) -> None:
        summary_pb2 = self._pb[1]
        values = [summary_pb2.Summary.Value(tag=k, simple_value=v) for k, v in metrics.items()]
        if responses:
            values.append(self._text("responses", markdown_table(responses)))
        self._write(step, values)

    def flush(self) -> None:
        self._writer.flush()

    def state(self) -> dict:
        return {"started": self._started}

    def close(self) -> None:
        self._writer.close()
