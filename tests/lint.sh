#!/usr/bin/env bash
# tests/lint.sh - checks of the tree itself, run by `make test`:
#   1. no shell check tests only half of itself: in `check "msg" [ A ] && [ B ]`
#      runs check on A, then evaluates B outside it (a `\` continuation is
#      joined first);
#   2. every file a comment or document names as "Tested by", "Tests:" or
#      "see" exists, and so does every tracked-tree path (rcu/, hashtable/,
#      server/, client/, conf/, tests/, bench/, examples/, scripts/, docs/)
#      with a source or document suffix.
# Each finding prints file:line; the closing line is "N passed, M failed".
set -u
cd "$(dirname "$0")/.."
pass=0; fail=0

# --- 1. half-checked shell checks ----------------------------------------------
# Quoted text is blanked first: `check "msg" eval '[ A ] && [ B ]'` is one check.
half=$(git ls-files '*.sh' | python3 -c '
import re, sys
quoted = re.compile(r"\x27[^\x27]*\x27|\"(?:\\.|[^\"\\])*\"")
half = re.compile(r"(^|[\s;&|(])check\s[^#]*(&&|\|\|)")
for f in sys.stdin.read().split():
    buf, first = "", 0
    for n, line in enumerate(open(f, encoding="utf-8", errors="replace"), 1):
        line = line.rstrip("\n")
        if line.endswith("\\"):
            buf += line[:-1]; first = first or n
            continue
        line, at = buf + line, first or n
        buf, first = "", 0
        if line.lstrip().startswith("#"):
            continue
        if half.search(quoted.sub("Q", line)):
            print("%s:%d: %s" % (f, at, line.strip()))
')
if [ -n "$half" ]; then
	fail=$((fail + 1))
	echo "FAIL shell checks with an unquoted && or || after them (bash runs check on the first half only):"
	printf '%s\n' "$half" | cut -c1-160 | sed 's/^/    /'
else
	pass=$((pass + 1))
	echo "ok   no shell check tests only its first half"
fi

# --- 2. paths named in comments and documents ----------------------------------
missing=$(git ls-files | grep -vE '^(tests/fuzz/(corpus|regress|traffic)/|tests/server/rdb-corpus/)' |
	grep -E '(\.(c|h|sh|mk|py|md|txt|conf|in|map)|Makefile)$' | python3 -c '
import os, re, sys
tops = r"rcu|hashtable|server|client|conf|tests|bench|examples|scripts|docs|\.ci"
ext = r"\.(?:c|h|sh|mk|py|md|txt|conf|in|map|svg)"
path_re = re.compile(r"(?<![\w./$-])((?:%s)/[A-Za-z0-9_./-]*%s)(?![\w-])" % (tops, ext))
named_re = re.compile(r"(?i)\b(?:tested by|tests:|see)[ \t]+[(`\x27\"]?([A-Za-z0-9_./-]+%s)(?![\w-])" % ext)
tracked = set(l.strip() for l in os.popen("git ls-files"))
bases = set(os.path.basename(t) for t in tracked)
for f in sys.stdin.read().split():
    try:
        lines = open(f, encoding="utf-8", errors="replace").read().split("\n")
    except OSError:
        continue
    for i, l in enumerate(lines, 1):
        for m in path_re.finditer(l):
            p = m.group(1)
            if p not in tracked and not os.path.exists(p):
                print("%s:%d: %s" % (f, i, p))
        for m in named_re.finditer(l):
            p = m.group(1)
            if "/" in p:
                ok = p in tracked or os.path.exists(os.path.join(os.path.dirname(f), p))
            else:
                ok = p in bases
            if not ok and not path_re.search(p):
                print("%s:%d: %s" % (f, i, p))
')
if [ -n "$missing" ]; then
	fail=$((fail + 1))
	echo "FAIL files named in comments or documents that do not exist:"
	printf '%s\n' "$missing" | sed 's/^/    /'
else
	pass=$((pass + 1))
	echo "ok   every file named in a comment or document exists"
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
