#!/usr/bin/env bash
# The README's main job on the embedded default: install, regenerate the parsers from specs/,
# parse, rebuild and checksum-verify every bundled sample binlog, then run the Spark pipeline on
# them (embedded local Spark) and print where its output is and a summary.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && ! command -v java >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless >/dev/null
fi
python3 -m pip install -q --disable-pip-version-check -e '.[spark]'
python3 -m binlog_grammar generate
python3 -m binlog_grammar verify samples/mariadb-*
out="${BINLOG_GRAMMAR_OUTPUT:-${TMPDIR:-/tmp}/binlog-grammar-pipeline}"
python3 -m binlog_grammar pipeline --input samples/mariadb-* --output "$out"
