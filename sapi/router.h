// Maps a request target to what serves it: a PHP script, a static file, or
// a refusal.  Pure path logic, no I/O beyond stat(), so it is unit-tested on
// its own.
//
//  - The path is percent-decoded; a NUL, a backslash or a bad escape is 400.
//  - "." and ".." segments are resolved on the text of the path, before the
//    file system is asked anything; climbing above the document root is 403
//    (traversal), and so is any segment starting with "." (dotfiles: .git,
//    .env, .htaccess ...).  So the path always names something lexically
//    under the root, and a symlink is entered only by a name that passed
//    these rules, and left only downwards.
//  - Symlinks (Symlinks below): followed wherever they lead, as nginx and
//    Apache do by default (Debian's DokuWiki keeps lib/tpl as a symlink out
//    of its root), or only while the file stays inside the root.  Either
//    way the file a symlink leads to is refused (403) when its resolved path
//    has a component starting with "." below the root, or, for a file
//    outside the root, anywhere: a link cannot expose .env or .git/config.
//  - A directory is served by its index.php, else index.html.
//  - "/a.php/rest" runs a.php with PATH_INFO "/rest".
//  - Anything else that does not exist falls back to the root's index.php
//    (front controllers, pretty URLs), else 404.

#ifndef EPHPM_SAPI_ROUTER_H_
#define EPHPM_SAPI_ROUTER_H_

#include <string>
#include <string_view>

namespace ephpm {

struct Route {
  enum class Kind { kPhp, kStatic, kNotFound, kForbidden, kBadRequest };
  Kind kind = Kind::kNotFound;
  std::string file;         // absolute path of the script or file
  std::string script_name;  // URL path of the script ("/index.php")
  std::string path_info;    // for kPhp: what followed the script in the path
};

// What a symlink under the document root may lead to.
enum class Symlinks {
  kFollow,  // anywhere (the default, as nginx's disable_symlinks off)
  kRoot,    // only to files inside the root; others are 403
};

// `docroot` must be an absolute, symlink-free path (realpath()).  `path` is
// the target's path part (before '?'), still percent-encoded.
Route ResolveRoute(const std::string& docroot, std::string_view path, Symlinks symlinks);

// "text/html; charset=utf-8", "image/png", ... by extension;
// application/octet-stream when unknown.
std::string_view MimeTypeFor(std::string_view file);

// Percent-decodes; false on a bad escape.
bool PercentDecode(std::string_view in, std::string* out);

}  // namespace ephpm

#endif  // EPHPM_SAPI_ROUTER_H_
