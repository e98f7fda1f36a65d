"""The validated form of the specs (what the compiler, the docs and the strategies walk)."""
from __future__ import annotations

from dataclasses import dataclass, field as dc_field
from typing import Any, Optional


# YAML values as lang.source reads them. Some stay in the model (a decode: entry, a set's members),
# so they are defined here, where unpickling the cached model finds them without importing yaml.
class YamlMap(dict):
    """A YAML mapping, with the line it starts on and the line of each key."""

    line = 0
    key_lines: dict


class YamlList(list):
    """A YAML sequence, with the line it starts on (and item_lines, the line of each item)."""

    line = 0


@dataclass
class TypeSpec:
    """One type: a built-in, a reference to a named type, or an inline struct/switch/tlv."""

    kind: str  # int float uintvar packed sv_uint sv_sint bytes str bitmap struct named switch tlv
    #            empty computed decimal json_binary
    name: str = ""  # int name (u16le), named type name
    width: int = 0
    signed: bool = False
    endian: str = "le"
    fields: list = dc_field(default_factory=list)  # struct
    bits: Any = None  # bitmap: AST
    order: str = "lsb"
    switch_on: Any = None  # switch: AST
    cases: list = dc_field(default_factory=list)  # switch: [(key, TypeSpec, key_source)]; tlv: [(key, Field)]
    default: Optional["TypeSpec"] = None
    tag: Optional["TypeSpec"] = None  # tlv
    length: Optional["TypeSpec"] = None  # tlv (None: implicit)
    end: Any = "eos"  # tlv: "eos" or end-mark tag number
    unknown: str = "stop"  # tlv
    tag_enum: Optional[str] = None  # tlv
    args: dict = dc_field(default_factory=dict)  # decimal: {precision: AST, scale: AST}

    def describe(self) -> str:
        if self.kind in ("int", "named"):
            return self.name
        if self.kind == "uintvar":
            return f"uint{self.endian}"
        return self.kind


@dataclass
class Field:
    id: str
    type: TypeSpec
    doc: str
    file: str
    line: int
    doc_ref: str = ""
    since: Any = None  # Version
    until: Any = None
    size: Any = None  # AST, "rest" or None
    cond: Any = None  # AST
    repeat: Any = None  # AST, "eos" or None
    repeat_until: Any = None  # AST
    enum: Optional[str] = None
    flags: Optional[str] = None
    const: Any = None
    rebuild: Any = None  # AST
    pad: Optional[int] = None
    prefix: Optional[TypeSpec] = None
    terminator: Optional[int] = None
    decode: Optional[dict] = None  # {codec, if (AST|None), as}
    value: Any = None  # AST of a computed field (kind "computed": no bytes)
    section: str = ""  # post_header or body (event fields only)
    raw: dict = dc_field(default_factory=dict, repr=False)  # the YAML mapping (source text of expressions)


@dataclass
class TypeDef:
    name: str
    doc: str
    file: str
    line: int
    field: Field  # its type and modifiers (id == name)
    doc_ref: str = ""
    adapter: Optional[str] = None  # `as:` the Python value adapter (binlog_grammar.runtime.values)


@dataclass
class EnumDef:
    name: str
    doc: str
    file: str
    line: int
    members: dict  # value -> (NAME, doc)
    is_flags: bool = False
    doc_ref: str = ""

    def by_name(self):
        return {n: v for v, (n, _d) in self.members.items()}


@dataclass
class SetEntry:
    """One entry of a named set: members that belong to it for the servers the entry names."""

    members: list  # [(NAME, value)] of the set's enum
    flavor: Optional[str] = None  # mysql, mariadb, or None: both lines
    since: Any = None  # Version (its line is the entry's flavor)
    until: Any = None  # Version: the first version the entry no longer applies to
    doc: str = ""
    doc_ref: str = ""
    file: str = ""
    line: int = 0

    def applies(self, server) -> bool:
        """Does the entry apply to a server of this version (None: the version is unknown)?"""
        from .expr import version_compare

        if server is None:
            return self.flavor is None and self.since is None and self.until is None
        if self.flavor is not None and server.flavor != self.flavor:
            return False
        if self.since is not None and not version_compare(">=", server, self.since):
            return False
        if self.until is not None and not version_compare("<", server, self.until):
            return False
        return True


@dataclass
class SetDef:
    """A named set of enum members (`sets:`): which column types an optional-metadata list counts,
    per server line and version. A server's set is the union of the entries that apply to it."""

    name: str
    doc: str
    file: str
    line: int
    enum: str
    entries: list  # [SetEntry]
    doc_ref: str = ""
    applies_to: list = dc_field(default_factory=list)  # documentary: "EVENT.field.case" paths

    def members(self, server) -> frozenset:
        return frozenset(v for e in self.entries if e.applies(server) for _n, v in e.members)


@dataclass
class EventName:
    name: str
    code: int
    doc: str
    line: int
    legacy_post_header_len: dict = dc_field(default_factory=dict)  # binlog v1/v3: {version: len}
    row_op: Optional[str] = None  # rows events: insert, update or delete (which images a row holds)
    role: Optional[str] = None  # what the event is to a transaction (lang.events.ROLES; rows: "rows")


@dataclass
class EventDef:
    names: list  # [EventName]
    layout: str  # name of the generated struct
    flavor: str
    doc: str
    file: str
    line: int
    fields: list  # post-header fields then body fields
    post_header_len: list
    doc_ref: str = ""
    since: Any = None
    until: Any = None
    remaps: list = dc_field(default_factory=list)  # [{doc, if (AST), map}]


@dataclass
class ContextDef:
    id: str
    doc: str
    values: Any
    type: str = "int"
    doc_ref: str = ""


@dataclass
class SpecSet:
    root: str
    files: list
    context: dict  # id -> ContextDef
    types: dict  # name -> TypeDef
    enums: dict  # name -> EnumDef (enums and flag sets)
    events: list  # [EventDef]
    type_files: dict = dc_field(default_factory=dict)  # spec file -> [type names] (in file order)
    sets: dict = dc_field(default_factory=dict)  # name -> SetDef

    def enum_values(self):
        """{enum name: {MEMBER: value}} for expression checking and emitting."""
        return {name: e.by_name() for name, e in self.enums.items()}

    def event_by_name(self, name):
        for ev in self.events:
            for n in ev.names:
                if n.name == name:
                    return ev, n
        raise KeyError(name)
