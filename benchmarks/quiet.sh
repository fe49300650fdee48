#!/bin/bash
# A measurement aid (issue #26): on a shared machine, pause (SIGSTOP) every other python / valgrind
# process for the duration of a timing run and resume it afterwards (SIGCONT, also on Ctrl-C).
# Only for timing runs on a machine you share with your own jobs: it stops *all* of them.
# run "$@" with every python process outside this shell's autogroup stopped (re-scanned every 0.3 s)
me=$(cut -d' ' -f1 /proc/self/autogroup)
list=$(mktemp)
(
  while true; do
    for p in $(pgrep -f 'python|valgrind|grind'); do
      g=$(cut -d' ' -f1 /proc/$p/autogroup 2>/dev/null) || continue
      if [ "$g" != "$me" ]; then
        st=$(awk '{print $3}' /proc/$p/stat 2>/dev/null)
        [ "$st" != "T" ] && kill -STOP $p 2>/dev/null && echo $p >> $list
      fi
    done
    sleep 0.3
  done
) &
watcher=$!
cleanup() { kill $watcher 2>/dev/null; wait $watcher 2>/dev/null; for p in $(sort -u $list); do kill -CONT $p 2>/dev/null; done; rm -f $list; }
trap cleanup EXIT INT TERM
sleep 0.5
"$@"
