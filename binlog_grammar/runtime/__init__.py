"""What generated code and the readers call at run time.

- construct.py: the `rt` namespace of the generated construct modules; its classes live in
  scalars.py (integers, text, bitmaps, enums, flags) and regions.py (sized regions, repetition,
  conditions, TLV lists);
- ints.py, bitmaps.py: the byte forms of packed and serialization-library integers and of
  bitmaps, once for both backends;
- functions.py, versions.py: the functions spec expressions call, and server versions;
- fast.py: the helpers of the fast readers (generated/fast.py and the per-table readers);
- values.py: the Python values of column layouts (`as:` adapters);
- decimal.py, jsonb/: the two algorithm types, packed DECIMAL digits and MySQL's binary JSON;
- codecs.py: decompression, the one place compressed bytes are inflated (compressed events and
  MariaDB's compressed columns);
- spans.py: the span recorder that maps bytes to spec fields.
"""
