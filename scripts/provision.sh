#!/usr/bin/env bash
# Provisions what the tests need on this kind of machine (Debian 12, root): PostgreSQL on
# 127.0.0.1:5432 and a real S3 server (Ceph radosgw on memstore, see the radosgw notes) on
# 127.0.0.1:${CAIRN_TEST_S3_PORT:-7480}. Idempotent and quick when both already answer; two shells
# may run it at once (the second waits on a lock, then finds everything up).
#
# Skips Postgres when DATABASE_URL is set, and S3 when AWS_ENDPOINT_URL_S3 is set. Knobs:
# CAIRN_TEST_S3_PORT (7480), CAIRN_TEST_S3_MON_PORT (S3 port + 10000), CAIRN_TEST_S3_DIR
# (/tmp/cairn-radosgw, or /tmp/cairn-radosgw-<port> for another port: config, data, logs, pids),
# CAIRN_TEST_S3_START_TIMEOUT (120 s).
# S3 credentials: access key cairn-test, secret cairn-test-secret-key, any region, path style.
# Cold start of radosgw: ~2 s (plus ~15 s the first time on a machine, to install the Ceph packages);
# ~0.1 s when everything already runs.
#
# Test runs (scripts/test.ts) call it with CAIRN_TEST_RUN=1: what it then starts is marked as a test
# run's, and `provision.sh stop` after the run stops what is so marked, unless another test run still
# uses it (each holds a shared lock on the service's users file while it runs, see users_lock). A
# server that was already running, or that a plain `provision.sh` started, is never stopped.
set -euo pipefail

s3_port=${CAIRN_TEST_S3_PORT:-7480}
mon_port=${CAIRN_TEST_S3_MON_PORT:-$((s3_port + 10000))}
# One folder per port, so that a second cluster on another port never replaces the first.
s3_dir=${CAIRN_TEST_S3_DIR:-/tmp/cairn-radosgw$([ "$s3_port" = 7480 ] || printf -- '-%s' "$s3_port")}
access_key=cairn-test
secret_key=cairn-test-secret-key
lock_file=/tmp/cairn-provision.lock
start_deadline=${CAIRN_TEST_S3_START_TIMEOUT:-120}
conf=$s3_dir/ceph.conf
# Marks of what a test run started; and `provision.sh users-lock postgres|s3` prints the file a test
# run holds a shared lock on while it uses the service (it needs no provision lock).
pg_mark=/tmp/cairn-postgres.started-by-test-run
s3_mark=$s3_dir.started-by-test-run
users_lock() {
  case $1 in
    postgres) printf '/tmp/cairn-postgres.users\n' ;;
    s3) printf '%s.users\n' "$s3_dir" ;;
    *) printf 'provision: users-lock: postgres or s3, not "%s"\n' "$1" >&2; exit 2 ;;
  esac
}
if [ "${1:-}" = users-lock ]; then
  users_lock "${2:-}"
  exit 0
fi
# Nothing a test run started: nothing to stop, and no need to wait for the provision lock.
if [ "${1:-}" = stop ] && [ ! -f "$s3_mark" ] && [ ! -f "$pg_mark" ]; then exit 0; fi

say() { printf 'provision: %s\n' "$*" >&2; }
die() {
  printf 'provision: FAILED: %s\n' "$1" >&2
  shift
  for hint in "$@"; do printf 'provision:   %s\n' "$hint" >&2; done
  exit 1
}

# The lock is held on fd 9 by this shell. Everything that may leave a process running
# (daemons, apt's service starts, pg_ctlcluster) is started through `unlocked`, which closes every
# descriptor above 2: a daemon would otherwise hold the lock, or a caller's pipe, for as long as it lives.
exec 9>"$lock_file"
if ! flock -n 9; then
  say "another provision run holds $lock_file; waiting"
  flock -w 900 9 || die "waited 15 min for $lock_file" "Find the other run with: fuser -v $lock_file"
fi
unlocked() {
  (
    for fd in "/proc/$BASHPID/fd/"*; do
      fd=${fd##*/}
      if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi
    done
    exec "$@"
  )
}

apt_updated=0
apt_install() {
  local log=/tmp/cairn-provision-apt.log
  export DEBIAN_FRONTEND=noninteractive
  if [ "$apt_updated" = 0 ]; then
    unlocked apt-get update -q >"$log" 2>&1 || { tail -n 20 "$log" >&2; die "apt-get update failed (log: $log)" "Check network access to the Debian mirror, then rerun."; }
    apt_updated=1
  fi
  unlocked apt-get install -y -q "$@" >>"$log" 2>&1 \
    || { tail -n 20 "$log" >&2; die "apt-get install $* failed (log: $log)" "Fix the apt error above, then rerun."; }
}

# ---------------------------------------------------------------- PostgreSQL
pg_answers() { command -v pg_isready >/dev/null && pg_isready -q -h 127.0.0.1 -p 5432; }
pg_login() { psql -h 127.0.0.1 -p 5432 -U postgres -d postgres -w -Atqc 'select 1' >/dev/null 2>&1; }

ensure_postgres() {
  if [ -n "${DATABASE_URL:-}" ]; then
    say "DATABASE_URL is set; leaving postgres alone"
    return
  fi
  if ! pg_answers; then
    if [ -z "$(ls /etc/postgresql 2>/dev/null)" ]; then
      say "installing postgresql (apt)…"
      apt_install postgresql
    fi
    local version out
    version=$(find /etc/postgresql -mindepth 1 -maxdepth 1 -printf '%f\n' | sort -V | tail -n 1)
    if ! pg_answers; then
      say "starting postgres $version/main"
      out=$(unlocked pg_ctlcluster --skip-systemctl-redirect "$version" main start </dev/null 2>&1) || {
        printf '%s\n' "$out" >&2
        tail -n 20 "/var/log/postgresql/postgresql-$version-main.log" >&2 2>/dev/null || true
        die "could not start postgres $version/main" \
          "See the log above; or point the tests at another server with DATABASE_URL=postgres://…"
      }
    fi
    local deadline=$((SECONDS + 30))
    until pg_answers; do
      [ "$SECONDS" -lt "$deadline" ] || die "postgres did not answer on 127.0.0.1:5432 within 30 s" \
        "Check /var/log/postgresql/, or set DATABASE_URL to a server you run yourself."
      sleep 0.2
    done
    # Up now and not before (started here, or by apt's install): a test run's to stop.
    if [ "${CAIRN_TEST_RUN:-}" = 1 ]; then printf '%s\n' "$version" >"$pg_mark"; else rm -f "$pg_mark"; fi
  fi
  if ! pg_login; then
    # A stock Debian cluster asks for a password over TCP; the tests log in as postgres with none.
    # Over the socket, as the postgres OS user (peer auth), we can still get in and allow it.
    local hba
    hba=$(runuser -u postgres -- psql -p 5432 -d postgres -Atqc 'show hba_file' 2>/dev/null || true)
    if [ -n "$hba" ] && [ -f "$hba" ] && ! grep -q '# cairn provision' "$hba"; then
      say "allowing passwordless login over 127.0.0.1 in $hba"
      sed -i '1i host all all 127.0.0.1/32 trust # cairn provision\nhost all all ::1/128 trust # cairn provision' "$hba"
      runuser -u postgres -- psql -p 5432 -d postgres -Atqc 'select pg_reload_conf()' >/dev/null
    fi
    pg_login || die "postgres answers but user postgres cannot log in without a password" \
      "Allow trust for 127.0.0.1 in pg_hba.conf, or set DATABASE_URL with a password."
  fi
  say "postgres ok"
}

# ---------------------------------------------------------------- S3 (radosgw)
# True when an HTTP server answers on the S3 port.
s3_answers() {
  # shellcheck disable=SC2016 # $1 and $line belong to the inner shell
  timeout 3 bash -c '
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    printf "GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" >&3
    IFS= read -r line <&3 && [[ $line == HTTP/1.* ]]' _ "$s3_port" 9>&- 2>/dev/null
}

# Pids of Ceph daemons started with this folder's config (argv holds "-c <conf>").
our_pids() {
  local want=$1 p a
  local -a args
  for p in /proc/[0-9]*; do
    mapfile -d '' args 2>/dev/null <"$p/cmdline" || continue
    if [ "${#args[@]}" = 0 ] || [ "${args[0]##*/}" != "$want" ]; then continue; fi
    for a in "${args[@]:1}"; do
      if [ "$a" = "$conf" ]; then printf '%s\n' "${p#/proc/}"; break; fi
    done
  done
  return 0
}

show_log() {
  local name=$1
  if [ -s "$s3_dir/log/$name.log" ]; then
    printf -- '--- last lines of %s ---\n' "$s3_dir/log/$name.log" >&2
    tail -n 25 "$s3_dir/log/$name.log" >&2
  fi
  if [ -s "$s3_dir/log/$name.out" ]; then
    printf -- '--- %s ---\n' "$s3_dir/log/$name.out" >&2
    tail -n 15 "$s3_dir/log/$name.out" >&2
  fi
}

fail_start() { # step, log name
  show_log "$2"
  stop_ours
  die "$1 (logs in $s3_dir/log)" \
    "Rerun scripts/provision.sh: it wipes $s3_dir and starts fresh." \
    "If it fails again, look at the log above, or use another S3 server with AWS_ENDPOINT_URL_S3=…"
}

# Starts a daemon (it forks once initialised); a start that fails at once is retried. (ceph-osd
# used to exit with "wrong fsid" in one start of four: with auth none, its first monitor command,
# the device-class update, could leave before the monitor map arrived. The OSD now sends no
# command at start, see [osd] in the config, but a retry costs nothing.)
start_daemon() { # log name, failure message, command…
  local name=$1 what=$2 attempt
  shift 2
  for attempt in 1 2 3; do
    unlocked "$@" </dev/null >"$s3_dir/log/$name.out" 2>&1 && return 0
    [ "$attempt" = 3 ] || say "$name exited at start (attempt $attempt of 3), retrying"
  done
  fail_start "$what" "$name"
}

# Alive and not a zombie (a daemon's parent is init, which may reap late).
alive() { local state; state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) && [ "$state" != Z ]; }

stop_ours() {
  local -a pids
  local p deadline
  mapfile -t pids < <(our_pids radosgw; our_pids ceph-osd; our_pids ceph-mon)
  [ "${#pids[@]}" -gt 0 ] || return 0
  # SIGKILL: memstore keeps nothing worth a clean stop, and radosgw waits up to 120 s on SIGTERM
  # when its monitor is already gone.
  say "stopping leftover Ceph daemons of $s3_dir (pids ${pids[*]})"
  kill -9 "${pids[@]}" 2>/dev/null || true
  deadline=$((SECONDS + 10))
  for p in "${pids[@]}"; do
    while alive "$p" && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
  done
}

cluster_running() {
  [ -n "$(our_pids ceph-mon)" ] && [ -n "$(our_pids ceph-osd)" ] && [ -n "$(our_pids radosgw)" ]
}

ensure_user() {
  [ -f "$s3_dir/user.ok" ] && return 0
  local out
  if ! out=$(timeout 60 radosgw-admin -c "$conf" user info --uid="$access_key" 2>&1) \
    || ! grep -q "\"$access_key\"" <<<"$out"; then
    out=$(timeout 60 radosgw-admin -c "$conf" user create --uid="$access_key" --display-name="Cairn tests" \
      --access-key="$access_key" --secret-key="$secret_key" --max-buckets=100000 2>&1) \
      || { printf '%s\n' "$out" >&2; fail_start "radosgw-admin user create failed" client.admin; }
  fi
  : >"$s3_dir/user.ok"
}

render_conf() { # fsid
  cat <<EOF
# Written by scripts/provision.sh: a throwaway one-OSD memstore cluster for tests.
[global]
fsid = $1
mon host = v1:127.0.0.1:$mon_port
mon initial members = a
public addr = 127.0.0.1
ms bind msgr2 = false
auth cluster required = none
auth service required = none
auth client required = none
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
mon allow pool size one = true
mon warn on pool no redundancy = false
mon max pg per osd = 1000
# radosgw creates ~7 pools, one monitor round each: 0.1 s rounds instead of 1 s take a cold start
# from ~12 s to ~2 s, and the first bucket (3 more pools) from ~7 s to ~1 s.
paxos propose interval = 0.1
osd crush chooseleaf type = 0
osd objectstore = memstore
memstore device bytes = 4294967296
run dir = $s3_dir/run
pid file = $s3_dir/run/\$name.pid
log file = $s3_dir/log/\$name.log
mon cluster log file = $s3_dir/log/cluster.log
crash dir = $s3_dir/crash
keyring = $s3_dir/keyring
admin socket = $s3_dir/run/\$name.\$pid.asok

[mon]
mon data = $s3_dir/mon-\$id

[osd]
osd data = $s3_dir/osd-\$id
# The OSD is placed in the CRUSH map by this script before it starts (see start_cluster).
osd class update on start = false
osd crush update on start = false

[client.rgw.a]
rgw frontends = beast endpoint=127.0.0.1:$s3_port
rgw data = $s3_dir/rgw
rgw crypt require ssl = false
rgw lc debug interval = 10
EOF
}

# Names the config this version of the script writes, so that a cluster started by an older
# version (other settings) gets restarted rather than reused.
conf_id() { render_conf - | sha256sum | cut -c1-16; }

write_conf() {
  render_conf "$(cat /proc/sys/kernel/random/uuid)" >"$conf"
  conf_id >"$s3_dir/conf.id"
}

start_cluster() {
  local started=$SECONDS
  say "starting radosgw in $s3_dir (~2 s)…"
  stop_ours
  if [ -e "$s3_dir" ]; then
    # Only ever wipe a folder this script made (or an empty one).
    [ -f "$conf" ] || [ -z "$(ls -A "$s3_dir")" ] \
      || die "$s3_dir exists but holds no ceph.conf; refusing to wipe it" "Remove it yourself or set CAIRN_TEST_S3_DIR."
    rm -rf "$s3_dir"
  fi
  mkdir -p "$s3_dir"/{run,log,crash,rgw,mon-a,osd-0}
  write_conf

  ceph-authtool --create-keyring "$s3_dir/keyring" --gen-key -n mon. --cap mon 'allow *' >"$s3_dir/log/mkfs.out" 2>&1 \
    || fail_start "ceph-authtool failed" mkfs
  monmaptool --create --addv a "[v1:127.0.0.1:$mon_port]" --fsid "$(sed -n 's/^fsid = //p' "$conf")" \
    "$s3_dir/monmap" >>"$s3_dir/log/mkfs.out" 2>&1 || fail_start "monmaptool failed" mkfs
  ceph-mon -c "$conf" --mkfs -i a --monmap "$s3_dir/monmap" --keyring "$s3_dir/keyring" \
    >>"$s3_dir/log/mkfs.out" 2>&1 || fail_start "ceph-mon --mkfs failed" mon.a
  start_daemon mon.a "ceph-mon did not start (is port $mon_port free? set CAIRN_TEST_S3_MON_PORT)" \
    ceph-mon -c "$conf" -i a

  ceph-osd -c "$conf" -i 0 --mkfs </dev/null >>"$s3_dir/log/mkfs.out" 2>&1 || fail_start "ceph-osd --mkfs failed" osd.0
  timeout 60 ceph -c "$conf" --connect-timeout 50 osd new "$(cat "$s3_dir/osd-0/fsid")" 0 \
    >>"$s3_dir/log/mkfs.out" 2>&1 || { show_log mkfs; fail_start "could not register the OSD with the monitor" mon.a; }
  timeout 60 ceph -c "$conf" --connect-timeout 50 osd crush add osd.0 1.0 host=localhost root=default \
    >>"$s3_dir/log/mkfs.out" 2>&1 || { show_log mkfs; fail_start "could not place the OSD in the CRUSH map" mon.a; }
  start_daemon osd.0 "ceph-osd did not start" ceph-osd -c "$conf" -i 0
  start_daemon client.rgw.a "radosgw did not start (is port $s3_port free? set CAIRN_TEST_S3_PORT)" \
    radosgw -c "$conf" -n client.rgw.a

  # radosgw creates its pools before it listens: that is most of the wait.
  local deadline=$((SECONDS + start_deadline))
  until s3_answers; do
    [ -n "$(our_pids ceph-mon)" ] || fail_start "ceph-mon exited during start" mon.a
    [ -n "$(our_pids ceph-osd)" ] || fail_start "ceph-osd exited during start" osd.0
    [ -n "$(our_pids radosgw)" ] || fail_start "radosgw exited during start" client.rgw.a
    [ "$SECONDS" -lt "$deadline" ] || fail_start "radosgw did not answer on port $s3_port within $start_deadline s" client.rgw.a
    sleep 0.25
  done
  ensure_user
  if [ "${CAIRN_TEST_RUN:-}" = 1 ]; then : >"$s3_mark"; else rm -f "$s3_mark"; fi
  say "radosgw started in $((SECONDS - started)) s"
}

ensure_s3() {
  if [ -n "${AWS_ENDPOINT_URL_S3:-}" ]; then
    say "AWS_ENDPOINT_URL_S3 is set; leaving S3 alone"
    return
  fi
  if s3_answers; then
    if cluster_running && [ "$(cat "$s3_dir/conf.id" 2>/dev/null)" = "$(conf_id)" ]; then
      ensure_user
      say "s3 ok at http://127.0.0.1:$s3_port"
      return
    fi
    [ -n "$(our_pids radosgw)" ] || die "something other than this folder's radosgw answers on port $s3_port" \
      "Stop it, or use it with AWS_ENDPOINT_URL_S3=http://127.0.0.1:$s3_port, or pick another port with CAIRN_TEST_S3_PORT."
    if cluster_running; then
      say "this script's Ceph settings changed since radosgw started; restarting it"
    else
      say "radosgw answers but its monitor or OSD is gone; restarting"
    fi
  fi
  if ! command -v radosgw >/dev/null || ! command -v ceph-osd >/dev/null || ! command -v ceph-mon >/dev/null; then
    say "installing Ceph (ceph-mon ceph-osd radosgw ceph-common, ~60 MB, apt)…"
    apt_install --no-install-recommends ceph-mon ceph-osd radosgw ceph-common
  fi
  start_cluster
  say "s3 ok at http://127.0.0.1:$s3_port"
}

# ---------------------------------------------------------------- Chromium (browser tests)
# Debian's chromium: playwright-core drives it; a browser download of its own cannot work here.
ensure_chromium() {
  if [ -x "${CAIRN_CHROMIUM:-/usr/bin/chromium}" ]; then
    say "chromium ok"
    return
  fi
  say "installing chromium (apt, ~100 MB)…"
  apt_install --no-install-recommends chromium
  say "chromium ok"
}

# ---------------------------------------------------------------- stop (after a test run)
# `provision.sh stop` stops each service a test run started (its mark) once no test run holds the
# service's users lock any more: the last run out stops it. The provision lock is held meanwhile, so a run that is starting
# either sees the service stopped (and starts it again) or holds its lock first (and keeps it).

# True when no test run holds the service's users lock (it is then ours until we close fd 8).
unused() {
  exec 8>"$(users_lock "$1")"
  flock -n -x 8
}

stop_marked() {
  if [ -z "${AWS_ENDPOINT_URL_S3:-}" ] && [ -f "$s3_mark" ]; then
    if unused s3; then
      stop_ours
      rm -f "$s3_mark"
      say "stopped the radosgw this test run started (port $s3_port)"
    else
      say "radosgw on port $s3_port is still used by another test run; the last one stops it"
    fi
    exec 8>&-
  fi
  if [ -z "${DATABASE_URL:-}" ] && [ -f "$pg_mark" ]; then
    if unused postgres; then
      local version
      version=$(cat "$pg_mark")
      unlocked pg_ctlcluster --skip-systemctl-redirect "$version" main stop -m fast </dev/null >&2 \
        || die "could not stop postgres $version/main"
      rm -f "$pg_mark"
      say "stopped the postgres $version/main this test run started"
    else
      say "postgres is still used by another test run; the last one stops it"
    fi
    exec 8>&-
  fi
}

case ${1:-} in
  '')
    ensure_postgres
    ensure_s3
    ensure_chromium
    ;;
  stop) stop_marked ;;
  *) die "unknown command '$1' (none to provision, stop, or users-lock postgres|s3)" ;;
esac
