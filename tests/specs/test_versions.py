"""A new server version is a YAML change: the guide's example, run for real.

A made-up MySQL 99.0 appends a field to XID_EVENT, adds a QUERY_EVENT status variable and a
TABLE_MAP optional-metadata field. The test writes that overlay into a temporary folder (no Python
file is touched), builds a binlog that uses all three with the overlay's own generated structs, and
reads it back through `binlog-grammar --specs DIR`. The same bytes under the project's specs alone,
or with a server version before 99.0, are rejected: the overlay is what reads them.
"""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from helpers.paths import CORPUS, needs_corpus

OVERLAY = """\
overlay: mysql-99.0.0
doc: A future MySQL - a commit ticket after the XID, a status variable, an optional metadata field.
extend:
  - target: XID_EVENT
    append:
      - {id: commit_ticket, type: u32le, if: remaining >= 4, doc: "Ticket of the commit group."}
  - target: query_status_var
    members:
      200: {id: Q_FUTURE_HINT, doc: "An optimizer hint."}
  - target: query_status_vars
    cases:
      200: {id: future_hint, type: u16le, doc: "The hint number."}
  - target: table_map_opt_meta_type
    members:
      99: {id: FUTURE_FLAGS, doc: "Flags of each column."}
  - target: TABLE_MAP_EVENT.optional_metadata
    cases:
      99: {id: future_flags, type: packed, repeat: eos, doc: "Flags of each column."}
"""

# Runs in a fresh interpreter with the overlay's grammar: patch a real MySQL 8.0.40 binlog so it
# uses the three additions (and says it was written by 99.0.0), then write it out.
BUILD = textwrap.dedent("""
    import sys, zlib
    from binlog_grammar.codegen.grammar import use_specs
    use_specs([sys.argv[1]])
    from binlog_grammar.generated import types as T
    from binlog_grammar.binlog.reader import BinlogFile, MAGIC
    src, dst, version = sys.argv[2], sys.argv[3], sys.argv[4]
    out, pos = [MAGIC], 4
    for ev in BinlogFile(src, share_data=False):  # the data is changed below
        data = ev.data
        if ev.name == "FORMAT_DESCRIPTION_EVENT":
            data.server_version = version
        elif ev.name == "QUERY_EVENT":
            data.status_vars.append({"tag": 200, "id": "future_hint", "value": 7})
        elif ev.name == "TABLE_MAP_EVENT":
            data.optional_metadata.append({"tag": 99, "id": "future_flags", "value": [1, 0, 5]})
        elif ev.name == "XID_EVENT":
            data.commit_ticket = 4242
        body = ev.type.build(data, ev.context)
        fde = ev.name == "FORMAT_DESCRIPTION_EVENT"  # its data ends with its own checksum field
        n = ev.context["header_len"] + len(body) + (0 if fde else 4)
        head = dict(ev.header, event_length=n, log_pos=pos + n)
        raw = T.common_header.build(head, **ev.context) + (body[:-4] if fde else body)
        out.append(raw + zlib.crc32(raw).to_bytes(4, "little"))
        pos += n
    open(dst, "wb").write(b"".join(out))
""")


def _cli(*argv):
    return subprocess.run([sys.executable, "-m", "binlog_grammar", *map(str, argv)],
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, XDG_CACHE_HOME=os.environ.get("XDG_CACHE_HOME", "")
                                   or os.path.join(os.path.expanduser("~"), ".cache")))


@pytest.fixture(scope="module")
def future(tmp_path_factory):
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is absent")
    d = tmp_path_factory.mktemp("future-specs")
    (d / "mysql-99.0.0.yaml").write_text(OVERLAY)
    files = {}
    for version in ("99.0.0-future", "8.0.40"):
        dst = d.parent / f"future-{version}.000001"
        r = subprocess.run([sys.executable, "-c", BUILD, str(d),
                            str(CORPUS / "minimal_row_metadata.000001"), str(dst), version],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        files[version] = dst
    return d, files


@needs_corpus
def test_overlay_reads_the_new_version(future):
    specs, files = future
    r = _cli("--specs", specs, "dump", "--format", "jsonl", files["99.0.0-future"])
    assert r.returncode == 0, r.stderr
    recs = [json.loads(line) for line in r.stdout.splitlines()]
    xid = next(x for x in recs if x.get("event") == "XID_EVENT")
    assert xid["data"]["commit_ticket"] == 4242
    query = next(x for x in recs if x.get("event") == "QUERY_EVENT")
    assert {"tag": "Q_FUTURE_HINT", "id": "future_hint", "value": 7} in query["data"]["status_vars"]
    tm = next(x for x in recs if x.get("event") == "TABLE_MAP_EVENT")
    assert any(e["id"] == "future_flags" and e["value"] == [1, 0, 5]
               for e in tm["data"]["optional_metadata"])
    rows = [x for x in recs if "op" in x]
    assert rows and rows[0]["after"]["@5"] == 3230202323  # the rows still decode as before
    assert _cli("--specs", specs, "verify", files["99.0.0-future"]).returncode == 0


@needs_corpus
def test_without_the_overlay_or_before_its_version_the_bytes_are_not_read(future):
    specs, files = future
    plain = _cli("verify", files["99.0.0-future"])
    assert plain.returncode == 1 and "XID_EVENT" in plain.stdout
    older = _cli("--specs", specs, "verify", files["8.0.40"])  # same additions, 8.0.40 in the FDE
    assert older.returncode == 1 and "XID_EVENT" in older.stdout


@needs_corpus
def test_server_version_overrides_the_files_own(future):
    """The 8.0.40-labelled copy holds the 99.0 additions too: --server-version reads it as 99.0."""
    specs, files = future
    r = _cli("--specs", specs, "dump", "--format", "jsonl", "--server-version", "mysql-99.0.0",
             files["8.0.40"])
    assert r.returncode == 0, r.stderr
    xid = next(json.loads(x) for x in r.stdout.splitlines() if '"XID_EVENT"' in x)
    assert xid["data"]["commit_ticket"] == 4242
    bad = _cli("dump", "--format", "text", "--server-version", "nonsense", files["8.0.40"])
    assert bad.returncode == 2 and "not a server version" in bad.stderr


def test_a_mistake_in_a_user_overlay_names_its_file_and_line(tmp_path):
    (tmp_path / "mysql-99.0.0.yaml").write_text(OVERLAY.replace("type: u32le", "type: u33le"))
    r = _cli("--specs", tmp_path, "dump", tmp_path / "nothing")
    assert r.returncode == 2
    assert "mysql-99.0.0.yaml:6" in r.stderr and "Traceback" not in r.stderr
