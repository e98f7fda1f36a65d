#!/usr/bin/env python3
"""The full character-set round-trip sweep (issue 25), for maintainers: every code of every
character set the project decodes, logged by a throwaway MariaDB, written back by
`binlog-grammar sql` and replayed through the `mariadb` client (binlog_grammar.testing.charset_sweep
says how). tests/output/test_charset_sweep.py runs a strided part of it in CI.

    python tools/charset_sweep.py                       # everything (about 2 minutes on 2 cores)
    python tools/charset_sweep.py --charsets sjis,cp932 --show 20
    python tools/charset_sweep.py --stride 11           # what the CI test runs
    python tools/charset_sweep.py --json sweep.json     # every differing code, per charset and rule

Per charset it prints the candidates tried, the codes the server stores (one character, stored
as given), and per rule the codes whose replay stored other bytes:
- before: every value that is UTF-8 written as text (the rule before
  binlog_grammar.output.replay_charsets);
- after: the code as it is (replay_charsets.text_round_trips);
- as bytes (with --hex): every value written as `_cs X'..'`.
`not decoded` counts the codes the server stores but the project does not decode (written as
bytes by every rule); `bytes where text would do` counts the codes the rule writes as bytes although the text form
stored them exactly (the readability the rule gives up). The exit status is 1 when a code differs
after, or when the rule says text for a code whose text form differed.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def rule_figures(result):
    """(codes the rule writes as bytes though text stored them, codes the rule writes as text
    whose text form differed, codes the project does not decode as text), from the "text"
    replay of `result`."""
    from binlog_grammar.output.replay_charsets import text_round_trips
    from binlog_grammar.testing.charset_sweep import decode

    text_failed = result.differing.get("text", {})
    wasted, wrong, undecoded = 0, [], 0
    for code, raw in result.codes_bytes.items():
        value = decode(result.charset, raw)
        try:
            value.encode("utf-8") if type(value) is str else str.encode(value, "utf-8")
        except UnicodeEncodeError:  # not text the project could decode: bytes by every rule
            undecoded += 1
            continue
        says_text = text_round_trips(value, result.charset)
        if says_text and code in text_failed:
            wrong.append(code)
        elif not says_text and code not in text_failed:
            wasted += 1
    return wasted, wrong, undecoded


def main(argv=None) -> int:
    from binlog_grammar.testing.charset_sweep import NOT_ON_MARIADB, Sweep, charsets

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    p.add_argument("--charsets", help="comma-separated MySQL charset names (default: all)")
    p.add_argument("--stride", type=int, default=1,
                   help="keep every Nth trail / 16-bit unit / BMP code point (default 1: all)")
    p.add_argument("--supplementary-stride", type=int, default=257,
                   help="every Nth supplementary code point for the Unicode charsets")
    p.add_argument("--hex", action="store_true", help="also replay with every value as bytes")
    p.add_argument("--show", type=int, default=5, help="differing codes shown per charset")
    p.add_argument("--json", help="write every differing code here")
    args = p.parse_args(argv)

    css = args.charsets.split(",") if args.charsets else charsets()
    rules = ("text", "current") + (("hex",) if args.hex else ())
    t0 = time.time()
    with Sweep() as sweep:
        results = sweep.run(css, rules, args.stride, args.supplementary_stride,
                            log=lambda m: print(m, flush=True))
    bad = 0
    head = (f"{'charset':<9} {'tried':>7} {'codes':>7} {'before':>7} {'after':>6}"
            + (f" {'bytes':>6}" if args.hex else "") + f" {'not decoded':>11} {'bytes where text would do':>26}")
    print(head)
    totals = [0] * 6
    wrong_total = 0
    report = {}
    for cs in css:
        r = results[cs]
        before, after = len(r.differing["text"]), len(r.differing["current"])
        wasted, wrong, undecoded = rule_figures(r)
        row = f"{cs:<9} {r.candidates:>7} {r.codes:>7} {before:>7} {after:>6}"
        if args.hex:
            row += f" {len(r.differing['hex']):>6}"
        print(row + f" {undecoded:>11} {wasted:>26}")
        for i, v in enumerate((r.candidates, r.codes, before, after, undecoded, wasted)):
            totals[i] += v
        for rule in rules:
            for code, (logged, stored) in sorted(r.differing[rule].items())[:args.show]:
                if rule != "text" or args.show:
                    print(f"    {rule}: {logged} {decode_repr(cs, logged)} stored as {stored}")
        if wrong:
            print(f"    the rule says text for {len(wrong)} codes whose text form differed: "
                  + " ".join(f"{c:X}" for c in wrong[:20]))
        bad += after + len(wrong)
        wrong_total += len(wrong)
        report[cs] = {"tried": r.candidates, "codes": r.codes,
                      **{rule: {f"{c:X}": v for c, v in sorted(r.differing[rule].items())}
                         for rule in rules}}
    print(f"{'total':<9} {totals[0]:>7} {totals[1]:>7} {totals[2]:>7} {totals[3]:>6}"
          + (" " * 7 if args.hex else "") + f" {totals[4]:>11} {totals[5]:>26}")
    print(f"codes the rule writes as text whose text form differed: {wrong_total}")
    for cs, why in NOT_ON_MARIADB.items():
        print(f"not swept: {cs}: {why}")
    print(f"{time.time() - t0:.0f}s; {'FAILED' if bad else 'every code stored as logged'}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 1 if bad else 0


def decode_repr(cs, hexbytes):
    from binlog_grammar.testing.charset_sweep import decode

    if hexbytes == "missing":
        return ""
    return ascii(decode(cs, bytes.fromhex(hexbytes)))


if __name__ == "__main__":
    sys.exit(main())
