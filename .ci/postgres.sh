#!/usr/bin/env bash
# Start a throwaway PostgreSQL cluster from Debian's packages on a loopback port for the
# judging app's concurrency test; prints the SQLAlchemy URL on its last line.
# Idempotent: reuses the cluster if it exists, starts it if it is down.
set -euo pipefail
PORT="${JUDGED_PG_PORT:-55432}"
NAME=judgedci
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  apt-get install -y -q postgresql >/dev/null
fi
VER="$(ls /usr/lib/postgresql | sort -V | tail -1)"
if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -qx "$VER $NAME"; then
  pg_createcluster "$VER" "$NAME" -p "$PORT" -- --auth-local=peer --auth-host=scram-sha-256 >/dev/null
  sed -i "s/^#\?listen_addresses.*/listen_addresses = '127.0.0.1'/" "/etc/postgresql/$VER/$NAME/postgresql.conf"
fi
if ! pg_lsclusters -h | awk -v v="$VER" -v n="$NAME" '$1==v && $2==n {print $4}' | grep -qx online; then
  pg_ctlcluster "$VER" "$NAME" start
fi
su postgres -c "psql -q -p $PORT -tc \"SELECT 1 FROM pg_roles WHERE rolname='judged'\"" | grep -q 1 ||
  su postgres -c "psql -q -p $PORT -c \"CREATE ROLE judged LOGIN PASSWORD 'judged'\""
su postgres -c "psql -q -p $PORT -tc \"SELECT 1 FROM pg_database WHERE datname='judged_test'\"" | grep -q 1 ||
  su postgres -c "createdb -p $PORT -O judged judged_test"
echo "postgresql+psycopg://judged:judged@127.0.0.1:$PORT/judged_test"
