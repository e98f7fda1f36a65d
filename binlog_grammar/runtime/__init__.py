"""What generated code and the readers call at run time: the construct wrappers and expression
helpers (construct.py), the fast path's helpers (fast.py), Python values of column layouts
(values.py), the two algorithm types (decimal.py, jsonb.py), and the span recorder that maps
bytes to spec fields (spans.py)."""
