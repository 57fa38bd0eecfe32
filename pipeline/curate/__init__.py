"""Step 2: the per-source text stages, one module each (its config model and its datatrove step).

In pipeline order, after the reader:

1. ``extract``: HTTP-200 HTML -> main-content text (resiliparse, or trafilatura);
2. ``language``: fastText language identification, one length-weighted vote per document;
3. ``quality``: Gopher quality and repetition, C4 and FineWeb heuristic rules in one pass;
4. ``classify``: fastText classifiers (annotate | threshold | top_percent | pareto | route; ``pipeline.classify``);
5. ``toxicity``: drop abusive documents (whole document and share of toxic paragraphs; alt-profanity-check
   or a fastText model);
6. ``decontaminate``: drop (or cut) documents that share a 13-word passage with an evaluation set;
7. ``pii``: redact secrets, e-mails, IBANs, cards, SSNs, IP addresses, phones (engine: ``pipeline.redact``).

``build`` turns a recipe's stages into one datatrove pipeline per source and runs it (``curate_source``);
``routing`` is the writer that moves documents a classifier routed to another source.
"""
