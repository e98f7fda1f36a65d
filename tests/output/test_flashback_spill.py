"""The inverse scripts in flat memory (issue 26: peak memory under 100 MB at any file size):
`flashback` (with one process and with --jobs, whose parent holds the splits' blocks) and `dump
--flashback` write each transaction's inverse to a nameless temporary file as it is made
(output/spill.py) and read it back last first, instead of holding the input or the script.

1. Memory: the peak anonymous resident size of each command on a binlog of 16 MiB (the
   sample's row transactions repeated) exceeds that on one of 2 MiB by less than a quarter of
   the difference (0 to 2.4 MB seen); held in memory, the transactions (`flashback`: about five
   times the input) or the script's text (`dump --flashback`: about the input, the parent of
   `flashback --jobs 2`: a third of it) outgrow it. About two minutes on a loaded machine.
2. The spill: while the script is written it is open in $TMPDIR (seen in /proc/PID/fd), and
   nothing is left there when the reader closes the pipe (no traceback, exit 0), on SIGINT
   (exit 130) or on damaged input (the error names file, offset and event type; with
   --skip-damaged the rest is inverted).
3. Backwards itself: texts in parts, long texts in blocks of whole characters, lines of any
   length, undecodable bytes kept.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import zlib

import pytest

from binlog_grammar.binlog.framing import scan
from binlog_grammar.output import spill
from helpers.paths import ROOT
from helpers.signals import interruptible

SAMPLE = ROOT / "samples" / "mariadb-10.11-sample.000001"
CRC, LENGTH, LOG_POS = 4, slice(9, 13), slice(13, 17)
ROW_TXS = slice(1178, 4276)  # the sample's three row transactions (GTID .. XID)
COMMANDS = [("flashback", "--jobs", "1"), ("flashback", "--jobs", "2"), ("dump", "--flashback")]


def grown(path, mib):
    """The sample with its row transactions repeated to about `mib` MiB, each event's end_log_pos
    and CRC32 made again."""
    data = SAMPLE.read_bytes()
    events = [bytearray(data[pos:pos + n - CRC]) for pos, _code, n in scan(SAMPLE)]
    starts = [pos for pos, _code, _n in scan(SAMPLE)]
    head = [e for at, e in zip(starts, events) if at < ROW_TXS.start]
    rows = [e for at, e in zip(starts, events) if ROW_TXS.start <= at < ROW_TXS.stop]
    tail = [e for at, e in zip(starts, events) if at >= ROW_TXS.stop]
    copies = (mib << 20) // (ROW_TXS.stop - ROW_TXS.start)
    with open(path, "wb") as fh:
        at = fh.write(data[:4])
        for ev in head + rows * copies + tail:
            ev[LOG_POS] = (at + len(ev) + CRC).to_bytes(4, "little")
            fh.write(ev)
            fh.write(zlib.crc32(bytes(ev)).to_bytes(4, "little"))
            at += len(ev) + CRC
    return path


def command(argv, tmp_path, **kw):
    env = dict(os.environ, TMPDIR=str(tmp_path / "spill"), BINLOG_GRAMMAR_SPLIT_BYTES="1048576")
    os.makedirs(env["TMPDIR"], exist_ok=True)
    return subprocess.Popen([sys.executable, "-m", "binlog_grammar", *argv], env=env, cwd=ROOT,
                            **kw)


def peak_anon_kb(argv, tmp_path) -> int:
    """The highest anonymous resident size of the command seen while it runs (its own: the
    --jobs workers are other processes). Anonymous: the pages of the mapped input, which the
    readers give back in steps (binlog/framing.give_back), are not what this measures."""
    p = command(argv, tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    most = 0
    while p.poll() is None:
        try:
            with open(f"/proc/{p.pid}/status") as fh:
                most = max(most, next(int(ln.split()[1]) for ln in fh
                                      if ln.startswith("RssAnon:")))
        except (OSError, StopIteration):
            pass
        time.sleep(0.02)
    assert p.returncode == 0, p.stderr.read()
    return most


@pytest.fixture(scope="module")
def binlogs(tmp_path_factory):
    where = tmp_path_factory.mktemp("grown")
    return grown(where / "small.000001", 2), grown(where / "big.000001", 16)


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_memory_stays_flat(binlogs, tmp_path, argv):
    small, big = binlogs
    more = (big.stat().st_size - small.stat().st_size) // 1024
    grew = peak_anon_kb([*argv, str(big)], tmp_path) - peak_anon_kb([*argv, str(small)], tmp_path)
    assert grew < more // 4, (grew, more)


def spill_fds(pid, where) -> list:
    fds = f"/proc/{pid}/fd"
    out = []
    for fd in os.listdir(fds):
        try:
            target = os.readlink(f"{fds}/{fd}")
        except OSError:
            continue
        if target.startswith(str(where)):
            out.append(target)
    return out


def wait_for_spill(p, where, timeout=120):
    """The spill files the command holds open in `where` once it writes its script (the pipe
    full: it waits for its reader, the spill open)."""
    first = p.stdout.read(1 << 16)
    assert first
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        found = spill_fds(p.pid, where)
        if found:
            return found
        time.sleep(0.05)
    return []


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_spill_is_in_tmpdir_and_goes_with_a_closed_pipe(binlogs, tmp_path, argv):
    where = tmp_path / "spill"
    p = command([*argv, str(binlogs[0])], tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    found = wait_for_spill(p, where)
    assert found, "no spill file open in $TMPDIR while the script is written"
    p.stdout.close()  # the reader goes away: the command ends quietly
    err = p.stderr.read().decode()
    assert p.wait(60) == 0, err
    assert "Traceback" not in err
    assert os.listdir(where) == []


def test_spill_goes_on_sigint(binlogs, tmp_path):
    where = tmp_path / "spill"
    p = command(["flashback", "--jobs", "1", str(binlogs[0])], tmp_path, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, preexec_fn=interruptible)
    assert wait_for_spill(p, where)
    p.send_signal(signal.SIGINT)
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(60) == 130, err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert os.listdir(where) == []


@pytest.mark.parametrize("skip", [False, True], ids=["stop", "skip-damaged"])
@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_spill_goes_on_damaged_input(binlogs, tmp_path, argv, skip):
    """A byte flipped in a rows event half way: the error names the file, offset and event type
    (exit 1) and the spill is gone. Without --skip-damaged no script is written (an inverse is
    never half a script, as before the spill); with it, every other transaction is inverted."""
    data = bytearray(binlogs[0].read_bytes())
    events = list(scan(binlogs[0]))
    pos, _code, n = next(e for e in events[len(events) // 2:] if e[1] in (23, 24, 25))
    data[pos + n - 10] ^= 0xFF
    path = tmp_path / "damaged.000001"
    path.write_bytes(bytes(data))
    where = tmp_path / "spill"
    p = command([*argv, *(["--skip-damaged"] if skip else []), str(path)], tmp_path,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate(timeout=300)
    err = err.decode()
    assert p.returncode == 1, err
    assert "Traceback" not in err
    assert str(path) in err and f"offset {pos}" in err and "WRITE_ROWS_EVENT_V1" in err, err
    if skip:
        gtids = sum(code == 162 for _pos, code, _n in events)
        assert out.count(b"flashback of ") >= gtids - 8, err
    else:
        assert out == b""
    assert os.listdir(where) == []


# -- Backwards --------------------------------------------------------------------------------

def test_backwards_gives_texts_and_lines_last_first(monkeypatch, tmp_path):
    monkeypatch.setattr(spill, "BLOCK", 7)  # every text longer than 7 bytes comes in blocks
    texts = ["a\nbb\n", "a line with no end", "x\n\ny\na longer line than a block\nz", "",
             "é\u2028ü\udc80 \\ \n" * 5]
    with spill.Backwards(tmp_path) as s:
        for t in texts[:-1]:
            s.add(t)
        for part in texts[-1].split(" "):  # the last one in parts
            s.write(part + " ")
        s.write("")
        s.end()
        texts[-1] += " "
        assert len(s) == len(texts)
        got = list(s.backwards())
        assert [k for k, _t in got] == sorted((k for k, _t in got), reverse=True)
        assert "".join(t for _k, t in got) == "".join(reversed(texts))
        lines = []
        for t in reversed(texts):
            cut = t.split("\n")
            lines += [line + "\n" for line in cut[:-1]] + ([cut[-1]] if cut[-1] else [])
        assert list(s.lines_backwards()) == lines
    assert os.listdir(tmp_path) == []
