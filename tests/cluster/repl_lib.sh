# tests/cluster/repl_lib.sh - shell helpers of the replication tests
# (test_replication.sh, test_master.sh), sourced after scripts/lib.sh.  The
# caller defines m(), redis-cli to the master.

# field NAME: the value of INFO field NAME read on stdin.
field() { tr -d '\r' | awk -F: -v f="$1" '$1 == f { print $2 }'; }

# synced PORT: until the replica on PORT is up and at the master's offset
# (30 s at most); says how far it got.
synced() {
  local i mo ro st
  for i in $(seq 1 300); do
    mo=$(m info replication | field master_repl_offset)
    ro=$(redis-cli -p "$1" info replication | field slave_repl_offset)
    st=$(redis-cli -p "$1" info replication | field master_link_status)
    [ "$st" = up ] && [ -n "$mo" ] && [ "$mo" = "$ro" ] && { echo "offset $ro"; return 0; }
    sleep 0.1
  done
  echo "link $st, master offset $mo, replica offset $ro"
  return 1
}

# dataset_cmds: the commands of a loaded data set beyond redis-benchmark's
# keys: TTLs, db 3, a 30 KB value, hashes, a binary key (for redis-cli's stdin).
dataset_cmds() {
  for i in $(seq 1 300); do echo "SET t:$i v$i EX $((1000 + i))"; done
  for i in $(seq 1 100); do echo "PSETEX pt:$i 900000 p$i"; done
  echo "SELECT 3"
  for i in $(seq 1 200); do echo "SET db3:$i $i"; done
  echo "SELECT 0"
  echo "SET big $(head -c 30000 /dev/zero | tr '\0' 'x')"
  for i in $(seq 1 50); do echo "HSET h:$i f1 v$i f2 $i"; done
}
