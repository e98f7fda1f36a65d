"""Binlog files: framing events (framing.py, reader.py), event types and decompression
(events.py), row images and table schemas (rows.py), the reading API with filters and
transactions (stream.py), positions (positions.py) and `verify` (verify.py)."""
