"""Prefect task results persist as JSON only and a planted record never runs code (issue 19 item 2, X1)."""

from __future__ import annotations

import importlib
import json
import pickle
import uuid
from pathlib import Path

from prefect import Task, flow, task
from prefect.filesystems import LocalFileSystem
from prefect.results import ResultStore
from prefect.serializers import JSONSerializer, PickleSerializer

from flows.results import PERSISTED, SERIALIZER, is_json_record, must_refresh, stored_record

FLOW_MODULES = ("flows.tasks", "flows.dedup", "flows.end_to_end", "flows.tokenize_flow", "flows.scaling_flow")


class _Payload:
    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def _record(serializer, result: bytes) -> bytes:
    """A Prefect result record as ``ResultRecord`` writes it, naming ``serializer``."""
    metadata = {"storage_key": "k", "expiration": None, "serializer": serializer.model_dump(mode="json")}
    return json.dumps({"metadata": metadata, "result": result.decode("latin-1")}).encode()


def _tasks():
    for name in FLOW_MODULES:
        module = importlib.import_module(name)
        for value in vars(module).values():
            if isinstance(value, Task):
                yield name, value
    from flows.end_to_end import STAGE_TASK
    from flows.tasks import curate_source_task

    yield "STAGE_TASK", curate_source_task.with_options(**STAGE_TASK)


def test_no_task_persists_with_the_pickle_default() -> None:
    found = list(_tasks())
    assert len(found) >= 12
    for where, found_task in found:
        assert found_task.persist_result is False or found_task.result_serializer is SERIALIZER, (where, found_task)


def test_a_planted_pickle_record_is_recognised_without_being_read(tmp_path: Path) -> None:
    """Records Prefect's own store would unpickle (the probe writes the marker) are told apart by JSON alone."""
    marker = tmp_path / "marker"
    pickled = _record(PickleSerializer(), PickleSerializer().dumps(_Payload(marker)))
    evil_json = _record(JSONSerializer(jsonlib="pickle", object_decoder=None), pickle.dumps(_Payload(marker)))
    ours = _record(SERIALIZER, SERIALIZER.dumps({"n": 1}))
    assert not is_json_record(pickled) and not is_json_record(evil_json) and is_json_record(ours)
    assert not is_json_record(b"\x80\x04not json") and not marker.exists()
    (tmp_path / "pickled").write_bytes(pickled)
    ResultStore(result_storage=LocalFileSystem(basepath=str(tmp_path))).exists("pickled")  # Prefect's own lookup
    assert marker.exists()  # the probe works: that is what must_refresh keeps Prefect from doing


def test_a_stage_result_is_cached_as_json_and_a_planted_one_reruns_the_stage(tmp_path: Path, prefect_harness) -> None:
    key = f"tokenmill-results-probe-{uuid.uuid4().hex}"  # the harness's storage may outlive a session
    calls: list[int] = []

    @task(name="probe", cache_key_fn=lambda _context, _parameters: key, **PERSISTED)
    def probe(n: int) -> dict:
        calls.append(n)
        return {"n": n, "path": Path("/x")}

    @flow(name="probe-flow")
    def run(n: int) -> tuple[dict, bytes | None]:
        return probe.with_options(refresh_cache=must_refresh(key))(n), stored_record(key)

    first, record = run(1)
    assert first["n"] == 1 and is_json_record(record)
    assert run(2)[0] == {"n": 1, "path": "/x"} and calls == [1]  # cached, read back as JSON (a Path as its string)
    marker = tmp_path / "marker"
    storage = tmp_path / "storage-of-this-run"
    storage.write_bytes(_record(PickleSerializer(), PickleSerializer().dumps(_Payload(marker))))

    @flow(name="probe-flow-planted")
    def plant_and_run(n: int) -> tuple[dict, bytes | None]:
        from prefect.results import get_default_result_storage

        get_default_result_storage().write_path(key, storage.read_bytes(), _sync=True)
        return run.fn(n)

    third, record = plant_and_run(3)
    assert third["n"] == 3 and calls == [1, 3]  # not read: the stage ran again
    assert not marker.exists() and is_json_record(record)  # and its JSON record replaced the planted one


def test_numpy_values_persist_as_numbers() -> None:
    import numpy as np

    back = SERIALIZER.loads(
        SERIALIZER.dumps({"q": np.float64(20.0), "n": np.int64(3), "a": np.arange(2), "p": Path("/x")})
    )
    assert back == {"q": 20.0, "n": 3, "a": [0, 1], "p": "/x"} and isinstance(back["q"], float)
