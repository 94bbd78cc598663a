#!/usr/bin/env bash
# Fetches the source of Debian's php8.2 package (the PHP the project builds
# against) with `apt-get source` and unpacks it into a cache outside the
# repository:
#
#   ${EPHPM_CACHE:-$HOME/.cache/ephpm}/php-src/php8.2-<version>/
#
# EPHPM_PHP_SRC_PACKAGE=symfony EPHPM_SRC_MARKER=src/Symfony/Component/Lock/Tests
# fetches another source package the same way (the framework suites' tests);
# the marker is a path the unpacked tree must have.
#
# Prints that directory on stdout (and nothing else).  Idempotent: when the
# cache holds an unpacked tree, nothing is fetched and apt is not touched.
# Otherwise it installs dpkg-dev, adds a deb-src entry for the main suite
# only (same URIs and key as the deb entry of /etc/apt/sources.list.d/
# debian.sources), runs apt-get update and fetches.  Runs as root or with
# sudo.
set -euo pipefail

cache="${EPHPM_CACHE:-${HOME:-/tmp}/.cache/ephpm}/php-src"
package="${EPHPM_PHP_SRC_PACKAGE:-php8.2}"
marker="${EPHPM_SRC_MARKER:-ext/session/tests}"

log() { echo "fetch-php-src: $*" >&2; }

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi

mkdir -p "$cache"
# Two runs at once (ctest -j, two build trees) must not unpack over each other.
exec 9>"$cache/.lock"
flock 9

cached_tree() {
  local stamp="$cache/$package.dir"
  [ -f "$stamp" ] || return 1
  local dir
  dir=$(cat "$stamp")
  [ -d "$cache/$dir/$marker" ] || return 1
  echo "$cache/$dir"
}

if tree=$(cached_tree); then
  echo "$tree"
  exit 0
fi

# ---- what apt-get source needs ------------------------------------------------

# The deb-src entry: the main suite (the OS codename) from the stanza of
# debian.sources that lists it, and no other suite (the archive serves the
# sources of the main suite only).
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:?}")
srclist=/etc/apt/sources.list.d/ephpm-php-src.sources
# (Not when a source entry for the package is configured already.)
if [ ! -f "$srclist" ] && [ -z "$(apt-cache showsrc "$package" 2>/dev/null)" ]; then
  main=/etc/apt/sources.list.d/debian.sources
  [ -f "$main" ] || { log "$main not found"; exit 1; }
  # deb822: stanzas separated by blank lines; take URIs, Components and
  # Signed-By of the first "deb" stanza whose Suites has the codename.
  entry=$(awk -v suite="$codename" '
    function flush() {
      if (!done && types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " suite " ")) {
        printf "Types: deb-src\nURIs: %s\nSuites: %s\nComponents: %s\n", uris, suite, comps
        if (signed != "") printf "Signed-By: %s\n", signed
        done = 1
      }
      types = uris = suites = comps = signed = ""
    }
    /^[ \t]*#/ { next }
    /^[ \t]*$/ { flush(); next }
    {
      key = $1; sub(/:$/, "", key); val = $0; sub(/^[^:]*:[ \t]*/, "", val)
      if (key == "Types") types = val
      else if (key == "URIs") uris = val
      else if (key == "Suites") suites = val
      else if (key == "Components") comps = val
      else if (key == "Signed-By") signed = val
    }
    END { flush() }' "$main")
  [ -n "$entry" ] || { log "no deb entry for suite $codename in $main"; exit 1; }
  log "adding $srclist"
  printf '# Added by ephpm scripts/fetch-php-src.sh: Debian sources for its tests.\n%s\n' \
    "$entry" | $sudo tee "$srclist" >/dev/null
fi
$sudo apt-get update -q >&2

# apt-get source unpacks with dpkg-source.
if ! dpkg-query -W -f='${Status}' dpkg-dev 2>/dev/null | grep -q "install ok installed"; then
  log "installing dpkg-dev"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    -o DPkg::Lock::Timeout=600 dpkg-dev >&2
fi

# ---- fetch and unpack ---------------------------------------------------------

work=$(mktemp -d "$cache/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
log "apt-get source $package (into $work)"
# apt's download sandbox user cannot write to a root-owned 0700 directory.
chmod 0755 "$work"
(cd "$work" && apt-get source -q "$package/$codename" >&2)
dir=$(cd "$work" && find . -mindepth 1 -maxdepth 1 -type d -name "$package-*" -printf '%f\n' | head -1)
[ -n "$dir" ] && [ -d "$work/$dir/$marker" ] || {
  log "apt-get source did not unpack a tree with $marker"
  exit 1
}
rm -rf "${cache:?}/$dir"
mv "$work/$dir" "$cache/$dir"
echo "$dir" >"$cache/$package.dir"
log "unpacked into $cache/$dir"
echo "$cache/$dir"
