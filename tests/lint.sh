#!/usr/bin/env bash
# tests/lint.sh - checks of the tree itself, run by `make test`:
#   1. no shell check tests only half of itself: in `check "msg" [ A ] && [ B ]`
#      runs check on A, then evaluates B outside it (a `\` continuation is
#      joined first);
#   2. every file a comment or document names as "Tested by", "Tests:" or
#      "see" exists, and so does every tracked-tree path (rcu/, hashtable/,
#      server/, client/, conf/, tests/, bench/, examples/, scripts/, docs/)
#      with a source or document suffix;
#   3. server/ is layered (docs/server-layers.md): a file includes only the
#      server headers of its own layer or below, every server file has a
#      layer, and no two server files include each other, directly or not.
# Each finding prints file:line; the closing line is "N passed, M failed".
set -u
cd "$(dirname "$0")/.."
pass=0; fail=0

# report FINDINGS FAIL-TEXT OK-TEXT: count one check, printing its findings.
report() {
	if [ -n "$1" ]; then
		fail=$((fail + 1))
		echo "FAIL $2:"
		printf '%s\n' "$1" | cut -c1-160 | sed 's/^/    /'
	else
		pass=$((pass + 1))
		echo "ok   $3"
	fi
}

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
report "$half" "shell checks with an unquoted && or || after them (bash runs check on the first half only)" \
	"no shell check tests only its first half"

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
report "$missing" "files named in comments or documents that do not exist" \
	"every file named in a comment or document exists"

# --- 3. server/ layers ----------------------------------------------------------
# The table is docs/server-layers.md's; a new server file needs a row here.
layers=$(python3 -c '
import os, re
layer = {}
for n, mods in enumerate([
    "util lathist bitops hval sval zval lval",         # 0 helpers, bit-string arithmetic, the hash, set and sorted set value encodings, the list value
    "config config_rewrite log",                       # 1 option rows and their registry, the log
    "server",                           # 2 the process state, wakeups
    "stats",                            # 3 counters
    "conn request reply tls",           # 4 the connection engine, RESP in and out
    "client db db_set multi tracking notify mem evict rdb persist pubsub slowlog latency monitor pause repl replm block",  # 5 registry, keyspace, transactions, tracking, notifications, memory, snapshots, pub/sub
    "cmd keyspecs cmd_docs script",  # 6 the command table and dispatch, the Lua engine
    "cmd_conn cmd_string cmd_bit cmd_hash cmd_set cmd_zset cmd_sort cmd_list cmd_keys cmd_db cmd_expire cmd_server cmd_client cmd_object cmd_dump cmd_multi cmd_tracking cmd_pubsub cmd_admin cmd_debug cmd_script cmd_repl propagate info module module_api module_dict module_type module_keys module_block",  # 7 handlers, the module loader and its API
    "net main",                         # 8 event loops, the process
]):
    for m in mods.split():
        layer[m] = n
inc = re.compile(r"#include \"server/(\w+)\.h\"")
graph = {}
for f in sorted(os.listdir("server")):
    if not f.endswith((".c", ".h")):
        continue
    me = f.rsplit(".", 1)[0]
    if me not in layer:
        print("server/%s: no layer (add it to tests/lint.sh and docs/server-layers.md)" % f)
        continue
    for i, l in enumerate(open("server/" + f), 1):
        m = inc.match(l)
        if not m or m.group(1) == me:
            continue
        h = m.group(1)
        graph.setdefault(me, set()).add(h)
        if layer.get(h, 99) > layer[me]:
            print("server/%s:%d: includes server/%s.h, a higher layer (%d > %d)" % (f, i, h, layer.get(h, 99), layer[me]))
# include cycles: depth-first search, reporting one cycle per back edge
state = {}
def dfs(v, path):
    state[v] = 1
    for w in sorted(graph.get(v, ())):
        if state.get(w) == 1:
            print("include cycle: " + " -> ".join(path[path.index(w):] + [w]))
        elif w not in state:
            dfs(w, path + [w])
    state[v] = 2
for v in sorted(graph):
    if v not in state:
        dfs(v, [v])
')
report "$layers" "server/ layering (docs/server-layers.md)" \
	"server/ files include only their own layer or below, with no cycle"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
