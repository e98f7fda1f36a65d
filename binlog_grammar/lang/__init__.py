"""The spec language: the YAML specs read, checked and turned into the model the compiler, the docs
and the test strategies walk.

- `loader`: `load_specs()`, the entry point: the cached model, else the builder's;
- `build`: the builder that reads the files in two passes (imported only when nothing is cached);
- `source`: YAML with line numbers (every SpecError names the file and the line), version literals;
- `overlays`: version overlays (specs/versions/), applied to the YAML before it is checked;
- `definitions`, `fields`, `events`: the checks of named definitions, of fields and types, and of
  events;
- `expr/`: the expression language of sizes and conditions: a typed tree, parsed and checked once
  (never eval'ed), and the base translator every target specialises (its `__init__` lists them);
- `model`: the validated model (TypeSpec, Field, EventDef, SpecSet ...);
- `values`: values made from the specs (by the strategies or for the docs' examples) and how they
  compare with what the generated structs parse;
- `cache`: the user's cache folder, and the model kept there.
"""
