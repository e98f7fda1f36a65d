"""forms_jsonl.h's bg_float_repr writes a double as Python's repr does: its functions compiled
alone (gcc) and run over doubles of every kind (random bit patterns, short decimals, FLOATs,
subnormals, each power of two and its neighbours, where the search for the shortest digits
differs), compared with repr()."""
import math
import random
import re
import shutil
import struct
import subprocess

import pytest

from helpers.paths import ROOT

HEADER = ROOT / "binlog_grammar" / "native" / "forms_jsonl.h"
FUNCTIONS = ("bg_float_digits", "bg_float_back", "bg_digits_up", "bg_float_repr")
MAIN = r"""
int main(void)
{
    uint64_t bits;
    char out[64];
    while (fread(&bits, 8, 1, stdin) == 1) {
        double d;
        memcpy(&d, &bits, 8);
        int n = bg_float_repr(d, out);
        if (n < 0)
            puts("REFUSED");
        else
            printf("%.*s\n", n, out);
    }
    return 0;
}
"""


def _source() -> str:
    text = HEADER.read_text()
    parts = ["#include <math.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
             "#include <string.h>\n"]
    for name in FUNCTIONS:
        m = re.search(r"^static \w+ " + name + r"\(.*?^}\n", text, re.S | re.M)
        assert m, name
        parts.append(m.group(0))
    return "".join(parts) + MAIN


def _doubles():
    rnd = random.Random(27)
    out = [struct.unpack("<d", rnd.getrandbits(64).to_bytes(8, "little"))[0] for _ in range(60000)]
    out += [round(rnd.uniform(-1e6, 1e6), rnd.randint(0, 8)) for _ in range(60000)]
    out += [struct.unpack("<f", rnd.getrandbits(32).to_bytes(4, "little"))[0] for _ in range(30000)]
    for e in range(-1074, 1024):
        p = 2.0 ** e
        out += [p, -p, math.nextafter(p, 0), math.nextafter(p, math.inf)]
    out += [5e-324, 1.7976931348623157e308, 0.1, 0.3, 1e16, 1e17, 123456789012345678.0, 1e-5]
    return [v for v in out if math.isfinite(v) and v != 0]


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no C compiler")
def test_float_repr_is_python_repr(tmp_path):
    src = tmp_path / "float_repr.c"
    src.write_text(_source())
    exe = tmp_path / "float_repr"
    subprocess.run(["gcc", "-O2", "-o", str(exe), str(src), "-lm"], check=True)
    values = _doubles()
    data = b"".join(struct.pack("<d", v) for v in values)
    got = subprocess.run([str(exe)], input=data, capture_output=True, check=True).stdout.decode().split("\n")
    bad = [(v, g) for v, g in zip(values, got) if g != repr(v)]
    assert not bad, bad[:5]
