#!/usr/bin/env bash
# Deployment check against a local Prefect server on 127.0.0.1 (not part of `make test`; ~3 minutes):
# start a server, create the process work pool, `prefect deploy --all`, start a worker, trigger
# curate/one-off on a generated crawl, and compare its kept documents with a CLI run of the same input.
set -euo pipefail
cd "$(dirname "$0")/.."
. .venv/bin/activate
export DO_NOT_TRACK=1 PREFECT_SERVER_ANALYTICS_ENABLED=false TOKENMILL_HOME=$PWD
WORK=$(mktemp -d)
export PREFECT_HOME=$WORK/prefect PORT=${PORT:-4299}
prefect server start --host 127.0.0.1 --port "$PORT" >"$WORK/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER ${WORKER:-} 2>/dev/null || true' EXIT
for _ in $(seq 1 90); do curl -fs "http://127.0.0.1:$PORT/api/health" >/dev/null && break; sleep 1; done
export PREFECT_API_URL=http://127.0.0.1:$PORT/api
prefect work-pool create tokenmill --type process >/dev/null
prefect --no-prompt deploy --all
prefect worker start --pool tokenmill >"$WORK/worker.log" 2>&1 &
WORKER=$!
python -c "from sample import generate_sample; generate_sample('$WORK/sample', seed=7, pages=60, warc_files=2, domain_docs=6)"
prefect deployment run 'curate/one-off' --param input="$WORK/sample/crawl" --param output="$WORK/via-worker" --watch
PREFECT_API_URL= tokenmill curate configs/web.yaml --input "$WORK/sample/crawl" --output "$WORK/via-cli"
python - "$WORK" <<'PY'
import gzip, json, sys
from pathlib import Path
def docs(run):
    return sorted((d["id"], d["text"]) for p in sorted(Path(run).glob("curated/*/*.jsonl.gz")) for d in map(json.loads, gzip.open(p, "rt")))
worker, cli = docs(f"{sys.argv[1]}/via-worker"), docs(f"{sys.argv[1]}/via-cli")
assert worker == cli and worker, "deployment output differs from the CLI run"
print(f"OK: deployment run and CLI run kept the same {len(worker)} documents")
PY
