#!/usr/bin/env bash
# Runs a real Apache Pulsar standalone broker for tests and the demo.
#
#   scripts/pulsar.sh start    fetch (first run), start on empty data, wait until ready, print the URLs
#   scripts/pulsar.sh stop     stop the broker that `start` started (pid file)
#   scripts/pulsar.sh status   exit 0 and print the URLs when a started broker is healthy
#   scripts/pulsar.sh url      print the URLs (exit 1 when not running)
#   scripts/pulsar.sh clean    stop, then delete the broker's data (topics, cursors)
#   scripts/pulsar.sh home     print PULSAR_HOME=<the unpacked distribution> (exit 1 before the
#                              first start fetched it); its lib/ holds the Java client
#
# `start` prints, on stdout and nothing else (KEY=VALUE lines, to eval or export):
#   PULSAR_URL=pulsar://127.0.0.1:6650
#   PULSAR_ADMIN_URL=http://127.0.0.1:8080
#   PULSAR_TLS_URL=pulsar+ssl://127.0.0.1:6651     the same broker over TLS
#   PULSAR_ADMIN_TLS_URL=https://127.0.0.1:8443
#   PULSAR_CA_FILE=<cache>/tls/ca.pem               the test CA that signs the broker's certificate
#   PULSAR_TOKEN_FILE=<cache>/auth/token.jwt        a JWT (HS256, subject "thalweg") the broker accepts
#   PULSAR_PROXY_LISTENER=proxy                     an extra advertised listener ...
#   PULSAR_PROXY_ADDR=127.0.0.1:6652                ... whose address nothing listens on: see below
#   PULSAR_HOME=<cache>/pulsar-<version>/dist      the distribution the broker runs from
#   PULSAR_PID=<pid>            the broker's process (the JVM)
#   PULSAR_STARTED=1            (0 when a broker from an earlier `start` was already running;
#                                a caller should `stop` only what it started)
# Progress and errors go to stderr. A broker started by an older version of this script
# (before TLS, tokens and the proxy listener) prints only the lines it supports; restart it
# (`stop`, `start`) to get them all.
#
# What the broker serves, all on 127.0.0.1:
#   - plaintext and TLS binary ports, plaintext and TLS web ports. The TLS certificate (SAN
#     IP:127.0.0.1, DNS:localhost) and its CA are generated once with openssl into <base>/tls.
#   - token authentication (AuthenticationProviderToken, HS256 secret key generated once with
#     openssl into <base>/auth/secret.key; the token file is minted from it by this script).
#     Clients that present no credentials are still admitted, as role "anonymous"
#     (anonymousUserRole; authorization is off), so plain pulsar:// clients keep working. On
#     the binary protocol (what clients and the source use) a client that presents a token
#     must present a valid one: the token provider refuses a bad one and the connection
#     fails. (The HTTP admin API, unlike it, serves a request with a bad token as anonymous.)
#   - advertised listeners: "internal" (the plaintext and TLS ports; what a client without a
#     listener name is given by lookups) and "proxy", which advertises pulsar://PULSAR_PROXY_ADDR.
#     The broker does not bind that address: a test runs a TCP proxy there (forwarding to
#     PULSAR_URL) and connects with service URL pulsar://PULSAR_PROXY_ADDR and listener name
#     PULSAR_PROXY_LISTENER, so that topic lookups answer with the proxy's address, as a
#     multi-broker cluster needs for a proxy not to be bypassed after the lookup. (A standalone
#     broker with loopback addresses additionally tells every client to reach the topic's
#     broker through the service URL it came in on, so on this broker a proxy in front of the
#     service URL sees all traffic with or without the listener name.)
#
# The server distribution is a Maven Central artifact
# (org.apache.pulsar:pulsar-server-distribution:<v>:tar.gz:bin, ~245 MB); it is resolved with
# `mvn dependency:copy` (so the ordinary Maven settings, mirrors and ~/.m2 apply) and unpacked
# into the cache folder, outside the repository. Nothing else is downloaded.
#
# Requirements: bash, curl, tar, flock, openssl, Maven 3, and a Java 17 or 21 runtime
# (Pulsar 4.0 LTS).
#
# Environment (all optional):
#   THALWEG_CACHE              cache folder (default ~/.cache/thalweg); the broker lives in
#                              $THALWEG_CACHE/pulsar-<version>/{dist,conf,data,logs}
#   THALWEG_PULSAR_INSTANCE    a name for a second, independent broker (letters, digits, -, _):
#                              it shares the unpacked distribution, the test CA and the token key,
#                              and has its own conf, data, logs, pid and ports files under
#                              $THALWEG_CACHE/pulsar-<version>/instances/<name>; give it other
#                              ports. Every command then acts on that instance only (a test that
#                              kills a broker starts its own, so the shared one is never touched).
#   THALWEG_PULSAR_KEEP_DATA   1: `start` keeps the data of the previous run (a restart after a
#                              kill, as a real broker restarts) instead of beginning empty
#   THALWEG_PULSAR_PORT        binary protocol port (default 6650)
#   THALWEG_PULSAR_WEB_PORT    admin/HTTP port (default 8080)
#   THALWEG_PULSAR_TLS_PORT    binary protocol TLS port (default 6651)
#   THALWEG_PULSAR_WEB_TLS_PORT admin/HTTPS port (default 8443)
#   THALWEG_PULSAR_PROXY_PORT  port of the "proxy" advertised listener, which the broker does not
#                              bind (default 6652)
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
home=$cache/pulsar-$PULSAR_VERSION # the distribution, the CA and the token key: shared
dist=$home/dist
instance=${THALWEG_PULSAR_INSTANCE:-}
base=$home
if [ -n "$instance" ]; then
  case $instance in
  *[!A-Za-z0-9_-]*) echo "pulsar.sh: error: THALWEG_PULSAR_INSTANCE=$instance: letters, digits, - and _ only" >&2 && exit 2 ;;
  esac
  base=$home/instances/$instance
fi
keep_data=${THALWEG_PULSAR_KEEP_DATA:-0}
port=${THALWEG_PULSAR_PORT:-6650}
web_port=${THALWEG_PULSAR_WEB_PORT:-8080}
tls_port=${THALWEG_PULSAR_TLS_PORT:-6651}
web_tls_port=${THALWEG_PULSAR_WEB_TLS_PORT:-8443}
proxy_port=${THALWEG_PULSAR_PROXY_PORT:-6652}
heap=${THALWEG_PULSAR_HEAP:--Xms512m -Xmx1g}
timeout=${THALWEG_PULSAR_TIMEOUT:-240}
pidfile=$base/pulsar.pid
portsfile=$base/ports # the ports the running broker was started with
logfile=$base/logs/stdout.log
tlsdir=$home/tls
authdir=$home/auth
readonly PROXY_LISTENER=proxy

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
  # A ports file written by an older version of this script names only port and web_port:
  # that broker has no TLS, tokens or proxy listener, and print_urls leaves them out.
  if [ -f "$portsfile" ]; then
    tls_port='' web_tls_port='' proxy_port=''
    # shellcheck disable=SC1090
    . "$portsfile"
  fi
}

print_urls() {
  echo "PULSAR_URL=pulsar://127.0.0.1:$port"
  echo "PULSAR_ADMIN_URL=http://127.0.0.1:$web_port"
  if [ -n "$tls_port" ]; then
    echo "PULSAR_TLS_URL=pulsar+ssl://127.0.0.1:$tls_port"
    echo "PULSAR_ADMIN_TLS_URL=https://127.0.0.1:$web_tls_port"
    echo "PULSAR_CA_FILE=$tlsdir/ca.pem"
    echo "PULSAR_TOKEN_FILE=$authdir/token.jwt"
    echo "PULSAR_PROXY_LISTENER=$PROXY_LISTENER"
    echo "PULSAR_PROXY_ADDR=127.0.0.1:$proxy_port"
  fi
  echo "PULSAR_HOME=$dist"
  local pid
  pid=$(running) && echo "PULSAR_PID=$pid"
  return 0
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
  mkdir -p "$home"
  rm -rf "$dist"
  mv "$tmp/dist" "$dist" # atomic: a half-unpacked dist is never seen as complete
  rm -rf "$tmp"
  log "fetched and unpacked in $(($(date +%s) - t0)) s"
}

# b64url encodes stdin as unpadded base64url (JWT segments).
b64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }

# make_tls creates, once, a test CA and a broker certificate it signs (RSA 2048, SAN
# IP:127.0.0.1 and DNS:localhost), in PEM; the key is PKCS#8, as the broker wants it. Both are
# remade when the broker certificate is missing or expires within a day.
make_tls() {
  if [ -s "$tlsdir/ca.pem" ] && [ -s "$tlsdir/broker.key" ] &&
    openssl x509 -checkend 86400 -noout -in "$tlsdir/broker.pem" >/dev/null 2>&1; then
    return 0
  fi
  command -v openssl >/dev/null || die "openssl is required to make the broker's test certificates"
  local tmp
  tmp=$(mktemp -d "$home/.tls.XXXXXX")
  (
    cd "$tmp"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=thalweg test CA" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
      -keyout ca.key -out ca.pem
    openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout broker.key -out broker.csr
    printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost" "basicConstraints=CA:FALSE" \
      "keyUsage=critical,digitalSignature,keyEncipherment" "extendedKeyUsage=serverAuth" >broker.ext
    openssl x509 -req -in broker.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 825 \
      -extfile broker.ext -out broker.pem
  ) >/dev/null 2>"$tmp/openssl.log" || {
    cat "$tmp/openssl.log" >&2
    rm -rf "$tmp"
    die "openssl could not make the test certificates"
  }
  chmod 600 "$tmp/ca.key" "$tmp/broker.key"
  rm -f "$tmp/broker.csr" "$tmp/broker.ext" "$tmp/ca.srl" "$tmp/openssl.log"
  rm -rf "$tlsdir"
  mv "$tmp" "$tlsdir"
  log "made a test CA and broker certificate in $tlsdir"
}

# make_auth creates, once, the HS256 secret key the broker validates tokens with (32 random
# bytes, raw, as tokenSecretKey=file:// wants) and mints token.jwt from it: header
# {"alg":"HS256"}, payload {"sub":"thalweg"}, no expiry — what `bin/pulsar tokens create`
# would make, without starting a JVM.
make_auth() {
  [ -s "$authdir/secret.key" ] && [ -s "$authdir/token.jwt" ] && return 0
  command -v openssl >/dev/null || die "openssl is required to make the broker's token key"
  local tmp hexkey unsigned sig
  tmp=$(mktemp -d "$home/.auth.XXXXXX")
  if [ -s "$authdir/secret.key" ]; then
    cp "$authdir/secret.key" "$tmp/secret.key"
  else
    openssl rand -out "$tmp/secret.key" 32 || die "openssl rand failed"
  fi
  hexkey=$(od -An -v -tx1 "$tmp/secret.key" | tr -d ' \n')
  unsigned="$(printf '{"alg":"HS256"}' | b64url).$(printf '{"sub":"thalweg"}' | b64url)"
  sig=$(printf '%s' "$unsigned" | openssl dgst -sha256 -mac HMAC -macopt "hexkey:$hexkey" -binary | b64url)
  [ -n "$sig" ] || die "openssl could not sign the test token"
  printf '%s.%s\n' "$unsigned" "$sig" >"$tmp/token.jwt"
  chmod 600 "$tmp/secret.key" "$tmp/token.jwt"
  rm -rf "$authdir"
  mv "$tmp" "$authdir"
  log "made a token secret key and token in $authdir"
}

# write_conf derives the broker's configuration from the distribution's standalone.conf:
# loopback only, our ports, no functions worker, no transaction coordinator; TLS, token
# authentication with anonymous access, and the advertised listeners described at the top.
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
# Record identity (README "Scaling out"): every entry carries the broker's per-partition index,
# and consumers see it. thalweg positions records by it and refuses messages without it.
brokerEntryMetadataInterceptors=org.apache.pulsar.common.intercept.AppendIndexMetadataInterceptor
exposingBrokerEntryMetadataToClientEnabled=true

# TLS on second ports, with the certificate make_tls generated. Clients need not present one.
brokerServicePortTls=$tls_port
webServicePortTls=$web_tls_port
tlsCertificateFilePath=$tlsdir/broker.pem
tlsKeyFilePath=$tlsdir/broker.key
tlsTrustCertsFilePath=$tlsdir/ca.pem
tlsRequireTrustedClientCertOnConnect=false

# Token authentication. A client that presents no credentials gets the anonymous role, and
# without authorization every role may do everything: clients without a token keep working.
# A client that presents a token is checked by the token provider and refused when the token
# is not valid (the anonymous role is not a fallback for failed authentication).
authenticationEnabled=true
authenticationProviders=org.apache.pulsar.broker.authentication.AuthenticationProviderToken
tokenSecretKey=file://$authdir/secret.key
anonymousUserRole=anonymous
authorizationEnabled=false

# Advertised listeners: lookups answer with the addresses of the listener the client names.
# "internal" is the broker's own ports (clients without a listener name get these); "proxy"
# advertises an address the broker does not bind (bindAddresses stays empty, so only the
# ports above are bound): a test's TCP proxy listens there.
advertisedListeners=internal:pulsar://127.0.0.1:$port,internal:pulsar+ssl://127.0.0.1:$tls_port,$PROXY_LISTENER:pulsar://127.0.0.1:$proxy_port
internalListenerName=internal
bindAddresses=
EOF
  } >"$conf.tmp"
  mv "$conf.tmp" "$conf"
}

start() {
  mkdir -p "$cache"
  local lock=$cache/.pulsar-$PULSAR_VERSION${instance:+-$instance}.lock
  exec 9>"$lock"
  # Concurrent `start`s (several test runs at once) serialise here; the later ones find the
  # broker running and reuse it. (The shared files, distribution, CA and token key, are each
  # made in a temporary folder and moved into place, so instances may start at once.)
  flock -w "$timeout" 9 || die "another scripts/pulsar.sh start holds $lock"
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
    # (The proxy listener's port is not bound by the broker, so it is not checked here.)
    for p in "$port" "$web_port" "$tls_port" "$web_tls_port"; do
      if ss -Hltn "sport = :$p" 2>/dev/null | grep -q .; then
        die "port $p on this machine is already in use (not by a broker this script started); " \
          "set THALWEG_PULSAR_PORT / THALWEG_PULSAR_WEB_PORT / THALWEG_PULSAR_TLS_PORT / THALWEG_PULSAR_WEB_TLS_PORT"
      fi
    done
    mkdir -p "$home" "$base"
    make_tls
    make_auth
    write_conf
    # Every start begins with empty data: a broker's topics are only ever a test's or the
    # demo's own, and a standalone broker restarted on the folders of one that was killed
    # (a machine stopped under it, a snapshot taken while it ran) can come up with its bookie
    # flapping between registered and deleted in the metadata store, a million log lines a
    # minute, until ledger creation fails with "Not enough non-faulty bookies available".
    # (THALWEG_PULSAR_KEEP_DATA=1 keeps it: a test's restart of a broker it killed.)
    if [ "$keep_data" != 1 ]; then
      rm -rf "$base/data" "$base/logs"
    fi
    mkdir -p "$base/data" "$base/logs"
    printf 'port=%s\nweb_port=%s\ntls_port=%s\nweb_tls_port=%s\nproxy_port=%s\n' \
      "$port" "$web_port" "$tls_port" "$web_tls_port" "$proxy_port" >"$portsfile"
    log "starting Pulsar $PULSAR_VERSION standalone on 127.0.0.1:$port (web $web_port, TLS $tls_port," \
      "web TLS $web_tls_port), java $java_home"
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
home)
  [ -x "$dist/bin/pulsar" ] || die "no distribution in $dist yet (scripts/pulsar.sh start fetches it)"
  echo "PULSAR_HOME=$dist"
  ;;
clean)
  stop
  rm -rf "$base/data" "$base/logs" "$base/conf" "$portsfile"
  log "data removed"
  ;;
*)
  echo "usage: $0 start|stop|status|url|home|clean" >&2
  exit 2
  ;;
esac
