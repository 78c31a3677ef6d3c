#!/usr/bin/env python3
"""Holds every project #include in src/ to the dependency table of src/README.md.

Each table row names a folder (`storage/`, `broker/net/`) and, in its last column, what it may
depend on. A name there is a top-level folder (the whole library, sub-folders included) or, in a
sub-folder's row, a sibling sub-folder; the parent written as `broker/` means the parent's own
files only. A file belongs to the deepest row whose folder contains it. Including a header of one's
own folder is always allowed. Exits 1 listing each include that no row allows.
"""

import pathlib
import re
import sys

SRC = pathlib.Path(__file__).resolve().parent.parent / "src"
ROW = re.compile(r"^\| `([a-z_/]+)/` \|(.*)\|([^|]*)\|\s*$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+(?:/[a-z_]+)*)/[A-Za-z0-9_.]+"', re.M)
WORD = re.compile(r"`?([a-z_]+)/?`?")


def read_rows():
    rows = {}
    for line in (SRC / "README.md").read_text().splitlines():
        m = ROW.match(line)
        if m:
            rows[m.group(1)] = m.group(3)
    return rows


def allowed_folders(folder, cell, rows):
    """The folders `folder` may include from: (path, whole) with whole = sub-folders too."""
    parent = folder.rsplit("/", 1)[0] if "/" in folder else None
    top = {f for f in rows if "/" not in f}
    out = {(folder, True)}
    for word in WORD.findall(re.sub(r"\([^)]*\)", "", cell)):
        if parent and word == parent:
            out.add((parent, False))
        elif parent and f"{parent}/{word}" in rows:
            out.add((f"{parent}/{word}", True))
        elif word in top:
            out.add((word, True))
    if "its sub-folders" in cell:
        out.update((f, True) for f in rows if f.startswith(folder + "/"))
    return out


def owner(path, rows):
    """The deepest row folder containing `path` (a folder path relative to src)."""
    parts = path.split("/")
    for n in range(len(parts), 0, -1):
        candidate = "/".join(parts[:n])
        if candidate in rows:
            return candidate
    return None


def permits(allowed, target):
    for folder, whole in allowed:
        if target == folder or (whole and target.startswith(folder + "/")):
            return True
    return False


def main():
    rows = read_rows()
    problems = []
    for source in sorted(SRC.rglob("*")):
        if source.suffix not in (".h", ".cpp") or not source.is_file():
            continue
        rel = source.relative_to(SRC)
        folder = owner(rel.parent.as_posix(), rows)
        if folder is None:
            problems.append(f"src/{rel}: its folder has no row in src/README.md")
            continue
        allowed = allowed_folders(folder, rows[folder], rows)
        for included in INCLUDE.findall(source.read_text(errors="replace")):
            target = owner(included, rows)
            if target is None or permits(allowed, target):
                continue
            problems.append(f"src/{rel}: includes {included}/ but {folder}/ may not depend on {target}/")
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} include(s) break the dependency table of src/README.md")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
