#!/usr/bin/env bash
# A two-node Ray cluster on this one host, for the engine tests (tests/e2e/test_ray.py) and for trying the
# README's "Scaling out" recipe without a cluster:
#
#   .ci/ray_cluster.sh start DIR    # head (1 CPU) + one worker node (1 CPU); writes DIR/env
#   . DIR/env                       # RAY_ADDRESS, RAY_AUTH_MODE=token, RAY_AUTH_TOKEN_PATH for the driver
#   .ci/ray_cluster.sh stop DIR     # `ray stop` for the nodes started with this DIR's token
#
# Token authentication on (Ray >= 2.5x turns it on by default for clusters started with a token): the token is
# generated into DIR/auth_token and every process that talks to the cluster — both `ray start`s, the driver
# (`tokenmill ...`) — gets the same RAY_AUTH_MODE/RAY_AUTH_TOKEN_PATH. The ray CLI is the one of the Python that
# runs this script's RAY (default: the `ray` on PATH); workers import tokenmill from that Python's environment.
set -euo pipefail

cmd=${1:?usage: ray_cluster.sh start|stop DIR}
dir=${2:?usage: ray_cluster.sh start|stop DIR}
ray=${RAY:-ray}

if [ "$cmd" = stop ]; then
  [ -f "$dir/env" ] || exit 0
  # shellcheck disable=SC1091
  . "$dir/env"
  "$ray" stop --force >/dev/null 2>&1 || true
  rm -f "$dir/env"
  exit 0
fi
[ "$cmd" = start ] || { echo "usage: ray_cluster.sh start|stop DIR" >&2; exit 2; }
command -v "$ray" >/dev/null 2>&1 || { echo "ray_cluster: $ray not found (pip install -e '.[dev]')" >&2; exit 3; }

dir=$(mkdir -p "$dir" && cd "$dir" && pwd)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -c 'import secrets; print(secrets.token_hex(32), end="")' >"$dir/auth_token"
chmod 600 "$dir/auth_token"
export RAY_AUTH_MODE=token RAY_AUTH_TOKEN_PATH="$dir/auth_token" RAY_USAGE_STATS_ENABLED=0

"$ray" start --head --node-ip-address=127.0.0.1 --port="$port" --num-cpus=1 --include-dashboard=false \
  --disable-usage-stats >"$dir/head.log" 2>&1 || { cat "$dir/head.log" >&2; exit 4; }
"$ray" start --address="127.0.0.1:$port" --node-ip-address=127.0.0.1 --num-cpus=1 \
  >"$dir/worker.log" 2>&1 || { cat "$dir/worker.log" >&2; "$ray" stop --force >/dev/null 2>&1; exit 4; }

cat >"$dir/env" <<EOF
export RAY_ADDRESS=127.0.0.1:$port
export RAY_AUTH_MODE=token
export RAY_AUTH_TOKEN_PATH=$dir/auth_token
export RAY_USAGE_STATS_ENABLED=0
EOF
echo "ray_cluster: up (RAY_ADDRESS=127.0.0.1:$port; . $dir/env)"
