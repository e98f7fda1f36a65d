"""`binlog-grammar repair`: put a row-based replica that stopped on a row conflict back on its feet
without skipping anything.

A replica stops with error 1032 (an UPDATE or DELETE row it cannot find) or 1062 (an INSERT, or an
UPDATE's new row, that collides with a row it has) when its data drifted from the primary's. The
repair reads the failing transaction from the replica's relay log (or from the primary over the
replication protocol), computes, for the whole transaction at once, the rows the replica lacks
(the primary's before-images) and the replica rows that stand in the way (conflicts on the primary
key or a unique key), and changes exactly those, with sql_log_bin=0, so that replication then
applies the transaction itself with its own GTID and positions.

The modules, in the order the command uses them:

- `status`: the replica's status (SHOW SLAVE/REPLICA STATUS, MariaDB and MySQL column names,
  multi-source connections), the error it stopped on, and whether the repair may act on it.
- `tables`: what the repair knows of a table (columns, keys, engine, triggers, from the replica's
  information_schema) and how a column value is written and compared in SQL.
- `locate`: the failing transaction, found by event headers in the relay logs or fetched from the
  primary, with its row changes decoded.
- `plan`: the repair, computed by a trial run of the transaction on the replica inside a
  transaction that is always rolled back.
- `apply`: the undo file, the repair in one transaction, the SQL thread restarted, the next stop
  repaired again (bounded), until the replica has caught up.
- `runner`: one run of the command, from the status to the report.

The command line (its options; building them reads no generated module) is
binlog_grammar.cli.repair.
"""
