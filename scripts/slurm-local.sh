#!/usr/bin/env bash
# A real single-node Slurm cluster on this machine, for mwemt's Slurm tests and for trying
# `mwemt run --executor slurm` out:
#   scripts/slurm-local.sh up      install (Debian packages, if missing) and start munge, MariaDB, slurmdbd,
#                                  slurmctld and slurmd; idempotent: what already runs is left running
#   scripts/slurm-local.sh down    stop the daemons this script started (by their pid files)
#   scripts/slurm-local.sh status  say what runs
# Needs root and Debian (apt-get); works without systemd (the daemons are started directly).
# The cluster: one node (this host, its cores and memory), one partition `debug`, accounting in a MariaDB
# database through slurmdbd (so `sacct` works and a job killed before writing its result is seen to fail).
# It writes /etc/slurm/slurm.conf and slurmdbd.conf, and refuses to overwrite ones it did not write.
set -euo pipefail

MARK="# written by mwemt scripts/slurm-local.sh"
CLUSTER=mwemt
PARTITION=debug
CONF_DIR=/etc/slurm
STATE=/var/lib/mwemt-slurm          # state, spool, logs and pid files of this cluster
DB_PASSWORD=mwemt-local-slurm        # a local database user reachable only through the socket of this host
PACKAGES=(munge slurmctld slurmd slurm-client slurmdbd mariadb-server)

say() { echo "slurm-local: $*" >&2; }
die() { say "error: $*"; exit 1; }

alive() {   # alive PIDFILE: the process named in PIDFILE runs
  [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null
}

wait_for() {   # wait_for SECONDS DESCRIPTION COMMAND...
  local n=$(( $1 * 5 )) what=$2
  shift 2
  for _ in $(seq "$n"); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  die "$what did not come up within $1 s; see the logs in $STATE/log"
}

install_packages() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  command -v apt-get >/dev/null 2>&1 || die "missing ${missing[*]} and no apt-get to install them"
  say "installing ${missing[*]}"
  local apt=(apt-get -o DPkg::Lock::Timeout=300 -qq)
  for attempt in 1 2 3; do
    if DEBIAN_FRONTEND=noninteractive "${apt[@]}" update &&
       DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y --no-install-recommends "${missing[@]}" >/dev/null; then
      return 0
    fi
    say "apt-get failed (attempt $attempt of 3)"
    sleep $((attempt * 10))
  done
  die "could not install ${missing[*]}"
}

write_conf() {   # write_conf PATH MODE: stdin to PATH unless an existing PATH was not written here
  local path=$1 mode=$2 tmp
  if [ -e "$path" ] && ! grep -qF "$MARK" "$path"; then
    die "$path exists and was not written by this script; move it away to use the local cluster"
  fi
  tmp=$(mktemp "$path.XXXXXX")
  cat >"$tmp"
  chmod "$mode" "$tmp"
  if ! cmp -s "$tmp" "$path"; then CHANGED=1; fi
  mv -f "$tmp" "$path"
}
CHANGED=0

configure() {
  local host cpus mem_mb
  host=$(hostname -s)
  cpus=$(nproc --all)
  mem_mb=$(awk '/^MemTotal:/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
  mkdir -p "$CONF_DIR" "$STATE"/{ctld,spool,log,run}
  write_conf "$CONF_DIR/slurm.conf" 644 <<EOF
$MARK
ClusterName=$CLUSTER
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/spool
SlurmctldPidFile=$STATE/run/slurmctld.pid
SlurmdPidFile=$STATE/run/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
EnforcePartLimits=ALL
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
KillWait=5
MinJobAge=300
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=$PARTITION Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  write_conf "$CONF_DIR/slurmdbd.conf" 600 <<EOF
$MARK
AuthType=auth/munge
DbdHost=localhost
SlurmUser=root
PidFile=$STATE/run/slurmdbd.pid
LogFile=$STATE/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=$DB_PASSWORD
StorageLoc=slurm_acct_db
EOF
}

start_munge() {
  if pgrep -x munged >/dev/null 2>&1; then return 0; fi
  if [ ! -s /etc/munge/munge.key ]; then
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
  fi
  chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown munge:munge /run/munge /var/log/munge /var/lib/munge
  say "starting munged"
  runuser -u munge -- /usr/sbin/munged
  wait_for 10 munged sh -c 'munge -n | unmunge'
}

start_mariadb() {
  if ! mysqladmin ping >/dev/null 2>&1; then
    say "starting MariaDB"
    mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
    if [ ! -d /var/lib/mysql/mysql ]; then
      mariadb-install-db --user=mysql --datadir=/var/lib/mysql >/dev/null
    fi
    # setsid + nohup: the database outlives this script's session; its pid file is /run/mysqld/mysqld.pid
    setsid nohup mariadbd --user=mysql --pid-file=/run/mysqld/mysqld.pid \
      --socket=/run/mysqld/mysqld.sock --skip-networking \
      >"$STATE/log/mariadb.log" 2>&1 </dev/null &
    wait_for 60 MariaDB mysqladmin ping
    touch "$STATE/run/mariadb.ours"   # `down` stops only a database server that `up` started
  fi
  mysql -e "CREATE DATABASE IF NOT EXISTS slurm_acct_db;
            CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY '$DB_PASSWORD';
            GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost'; FLUSH PRIVILEGES;"
}

start_slurm() {
  if ! alive "$STATE/run/slurmdbd.pid"; then
    say "starting slurmdbd"
    slurmdbd
    wait_for 30 slurmdbd sacctmgr -n list cluster
  fi
  if ! sacctmgr -n -P list cluster format=cluster | grep -qx "$CLUSTER"; then
    sacctmgr -i add cluster "$CLUSTER" >/dev/null
  fi
  if ! alive "$STATE/run/slurmctld.pid"; then
    say "starting slurmctld"
    slurmctld
    wait_for 30 slurmctld scontrol ping
  elif [ "$CHANGED" = 1 ]; then
    say "the configuration changed: slurmctld and slurmd reread it"
    scontrol reconfigure
  fi
  if ! alive "$STATE/run/slurmd.pid"; then
    say "starting slurmd"
    slurmd
  fi
  wait_for 30 "the node" sh -c "sinfo -h -o %T | grep -Eq '^(idle|mixed|allocated)'"
  # a node left DOWN or DRAINED by an earlier stop comes back
  scontrol update nodename="$(hostname -s)" state=resume >/dev/null 2>&1 || true
  wait_for 30 "accounting" sacct -n -X -S now-1minute
}

up() {
  [ "$(id -u)" = 0 ] || die "run as root (it installs packages and starts daemons)"
  install_packages
  configure
  start_munge
  start_mariadb
  start_slurm
  local t0 out
  t0=$(date +%s%N)
  out=$(srun -N1 -n1 -t 1 echo ok) || die "a test job failed"
  [ "$out" = ok ] || die "a test job printed '$out'"
  say "up: cluster $CLUSTER, partition $PARTITION, $(nproc --all) CPUs; a test job took $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  cat >&2 <<EOF
slurm-local: try it:
  sinfo; squeue; sacct
  mwemt run configs/demo.yaml --executor slurm --systems baseline   # jobs get what the node has: no GPU here
  scripts/slurm-local.sh down
logs: $STATE/log; mwemt's job logs: RUN/slurm/JOBID/
EOF
}

stop() {   # stop NAME PIDFILE
  if alive "$2"; then
    say "stopping $1"
    kill "$(cat "$2")"
    for _ in $(seq 50); do alive "$2" || break; sleep 0.2; done
    if alive "$2"; then kill -9 "$(cat "$2")"; fi
  fi
  rm -f "$2"
}

down() {
  [ "$(id -u)" = 0 ] || die "run as root"
  if alive "$STATE/run/slurmctld.pid"; then
    squeue -h -o %i 2>/dev/null | xargs -r scancel >/dev/null 2>&1 || true
  fi
  stop slurmd "$STATE/run/slurmd.pid"
  stop slurmctld "$STATE/run/slurmctld.pid"
  stop slurmdbd "$STATE/run/slurmdbd.pid"
  if [ -e "$STATE/run/mariadb.ours" ]; then   # the database server `up` started
    stop MariaDB /run/mysqld/mysqld.pid
    rm -f "$STATE/run/mariadb.ours"
  fi
  say "down (munged is left running: other programs may use it)"
}

status() {
  for d in slurmdbd slurmctld slurmd; do
    if alive "$STATE/run/$d.pid"; then echo "$d: running (pid $(cat "$STATE/run/$d.pid"))"; else echo "$d: stopped"; fi
  done
  if mysqladmin ping >/dev/null 2>&1; then echo "mariadb: running"; else echo "mariadb: stopped"; fi
  if pgrep -x munged >/dev/null 2>&1; then echo "munged: running"; else echo "munged: stopped"; fi
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  *) echo "usage: $0 up|down|status" >&2; exit 2 ;;
esac
