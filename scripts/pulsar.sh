#!/usr/bin/env bash
# Runs a real Apache Pulsar standalone broker for tests and the demo.
#
#   scripts/pulsar.sh start    fetch (first run), start, wait until ready, print the URLs
#   scripts/pulsar.sh stop     stop the broker that `start` started (pid file)
#   scripts/pulsar.sh status   exit 0 and print the URLs when a started broker is healthy
#   scripts/pulsar.sh url      print the URLs (exit 1 when not running)
#   scripts/pulsar.sh clean    stop, then delete the broker's data (topics, cursors)
#
# `start` prints, on stdout and nothing else:
#   PULSAR_URL=pulsar://127.0.0.1:6650
#   PULSAR_ADMIN_URL=http://127.0.0.1:8080
#   PULSAR_STARTED=1            (0 when a broker from an earlier `start` was already running;
#                                a caller should `stop` only what it started)
# Progress and errors go to stderr.
#
# The server distribution is a Maven Central artifact
# (org.apache.pulsar:pulsar-server-distribution:<v>:tar.gz:bin, ~245 MB); it is resolved with
# `mvn dependency:copy` (so the ordinary Maven settings, mirrors and ~/.m2 apply) and unpacked
# into the cache folder, outside the repository. Nothing else is downloaded.
#
# Requirements: bash, curl, tar, flock, Maven 3, and a Java 17 or 21 runtime (Pulsar 4.0 LTS).
#
# Environment (all optional):
#   THALWEG_CACHE              cache folder (default ~/.cache/thalweg); the broker lives in
#                              $THALWEG_CACHE/pulsar-<version>/{dist,conf,data,logs}
#   THALWEG_PULSAR_PORT        binary protocol port (default 6650)
#   THALWEG_PULSAR_WEB_PORT    admin/HTTP port (default 8080)
#   THALWEG_PULSAR_HEAP        JVM heap flags (default "-Xms512m -Xmx1g")
#   THALWEG_PULSAR_TIMEOUT     seconds to wait for readiness (default 240)
#   THALWEG_JAVA_HOME          JDK/JRE to run the broker (default: JAVA_HOME, then `java` on
#                              PATH, then /usr/lib/jvm/*-{17,21}-*; must be Java 17 or 21)
#   THALWEG_MAVEN_REPO         Maven local repository override (-Dmaven.repo.local), e.g. to
#                              measure a cold download
set -euo pipefail

readonly PULSAR_VERSION=4.0.6 # Pulsar 4.0 LTS; its server distribution is on Maven Central
readonly ARTIFACT="org.apache.pulsar:pulsar-server-distribution:${PULSAR_VERSION}:tar.gz:bin"

cache=${THALWEG_CACHE:-$HOME/.cache/thalweg}
base=$cache/pulsar-$PULSAR_VERSION
dist=$base/dist
port=${THALWEG_PULSAR_PORT:-6650}
web_port=${THALWEG_PULSAR_WEB_PORT:-8080}
heap=${THALWEG_PULSAR_HEAP:--Xms512m -Xmx1g}
timeout=${THALWEG_PULSAR_TIMEOUT:-240}
pidfile=$base/pulsar.pid
portsfile=$base/ports # the ports the running broker was started with
logfile=$base/logs/stdout.log

log() { echo "pulsar.sh: $*" >&2; }
die() {
  log "error: $*"
  exit 1
}

# running prints the pid of the broker `start` launched, if it is still alive.
running() {
  local pid
  pid=$(cat "$pidfile" 2>/dev/null) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  # Guard against pid reuse: the process must still be our broker.
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q PulsarStandaloneStarter || return 1
  echo "$pid"
}

load_ports() {
  # The running broker's ports win over the environment: status/url/stop describe what runs.
  if [ -f "$portsfile" ]; then
    # shellcheck disable=SC1090
    . "$portsfile"
  fi
}

print_urls() {
  echo "PULSAR_URL=pulsar://127.0.0.1:$port"
  echo "PULSAR_ADMIN_URL=http://127.0.0.1:$web_port"
}

# healthy: the broker answers its health check, which itself produces and consumes a
# heartbeat message, and the default namespace that standalone creates exists.
healthy() {
  local admin="http://127.0.0.1:$web_port/admin/v2"
  [ "$(curl -sf --max-time 10 "$admin/brokers/health" 2>/dev/null)" = ok ] || return 1
  curl -sf --max-time 5 "$admin/namespaces/public" 2>/dev/null | grep -q '"public/default"'
}

pick_java() {
  local cands=() j v
  [ -n "${THALWEG_JAVA_HOME:-}" ] && cands+=("$THALWEG_JAVA_HOME/bin/java")
  [ -n "${JAVA_HOME:-}" ] && cands+=("$JAVA_HOME/bin/java")
  command -v java >/dev/null && cands+=("$(command -v java)")
  for j in /usr/lib/jvm/*-17-* /usr/lib/jvm/*-21-* /usr/lib/jvm/*17* /usr/lib/jvm/*21*; do
    [ -x "$j/bin/java" ] && cands+=("$j/bin/java")
  done
  for j in "${cands[@]}"; do
    [ -x "$j" ] || continue
    v=$("$j" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1)
    if [ "$v" = 17 ] || [ "$v" = 21 ]; then
      # JAVA_HOME is what bin/pulsar uses.
      dirname "$(dirname "$(readlink -f "$j")")"
      return 0
    fi
  done
  die "Pulsar $PULSAR_VERSION needs Java 17 or 21 (set THALWEG_JAVA_HOME); found none"
}

fetch() {
  [ -x "$dist/bin/pulsar" ] && return 0
  command -v mvn >/dev/null || die "Maven (mvn) is required to fetch Pulsar from Maven Central"
  local t0 tmp
  t0=$(date +%s)
  tmp=$(mktemp -d "$cache/.pulsar-fetch.XXXXXX")
  log "fetching $ARTIFACT from Maven Central (first run, ~245 MB)"
  local mvn_args=(-B -q -Dstyle.color=never dependency:copy "-Dartifact=$ARTIFACT" "-DoutputDirectory=$tmp"
    -Dmdep.stripVersion=false -Dmdep.useBaseVersion=true)
  [ -n "${THALWEG_MAVEN_REPO:-}" ] && mvn_args+=("-Dmaven.repo.local=$THALWEG_MAVEN_REPO")
  # dependency:copy needs no project; run it from an empty folder so no pom.xml is picked up.
  (cd "$tmp" && mvn "${mvn_args[@]}" >&2) || {
    rm -rf "$tmp"
    die "mvn could not resolve $ARTIFACT"
  }
  local tgz=$tmp/pulsar-server-distribution-$PULSAR_VERSION-bin.tar.gz
  [ -f "$tgz" ] || die "mvn produced no $tgz"
  mkdir -p "$tmp/dist"
  tar -xzf "$tgz" -C "$tmp/dist" --strip-components=1 || die "cannot unpack $tgz"
  rm -f "$tgz"
  [ -x "$tmp/dist/bin/pulsar" ] || die "unexpected layout in $ARTIFACT (no bin/pulsar)"
  mkdir -p "$base"
  rm -rf "$dist"
  mv "$tmp/dist" "$dist" # atomic: a half-unpacked dist is never seen as complete
  rm -rf "$tmp"
  log "fetched and unpacked in $(($(date +%s) - t0)) s"
}

# write_conf derives the broker's configuration from the distribution's standalone.conf:
# loopback only, our ports, no functions worker, no transaction coordinator.
write_conf() {
  mkdir -p "$base/conf"
  local conf=$base/conf/standalone.conf
  # Later keys win in Pulsar's properties loader, so overrides are appended.
  {
    cat "$dist/conf/standalone.conf"
    cat <<EOF

### thalweg overrides (scripts/pulsar.sh) ###
bindAddress=127.0.0.1
advertisedAddress=127.0.0.1
brokerServicePort=$port
webServicePort=$web_port
functionsWorkerEnabled=false
transactionCoordinatorEnabled=false
# The in-process bookie reads this file too. It picks its own free port (in RocksDB metadata
# mode --bookkeeper-port is ignored) and would bind it on every interface; binding to the
# loopback interface keeps everything on 127.0.0.1.
listeningInterface=lo
# Tests create many short-lived topics; they are never worth the GC churn of deleting them
# under a running test, and a topic's data must outlive a paused consumer.
brokerDeleteInactiveTopicsEnabled=false
EOF
  } >"$conf.tmp"
  mv "$conf.tmp" "$conf"
}

start() {
  mkdir -p "$cache"
  exec 9>"$cache/.pulsar-$PULSAR_VERSION.lock"
  # Concurrent `start`s (several test runs at once) serialise here; the later ones find the
  # broker running and reuse it.
  flock -w "$timeout" 9 || die "another scripts/pulsar.sh start holds $cache/.pulsar-$PULSAR_VERSION.lock"
  local pid
  if pid=$(running); then
    load_ports
    if healthy; then
      log "already running (pid $pid)"
      print_urls
      echo "PULSAR_STARTED=0"
      return 0
    fi
    log "pid $pid is running but not healthy; waiting for it"
  else
    fetch
    local java_home
    java_home=$(pick_java)
    # (The in-process bookie takes a free ephemeral port of its own, on 127.0.0.1.)
    for p in "$port" "$web_port"; do
      if ss -Hltn "sport = :$p" 2>/dev/null | grep -q .; then
        die "port $p on this machine is already in use (not by a broker this script started); " \
          "set THALWEG_PULSAR_PORT / THALWEG_PULSAR_WEB_PORT"
      fi
    done
    write_conf
    mkdir -p "$base/data" "$base/logs"
    printf 'port=%s\nweb_port=%s\n' "$port" "$web_port" >"$portsfile"
    log "starting Pulsar $PULSAR_VERSION standalone on 127.0.0.1:$port (web $web_port), java $java_home"
    # bin/pulsar execs the JVM, so $! is the broker's pid. setsid: the broker outlives the
    # shell and its process group (a Ctrl-C of `make test` goes to the trap that stops it).
    JAVA_HOME=$java_home \
      PULSAR_MEM="$heap -XX:MaxDirectMemorySize=1g" \
      PULSAR_GC="-XX:+UseG1GC -XX:+PerfDisableSharedMem" \
      PULSAR_GC_LOG="-Xlog:gc:file=$base/logs/gc.log:time,uptime:filecount=2,filesize=10M" \
      PULSAR_LOG_DIR="$base/logs" \
      PULSAR_STANDALONE_CONF="$base/conf/standalone.conf" \
      PULSAR_EXTRA_OPTS="-Dpulsar.allocator.exit_on_oom=true" \
      setsid "$dist/bin/pulsar" standalone \
      --no-functions-worker --no-stream-storage \
      --advertised-address 127.0.0.1 \
      --bookkeeper-dir "$base/data/bookkeeper" \
      --metadata-dir "$base/data/metadata" \
      </dev/null >"$logfile" 2>&1 9>&- &
    pid=$!
    echo "$pid" >"$pidfile"
  fi
  local t0 deadline
  t0=$(date +%s)
  deadline=$((t0 + timeout))
  until healthy; do
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 40 "$logfile" >&2 || true
      rm -f "$pidfile"
      die "the broker exited during startup; see $logfile and $base/logs"
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      tail -n 40 "$logfile" >&2 || true
      die "the broker was not ready within ${timeout}s (pid $pid left running; scripts/pulsar.sh stop)"
    fi
    sleep 1
  done
  log "ready in $(($(date +%s) - t0)) s (pid $pid)"
  print_urls
  echo "PULSAR_STARTED=1"
}

stop() {
  local pid
  if ! pid=$(running); then
    rm -f "$pidfile"
    log "not running"
    return 0
  fi
  log "stopping pid $pid"
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 30); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 1
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "pid $pid ignored SIGTERM for 30 s; killing"
    kill -KILL "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
  fi
  rm -f "$pidfile"
  log "stopped"
}

case "${1:-}" in
start) start ;;
stop) stop ;;
status)
  if pid=$(running); then
    load_ports
    if healthy; then
      log "running (pid $pid), healthy"
      print_urls
      exit 0
    fi
    log "running (pid $pid), not ready"
    exit 2
  fi
  log "not running"
  exit 3
  ;;
url)
  running >/dev/null || die "not running (scripts/pulsar.sh start)"
  load_ports
  print_urls
  ;;
clean)
  stop
  rm -rf "$base/data" "$base/logs" "$base/conf" "$portsfile"
  log "data removed"
  ;;
*)
  echo "usage: $0 start|stop|status|url|clean" >&2
  exit 2
  ;;
esac
