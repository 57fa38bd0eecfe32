"""pipeline.atomic: the one atomic-write helper every writer of a read-back file uses."""

import gzip
import json
import os

import pytest

from pipeline.atomic import PARTIAL_SUFFIX, atomic_open, partial_path, write_json_atomic, write_text_atomic


def test_json_is_written_byte_for_byte_as_json_dumps(tmp_path):
    path = tmp_path / "a.json"
    payload = {"b": [1, 2], "ü": "ö"}
    write_json_atomic(path, payload, end="\n", indent=2, ensure_ascii=False)
    assert path.read_bytes() == (json.dumps(payload, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    assert os.listdir(tmp_path) == ["a.json"]


def test_a_failed_write_keeps_the_old_file_and_leaves_no_partial(tmp_path):
    path = tmp_path / "state.json"
    write_text_atomic(path, "old")
    with pytest.raises(RuntimeError), atomic_open(path) as handle:
        handle.write("half of the new")
        raise RuntimeError("crash in the middle")
    assert path.read_text(encoding="utf-8") == "old"
    assert sorted(os.listdir(tmp_path)) == ["state.json"]


def test_gzip_opener_and_the_partial_name(tmp_path):
    path = tmp_path / "rows.jsonl.gz"
    with atomic_open(path, "wt", opener=gzip.open, compresslevel=3) as handle:
        assert os.path.exists(partial_path(path)) and not path.exists()
        handle.write('{"id": 1}\n')
    with gzip.open(path, "rt", encoding="utf-8") as back:
        assert back.read() == '{"id": 1}\n'
    assert partial_path(path).endswith(f".{os.getpid()}{PARTIAL_SUFFIX}")
