"""Test support shared by the test suite and the maintainer tools.

- `binlog_grammar.testing.schema`: Hypothesis strategies for MariaDB table layouts (every column
  type family the server has, in random order, with or without a primary key), workloads
  (multi-row INSERT, UPDATE, DELETE with values at each type's edges and random values) and
  server settings (binlog_row_image, binlog_row_metadata, log_bin_compress). A drawn example is a
  `Case`: settings, a CREATE TABLE and its statements, printable and pasteable into a test.
- `binlog_grammar.testing.differential`: runs Cases on one throwaway MariaDB server
  (binlog_grammar.testing.mariadb) and checks what the project decodes from the binlog it writes against
  the server's own SELECT, `mariadb-binlog -vv`, and a replay of the `sql` output.

Importing these modules needs `hypothesis` (the `test` extra).
"""
