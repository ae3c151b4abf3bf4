#!/usr/bin/env bash
# Runs a command beside a private PostgreSQL cluster, for the shipping tests:
# initdb into a temporary directory (as the `postgres` user when run as root;
# PostgreSQL refuses to run as root), started on a free loopback port with its
# unix socket in that directory, stopped and removed when the command ends.
# The command sees:
#   EVENTLOG_TEST_POSTGRES_URL      postgres://postgres@127.0.0.1:PORT/postgres
#   EVENTLOG_TEST_POSTGRES_RESTART  a script that crashes the server
#                                   (pg_ctl stop -m immediate) and starts it again
# Usage: bash Scripts/with-postgres.sh swift test --skip-build
# (The command's standard input is /dev/null.)
set -euo pipefail
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
  echo "with-postgres: no PostgreSQL server under /usr/lib/postgresql (Scripts/install-dependencies.sh installs it)" >&2
  exit 1
fi
dir=$(mktemp -d /tmp/eventlog-postgres.XXXXXX)
as_postgres=()
if [ "$(id -u)" = 0 ]; then
  chown postgres: "$dir"
  as_postgres=(runuser -u postgres --)
fi
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
stop() {
  "${as_postgres[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap stop EXIT
"${as_postgres[@]}" "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 \
  || { cat "$dir/initdb.log" >&2; exit 1; }
options="-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=200"
cat >"$dir/restart.sh" <<SCRIPT
#!/usr/bin/env bash
# Crashes the test cluster (no shutdown checkpoint, as a power cut to the
# process would) and starts it again.
set -euo pipefail
${as_postgres[*]} "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null
${as_postgres[*]} "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -o "$options" -w start >/dev/null
SCRIPT
chmod 755 "$dir/restart.sh"
"${as_postgres[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -o "$options" -w start >/dev/null \
  || { cat "$dir/server.log" >&2; exit 1; }
export EVENTLOG_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/postgres"
export EVENTLOG_TEST_POSTGRES_RESTART="$dir/restart.sh"
echo "with-postgres: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (data in $dir)" >&2
# The command runs in the background (stdin: /dev/null) so that a TERM or
# INT sent to this script stops it and the server at once.
"$@" </dev/null &
child=$!
trap 'kill "$child" 2>/dev/null; exit 143' TERM INT HUP
set +e
wait "$child"
status=$?
exit "$status"
