"""The persistent index: a second crawl loses what the first kept (named), bad index files, Redis."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.dedup import DedupConfig, dedup_report_md, run_dedup
from pipeline.dedup.config import REDIS_PASSWORD_ENV, RedisConfig
from pipeline.dedup.index import DedupIndexError
from tests.helpers.dedup import Words, local_factory, read_drops, read_kept, write_curated


def _crawls() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    words = Words(5)
    first = [(f"c1-{i:02d}", words.doc()) for i in range(30)]
    second = [(f"c2-copy-{i:02d}", first[i][1].upper()) for i in range(10)]  # exact (case folded)
    second += [(f"c2-near-{i:02d}", words.edit(first[10 + i][1], 0.03)) for i in range(10)]
    second += [(f"c2-new-{i:02d}", words.doc()) for i in range(10)]
    return first, second


def _check_second_run(run_dir: Path, first_run: str) -> None:
    rows = {row["id"]: row for row in read_drops(run_dir)}
    assert set(rows) == {f"c2-copy-{i:02d}" for i in range(10)} | {f"c2-near-{i:02d}" for i in range(10)}
    for i in range(10):
        copy, near = rows[f"c2-copy-{i:02d}"], rows[f"c2-near-{i:02d}"]
        assert (copy["rule"], copy["duplicate_of"], copy["matched_run"]) == (
            "exact_duplicate",
            f"c1-{i:02d}",
            first_run,
        )
        assert (near["rule"], near["duplicate_of"], near["matched_run"]) == (
            "near_duplicate",
            f"c1-{10 + i:02d}",
            first_run,
        )
        assert 0.5 <= near["similarity"] < 1 and copy["similarity"] == 1.0
    assert read_kept(run_dir)["web"] == {f"c2-new-{i:02d}" for i in range(10)}


def test_second_crawl_drops_everything_the_first_kept(tmp_path: Path) -> None:
    first, second = _crawls()
    config = DedupConfig(index={"path": str(tmp_path / "index")})
    write_curated(tmp_path / "week1", {"web": first})
    write_curated(tmp_path / "week2", {"web": second})

    one = run_dedup(str(tmp_path / "week1"), config, {}, local_factory)
    assert one.kept == 30 and one.index["entries_added"] == 30 and one.index["entries_before"] == 0
    two = run_dedup(str(tmp_path / "week2"), config, {}, local_factory)
    _check_second_run(tmp_path / "week2", "week1")
    assert (two.index["matched_exact"], two.index["matched_near"], two.index["entries_added"]) == (10, 10, 10)
    assert two.accounting_ok and "Index of earlier runs" in dedup_report_md(two)

    # a rerun of a finished run changes nothing and does not add its documents twice
    again = run_dedup(str(tmp_path / "week2"), config, {}, local_factory)
    assert again.rules == two.rules and again.index["entries_added"] == 10
    from pipeline.dedup.index import DiskIndex

    index = DiskIndex(str(tmp_path / "index"), config.signature_fingerprint(), "probe")
    assert index.runs() == ["week1", "week2"] and index.count() == 40

    # week 3 re-crawls week 2's new pages: they are named as week 2's documents
    write_curated(tmp_path / "week3", {"web": [("c3-0", second[25][1])]})
    run_dedup(str(tmp_path / "week3"), config, {}, local_factory)
    (row,) = read_drops(tmp_path / "week3")
    assert (row["duplicate_of"], row["matched_run"]) == ("c2-new-05", "week2")

    # restarting week 1 (same name, new attempt): not matched with its own old entries, which it replaces
    redo = run_dedup(str(tmp_path / "week1"), config, {}, local_factory, restart=True)
    assert redo.kept == 30 and redo.index["entries_added"] == 30
    index = DiskIndex(str(tmp_path / "index"), config.signature_fingerprint(), "probe")
    assert sorted(index.runs()) == ["week1", "week2", "week3"] and index.count() == 40  # week 3 kept nothing
    # the old week1 files are gone: 3 segments of 5 files (signatures, exact hashes, names, 2 sorted runs)
    assert len(list((tmp_path / "index" / "segments").iterdir())) == 3 * 5


def test_bad_index_files_are_named_before_any_work(tmp_path: Path) -> None:
    first, second = _crawls()
    index_dir = tmp_path / "index"
    config = DedupConfig(index={"path": str(index_dir)})
    write_curated(tmp_path / "week1", {"web": first})
    run_dedup(str(tmp_path / "week1"), config, {}, local_factory)
    write_curated(tmp_path / "week2", {"web": second})

    sig_file = index_dir / "segments" / "week1.sig.npy"
    sig_file.write_bytes(sig_file.read_bytes()[:-64])  # truncated
    with pytest.raises(DedupIndexError, match=r"week1\.sig\.npy.*corrupt.*--rebuild-index"):
        run_dedup(str(tmp_path / "week2"), config, {}, local_factory)
    assert not (tmp_path / "week2" / "stages" / "dedup" / "signatures").exists()

    (index_dir / "index.json").unlink()
    with pytest.raises(DedupIndexError, match=r"index\.json: index manifest is missing"):
        run_dedup(str(tmp_path / "week2"), config, {}, local_factory)

    rebuilt = DedupConfig(index={"path": str(index_dir), "rebuild": True})
    result = run_dedup(str(tmp_path / "week2"), rebuilt, {}, local_factory)
    assert result.kept == 30 and Path(result.index["set_aside"]).name.startswith("index.broken-")
    assert Path(result.index["set_aside"], "segments", "week1.sig.npy").exists()  # set aside, not deleted
    with pytest.raises(DedupIndexError, match="other signature parameters"):
        run_dedup(
            str(tmp_path / "week1"),
            DedupConfig(num_perm=64, bands=16, index={"path": str(index_dir)}),
            {},
            local_factory,
            restart=True,
        )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_unreachable_redis_is_an_error_before_any_work(tmp_path: Path) -> None:
    first, _ = _crawls()
    write_curated(tmp_path / "week1", {"web": first})
    port = _free_port()
    config = DedupConfig(index={"redis": {"host": "127.0.0.1", "port": port, "timeout_s": 0.5}})
    with pytest.raises(DedupIndexError, match=f"cannot reach Redis at 127.0.0.1:{port}.*nothing was done"):
        run_dedup(str(tmp_path / "week1"), config, {}, local_factory)
    assert not (tmp_path / "week1" / "stages" / "dedup" / "signatures").exists()
    assert not (tmp_path / "week1" / "deduped").exists()


@contextlib.contextmanager
def _redis(tmp_path: Path, password: str | None = None) -> Iterator[int]:
    """A redis-server of this test on a free loopback port (skips when none is installed)."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server; .ci/run installs it)")
    import redis

    port = _free_port()
    auth = ["--requirepass", password] if password else []
    server = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        + ["--dir", str(tmp_path), *auth],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    client = redis.Redis(port=port, password=password)
    try:
        for _ in range(100):
            try:
                client.ping()
                break
            except redis.exceptions.ConnectionError:
                time.sleep(0.05)  # waiting for the server to listen, not a timing assertion
        yield port
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.fixture
def redis_server(tmp_path: Path, monkeypatch):
    monkeypatch.delenv(REDIS_PASSWORD_ENV, raising=False)  # this server has no password
    with _redis(tmp_path) as port:
        yield port


def test_redis_index_across_runs(tmp_path: Path, redis_server: int) -> None:
    import numpy as np
    import redis
    from datasketch import LeanMinHash, MinHashLSH

    from pipeline.dedup.minhash import MinHasher, shingle_hashes

    first, second = _crawls()
    config = DedupConfig(index={"redis": {"host": "127.0.0.1", "port": redis_server, "basename": "t"}})
    write_curated(tmp_path / "week1", {"web": first})
    write_curated(tmp_path / "week2", {"web": second})
    one = run_dedup(str(tmp_path / "week1"), config, {}, local_factory)
    assert one.index["entries_added"] == 30 and one.index["kind"] == "redis"
    two = run_dedup(str(tmp_path / "week2"), config, {}, local_factory)
    _check_second_run(tmp_path / "week2", "week1")
    assert two.index["entries_before"] == 30 and two.index["entries_added"] == 10
    assert two.index["entries_compared"] == 20  # only what shares a band or the exact hash was fetched
    redo = run_dedup(str(tmp_path / "week1"), config, {}, local_factory, restart=True)
    assert redo.kept == 30 and redo.index["entries_before"] == 40 and redo.index["entries_added"] == 30
    client = redis.Redis(host="127.0.0.1", port=redis_server)
    assert client.hlen("t:meta") == 40 and client.hlen("t:sig") == 40 and client.scard("t:runs") == 2

    # datasketch's own MinHashLSH over the same Redis data finds a run-1 document from its LeanMinHash
    lsh = MinHashLSH(
        num_perm=128,
        params=(32, 4),
        prepickle=False,
        storage_config={"type": "redis", "basename": b"t:lsh", "redis": {"host": "127.0.0.1", "port": redis_server}},
    )
    sig = MinHasher(128, 1).signature(shingle_hashes(first[3][1])[0])
    keys = lsh.query(LeanMinHash(seed=1, hashvalues=sig, scheme="affine32"))
    assert len(keys) == 1 and keys[0].startswith(b"week1_")
    stored = client.hget("t:sig", keys[0])
    assert np.array_equal(np.frombuffer(stored, dtype="<u4"), sig)


# ---------------------------------------------------------------------------------------- Redis authentication
# issue 19 item 7: the password comes from an environment variable, and a Redis off this machine needs one


def test_redis_password_comes_from_the_environment_and_a_remote_host_needs_one(monkeypatch) -> None:
    from pydantic import ValidationError

    monkeypatch.delenv(REDIS_PASSWORD_ENV, raising=False)
    assert RedisConfig().password_env == "TOKENMILL_REDIS_PASSWORD"
    for host in ("localhost", "127.0.0.1", "127.0.0.2", "::1"):
        assert RedisConfig(host=host).password() is None  # loopback: no password is allowed
    for host in ("10.0.0.5", "redis.internal", "0.0.0.0"):
        with pytest.raises(ValidationError, match=f"host {host} is not a loopback address.*{REDIS_PASSWORD_ENV}"):
            RedisConfig(host=host)
    with pytest.raises(ValidationError, match="not a loopback"):
        DedupConfig(index={"redis": {"host": "10.0.0.5"}})
    monkeypatch.setenv(REDIS_PASSWORD_ENV, "s3cret")
    assert RedisConfig(host="10.0.0.5").password() == "s3cret"
    monkeypatch.setenv("TEAM_REDIS_PW", "other")
    assert RedisConfig(host="10.0.0.5", password_env="TEAM_REDIS_PW").password() == "other"
    assert "s3cret" not in RedisConfig(host="10.0.0.5").model_dump_json()  # never in a dumped config


def test_dedup_cli_refuses_a_remote_redis_without_a_password(tmp_path: Path, monkeypatch) -> None:
    from typer.testing import CliRunner

    from flows.cli import app

    monkeypatch.delenv(REDIS_PASSWORD_ENV, raising=False)
    first, _ = _crawls()
    write_curated(tmp_path / "week1", {"web": first})
    args = ["dedup", "--input", str(tmp_path / "week1"), "--output", str(tmp_path / "out"), "--redis", "10.0.0.5:6379"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and "not a loopback address" in result.output and REDIS_PASSWORD_ENV in result.output
    assert "Traceback" not in result.output and not (tmp_path / "out").exists()


def test_redis_index_authenticates_with_the_password_from_the_environment(tmp_path: Path, monkeypatch) -> None:
    first, _ = _crawls()
    write_curated(tmp_path / "week1", {"web": first})
    monkeypatch.delenv(REDIS_PASSWORD_ENV, raising=False)
    with _redis(tmp_path, password="round-trip-pw") as port:
        config = DedupConfig(index={"redis": {"host": "127.0.0.1", "port": port, "basename": "auth"}})
        with pytest.raises(
            DedupIndexError, match=f"Redis at 127.0.0.1:{port}.*refused no password.*{REDIS_PASSWORD_ENV}"
        ):
            run_dedup(str(tmp_path / "week1"), config, {}, local_factory)  # no password: refused
        monkeypatch.setenv(REDIS_PASSWORD_ENV, "round-trip-pw")
        result = run_dedup(str(tmp_path / "week1"), config, {}, local_factory)
        assert result.index["kind"] == "redis" and result.index["entries_added"] == 30
