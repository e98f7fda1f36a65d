"""Checking fields and types: every field of an event, a named type or a TLV case becomes a
`Field` whose type is a `TypeSpec`, its expressions parsed and checked against the fields before
it, the context values and the enums.

`FieldReader` is a part of the loader's builder (binlog_grammar.lang.loader): it reads the names
the builder has collected first (`enums`, `enum_values`, `context`, `type_names`).
"""
from __future__ import annotations

import re

from ..errors import SpecError
from . import expr as E
from .model import Field, TypeSpec
from .source import line_of, version_of


INT_RE = re.compile(r"^(u|s)(8|16|24|32|40|48|56|64)(le|be)?$")
FLOAT_RE = re.compile(r"^f(32|64)(le|be)$")
SIMPLE_TYPES = {"packed", "sv_uint", "sv_sint", "bytes", "str", "bitmap", "struct", "empty",
                "uintle", "uintbe", "decimal", "json_binary"}
FIELD_KEYS = {"id", "type", "doc", "doc-ref", "since", "until", "size", "if", "repeat",
              "repeat-until", "enum", "flags", "const", "rebuild", "pad", "prefix", "terminator",
              "fields", "bits", "order", "decode", "value", "precision", "scale"}
RESERVED_IDS = {"items", "keys", "values", "get", "update", "copy", "pop", "clear", "setdefault",
                "popitem", "fromkeys", "search", "search_all"}
CODECS = {"zstd", "zlib", "mariadb_zlib"}
ID_RE = re.compile(r"^[a-z][a-z0-9_]*$")


class FieldReader:
    """Fields, types and expressions, for the builder of binlog_grammar.lang.loader."""

    def _expr(self, rel, line, fid, src, visible, allow_underscore=False):
        try:
            node = E.parse(src)
        except SyntaxError as e:
            raise SpecError(f"bad expression {src!r}: {e}", rel, line, fid) from None
        E.check(node, visible=visible, enums=self.enum_values, context=self.context,
                where=(rel, line, fid), allow_underscore=allow_underscore)
        return node

    def _type(self, rel, line, fid, t, scope, spec) -> TypeSpec:
        if isinstance(t, dict):
            if "switch-on" in t:
                return self._switch(rel, line, fid, t, scope)
            if "tlv" in t:
                return self._tlv(rel, line, fid, t["tlv"], scope)
            raise SpecError("a type mapping must be a switch (switch-on:) or a tlv (tlv:)", rel,
                            line_of(t, default=line), fid)
        if not isinstance(t, str):
            raise SpecError(f"type must be a name, not {t!r}", rel, line, fid)
        m = INT_RE.match(t)
        if m:
            width = int(m.group(2)) // 8
            if width > 1 and not m.group(3):
                raise SpecError(f"type {t!r} needs a byte order: {t}le or {t}be", rel, line, fid)
            if width == 1 and m.group(3):
                raise SpecError(f"type {t!r}: one byte has no byte order, write {t[:-2]}", rel, line, fid)
            return TypeSpec("int", t, width, m.group(1) == "s", m.group(3) or "le")
        m = FLOAT_RE.match(t)
        if m:
            return TypeSpec("float", t, int(m.group(1)) // 8, True, m.group(2))
        if t == "decimal":
            if "precision" not in spec or "scale" not in spec:
                raise SpecError("type decimal needs precision: and scale: expressions", rel, line, fid)
            return TypeSpec("decimal", t, args={
                k: self._expr(rel, line_of(spec, k, line), fid, spec[k], scope)
                for k in ("precision", "scale")})
        if t in ("uintle", "uintbe"):
            return TypeSpec("uintvar", t, endian=t[-2:])
        if t == "struct":
            fields = spec.get("fields")
            if not isinstance(fields, list) or not fields:
                raise SpecError("type struct needs a list of fields", rel, line, fid)
            return TypeSpec("struct", fields=self._fields(rel, fields, scope, f"{fid}"))
        if t == "bitmap":
            if "bits" not in spec:
                raise SpecError("a bitmap needs bits: <expression>", rel, line, fid)
            order = spec.get("order", "lsb")
            if order not in ("lsb", "msb"):
                raise SpecError("bitmap order must be lsb or msb", rel, line, fid)
            return TypeSpec("bitmap", "bitmap", bits=self._expr(rel, line, fid, spec["bits"], scope),
                            order=order)
        if t in SIMPLE_TYPES:
            return TypeSpec(t, t)
        if t in self.type_names:
            return TypeSpec("named", t)
        raise SpecError(f"unknown type {t!r}", rel, line, fid)

    def _switch(self, rel, line, fid, t, scope):
        on = self._expr(rel, line, fid, t["switch-on"], scope)
        cases = []
        seen = set()
        for k, sub in (t.get("cases") or {}).items():
            kl = line_of(t.get("cases"), k, line)
            key = self._case_key(rel, kl, fid, k, seen, "case")
            seen.add(key)
            cases.append((key, self._case_type(rel, kl, fid, sub, scope), str(k)))
        if not cases:
            raise SpecError("a switch needs cases", rel, line, fid)
        default = None
        if "default" in t:
            default = self._case_type(rel, line_of(t, "default", line), fid, t["default"], scope)
        for k in t:
            if k not in ("switch-on", "cases", "default"):
                raise SpecError(f"unknown key {k!r} in switch", rel, line_of(t, k, line), fid)
        return TypeSpec("switch", switch_on=on, cases=cases, default=default)

    def _case_key(self, rel, line, fid, k, seen, what):
        """The value of a switch or TLV case key (a constant expression), not one of `seen`."""
        try:
            key = E.constant_value(E.parse(k), self.enum_values)
        except (SyntaxError, KeyError) as e:
            raise SpecError(f"bad {what} key {k!r}: {e}", rel, line, fid) from None
        if key in seen:
            raise SpecError(f"{what} {k!r} appears twice", rel, line, fid)
        return key

    def _case_type(self, rel, line, fid, sub, scope):
        if isinstance(sub, dict) and "switch-on" not in sub and "tlv" not in sub:
            raise SpecError("a switch case is a type name (define a named type for anything bigger)",
                            rel, line, fid)
        return self._type(rel, line, fid, sub, [], {})

    def _tlv(self, rel, line, fid, t, scope):
        if not isinstance(t, dict):
            raise SpecError("tlv: needs a mapping", rel, line, fid)
        for k in t:
            if k not in ("tag", "length", "end", "unknown", "cases", "enum"):
                raise SpecError(f"unknown key {k!r} in tlv", rel, line_of(t, k, line), fid)
        tag = self._type(rel, line, fid, t.get("tag", "u8"), scope, {})
        if tag.kind not in ("int", "packed", "sv_uint"):
            raise SpecError("a tlv tag must be an integer type", rel, line, fid)
        length = None
        if t.get("length", "none") != "none":
            length = self._type(rel, line, fid, t["length"], scope, {})
            if length.kind not in ("int", "packed", "sv_uint"):
                raise SpecError("a tlv length must be an integer type or none", rel, line, fid)
        end = t.get("end", "eos")
        if end != "eos" and not isinstance(end, int):
            raise SpecError("tlv end must be eos or a tag number", rel, line, fid)
        unknown = t.get("unknown", "stop")
        if unknown not in ("stop", "skip", "error"):
            raise SpecError("tlv unknown must be stop, skip or error", rel, line, fid)
        if unknown == "skip" and length is None:
            raise SpecError("unknown: skip needs an explicit length", rel, line, fid)
        enum = t.get("enum")
        if enum is not None and enum not in self.enums:
            raise SpecError(f"unknown enum {enum!r}", rel, line, fid)
        cases = []
        seen_keys, seen_ids = set(), set()
        raw_cases = t.get("cases") or {}
        for k, sub in raw_cases.items():
            kl = line_of(raw_cases, k, line)
            key = self._case_key(rel, kl, fid, k, seen_keys, "tlv case")
            if not isinstance(sub, dict):
                raise SpecError("a tlv case is a field (id, type, doc)", rel, kl, fid)
            cf = self._field(getattr(sub, "src_file", rel), sub, scope=[], where_struct=f"{fid} case {k}",
                             line=kl)
            if cf.id in seen_ids:
                raise SpecError(f"tlv case id {cf.id!r} is used twice", rel, kl, fid)
            seen_keys.add(key)
            seen_ids.add(cf.id)
            cases.append((key, cf))
        if isinstance(end, int) and end in seen_keys:
            raise SpecError("the end-mark tag cannot also be a case", rel, line, fid)
        return TypeSpec("tlv", "tlv", tag=tag, length=length, end=end, unknown=unknown,
                        cases=cases, tag_enum=enum)

    def _fields(self, rel, items, outer_scope, where):
        if not isinstance(items, list):
            raise SpecError(f"{where}: fields must be a list", rel, line_of(items))
        out = []
        ids = set()
        all_ids = [it.get("id") for it in items if isinstance(it, dict)]
        for it in items:
            if not isinstance(it, dict):
                raise SpecError(f"{where}: each field must be a mapping", rel, line_of(items))
            f = self._field(getattr(it, "src_file", rel), it, scope=sorted(ids), where_struct=where,
                            all_ids=all_ids)
            if f.id in ids:
                raise SpecError(f"field id {f.id!r} is used twice in {where}", rel, f.line, f.id)
            ids.add(f.id)
            out.append(f)
        self._check_trailing(rel, out)
        return out

    def _check_trailing(self, rel, fields):
        """After a field guarded by `remaining`, every later field must be conditional or take the rest."""
        guarded = False
        for f in fields:
            if f.cond is not None and E.uses_remaining(f.cond):
                guarded = True
            elif guarded and f.cond is None and f.size != "rest" and f.repeat != "eos":
                raise SpecError("a field after a 'remaining'-guarded field must itself be conditional "
                                "(it would be missing when the guarded one is)", rel, f.line, f.id)

    def _field(self, rel, it, scope, where_struct, all_ids=(), is_typedef=False, line=None):
        line = line or line_of(it)
        fid = it.get("id")
        if not isinstance(fid, str) or not (ID_RE.match(fid) or is_typedef):
            raise SpecError(f"{where_struct}: every field needs an id in snake_case (got {fid!r})",
                            rel, line)
        if fid in RESERVED_IDS:
            raise SpecError(f"id {fid!r} is reserved (it is a method of parsed values)", rel, line, fid)
        for k in it:
            if k not in FIELD_KEYS:
                raise SpecError(f"unknown key {k!r}", rel, line_of(it, k, line), fid)
        if not is_typedef and not it.get("doc"):
            raise SpecError("every field needs a doc line", rel, line, fid)
        if "value" in it:
            return self._computed(rel, it, scope, fid, line)
        if "type" not in it:
            if "fields" in it:
                it = dict(it, type="struct")
            else:
                raise SpecError("every field needs a type", rel, line, fid)
        visible = set(scope)

        def ex(key, vis=None, **kw):
            return self._expr(rel, line_of(it, key, line), fid, it[key],
                              visible if vis is None else vis, **kw)

        t = self._type(rel, line_of(it, "type", line), fid, it["type"], sorted(visible), it)
        f = Field(fid, t, it.get("doc", ""), rel, line, doc_ref=it.get("doc-ref", ""), raw=it)
        f.since = version_of(rel, line, fid, it.get("since"))
        f.until = version_of(rel, line, fid, it.get("until"))
        if "size" in it:
            f.size = "rest" if it["size"] == "rest" else ex("size")
        if "if" in it:
            f.cond = ex("if")
        if "repeat" in it:
            f.repeat = "eos" if it["repeat"] == "eos" else ex("repeat")
        if "repeat-until" in it:
            if "repeat" in it:
                raise SpecError("use either repeat or repeat-until", rel, line, fid)
            f.repeat_until = ex("repeat-until", allow_underscore=True)
        for key in ("enum", "flags"):
            if key in it:
                name = it[key]
                e = self.enums.get(name)
                if e is None or e.is_flags != (key == "flags"):
                    raise SpecError(f"unknown {'flag set' if key == 'flags' else 'enum'} {name!r}",
                                    rel, line_of(it, key, line), fid)
                if t.kind not in ("int", "packed", "uintvar", "sv_uint"):
                    raise SpecError(f"{key} applies to integer fields only", rel, line, fid)
                setattr(f, key, name)
        if "const" in it:
            f.const = it["const"]
        if "rebuild" in it:
            f.rebuild = ex("rebuild", vis=set(all_ids) | visible)
        if "decode" in it:
            f.decode = self._decode(rel, line_of(it, "decode", line), fid, it["decode"], visible)
        if t.kind in ("bytes", "str"):
            ways = [k for k in ("size", "prefix", "terminator") if k in it]
            if len(ways) != 1:
                raise SpecError(f"a {t.kind} field needs exactly one of size, prefix, terminator",
                                rel, line, fid)
            if "prefix" in it:
                f.prefix = self._type(rel, line, fid, it["prefix"], [], {})
                if f.prefix.kind not in ("int", "packed", "sv_uint"):
                    raise SpecError("prefix must be an integer type", rel, line, fid)
            if "terminator" in it:
                f.terminator = it["terminator"]
                if not isinstance(f.terminator, int) or not 0 <= f.terminator < 256:
                    raise SpecError("terminator must be a byte value", rel, line, fid)
            if "pad" in it:
                if t.kind != "str" or "size" not in it:
                    raise SpecError("pad applies to fixed-size str fields", rel, line, fid)
                f.pad = it["pad"]
        else:
            for k in ("prefix", "terminator", "pad"):
                if k in it:
                    raise SpecError(f"{k} applies to bytes and str fields only", rel, line, fid)
        if t.kind == "uintvar" and f.size in (None, "rest"):
            raise SpecError(f"{t.name} needs size: <expression>", rel, line, fid)
        if t.kind == "bitmap" and f.size is not None:
            raise SpecError("a bitmap's size comes from bits; do not give size", rel, line, fid)
        if ("fields" in it) and t.kind != "struct":
            raise SpecError("fields applies to type struct", rel, line, fid)
        if ("bits" in it or "order" in it) and t.kind != "bitmap":
            raise SpecError("bits/order apply to bitmaps", rel, line, fid)
        if ("precision" in it or "scale" in it) and t.kind != "decimal":
            raise SpecError("precision/scale apply to type decimal", rel, line, fid)
        return f

    def _computed(self, rel, it, scope, fid, line):
        """A field with `value:` is computed from the fields before it; it takes no bytes."""
        extra = sorted(set(it) - {"id", "value", "doc", "doc-ref", "since", "until"})
        if extra:
            raise SpecError(f"a computed field (value:) takes only id, value, doc: drop {', '.join(extra)}",
                            rel, line, fid)
        node = self._expr(rel, line_of(it, "value", line), fid, it["value"], set(scope))
        f = Field(fid, TypeSpec("computed", "computed"), it.get("doc", ""), rel, line,
                  doc_ref=it.get("doc-ref", ""), raw=it)
        f.value = node
        return f

    def _decode(self, rel, line, fid, d, visible):
        if not isinstance(d, dict) or "codec" not in d or "as" not in d:
            raise SpecError("decode needs codec: and as:", rel, line, fid)
        if d["codec"] not in CODECS:
            raise SpecError(f"unknown codec {d['codec']!r} (known: {', '.join(sorted(CODECS))})",
                            rel, line, fid)
        target = d["as"]
        if target not in ("events", "str", "bytes") and target not in self.type_names:
            raise SpecError(f"decode as: {target!r} is not events, str, bytes or a named type",
                            rel, line, fid)
        cond = None
        if "if" in d:
            cond = self._expr(rel, line, fid, d["if"], visible)
        return {"codec": d["codec"], "as": target, "if": cond, "if_src": d.get("if")}
