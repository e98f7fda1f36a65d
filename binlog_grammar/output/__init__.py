"""What the reading commands print: the event text and JSON lines of `dump` (dump.py, text.py),
the labelled hex view (hexdump.py), replayable and undo SQL (sql.py), and `stats` (stats.py)."""
