#!/usr/bin/env bash
# The README's main job on the embedded default: install, regenerate the parsers from specs/,
# then parse, rebuild and checksum-verify every bundled sample binlog.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q --disable-pip-version-check -e .
python3 -m binlog_grammar generate
python3 -m binlog_grammar verify samples/mariadb-*
