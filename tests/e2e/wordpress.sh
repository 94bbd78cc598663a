#!/usr/bin/env bash
# WordPress end to end on the ephpm host: Debian's WordPress 6.1
# (/usr/share/wordpress, served as it is) with a private MariaDB (a temporary
# datadir, a unix socket, no TCP) and a private wp-content holding the
# object-cache drop-in (php/wordpress/object-cache.php), a minimal theme and
# a must-use plugin that reports the cache's figures in an HTML comment.
# Runs the install wizard, loads the front page and the first post, and
# checks the content and that the drop-in's cache was used across requests:
# the store's hits grow, and a page needs more database queries right after
# wp_cache_flush() than once the cache is warm again (with a per-request
# cache both would be the same).
#
#   tests/e2e/wordpress.sh BUILD/sapi/ephpm
#
# Debian's wp-config.php reads /etc/wordpress/config-<Host header>.php: the
# script writes one for a host name of its own (requests go to 127.0.0.1
# with that Host header), never touches /usr/share/wordpress, and removes
# everything it made on exit.  Exit 0: passed, 1: failed, 77: skipped
# (wordpress, mariadb-server or php8.2-mysql missing: scripts/install-deps.sh).

set -euo pipefail

ephpm=${1:?usage: wordpress.sh EPHPM_BINARY}
ephpm=$(readlink -f "$ephpm")
repo=$(cd "$(dirname "$0")/../.." && pwd)
dropin=$repo/php/wordpress/object-cache.php
wp=/usr/share/wordpress
ext_dir=$(php-config --extension-dir)

for need in "$wp/wp-config.php" /usr/sbin/mariadbd /usr/bin/mariadb-install-db \
            "$ext_dir/mysqli.so" "$ext_dir/mysqlnd.so" "$ext_dir/mbstring.so" "$ext_dir/xml.so"; do
  if [[ ! -e $need ]]; then
    echo "SKIP: $need is missing (scripts/install-deps.sh installs it)"
    exit 77
  fi
done
if [[ ! -f $dropin ]]; then
  echo "FAIL: the drop-in under test, $dropin, does not exist"
  exit 1
fi

work=$(mktemp -d /tmp/ephpm-wp-e2e-XXXXXX)
host=ephpm-e2e-$$-$RANDOM
config=/etc/wordpress/config-$host.php
db_pid=
ephpm_pid=
cleanup() {
  local rc=$?
  [[ -n $ephpm_pid ]] && kill "$ephpm_pid" 2>/dev/null && wait "$ephpm_pid" 2>/dev/null
  [[ -n $db_pid ]] && kill "$db_pid" 2>/dev/null && wait "$db_pid" 2>/dev/null
  rm -f "$config"
  if [[ $rc -ne 0 ]]; then
    echo "--- ephpm log (tail)"; tail -n 30 "$work/ephpm.log" 2>/dev/null || true
    echo "--- mariadb log (tail)"; tail -n 10 "$work/mariadb.log" 2>/dev/null || true
  fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT

failures=0
check() {  # check NAME CONDITION-EXIT-STATUS [DETAIL]
  if [[ $2 -eq 0 ]]; then
    echo "ok    $1"
  else
    echo "FAIL  $1${3:+: $3}"
    failures=$((failures + 1))
  fi
}
contains() { grep -qF -- "$2" <<<"$1"; }

# ---- MariaDB, private ------------------------------------------------------
mariadb-install-db --no-defaults --datadir="$work/db" --user=root \
  --auth-root-authentication-method=normal --skip-test-db >"$work/mariadb.log" 2>&1
sock=$work/mysql.sock
mariadbd --no-defaults --datadir="$work/db" --socket="$sock" --skip-networking --user=root \
  --skip-log-bin --pid-file="$work/mariadb.pid" >>"$work/mariadb.log" 2>&1 &
db_pid=$!
for _ in $(seq 1 300); do
  mariadb --no-defaults -S "$sock" -u root -e 'SELECT 1' >/dev/null 2>&1 && break
  kill -0 "$db_pid" 2>/dev/null || { echo "FAIL: mariadbd exited"; exit 1; }
  sleep 0.1
done
mariadb --no-defaults -S "$sock" -u root -e "
  CREATE DATABASE wordpress;
  CREATE USER 'wp'@'localhost' IDENTIFIED BY 'e2e-password';
  GRANT ALL ON wordpress.* TO 'wp'@'localhost';"

# ---- wp-content, private ---------------------------------------------------
content=$work/wp-content
mkdir -p "$content/themes/ephpm-e2e" "$content/mu-plugins" "$content/plugins" "$content/uploads"
cp "$dropin" "$content/object-cache.php"
cat >"$content/themes/ephpm-e2e/style.css" <<'CSS'
/*
Theme Name: ephpm e2e
Description: The least a classic theme needs: the loop, wp_head and wp_footer.
*/
CSS
cat >"$content/themes/ephpm-e2e/index.php" <<'PHP'
<!DOCTYPE html>
<html><head><meta charset="utf-8"><?php wp_head(); ?></head>
<body>
<p id="site-name"><?php bloginfo('name'); ?></p>
<?php while (have_posts()) : the_post(); ?>
<article><h2 class="entry-title"><?php the_title(); ?></h2>
<div class="entry-content"><?php the_content(); ?></div></article>
<?php endwhile; ?>
<?php wp_footer(); ?>
</body></html>
PHP
cat >"$content/mu-plugins/ephpm-e2e.php" <<'PHP'
<?php
// The test makes no outgoing HTTP request and sends no mail.
add_filter('pre_http_request', function () {
    return new WP_Error('ephpm_e2e', 'no outgoing HTTP in the e2e test');
});
add_filter('pre_wp_mail', '__return_true');
// The cache's figures, after everything else ran; ?ephpm_e2e_flush=1
// empties the cache after that, for the next request to start cold.
add_action('shutdown', function () {
    global $wp_object_cache, $wpdb;
    $info = function_exists('ephpm_kv_info') ? ephpm_kv_info() : [];
    echo "\n<!-- ephpm-e2e ", json_encode([
        'ext_cache' => wp_using_ext_object_cache(),
        'cache_file' => is_object($wp_object_cache) ? (new ReflectionObject($wp_object_cache))->getFileName() : null,
        'hits' => $wp_object_cache->cache_hits ?? null,
        'misses' => $wp_object_cache->cache_misses ?? null,
        'queries' => $wpdb->num_queries ?? null,
        'kv_hits' => $info['hits'] ?? null,
        'kv_keys' => $info['keys'] ?? null,
    ]), " -->\n";
    if (isset($_GET['ephpm_e2e_flush']) && !wp_cache_flush()) {
        echo "<!-- ephpm-e2e-flush-failed -->\n";
    }
}, PHP_INT_MAX);
PHP

cat >"$config" <<PHP
<?php
// Written by ephpm's tests/e2e/wordpress.sh for this run only.
define('DB_NAME', 'wordpress');
define('DB_USER', 'wp');
define('DB_PASSWORD', 'e2e-password');
define('DB_HOST', 'localhost:$sock');
define('WP_CONTENT_DIR', '$content');
define('WP_DEFAULT_THEME', 'ephpm-e2e');
define('DISABLE_WP_CRON', true);
define('AUTOMATIC_UPDATER_DISABLED', true);
PHP

# ---- the host --------------------------------------------------------------
"$ephpm" --docroot "$wp" --listen 127.0.0.1:0 -d memory_limit=256M \
  -d extension=mysqlnd -d extension=mysqli -d extension=mbstring -d extension=xml \
  -d display_errors=0 -d log_errors=1 >"$work/ephpm.out" 2>"$work/ephpm.log" &
ephpm_pid=$!
port=
for _ in $(seq 1 100); do
  port=$(sed -n 's/^http listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$work/ephpm.out")
  [[ -n $port ]] && break
  kill -0 "$ephpm_pid" 2>/dev/null || { echo "FAIL: ephpm exited"; exit 1; }
  sleep 0.1
done
[[ -n $port ]] || { echo "FAIL: ephpm printed no address"; exit 1; }
base=http://$host:$port
fetch() {  # fetch PATH [curl args...]: the body; the status in $work/status
  local path=$1
  shift
  curl -sS --max-time 60 --resolve "$host:$port:127.0.0.1" -o "$work/body" \
    -w '%{http_code}' "$@" "$base$path" >"$work/status"
  cat "$work/body"
}
stats() {  # the ephpm-e2e comment's field FIELD of page PAGE
  sed -n 's/.*<!-- ephpm-e2e \(.*\) -->.*/\1/p' <<<"$1" |
    php -n -r '$j = json_decode(stream_get_contents(STDIN), true); echo json_encode($j[$argv[1]] ?? null);' "$2"
}

# ---- the install wizard ----------------------------------------------------
page=$(fetch /wp-admin/install.php)
check 'install.php answers 200' "$([[ $(<"$work/status") == 200 ]]; echo $?)" "status $(<"$work/status")"
page=$(fetch '/wp-admin/install.php?step=2' --data-urlencode 'weblog_title=ephpm on WordPress' \
  --data-urlencode 'user_name=admin' --data-urlencode 'admin_password=e2e-Admin-pw-1234' \
  --data-urlencode 'admin_password2=e2e-Admin-pw-1234' --data-urlencode 'pw_weak=1' \
  --data-urlencode 'admin_email=admin@example.test' --data-urlencode 'blog_public=0' \
  --data-urlencode 'language=')
check 'install step 2: 200 and "Success!"' \
  "$([[ $(<"$work/status") == 200 ]] && contains "$page" 'Success!'; echo $?)" \
  "status $(<"$work/status"): $(head -c 400 <<<"$page")"

# ---- the front page, twice, and the first post -----------------------------
first=$(fetch /)
check 'front page: 200 with the site name and "Hello world!"' \
  "$([[ $(<"$work/status") == 200 ]] && contains "$first" 'ephpm on WordPress' &&
     contains "$first" 'Hello world!'; echo $?)" "status $(<"$work/status"): $(head -c 400 <<<"$first")"
check 'the drop-in is the object cache' \
  "$([[ $(stats "$first" ext_cache) == true &&
        $(stats "$first" cache_file) == "\"${content//\//\\/}\\/object-cache.php\"" ]]; echo $?)" \
  "ext_cache $(stats "$first" ext_cache), class from $(stats "$first" cache_file)"
second=$(fetch /)
check 'front page again: the same posts' \
  "$([[ $(<"$work/status") == 200 ]] && contains "$second" 'Hello world!'; echo $?)"
h2=$(stats "$second" hits) k1=$(stats "$first" kv_hits) k2=$(stats "$second" kv_hits)
check "front page again: the drop-in counted hits ($h2)" "$([[ $h2 =~ ^[0-9]+$ && $h2 -gt 0 ]]; echo $?)"
check "front page again: the store was read ($k1 -> $k2 hits)" \
  "$([[ $k1 =~ ^[0-9]+$ && $k2 =~ ^[0-9]+$ && $k2 -gt $k1 ]]; echo $?)"
kk=$(stats "$second" kv_keys)
check "the store holds the cache's keys ($kk)" "$([[ $kk =~ ^[0-9]+$ && $kk -gt 0 ]]; echo $?)"
flush=$(fetch '/?ephpm_e2e_flush=1')
check 'wp_cache_flush() succeeded' \
  "$([[ $(<"$work/status") == 200 ]] && ! contains "$flush" 'ephpm-e2e-flush-failed'; echo $?)"
cold=$(fetch /)
warm=$(fetch /)
qc=$(stats "$cold" queries) qw=$(stats "$warm" queries)
check 'front page after the flush: the same posts' \
  "$(contains "$cold" 'Hello world!' && contains "$warm" 'Hello world!'; echo $?)"
check "the warm cache saves queries: $qc right after the flush, $qw once warm" \
  "$([[ $qc =~ ^[0-9]+$ && $qw =~ ^[0-9]+$ && $qw -lt $qc ]]; echo $?)"
post=$(fetch '/?p=1')
check 'post ?p=1: 200 with its title and content' \
  "$([[ $(<"$work/status") == 200 ]] && contains "$post" 'Hello world!' &&
     contains "$post" 'Welcome to WordPress'; echo $?)" "status $(<"$work/status"): $(head -c 400 <<<"$post")"
hp=$(stats "$post" hits)
check "post ?p=1: the drop-in counted hits ($hp)" "$([[ $hp =~ ^[0-9]+$ && $hp -gt 0 ]]; echo $?)"

# ---- PHP said nothing fatal ------------------------------------------------
fatal=$(grep -E 'PHP (Fatal|Parse) error' "$work/ephpm.log" || true)
check 'no PHP fatal error in the log' "$([[ -z $fatal ]]; echo $?)" "$fatal"

if [[ $failures -ne 0 ]]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all checks passed"
