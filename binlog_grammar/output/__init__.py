"""What the reading commands print, from the events and row changes binlog_grammar.binlog gives:

    quoting.py       the one way binlog text enters anything that may be executed (scripts,
                     their comments, the report page): identifiers, literals, comments, prepared statements, the
                     header that fixes the client's character set
    replay_charsets.py  when a string value may be written as UTF-8 text into a script and when
                     only its bytes store what was logged
    formats.py       the registry of output formats (text, JSON lines in each envelope, sql,
                     flashback) that dump, stream and the Spark source look up by name
    dump.py          `dump --format jsonl`: the JSON lines of the native envelope (every event,
                     the documented JSON form of each value)
    debezium.py      `--envelope debezium`: each row change as the Debezium connector's event
                     (debezium_values.py its values, debezium_schema.py its Kafka Connect schemas,
                     debezium_ddl.py what the binlog's DDL declared: JSON columns, DEFAULTs)
    dump_text.py     `dump -vv --base64-output=decode-rows`'s ### text, safe to pipe into a client
    table_metadata.py  `dump --print-table-metadata`: a TABLE_MAP's `# Columns` and `# Primary Key`
                     lines as mariadb-binlog prints them
    text.py          column values and types as mariadb-binlog -vv prints them; the partial JSON
                     update as the JSON_REPLACE / JSON_INSERT / JSON_REMOVE calls that apply it
                     (json_diff_calls, which sql_literals.py writes with too)
    hexdump.py       `dump --format hexdump`: one event's bytes dumped, the sections after it
                     (decompressed rows, the events of a payload), the lines
    hexlabels.py     the labels of the hex view: values as short text, spans as labelled runs,
                     the runs of row images
    sql_literals.py  column values as SQL literals and WHERE terms (also the repair's statements)
    sql.py           `sql` and `flashback`: transactions as replayable or undoing SQL scripts
    flashback_binlog.py  `dump --flashback`: the inverted rows events as BINLOG statements,
                     transactions last first, as mariadb-binlog --flashback writes them
    savepoints.py    SAVEPOINT / ROLLBACK TO inside a transaction, applied as the server did
    stats.py         `stats`: counts and bytes by event type, table and transaction size
    stats_span.py    `stats`' time span and the time and tables of each listed transaction
    report_figures.py  `stats --figures`: writes per interval by table, sizes and durations,
                     image kinds, metadata levels, server ids, GTID domains, gaps, hot rows
    report_html.py   `stats --html`: those figures as one offline page (plotly.js inlined), its
                     text through quoting.py's html/script_json/shell

Each module is one way of printing; none reads bytes itself, and every script and comment takes
binlog text through quoting.py: layouts are the specs', reached
through the generated structs and binlog_grammar.binlog.
"""
