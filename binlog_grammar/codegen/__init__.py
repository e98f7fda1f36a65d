"""From validated specs to code: one backend per target.

- construct.py: the construct structs of generated/ (types, events, catalog, enums, sets) and
  `generate()`, which writes every generated module;
- python.py: generated/fast.py, plain-Python readers of the same specs (the fast path);
- table.py: readers specialised for one table's columns, compiled at run time per TABLE_MAP
  (its partial evaluator is a translator of lang.expr);
- c_expr.py: the C translator of the expression language, over the helpers of
  templates/bg_expr.h.j2;
- c_fields.py: C readers of an event's conditional fields and status variables (MySQL's GTIDs,
  QUERY_EVENT), for the compiled loops' lanes.h (rendered by c_lane.py);
- c_api.py: what the reading API reads in C before the generated readers (rows_head(), rendered
  into the `_rows` module by c_rows.py);
- grammar.py: which grammar the package runs on (the project's specs, or a user's compiled into a
  cache folder).
"""
