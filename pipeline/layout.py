"""The run directory: every stage reads and writes here, so a rerun finds what is already done.

```
runs/<name>/
  config.yaml                      resolved recipe + hash
  stages/<stage>/<source>/logs/    datatrove logs, completions (resume = rerun), stats
  curated/<source>/                kept after read → extract → language → quality → pii
  deduped/<source>/                kept after dedup (when the recipe dedups)
  top_percent/<source>/            kept after classify's top_percent pass (pipeline.classify.top_percent)
  dropped/<source>/<stage>/        one JSON row per dropped document
  shards/                          token shards + manifest.json
  report.md, report.json, plots/
```
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pipeline.lock import LOCK_NAME, RunDirError, check_free, hold
from pipeline.ownership import RUN_ENTRIES, RunRecord, check_claim, claim, read_record, remove_owned

#: The first line of every ``config.yaml`` a run writes (a run written before ``pipeline.ownership``'s record is
#: still read as one; it no longer lets anything be written or deleted).
RUN_HEADER = "# resolved by tokenmill"


#: the folder a source's routed documents are written to, inside the target's curated folder
ROUTED_PREFIX = "routed-from-"


@dataclass(frozen=True)
class RunLayout:
    root: Path

    @classmethod
    def at(cls, root: str | Path) -> RunLayout:
        return cls(Path(root).resolve())

    @property
    def config(self) -> Path:
        return self.root / "config.yaml"

    def stage_dir(self, stage: str, source: str | None = None) -> Path:
        base = self.root / "stages" / stage
        return base / source if source else base

    def logs(self, stage: str, source: str | None = None) -> Path:
        return self.stage_dir(stage, source) / "logs"

    def curated(self, source: str | None = None) -> Path:
        return self.root / "curated" / source if source else self.root / "curated"

    def routed_folder(self, target: str, origin: str) -> Path:
        """Where ``origin``'s documents routed into ``target`` are written (classify ``mode: route``)."""
        return self.curated(target) / f"{ROUTED_PREFIX}{origin}"

    def routed_in_folders(self, target: str) -> dict[str, Path]:
        """origin → folder of every ``routed-from-<origin>`` folder under ``target``'s curated folder."""
        folder = self.curated(target)
        if not folder.is_dir():
            return {}
        return {
            p.name.removeprefix(ROUTED_PREFIX): p
            for p in sorted(folder.iterdir())
            if p.is_dir() and p.name.startswith(ROUTED_PREFIX)
        }

    def deduped(self, source: str | None = None) -> Path:
        return self.root / "deduped" / source if source else self.root / "deduped"

    def dropped(self, source: str | None = None) -> Path:
        return self.root / "dropped" / source if source else self.root / "dropped"

    @property
    def shards(self) -> Path:
        return self.root / "shards"

    @property
    def plots(self) -> Path:
        return self.root / "plots"

    @property
    def report_md(self) -> Path:
        return self.root / "report.md"

    @property
    def report_json(self) -> Path:
        return self.root / "report.json"

    def is_run(self) -> bool:
        """True when the folder holds a curation run (its ``.tokenmill-run.json`` says so, or, written before
        that record existed, its ``config.yaml`` was written by tokenmill). For reading only: what a command may
        write or delete is ``pipeline.ownership``'s record alone."""
        record = read_record(self.root)
        if record is not None:
            return record.kind == "run"
        try:
            with open(self.config, encoding="utf-8") as handle:
                return handle.readline().startswith(RUN_HEADER)
        except (OSError, UnicodeDecodeError):
            return False

    def check_clearable(self, command: str = "curate") -> None:
        """Raise ``RunDirError`` unless ``command`` may write (and ``--overwrite`` clear) this folder: a missing
        or empty folder, or one tokenmill's record says a run of this kind wrote (``pipeline.ownership``)."""
        check_claim(self.root, command)

    def claim(self, command: str = "curate") -> RunRecord:
        """Create (or adopt) this run directory for ``command``; refuse a folder tokenmill did not create."""
        return claim(self.root, command)

    def clear(self) -> None:
        """Remove what earlier runs wrote here (``RUN_ENTRIES``), and nothing else.

        A folder that exists, is not empty and has no run record is refused: ``--overwrite`` must never delete
        a user's files because they were given as ``--output`` by mistake.
        """
        if not self.root.exists():
            return
        check_claim(self.root, "curate")
        record = read_record(self.root)
        if record is None:  # missing or empty: nothing to clear
            return
        for name in RUN_ENTRIES:
            remove_owned(self.root / name, record)

    @contextmanager
    def lock(self, command: str = "curate") -> Iterator[None]:
        """Hold this run directory while ``command`` writes it; a second run on it is refused (``pipeline.lock``)."""
        with hold(self.root, command):
            yield

    def check_unlocked(self) -> None:
        """Raise ``RunDirError`` naming the holder if another run holds this folder now; create nothing."""
        check_free(self.root)

    def top_percent(self, source: str | None = None) -> Path:
        return self.root / "top_percent" / source if source else self.root / "top_percent"

    def final_documents(self, source: str) -> Path:
        """Where a source's kept documents are after the last text stage that ran."""
        selected = self.top_percent(source)
        if selected.is_dir():  # the top_percent pass runs after dedup: the last one
            return selected
        deduped = self.deduped(source)
        return deduped if deduped.is_dir() else self.curated(source)


__all__ = ["LOCK_NAME", "RUN_ENTRIES", "RUN_HEADER", "RunDirError", "RunLayout"]
