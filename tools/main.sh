#!/usr/bin/env bash
# The README's main job on the embedded default: install, regenerate the parsers from specs/,
# parse, rebuild and checksum-verify every bundled sample binlog, then run the Spark pipeline on
# them (embedded local Spark) and print where its output is and a summary.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  need=()
  command -v java >/dev/null || need+=(openjdk-17-jre-headless)  # the local Spark pipeline
  [ -e /usr/include/zlib.h ] || need+=(zlib1g-dev)  # the compiled loops' CRC32 (setup.py)
  if [ ${#need[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  fi
fi
python3 -m pip install -q --disable-pip-version-check -e '.[spark]'
python3 -m binlog_grammar generate
python3 -m binlog_grammar verify samples/mariadb-*
# the output inside this clone (build/ is not tracked): the pipeline's state knows its inputs by
# their paths, so another clone's samples in a shared folder would be read as new files
out="${BINLOG_GRAMMAR_OUTPUT:-$PWD/build/pipeline}"
python3 -m binlog_grammar pipeline --input samples/mariadb-* --output "$out"
