#!/usr/bin/env bash
# Installs every Debian package Oxbow needs to build and test. Idempotent: does nothing when all are present.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config clang
  libboost-dev libboost-system-dev
  librdkafka-dev kcat
  libspdlog-dev libfmt-dev libcli11-dev nlohmann-json3-dev libsimdjson-dev
  libzstd-dev liblz4-dev libsnappy-dev zlib1g-dev libssl-dev libmimalloc-dev libisal-dev libre2-dev
  librocksdb-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-confluent-kafka python3-kafka python3-pytest python3-pytest-xdist
  python3-snappy python3-lz4 python3-zstandard python3-prometheus-client
  python3-requests python3-avro python3-protobuf python3-jsonschema
  libprotobuf-dev libprotoc-dev
  libnghttp2-dev libedit-dev

)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "install-deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# kafkajs for the integration tests (npm registry).
here="$(cd "$(dirname "$0")/.." && pwd)"
integration="$here/tests/integration"
if [ -f "$integration/package.json" ] && ! (cd "$integration" && node -e '
    const deps = Object.keys(require("./package.json").dependencies || {});
    for (const d of deps) require("fs").accessSync("node_modules/" + d + "/package.json");' 2>/dev/null); then
  (cd "$integration" && npm ci --no-audit --no-fund --silent)
fi
