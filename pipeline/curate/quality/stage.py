"""The quality stage: Gopher quality → Gopher repetition → C4 → FineWeb, the first failing rule drops the document."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from datatrove.data import Document

from pipeline.base import AccountedStep, Drop
from pipeline.curate.config import QualityConfig
from pipeline.curate.quality.c4 import C4Rules
from pipeline.curate.quality.document import Failure, Text
from pipeline.curate.quality.fineweb import FineWebRules
from pipeline.curate.quality.gopher_quality import gopher_quality
from pipeline.curate.quality.gopher_repetition import gopher_repetition


@dataclass
class Verdict:
    """What the stage decided about one text."""

    failure: Failure | None
    text: str
    metrics: dict[str, Any]
    #: rules skipped because they cannot judge the document's language (``SKIP_*`` names of the rule families)
    skipped: list[str]


Rule = tuple[Callable[[Text, Any, dict[str, Any]], Failure | None], Any]


def _build_rules(cfg: QualityConfig) -> list[Rule]:
    """The rule families of ``cfg`` in the stage's order, each with its settings."""
    compat = cfg.compat == "datatrove"
    rules: list[Rule] = []
    if cfg.gopher_quality is not None:
        rules.append((gopher_quality, cfg.gopher_quality))
    if cfg.gopher_repetition is not None:
        rules.append((gopher_repetition, cfg.gopher_repetition))
    if cfg.c4 is not None:
        rules.append((C4Rules(cfg.c4), cfg.c4))
    if cfg.fineweb is not None:
        rules.append((FineWebRules(cfg.fineweb, compat), cfg.fineweb))
    return rules


class QualityStage(AccountedStep):
    """Gopher quality → Gopher repetition → C4 → FineWeb; the first failing rule drops the document."""

    stage = "quality"
    name = "🥇 Quality (Gopher, C4, FineWeb)"

    def __init__(self, config: QualityConfig | None = None, drops_dir: str | None = None):
        super().__init__(drops_dir)
        self.config = config or QualityConfig()
        self._rules: list[Rule] | None = None
        self._language_rules: dict[str, list[Rule]] = {}

    def setup(self) -> None:
        if self._rules is None:
            self._rules = _build_rules(self.config)

    def rules_for(self, language: str | None) -> list[Rule]:
        """The rules a language is judged with (its ``languages:`` overrides built once, on first use)."""
        self.setup()
        assert self._rules is not None
        if not language or language not in self.config.languages:
            return self._rules
        if language not in self._language_rules:
            self._language_rules[language] = _build_rules(self.config.for_language(language))
        return self._language_rules[language]

    def assess(self, text: str, language: str | None) -> Verdict:
        """The stage's whole decision on one text, with the rules its language made it skip."""
        rules = self.rules_for(language)
        metrics: dict[str, Any] = {}
        if not text or not text.strip():
            return Verdict(("no_text", None), text, metrics, [])
        doc = Text(text, language, compat=self.config.compat == "datatrove")
        for rule, cfg in rules:
            failure = rule(doc, cfg, metrics)
            if failure is not None:
                return Verdict(failure, doc.text, metrics, doc.skipped)
        return Verdict(None, doc.text, metrics, doc.skipped)

    def judge(self, text: str, language: str | None) -> tuple[Failure | None, str, dict[str, Any]]:
        """(failure or None, possibly rewritten text, metrics) for one text."""
        verdict = self.assess(text, language)
        return verdict.failure, verdict.text, verdict.metrics

    def process(self, doc: Document) -> Drop | None:
        language = doc.metadata.get("language") or self.config.default_language
        try:
            verdict = self.assess(doc.text, language)
        except Exception as error:  # noqa: BLE001 - a document that breaks a rule is a counted drop, not a crash
            return Drop(rule="quality_error", extra={"error": f"{type(error).__name__}: {error}"[:200]})
        doc.metadata["quality"] = verdict.metrics
        if verdict.skipped:
            # a rule that could not judge this language is counted, per rule and language, never silent
            doc.metadata["quality_skipped"] = verdict.skipped
            for rule in verdict.skipped:
                self.stat_update(f"quality_skipped_{rule}_{language or 'unknown'}")
        if verdict.failure is not None:
            rule, score = verdict.failure
            return Drop(rule=rule, score=score)
        doc.text = verdict.text
        return None
