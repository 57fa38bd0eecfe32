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

from dataclasses import dataclass
from pathlib import Path


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

    def final_documents(self, source: str) -> Path:
        """Where a source's kept documents are after the last text stage that ran."""
        deduped = self.deduped(source)
        return deduped if deduped.is_dir() else self.curated(source)
