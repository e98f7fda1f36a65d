"""What several test files share, imported as `helpers.<module>` (pytest puts tests/ on sys.path
when it loads tests/conftest.py): no test file imports another test file.

- paths: the repository root, the shared corpus and its files, the `corpus` marker.
- services: the markers `server` and `spark` and the checks that a test needing MariaDB or Spark
  has them (skip when missing, fail under BINLOG_GRAMMAR_REQUIRE_SERVICES=1).
- compare: `exact`, a parsed value with every type and name, for == between readers.
- vectors: packers and one-event parsing for the hand-written byte vectors of tests/specs/.
- oracle: `mariadb-binlog -vv` as an independent decoder of row values, and the workload of every
  column type it is compared on.
- rows: random tables and row images drawn from the specs (Hypothesis).
- certs: a test CA and server certificate for TLS.
- spark: the plain reader and a DataFrame in one comparable form, and a seeded random workload.
"""
