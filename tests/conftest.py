"""Shared fixtures. Telemetry and hub access are off for every test."""

import importlib
import inspect
from pathlib import Path

import pytest

from pipeline.env import offline

offline()


@pytest.fixture(scope="session")
def prefect_harness():
    """One temporary Prefect backend (SQLite in a temp dir) shared by every flow test in the session."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> tuple[Path, list[str], list[str]]:
    """A fastText classifier trained on reference prose vs stdlib source: (path, held-out prose, held-out code)."""
    from pydoc_data.topics import topics

    from pipeline.classifier.train import Hyperparameters, train_classifier
    from pipeline.classify.scoring import flatten
    from tests.helpers.text import chunks

    names = sorted(topics)
    prose = [p for n in names for p in chunks(topics[n])]
    code = [
        p
        for m in ("argparse", "calendar", "csv", "difflib", "enum", "gettext", "shlex", "pathlib", "zipfile")
        for p in chunks(inspect.getsource(importlib.import_module(m)))
    ]
    train_pos, test_pos = prose[::2], prose[1::2]
    train_neg, test_neg = code[::2], code[1::2]
    path = tmp_path_factory.mktemp("model") / "reference.bin"
    train_classifier(
        [flatten(t) for t in train_pos],
        [flatten(t) for t in train_neg],
        path,
        label="reference",
        params=Hyperparameters(epoch=25, lr=0.1, word_ngrams=2, bucket=100_000, calibration="none"),
    )
    return path, test_pos, test_neg


@pytest.fixture(autouse=True)
def _console_contract_env(monkeypatch: pytest.MonkeyPatch):
    """``tokenmill``'s root callback sets the console contract's variables (``flows.cli.quiet_console``) in
    os.environ; a CLI test run in-process must not leave them to the tests after it (their subprocesses)."""
    import os

    for name in ("TOKENMILL_PROGRESS", "PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL"):
        if name in os.environ:
            monkeypatch.setenv(name, os.environ[name])
        else:
            monkeypatch.setenv(name, "")
            monkeypatch.delenv(name)
    yield
