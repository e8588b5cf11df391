#!/usr/bin/env python3
"""Writes the solver-loop diffs of the examples into README.md.

For each pair (plain-CBLAS twin, deso version) in examples/, the lines from
the first one matching START up to the first one after it matching END
(that line included when the pair says so) are cut from both files, and
`diff -u` of the two cuts replaces what stands between README's markers
<!-- diff:NAME:begin --> and <!-- diff:NAME:end -->.
Run from the repository's root:  python3 scripts/readme_diffs.py
With --check it writes nothing and fails when README.md is out of date
(make check-krylov runs it so).
"""
import difflib
import re
import sys

# (name, START, END, END's line included)
PAIRS = [
    ("cg", r"--repeat: the whole solve again", r"double residual", True),
    ("bicgstab", r"copy\(n, b, 1, r, 1\)", r"the true residual", False),
    ("pcg", r"copy\(n, b, 1, r, 1\)", r"the true residual", False),
    ("gmres", r"dnrm2\(n, b, 1", r"the true residual", False),
    ("lanczos", r"dnrm2\(n, v, 1", r"^    (printf|if \(rank0\))", False),
]


def cut(path, start, end, inclusive):
    lines = open(path).read().split("\n")
    i = next(k for k, l in enumerate(lines) if re.search(start, l))
    j = next(k for k in range(i + 1, len(lines)) if re.search(end, lines[k]))
    return lines[i:j + 1 if inclusive else j]


def section(name, start, end, inclusive):
    twin = "examples/%s_cblas.c" % name
    mine = "examples/%s.c" % name
    diff = difflib.unified_diff(cut(twin, start, end, inclusive),
                                cut(mine, start, end, inclusive),
                                twin, mine, n=100, lineterm="")
    return "```diff\n" + "\n".join(diff) + "\n```"


def main():
    text = open("README.md").read()
    for name, start, end, inclusive in PAIRS:
        begin = "<!-- diff:%s:begin -->" % name
        stop = "<!-- diff:%s:end -->" % name
        if begin not in text or stop not in text:
            sys.exit("README.md has no markers for %s" % name)
        head, rest = text.split(begin, 1)
        _, tail = rest.split(stop, 1)
        text = head + begin + "\n" + section(name, start, end, inclusive) + "\n" + stop + tail
    if sys.argv[1:] == ["--check"]:
        if text != open("README.md").read():
            sys.exit("README.md: the solver-loop diffs are out of date; "
                     "run python3 scripts/readme_diffs.py")
        return
    open("README.md", "w").write(text)


if __name__ == "__main__":
    main()
