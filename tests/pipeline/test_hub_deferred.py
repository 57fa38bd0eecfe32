"""pipeline/hub_deferred.py: datatrove's imports of the Hub client wait until a Hub name is used."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pipeline import hub_deferred


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint(' '.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(out.stdout.split())


def test_importing_datatrove_after_tokenmill_leaves_the_hub_client_unloaded() -> None:
    loaded = _modules_after("import pipeline, datatrove.io, datatrove.executor.local, datatrove.pipeline.writers")
    assert "datatrove.pipeline.writers.huggingface" in loaded
    assert not {"huggingface_hub.hf_api", "huggingface_hub.hf_file_system"} & loaded
    # without the stand-ins, the same imports load it (what this saves)
    assert "huggingface_hub.hf_api" in _modules_after("import datatrove.io, datatrove.pipeline.writers")


def test_a_stand_in_class_is_the_real_class_wherever_it_is_used() -> None:
    import huggingface_hub

    stand_in = hub_deferred.stand_in("HfFileSystem")
    assert not isinstance(object(), stand_in)
    fs = stand_in()  # imports the real class and makes one of it (no request: nothing is listed)
    real = huggingface_hub.hf_file_system.HfFileSystem
    assert type(fs) is real and isinstance(fs, stand_in) and issubclass(real, stand_in)
    assert stand_in.protocol == real.protocol  # attributes are the real class's
    assert huggingface_hub.HfFileSystem is real  # once used, the real class is back in the namespace


def test_hub_paths_resolve_to_the_real_file_system_in_a_process_that_deferred_it() -> None:
    code = (
        "import pipeline, datatrove.io, fsspec, huggingface_hub, huggingface_hub.hf_file_system as real\n"
        "fs = fsspec.filesystem('hf')\n"
        "assert type(fs) is real.HfFileSystem, type(fs)\n"
        "assert datatrove.io._get_true_fs(fs) is fs and isinstance(fs, datatrove.io.HfFileSystem)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_stand_in_function_calls_the_real_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(hub_deferred.DEFERRED, "dumps", "json")
    dumps = hub_deferred.stand_in("dumps")
    assert dumps.__name__ == "dumps" and dumps({"a": 1}, sort_keys=True) == '{"a": 1}'


def test_every_deferred_name_is_where_the_table_says() -> None:
    import importlib

    missing = [f"{m}.{n}" for n, m in hub_deferred.DEFERRED.items() if not hasattr(importlib.import_module(m), n)]
    assert missing == []  # a huggingface_hub release moved one: update DEFERRED
    assert set(hub_deferred.DEFERRED) >= hub_deferred.CLASSES
