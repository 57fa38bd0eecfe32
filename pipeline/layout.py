"""The run directory: every stage reads and writes here, so a rerun finds what is already done.

```
runs/<name>/
  config.yaml                      resolved recipe + hash
  stages/<stage>/<source>/logs/    datatrove logs, completions (resume = rerun), stats
  curated/<source>/                kept after read → extract → language → quality → pii
  deduped/<source>/                kept after dedup (when the recipe dedups)
  dropped/<source>/<stage>/        one JSON row per dropped document
  shards/                          token shards + manifest.json
  report.md, report.json, plots/
```
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

#: The first line of every ``config.yaml`` a run writes: what marks a folder as a tokenmill run directory.
RUN_HEADER = "# resolved by tokenmill"

#: The top-level entries a run (curation, dedup, tokenize, plan, train) writes; ``--overwrite`` removes these
#: and nothing else, so files a user keeps beside them survive.
RUN_ENTRIES = (
    "config.yaml",
    "stages",
    "curated",
    "deduped",
    "dropped",
    "shards",
    "plots",
    "train",
    "report.md",
    "report.json",
    "plan.md",
    "plan.json",
)


class RunDirError(ValueError):
    """A run directory cannot be used as asked (e.g. ``--overwrite`` on a folder tokenmill did not create)."""


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
        """True when the folder holds a run: its ``config.yaml`` was written by tokenmill."""
        try:
            with open(self.config, encoding="utf-8") as handle:
                return handle.readline().startswith(RUN_HEADER)
        except (OSError, UnicodeDecodeError):
            return False

    def check_clearable(self) -> None:
        """Raise ``RunDirError`` unless ``clear`` may run here: a missing or empty folder, or a run directory."""
        if not self.root.exists():
            return
        if not self.root.is_dir():
            raise RunDirError(f"--output {self.root} is a file, not a directory")
        if not self.is_run() and any(self.root.iterdir()):
            raise RunDirError(
                f"refusing to overwrite {self.root}: it is not a tokenmill run directory (no config.yaml written "
                "by tokenmill) and it is not empty; choose a new or empty --output"
            )

    def clear(self) -> None:
        """Remove what earlier runs wrote here (``RUN_ENTRIES``), and nothing else.

        A folder that exists, is not empty and is not a run directory is refused: ``--overwrite`` must
        never delete a user's files because they were given as ``--output`` by mistake.
        """
        if not self.root.exists():
            return
        self.check_clearable()
        for name in RUN_ENTRIES:
            path = self.root / name
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif path.exists() or path.is_symlink():
                path.unlink()

    def final_documents(self, source: str) -> Path:
        """Where a source's kept documents are after the last text stage that ran."""
        deduped = self.deduped(source)
        return deduped if deduped.is_dir() else self.curated(source)
