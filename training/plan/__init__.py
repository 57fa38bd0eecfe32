"""The Chinchilla budget check, in the order a plan is made: ``units`` (counts), ``laws`` (FLOPs and scaling
laws), ``hardware`` (data, GPUs, budget), ``memory`` (the memory model), ``planner`` (``plan()``, its verdicts
and the rule table ``check()`` uses), ``options`` (the ``plan:`` options and YAML), ``gate`` (the one gate
every training launch passes) and ``report`` (markdown, plot).

Import from the modules; this package re-exports nothing, so that ``training.config`` can use ``units``
without importing the planner.
"""
