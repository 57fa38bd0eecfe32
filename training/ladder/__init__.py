"""A scaling ladder on the team's own shards: small Llama-style models, WSD trunks with cool-down branches,
held-out loss per (N, D) → ``runs.csv`` → the fit (``training/scaling.py``) → report and the plan it implies.

One idea per module, in the order a ladder runs (OLMo-core's ``model_ladder/`` is the model):

* ``config``: the flags and ``configs/ladder/*.yaml`` into ``LadderConfig`` (``training/ladder_config.py``, outside
  the package so that the CLI builds its flags from it without loading the trainer);
* ``sizes``: a rung from its width (Llama block, parameter counts, DeepSeek's lr and batch, branch points);
* ``plan``: the whole ladder before it trains, its cost (``--dry-run``) and the folder's layout;
* ``run``: trunks and branches, resumable, with progress and the whole ladder's ETA;
* ``report``: the fit, its frontier and the plan it implies;
* ``check``: the law refitted without the largest rung, predicting it.

Method and how to read the results: docs/scaling.md.
"""

from training.ladder.config import (
    CPU_TOKENS_PER_PARAM,
    CPU_WIDTHS,
    GPU_TOKENS_PER_PARAM,
    GPU_WIDTHS,
    LadderConfig,
    LadderError,
    load_ladder_config,
    parse_list,
    read_ladder_file,
)
from training.ladder.plan import (
    CSV_COLUMNS,
    MAX_EPOCHS,
    RESULT,
    RUNS_CSV,
    BranchResult,
    LadderPlan,
    branch_dir,
    cost_table,
    ladder_cost,
    plan_ladder,
    prepare_output,
    read_result,
    trunk_dir,
    write_runs_csv,
)
from training.ladder.report import REPORT_JSON, REPORT_MD, _frontier, finish_ladder, render_report
from training.ladder.run import BranchTrainer, run_ladder, train_branch, train_trunk
from training.ladder.sizes import (
    COOLDOWN,
    Branch,
    Rung,
    deepseek_batch_tokens,
    deepseek_lr,
    ladder_shape,
    make_rung,
    rung_shape,
)

__all__ = [
    "COOLDOWN",
    "CPU_TOKENS_PER_PARAM",
    "CPU_WIDTHS",
    "CSV_COLUMNS",
    "GPU_TOKENS_PER_PARAM",
    "GPU_WIDTHS",
    "MAX_EPOCHS",
    "REPORT_JSON",
    "REPORT_MD",
    "RESULT",
    "RUNS_CSV",
    "Branch",
    "BranchResult",
    "BranchTrainer",
    "LadderConfig",
    "LadderError",
    "LadderPlan",
    "Rung",
    "_frontier",
    "branch_dir",
    "cost_table",
    "deepseek_batch_tokens",
    "deepseek_lr",
    "finish_ladder",
    "ladder_cost",
    "ladder_shape",
    "load_ladder_config",
    "make_rung",
    "parse_list",
    "plan_ladder",
    "prepare_output",
    "read_ladder_file",
    "read_result",
    "render_report",
    "rung_shape",
    "run_ladder",
    "train_branch",
    "train_trunk",
    "trunk_dir",
    "write_runs_csv",
]
