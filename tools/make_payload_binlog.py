"""A MySQL 8 binlog of compressed transactions for benchmarks (issue 26): the shared corpus's
transaction_compression.000001 transaction (an ANONYMOUS_GTID, then a TRANSACTION_PAYLOAD_EVENT
holding BEGIN, TABLE_MAP, WRITE_ROWS and XID) repeated N times, each copy's rows its own values,
compressed again with zstd (tests/helpers/payload_binlog.py makes the events).

    python3 tools/make_payload_binlog.py OUT [--transactions N] [--rows R] [--gtids]
"""
import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from helpers.payload_binlog import repeated  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--transactions", type=int, default=200000)
    ap.add_argument("--rows", type=int, default=10, help="rows per transaction")
    ap.add_argument("--gtids", action="store_true", help="GTID_LOG_EVENTs, not ANONYMOUS_GTIDs")
    args = ap.parse_args(argv)
    args.out.write_bytes(repeated(args.transactions, rows=args.rows, gtid_code=33 if args.gtids else 34))
    print(f"{args.out}: {args.out.stat().st_size} bytes, {args.transactions} transactions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
