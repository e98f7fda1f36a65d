#!/usr/bin/env bash
# The README's test command: install what is missing, check generated/ against the specs, run
# the whole suite. Safe to run again; it only installs what is not there.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  need=()
  command -v mariadbd >/dev/null || need+=(mariadb-server)
  command -v mariadb-binlog >/dev/null || need+=(mariadb-client)
  command -v chromium >/dev/null || need+=(chromium)  # the docs' headless browser test
  command -v java >/dev/null || need+=(openjdk-17-jre-headless)  # local Spark for the pipeline tests
  command -v javac >/dev/null || need+=(openjdk-17-jdk-headless)  # the Debezium judge's driver (tests/debezium)
  # clang's libFuzzer and sanitizer runtimes: the row images' campaign (tests/native/test_fuzz_native.py)
  [ -e "$(clang -print-file-name="libclang_rt.fuzzer-$(uname -m).a" 2>/dev/null)" ] || need+=(clang libclang-rt-dev)
  # zlib's header and library: the compiled loops check CRC32s with zlib's crc32 (setup.py)
  [ -e /usr/include/zlib.h ] || need+=(zlib1g-dev)
  # libzstd's header: the compiled loops inflate MySQL's compressed transactions (setup.py)
  [ -e /usr/include/zstd.h ] || need+=(libzstd-dev)
  if [ ${#need[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
    # the package starts a system server we do not use; tests start their own
    (systemctl stop mariadb 2>/dev/null || service mariadb stop 2>/dev/null || true) >/dev/null
  fi
fi
python3 -m pip install -q --disable-pip-version-check -e '.[test,spark]'
python3 -m binlog_grammar generate --check
python3 -m binlog_grammar docs --check
# two test processes (pytest-xdist), a test file's tests in one of them (their module fixtures,
# a server or a cluster, started once); BINLOG_GRAMMAR_TEST_WORKERS=0 runs them in this process
python3 -m pytest -q -p no:cacheprovider --durations=30 \
  -n "${BINLOG_GRAMMAR_TEST_WORKERS:-2}" --dist loadfile "$@"
