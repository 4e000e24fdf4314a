#!/bin/bash
# The server's RSS growth during its first answer of every row of a data set as Parquet (issue 45), as production
# runs it: `bash bench/first-export-rss.sh [data set id] [servers]` starts the built server (`npm run build` first)
# on the data dir's database (DATA_DIR, default .data), waits until its row indexes are in, reads the unfiltered query
# as Parquet with curl while sampling the server's VmRSS every 25 ms, stops it; once per server. Each line also goes
# to bench/results/first-export-rss.txt.
set -euo pipefail
ID=${1:-b5000000-0000-4000-8000-000000000005}
SERVERS=${2:-3}
mkdir -p bench/results
for run in $(seq 1 "$SERVERS"); do
  PORT=$((40000 + RANDOM % 10000))
  LOG=$(mktemp)
  MALLOC_MMAP_THRESHOLD_=131072 DATA_DIR=${DATA_DIR:-.data} PORT=$PORT HOST=127.0.0.1 LOG_LEVEL=warn SEED_ON_START=false \
    node --enable-source-maps dist/server.mjs >"$LOG" 2>&1 &
  PID=$!
  until grep -q "Service listening" "$LOG"; do
    kill -0 $PID 2>/dev/null || { cat "$LOG"; exit 1; }
    sleep 0.2
  done
  BASE="http://127.0.0.1:$PORT/v1/data-sets/$ID/query"
  curl -sf -o /dev/null "$BASE?geographicLevels.eq=NAT"
  until curl -s "http://127.0.0.1:$PORT/metrics" | grep -q '^statistics_row_index_versions{state="loading"} 0$'; do sleep 0.3; done
  sleep 2
  BEFORE=$(awk '/VmRSS/ {print $2}' /proc/$PID/status)
  PEAK=$BEFORE
  START=$(date +%s.%N)
  curl -sf -o /dev/null -H 'accept: application/vnd.apache.parquet' "$BASE" &
  CLIENT=$!
  while kill -0 $CLIENT 2>/dev/null; do
    RSS=$(awk '/VmRSS/ {print $2}' /proc/$PID/status)
    if [ "$RSS" -gt "$PEAK" ]; then PEAK=$RSS; fi
    sleep 0.025
  done
  wait $CLIENT
  LINE="$(date -u +%FT%TZ) $ID server $run: RSS before $((BEFORE / 1024)) MB, growth $(((PEAK - BEFORE) / 1024)) MB, $(echo "$(date +%s.%N) - $START" | bc | cut -c1-5) s; load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "$LINE" | tee -a bench/results/first-export-rss.txt
  kill -TERM $PID
  wait $PID 2>/dev/null || true
  rm -f "$LOG"
done
