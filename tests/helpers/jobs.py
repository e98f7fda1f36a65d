"""What the `--jobs N` tests share (tests/cli/test_jobs.py, test_jobs_replay.py; their fixtures
`pool` and `cut` are tests/cli/conftest.py's): a command run in this process with its output as
bytes, and the -l folder that LOAD DATA's files of dump's replay script go to."""
import contextlib
import io
import os
import tempfile

from binlog_grammar.cli import main

SPLIT = "300"  # bytes (BINLOG_GRAMMAR_SPLIT_BYTES): every file of more than a few transactions is cut
_loads = []  # the -l folder, made on first use in the suite's temporary folder (tests/conftest.py)


def run(argv):
    """(exit status, stdout bytes, stderr text) of one run of the command in this process."""
    raw, err = io.BytesIO(), io.StringIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", errors="surrogateescape", write_through=True)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as e:
            code = e.code
        out.flush()
    return code, raw.getvalue(), err.getvalue()


def loads_folder() -> str:
    """An emptied folder for `dump -l`: LOAD DATA's files are named by the first free name in it
    (SQL_LOAD_MB-<id>-<n>, as mariadb-binlog names them), so two runs into it name the same
    files in their scripts."""
    if not _loads or not os.path.isdir(_loads[0]):
        _loads[:] = [tempfile.mkdtemp(prefix="binlog-grammar-test-jobs-")]
    for name in os.listdir(_loads[0]):
        os.remove(os.path.join(_loads[0], name))
    return _loads[0]
