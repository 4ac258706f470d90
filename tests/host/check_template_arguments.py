#!/usr/bin/env python3
"""Every class type that fp8q uses as the type of a template parameter must be asserted
padding-free where it is defined: `static_assert(detail::template_argument_safe<T>, ...)`.

clang 14-19 read members of a template parameter object whose type has padding at the wrong
offsets (llvm/llvm-project#146272; docs/design.md, "Class-type template arguments"). A new
policy struct used as `template <policy P>` without that assertion fails this check, which
runs as a host test (tests/host/CMakeLists.txt).

usage: check_template_arguments.py <include dir>
"""
import pathlib
import re
import sys

SCALARS = {
    "bool", "char", "int", "unsigned", "long", "short", "std::size_t", "size_t",
    "std::int8_t", "std::int16_t", "std::int32_t", "std::int64_t",
    "std::uint8_t", "std::uint16_t", "std::uint32_t", "std::uint64_t", "unsigned int",
}


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def template_heads(text):
    """The parameter lists of every `template <...>` in text."""
    for m in re.finditer(r"\btemplate\s*<", text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"<": 1, ">": -1}.get(text[i], 0)
            i += 1
        yield text[m.end():i - 1]


def params(head):
    out, depth, cur = [], 0, ""
    for ch in head:
        if ch in "<({[":
            depth += 1
        elif ch in ">)}]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return [p.split("=")[0].strip() for p in out]


def main():
    root = pathlib.Path(sys.argv[1])
    files = sorted(root.rglob("*.hpp"))
    texts = {f: strip_comments(f.read_text()) for f in files}
    every = "\n".join(texts.values())
    enums = set(re.findall(r"\benum\s+(?:class\s+|struct\s+)?(\w+)", every))
    classes = set(re.findall(r"\b(?:struct|class)\s+(\w+)\s*(?:final\s*)?[:{]", every))
    asserted = set(re.findall(r"template_argument_safe<\s*(?:fp8q::)?(\w+)\s*>", every))
    used, problems = {}, []
    for f, text in texts.items():
        for head in template_heads(text):
            for p in params(head):
                if not p or re.match(r"^(class|typename|template|auto)\b", p):
                    continue
                words = p.replace("const ", "").split()
                if len(words) < 2:
                    continue
                type_name = " ".join(words[:-1]).replace("fp8q::", "").replace("detail::", "")
                if type_name in SCALARS or type_name in enums:
                    continue
                used.setdefault(type_name, f.relative_to(root))
    for type_name, where in sorted(used.items()):
        if type_name not in classes:
            problems.append(f"{where}: template parameter of unknown type '{type_name}': make it "
                            "a scalar, an enum, or a padding-free class asserted with "
                            "detail::template_argument_safe")
        elif type_name not in asserted:
            problems.append(f"{where}: class '{type_name}' is a template parameter type but has no "
                            f"static_assert(detail::template_argument_safe<{type_name}>)")
    print("class-type template parameters:", ", ".join(sorted(used)) or "none")
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
