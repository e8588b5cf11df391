#!/bin/sh
# Every public function that reaches a context hands its errors to the
# context's error handler (deso/deso.h, "error handlers";
# deso/runtime/api.h): scripts/check-handler.sh
#   For each function declared in deso/deso.h with an argument that reaches
#   a context (deso_ctx *, a vector, matrix, scalar, sparse matrix or operator
#   handle, deso_sarg, or a handle to destroy), its definition in deso/ must call deso__raise:
#   a wrapper of api_*.c, or a function that calls it itself.  A public
#   function added to deso.h and defined without one fails here, naming it.
#   The functions that cannot reach a context's handler are listed below.
# Prints "handler: N functions checked" or the offenders; exits non-zero on
# any.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
python3 - "$root" <<'EOF'
import glob, re, sys
root = sys.argv[1]
# No handler to invoke: deso_init has no context yet; the setters report
# on a context that is not live; deso_errors_abort is a handler.
EXEMPT = {"deso_init", "deso_set_error_handler", "deso_get_error_handler",
          "deso_errors_abort"}
hdr = open(root + "/deso/deso.h").read()
hdr = re.sub(r"/\*.*?\*/", "", hdr, flags=re.S)
reach = re.compile(r"\bdeso_(ctx|vec|mat|scalar|spmat|op)\s*\*|\bdeso_sarg\b")
public = []
for name, params in re.findall(r"deso_err\s+(deso_[a-z0-9_]+)\s*\(([^;]*?)\)\s*;",
                               hdr, flags=re.S):
    if name not in EXEMPT and reach.search(params):
        public.append(name)
src = {}
for path in glob.glob(root + "/deso/**/*.c", recursive=True):
    src[path] = open(path).read()
def body_of(name):
    """The text of name's definition (to its closing brace at column 0), or
    of the macro a `MACRO(name, ...)` line instantiates."""
    for path, s in src.items():
        m = re.search(r"^deso_err " + name + r"\(", s, flags=re.M)
        if m:
            end = s.find("\n}", m.end())
            return s[m.start():end]
        m = re.search(r"^([A-Z_]+)\(" + name + r",", s, flags=re.M)
        if m:
            d = re.search(r"#define " + m.group(1) + r"\(.*?\n\n", s, flags=re.S)
            return d.group(0) if d else ""
    return None
bad = []
for name in public:
    body = body_of(name)
    if body is None:
        bad.append(name + ": no definition found under deso/")
    elif "deso__raise(" not in body:
        bad.append(name + ": its definition does not call deso__raise")
for b in bad:
    print("handler: " + b)
print("handler: %d functions checked, %d without the handler"
      % (len(public), len(bad)))
sys.exit(1 if bad else 0)
EOF
