"""The expression language of the specs (sizes, conditions, computed fields; specs/README.md):
a typed tree, parsed and checked once, and one translator per target.

- `nodes`: the typed tree, one class per construct, each with its type;
- `parse`: the tokenizer and parser (source text to the tree; nothing is eval'ed);
- `translate`: the base translator (dispatch on the node's class) and the walkers that say which
  names and context keys an expression reads;
- `check`: the checker, run once when a spec is read;
- `printer`: the expression in spec syntax (the docs, error messages);
- `evaluate`: the interpreter (strategies, docs' examples), the operators' meaning, constant folding;
- `python`: the Python emitter of the construct modules and generated/fast.py, in a Dialect.

The functions an expression calls are the registry runtime.functions.FUNCTIONS; the partial
evaluator of codegen.table and the C translator of codegen.c_expr are translators too.
"""
from ...runtime.functions import FUNCTIONS
from ...runtime.versions import Version, parse_version_literal, version_compare
from .check import check
from .evaluate import PY_BIN, Env, Evaluator, apply_bin, constant_value, evaluate
from .nodes import SPECIAL_NAMES, Node, Num
from .parse import KEYWORDS, parse, tokenize
from .printer import SourcePrinter, to_source
from .python import CONSTRUCT, Dialect, Emitter
from .translate import (Translator, Walker, context_keys, is_parent_chain, names_used, sizeof_names,
                        uses_remaining)

__all__ = ["FUNCTIONS", "Version", "parse_version_literal", "version_compare", "check", "PY_BIN",
           "Env", "Evaluator", "apply_bin", "constant_value", "evaluate", "SPECIAL_NAMES", "Node", "Num",
           "KEYWORDS", "parse", "tokenize", "SourcePrinter", "to_source", "CONSTRUCT", "Dialect",
           "Emitter", "Translator", "Walker", "context_keys", "is_parent_chain", "names_used",
           "sizeof_names", "uses_remaining"]
