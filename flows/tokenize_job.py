"""One tokenize as every entry point asks for it: ``tokenmill tokenize`` and the ``tokenize`` flow resolve their
arguments here (``tokenize_job``: the recipe's ``stages.tokenize``, source mix and executor under the caller's
settings) and write the shards with ``tokenize_shards``, which the flow runs as its task. Imports no Prefect.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pipeline.config loads every stage's config (datatrove too): not for `tokenmill --help`
    from pipeline.config import ExecutorConfig
    from pipeline.shards.format import ShardManifest


@dataclasses.dataclass
class TokenizeJob:
    """One tokenize, resolved. ``config``: the ``stages.tokenize`` settings, validated as a ``TokenizeConfig``
    when the job runs (after its output folder is checked); ``executor``: a recipe's Slurm or Ray executor for the
    encode ranks (``None``: tokenize's own local one)."""

    input: Path
    output: Path
    config: dict[str, Any]
    sources: dict[str, dict[str, float | None]]
    recipe_hash: str | None = None
    executor: ExecutorConfig | None = None


def tokenize_job(
    input: str | Path,  # noqa: A002 - the flow's parameter name
    output: str | Path | None = None,
    recipe: str | Path | None = None,
    config: dict[str, Any] | None = None,
    sources: dict[str, dict[str, float | None]] | None = None,
) -> TokenizeJob:
    """The ``tokenize`` flow's parameters as a ``TokenizeJob``: ``config`` over the recipe's ``stages.tokenize``,
    ``sources`` over its sources' weights/epochs; ``output`` defaults to ``<input>/shards``."""
    settings, mix, recipe_hash, executor = dict(config or {}), dict(sources or {}), None, None
    if recipe:
        from training.recipe import load_recipe

        loaded = load_recipe(recipe)  # a RecipeError: flows.cli's one handler (exit 2) or the flow's failure
        recipe_hash = loaded.config_hash()
        if loaded.stages.tokenize is not None:
            settings = {**loaded.stages.tokenize.model_dump(), **settings}
        mix = {**{s.name: {"weight": s.weight, "epochs": s.epochs} for s in loaded.sources}, **mix}
        executor = loaded.executor if loaded.executor.kind != "local" else None
    input_path = Path(input)
    output_path = Path(output) if output is not None else input_path / "shards"
    if executor is not None:  # Slurm/Ray workers run in other folders: they get absolute paths
        input_path, output_path = input_path.absolute(), output_path.absolute()
    return TokenizeJob(input_path, output_path, settings, mix, recipe_hash, executor)


def tokenize_shards(job: TokenizeJob) -> ShardManifest:
    """Write ``job``'s shards; the manifest. An output another command writes, or that tokenmill did not create,
    is refused first (``RunDirError``/``OwnershipError``, nothing touched); a run's own shards add their encode
    ranks to the run's report.json ``workers`` (``pipeline.usage``)."""
    from pipeline.executor import executor_factory
    from pipeline.lock import check_free
    from pipeline.ownership import check_claim
    from pipeline.tokenize.config import TokenizeConfig
    from pipeline.tokenize.run import run_tokenize

    check_free(job.output)
    check_claim(job.output, "tokenize")
    config = TokenizeConfig.model_validate(job.config)
    factory = executor_factory(job.executor, "tokenize") if job.executor is not None else None
    manifest = run_tokenize(
        job.input, job.output, config, job.sources, executor_factory=factory, recipe_hash=job.recipe_hash
    )
    _count_workers(job.input, job.output)
    return manifest


def _count_workers(input_path: Path, output: Path) -> None:
    """A run's own shards: the run's report.json ``workers`` adds the encode ranks (pipeline.usage)."""
    if (input_path / "report.json").is_file() and output.resolve().is_relative_to(input_path.resolve()):
        from pipeline.layout import RunLayout
        from pipeline.run import add_workers_section

        add_workers_section(RunLayout.at(input_path))
