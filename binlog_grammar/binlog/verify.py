"""`verify`: parse every event, rebuild it from the parsed value, check CRC32s."""
from __future__ import annotations

from ..errors import BinlogError, ChecksumError, plain_reason
from .reader import BinlogFile, inner_events, rebuild_event


def verify_file(path, verify_checksum=True, progress=None) -> dict:
    """Report on one file: events, byte-identical rebuilds, checksum failures, errors.
    progress(offset): called with the end of each event read (the command's progress bar)."""
    report = {"file": str(path), "events": 0, "byte_identical": 0, "checksums_verified": 0,
              "checksum_failures": 0, "inner_events": 0, "errors": []}

    def err(offset, event_type, message):
        report["errors"].append({"offset": offset, "event_type": event_type, "message": message})

    # the reader decides which checksums there are and what a damaged FDE means, as for every
    # command; a bad CRC32 footer is counted here and reading goes on
    bf = BinlogFile(path, verify_checksum=verify_checksum, keep_bad_crc=True)
    try:
        for ev in bf:
            report["events"] += 1
            if progress is not None:
                progress(ev.end)
            if ev.checksum_ok is not None:
                report["checksums_verified"] += 1
                if not ev.checksum_ok:
                    report["checksum_failures"] += 1
                    err(ev.offset, ev.name, "CRC32 mismatch")
            _check_rebuild(ev, report, err)
            try:
                for inner in inner_events(ev, bf.state):
                    report["inner_events"] += 1
                    _check_rebuild(inner, None, err)
            except BinlogError as e:
                err(e.offset, e.event_type, e.message)
    except ChecksumError as e:  # a damaged FORMAT_DESCRIPTION_EVENT: the rest cannot be read
        report["checksums_verified"] += 1
        report["checksum_failures"] += 1
        err(e.offset, e.event_type, e.message)
    except BinlogError as e:
        err(e.offset, e.event_type, e.message)
    report["ok"] = not report["errors"] and report["checksum_failures"] == 0
    return report


def _check_rebuild(ev, report, err):
    try:
        rebuilt = rebuild_event(ev)
    except Exception as e:  # noqa: BLE001 - a failed rebuild is a finding, reported per event
        err(ev.offset, ev.name, f"rebuild failed: {plain_reason(e)}")
        return
    if rebuilt == ev.raw:
        if report is not None:
            report["byte_identical"] += 1
    else:
        first = next((i for i, (a, b) in enumerate(zip(rebuilt, ev.raw)) if a != b),
                     min(len(rebuilt), len(ev.raw)))
        where = f" (inner event at payload offset {ev.extra.get('payload_offset')})" if ev.inner else ""
        err(ev.offset, ev.name, f"rebuilt bytes differ from the file at event byte {first}{where}")
