#!/usr/bin/env python3
"""Generates C++ message structs and codecs from the Kafka schema files (src/protocol/schema/*.kdef).

Usage: gen_messages.py OUT_DIR SCHEMA...
Writes OUT_DIR/protocol/messages/<api>.h and .cpp per schema and OUT_DIR/protocol/messages/api_table.h.
The format is described in src/protocol/schema/README.md.
"""
import os
import re
import sys

PRIMITIVES = {
    "bool": "bool", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t",
    "uint16": "uint16_t", "float64": "double", "uuid": "Uuid", "string": "std::string",
    "bytes": "std::vector<uint8_t>", "records": "Records",
}
FIXED_READ = {"bool": "boolean", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
              "uint16": "u16", "float64": "f64", "uuid": "uuid"}


class SchemaError(Exception):
    pass


class Field:
    def __init__(self, name, type_text, versions, options, line):
        self.name = name
        self.nullable_all = type_text.endswith("?")
        self.type_text = type_text.rstrip("?")
        self.versions = versions
        self.options = options
        self.line = line
        self.children = []
        self.is_array = self.type_text.startswith("[]")
        self.element = self.type_text[2:] if self.is_array else self.type_text
        self.is_struct = self.element not in PRIMITIVES
        self.tagged = "tag" in options
        # A single struct: "struct" (tagged fields only, named after the field) or a struct name.
        self.single_struct = self.is_struct and not self.is_array
        if self.type_text == "struct":
            if not self.tagged:
                raise SchemaError(f"line {line}: an unnamed single struct must be a tagged field")
            self.is_struct = True
        self.nullable = options.get("nullable") or ("0+" if self.nullable_all else None)


class Message:
    def __init__(self, kind):
        self.kind = kind
        self.fields = []


class Api:
    def __init__(self):
        self.name = None
        self.key = None
        self.min = self.max = None
        self.flexible = None  # first flexible version or None
        self.request = None
        self.response = None


def parse_versions(text, line):
    m = re.fullmatch(r"(\d+)\+|(\d+)-(\d+)|(\d+)", text)
    if not m:
        raise SchemaError(f"line {line}: bad version range '{text}'")
    if m.group(1):
        return (int(m.group(1)), None)
    if m.group(2):
        return (int(m.group(2)), int(m.group(3)))
    v = int(m.group(4))
    return (v, v)


def parse_schema(path):
    api = Api()
    stack = []  # (indent, field list)
    message = None
    for number, raw in enumerate(open(path, encoding="utf-8"), 1):
        text = raw.split("#", 1)[0].rstrip()
        if not text.strip():
            continue
        indent = len(text) - len(text.lstrip(" "))
        words = text.split()
        if indent == 0:
            head = words[0]
            if head == "api":
                api.name, api.key = words[1], int(words[2])
            elif head == "versions":
                api.min, api.max = parse_versions(words[1], number)
            elif head == "flexible":
                api.flexible = None if words[1] == "none" else int(words[1].rstrip("+"))
            elif head in ("request", "response"):
                message = Message(head)
                setattr(api, head, message)
                stack = [(0, message.fields)]
            else:
                raise SchemaError(f"{path}:{number}: unknown directive '{head}'")
            continue
        if message is None:
            raise SchemaError(f"{path}:{number}: field outside a message")
        name, type_text = words[0], words[1]
        versions = (0, None)
        options = {}
        for word in words[2:]:
            if "=" in word:
                k, v = word.split("=", 1)
                options[k] = v
            else:
                versions = parse_versions(word, number)
        if "nullable" in options:
            options["nullable"] = parse_versions(options["nullable"], number)
        if options.get("nullable") is None and type_text.endswith("?"):
            pass
        while stack and indent <= stack[-1][0] and len(stack) > 1:
            stack.pop()
        parent_indent, siblings = stack[-1]
        if indent <= parent_indent and len(stack) == 1 and indent != 2:
            raise SchemaError(f"{path}:{number}: bad indentation")
        field = Field(name, type_text, versions, options, number)
        if field.nullable == "0+":
            field.nullable = (0, None)
        siblings.append(field)
        if field.is_struct:
            stack.append((indent, field.children))
    for attr in ("name", "key", "min", "request", "response"):
        if getattr(api, attr) is None:
            raise SchemaError(f"{path}: missing '{attr}'")
    return api


def version_test(rng, var="v"):
    lo, hi = rng
    parts = []
    if lo > 0:
        parts.append(f"{var} >= {lo}")
    if hi is not None:
        parts.append(f"{var} <= {hi}")
    return " && ".join(parts) if parts else "true"


def cpp_type(field):
    if field.is_struct:
        base = field.name if field.type_text == "struct" else field.element
    else:
        base = PRIMITIVES[field.element]
    if field.is_array:
        t = f"std::vector<{base}>"
        return f"std::optional<{t}>" if field.nullable else t
    if field.nullable and (field.element in ("string", "bytes") or field.single_struct):
        return f"std::optional<{base}>"
    return base


def default_init(field):
    d = field.options.get("default")
    if d is None or field.is_array or field.is_struct:
        return "{}"
    if d == "null":
        return "{}"
    if field.element == "bool":
        return "{" + ("true" if d == "true" else "false") + "}"
    if field.element == "string":
        return '{"' + d + '"}'
    if field.element in ("int8", "int16", "int32", "int64", "uint16"):
        return "{" + str(int(d, 0)) + "}"
    if field.element == "float64":
        return "{" + d + "}"
    return "{}"


def element_read(elem, target):
    if elem in FIXED_READ:
        return f"{target} = r.{FIXED_READ[elem]}();"
    if elem == "string":
        return f"{target} = r.string(flex);"
    if elem == "bytes":
        return f"{target} = r.bytes(flex);"
    if elem == "records":
        return f"{target} = r.records(flex);"
    return f"{target}.decode(r, v);"


def element_write(elem, source):
    if elem in FIXED_READ:
        return f"w.{FIXED_READ[elem]}({source});"
    if elem == "string":
        return f"w.string({source}, flex);"
    if elem == "bytes":
        return f"w.bytes({source}, flex);"
    if elem == "records":
        return f"w.records({source}, flex);"
    return f"{source}.encode(w, v);"


def gen_decode_field(f, out, ind):
    m = f.name
    if f.is_array:
        out.append(f"{ind}{{")
        out.append(f"{ind}  int32_t n = r.array_length(flex);")
        if f.nullable:
            out.append(f"{ind}  if (n < 0) {{ {m}.reset(); }} else {{")
            out.append(f"{ind}    {m}.emplace(); {m}->resize(static_cast<size_t>(n));")
            out.append(f"{ind}    for (auto& e : *{m}) {{ {element_read(f.element, 'e')} }}")
            out.append(f"{ind}  }}")
        else:
            out.append(f"{ind}  {m}.resize(n < 0 ? 0 : static_cast<size_t>(n));")
            out.append(f"{ind}  for (auto& e : {m}) {{ {element_read(f.element, 'e')} }}")
        out.append(f"{ind}}}")
        return
    if f.single_struct and f.nullable:
        # A nullable struct is preceded by an int8: -1 for null, 1 for present.
        # emplace() would need the struct default-constructible while its enclosing message is
        # still being defined (clang says no); a value-initialised temporary is moved in instead.
        out.append(f"{ind}if (r.i8() < 0) {{ {m}.reset(); }} else {{ {m}.emplace(decltype({m})::value_type{{}}); {m}->decode(r, v); }}")
    elif f.nullable and f.element == "string":
        out.append(f"{ind}{m} = r.nullable_string(flex);")
    elif f.nullable and f.element == "bytes":
        out.append(f"{ind}{m} = r.nullable_bytes(flex);")
    else:
        out.append(ind + element_read(f.element, m))


def gen_encode_field(f, out, ind):
    m = f.name
    nullable_now = version_test(f.nullable) if f.nullable else "false"
    if f.is_array:
        if f.nullable:
            out.append(f"{ind}if (!{m}) {{ w.array_length(({nullable_now}) ? -1 : 0, flex); }} else {{")
            out.append(f"{ind}  w.array_length(static_cast<int32_t>({m}->size()), flex);")
            out.append(f"{ind}  for (const auto& e : *{m}) {{ {element_write(f.element, 'e')} }}")
            out.append(f"{ind}}}")
        else:
            out.append(f"{ind}w.array_length(static_cast<int32_t>({m}.size()), flex);")
            out.append(f"{ind}for (const auto& e : {m}) {{ {element_write(f.element, 'e')} }}")
        return
    if f.single_struct and f.nullable:
        out.append(f"{ind}if (!{m}) {{ w.i8(-1); }} else {{ w.i8(1); {m}->encode(w, v); }}")
    elif f.nullable and f.element in ("string", "bytes"):
        kind = f.element
        out.append(f"{ind}if ({m} || !({nullable_now})) w.{kind}({m} ? *{m} : decltype({m})::value_type(), flex);")
        out.append(f"{ind}else w.nullable_{kind}({m}, flex);")
    else:
        out.append(ind + element_write(f.element, m))


def collect_structs(fields, seen, order):
    for f in fields:
        if f.tagged:
            continue
        if f.is_struct:
            collect_structs(f.children, seen, order)
            name = f.name if f.type_text == "struct" else f.element
            if name not in seen:
                seen.add(name)
                order.append((name, f.children))


def gen_struct_decl(name, fields, out, ind):
    out.append(f"{ind}struct {name} {{")
    for f in fields:
        if f.tagged:
            continue
        out.append(f"{ind}  {cpp_type(f)} {f.name}{default_init(f)};")
    out.append(f"{ind}  void decode(Reader& r, int16_t v);")
    out.append(f"{ind}  void encode(Writer& w, int16_t v) const;")
    out.append(f"{ind}}};")


def gen_codec_bodies(qualified, fields, flexible, out):
    flex_expr = "false" if flexible is None else f"v >= {flexible}"
    used_v = any(not f.tagged and (f.versions != (0, None) or f.is_struct or f.nullable) for f in fields)
    for kind in ("decode", "encode"):
        sig = "Reader& r, int16_t v" if kind == "decode" else "Writer& w, int16_t v"
        const = "" if kind == "decode" else " const"
        out.append(f"void {qualified}::{kind}({sig}){const} {{")
        out.append(f"  [[maybe_unused]] const bool flex = {flex_expr};")
        if not used_v:
            out.append("  (void)v;")
        for f in fields:
            if f.tagged:
                continue
            test = version_test(f.versions)
            body = []
            (gen_decode_field if kind == "decode" else gen_encode_field)(f, body, "    ")
            if test == "true":
                out.extend(line[2:] for line in body)
            else:
                out.append(f"  if ({test}) {{")
                out.extend(body)
                out.append("  }")
        if kind == "decode":
            out.append("  if (flex) r.skip_tagged_fields();")
        else:
            out.append("  if (flex) w.empty_tagged_fields();")
        out.append("}")
        out.append("")


def camel(name):
    return name


def generate(api, stem, out_dir):
    guard_ns = "oxbow::protocol"
    h, c = [], []
    h.append("#pragma once")
    h.append(f"// Generated by tools/gen_messages.py from src/protocol/schema/{stem}.kdef. Do not edit.")
    h.append("#include <cstdint>\n#include <optional>\n#include <string>\n#include <vector>\n")
    h.append('#include "protocol/wire.h"\n')
    h.append(f"namespace {guard_ns} {{\n")
    c.append(f"// Generated by tools/gen_messages.py from src/protocol/schema/{stem}.kdef. Do not edit.")
    c.append(f'#include "protocol/messages/{stem}.h"\n')
    c.append(f"namespace {guard_ns} {{\n")
    for msg in (api.request, api.response):
        cls = api.name + ("Request" if msg.kind == "request" else "Response")
        h.append(f"struct {cls} {{")
        h.append(f"  static constexpr int16_t kApiKey = {api.key};")
        h.append(f"  static constexpr int16_t kMinVersion = {api.min};")
        h.append(f"  static constexpr int16_t kMaxVersion = {api.max};")
        h.append(f"  static constexpr int16_t kFirstFlexible = {api.flexible if api.flexible is not None else -1};")
        structs = []
        collect_structs(msg.fields, set(), structs)
        for name, fields in structs:
            gen_struct_decl(name, fields, h, "  ")
            gen_codec_bodies(f"{cls}::{name}", fields, api.flexible, c)
        for f in msg.fields:
            if f.tagged:
                continue
            h.append(f"  {cpp_type(f)} {f.name}{default_init(f)};")
        h.append("  void decode(Reader& r, int16_t v);")
        h.append("  void encode(Writer& w, int16_t v) const;")
        h.append("};\n")
        gen_codec_bodies(cls, msg.fields, api.flexible, c)
    h.append(f"}}  // namespace {guard_ns}")
    c.append(f"}}  // namespace {guard_ns}")
    write_if_changed(os.path.join(out_dir, f"{stem}.h"), "\n".join(h) + "\n")
    write_if_changed(os.path.join(out_dir, f"{stem}.cpp"), "\n".join(c) + "\n")


FIXED_SIZES = {"bool": 1, "int8": 1, "int16": 2, "int32": 4, "int64": 8, "uint16": 2, "float64": 8,
               "uuid": 16}


def throttle_position(api):
    """(first version with throttle_time_ms, its offset after fixed-size fields or -1)."""
    offset = 0
    for f in api.response.fields:
        if f.name == "throttle_time_ms":
            return f.versions[0], offset
        if f.tagged:
            continue
        if f.is_array or f.type_text not in FIXED_SIZES or f.versions != (0, None):
            offset = -1
        elif offset >= 0:
            offset += FIXED_SIZES[f.type_text]
    return -1, -1


def generate_table(apis, out_dir):
    h = ["#pragma once",
         "// Generated by tools/gen_messages.py: every API the schemas describe. Do not edit.",
         "#include <cstdint>\n",
         "namespace oxbow::protocol {\n",
         "struct ApiDescriptor {",
         "  int16_t key;",
         "  const char* name;",
         "  int16_t min_version;",
         "  int16_t max_version;",
         "  int16_t first_flexible;  // -1: never flexible",
         "  // The response's throttle_time_ms: the first version with it (-1: none), and its byte",
         "  // offset in the body when only fixed-size fields precede it (-1: after variable ones).",
         "  int16_t throttle_since;",
         "  int16_t throttle_offset;",
         "};\n",
         f"inline constexpr ApiDescriptor kApiTable[] = {{"]
    for api in sorted(apis, key=lambda a: a.key):
        flex = api.flexible if api.flexible is not None else -1
        since, offset = throttle_position(api)
        h.append(f'    {{{api.key}, "{api.name}", {api.min}, {api.max}, {flex}, {since}, {offset}}},')
    h.append("};\n")
    h.append("}  // namespace oxbow::protocol")
    write_if_changed(os.path.join(out_dir, "api_table.h"), "\n".join(h) + "\n")


def generate_any_request(apis, stems, out_dir):
    h = ["#pragma once",
         "// Generated by tools/gen_messages.py. Do not edit.",
         '#include "protocol/wire.h"\n',
         "namespace oxbow::protocol {\n",
         "// Decodes a request body of any described API and encodes it again into `out` (for fuzzing",
         "// and round-trip tests). Returns false for an API key the schemas do not describe.",
         "bool reencode_request(int16_t api_key, int16_t version, Reader& in, Writer& out);\n",
         "}  // namespace oxbow::protocol"]
    c = ["// Generated by tools/gen_messages.py. Do not edit.",
         '#include "protocol/messages/any_request.h"']
    for stem in stems:
        c.append(f'#include "protocol/messages/{stem}.h"')
    c.append("\nnamespace oxbow::protocol {\n")
    c.append("bool reencode_request(int16_t api_key, int16_t version, Reader& in, Writer& out) {")
    c.append("  switch (api_key) {")
    for api in sorted(apis, key=lambda a: a.key):
        c.append(f"    case {api.key}: {{ {api.name}Request m; m.decode(in, version); m.encode(out, version); return true; }}")
    c.append("    default: return false;")
    c.append("  }")
    c.append("}\n")
    c.append("}  // namespace oxbow::protocol")
    write_if_changed(os.path.join(out_dir, "any_request.h"), "\n".join(h) + "\n")
    write_if_changed(os.path.join(out_dir, "any_request.cpp"), "\n".join(c) + "\n")


def write_if_changed(path, text):
    if os.path.exists(path) and open(path, encoding="utf-8").read() == text:
        return
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main():
    out_dir = os.path.join(sys.argv[1], "protocol", "messages")
    os.makedirs(out_dir, exist_ok=True)
    apis = []
    stems = []
    try:
        for path in sys.argv[2:]:
            stem = os.path.splitext(os.path.basename(path))[0]
            api = parse_schema(path)
            generate(api, stem, out_dir)
            apis.append(api)
            stems.append(stem)
    except SchemaError as e:
        sys.exit(f"gen_messages: {e}")
    generate_table(apis, out_dir)
    generate_any_request(apis, stems, out_dir)


if __name__ == "__main__":
    main()
