#!/usr/bin/env bash
# Record the peak RSS (VmHWM, kB) of running `spandep train` processes every 20 s: benchmarks/scripts/watch_rss.sh [LOG]
while pgrep -f "spandep train" > /dev/null; do
  for pid in $(pgrep -f "spandep train"); do
    echo "$(date +%T) $pid $(tr '\0' ' ' < /proc/$pid/cmdline | awk '{print $4}') $(grep VmHWM /proc/$pid/status | awk '{print $2}')"
  done >> ${1:-runs/rss.log}
  sleep 20
done
