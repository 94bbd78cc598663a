// ResolveRoute and MimeTypeFor (sapi/router.h) against a temporary document
// root built on disk: percent-decoding, refusals (400/403), directory
// indexes, PATH_INFO, the front-controller fallback and symlinks (followed,
// or kept inside the root).

#include <limits.h>
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "router.h"

namespace fs = std::filesystem;
using ephpm::MimeTypeFor;
using ephpm::PercentDecode;
using ephpm::ResolveRoute;
using ephpm::Route;
using ephpm::Symlinks;
using Kind = ephpm::Route::Kind;

namespace {

void WriteFile(const fs::path& p, const std::string& content = "x") {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << content;
}

// A scratch directory with two document roots and a directory outside
// them:
//   base/root/      index.php a.php image.png readme.txt x.php/(dir)
//                   sub/index.php sub/page.php html/index.html empty/
//                   nested/deeper/index.html .env .git/config
//                   inside-link.txt -> a.php (stays inside)
//                   escape.txt -> ../outside/secret.txt
//                   escape.php -> ../outside/evil.php
//                   escape-dir -> ../outside
//                   deep-link -> ../outside/deep
//                   dot-link.txt -> .env, git-link -> .git (inside, onto dotfiles)
//                   hidden-out -> ../outside/.private (outside, into a dot-directory)
//                   hidden-out-file.txt -> ../outside/.private/key.txt
//                   .dot-escape -> ../outside (a symlink with a dot name)
//   base/bare/      no index.php: page.html image.png sub/
//   base/outside/   secret.txt evil.php index.html .hidden.txt .private/key.txt
//                   deep/page.txt
class Docroots {
 public:
  Docroots() {
    char tmpl[] = "/tmp/ephpm-router-test-XXXXXX";
    const char* made = mkdtemp(tmpl);
    REQUIRE(made != nullptr);
    char resolved[PATH_MAX];
    REQUIRE(realpath(made, resolved) != nullptr);
    base_ = resolved;
    root_ = (base_ / "root").string();
    bare_ = (base_ / "bare").string();

    const fs::path r = root_;
    for (const char* f : {"index.php", "a.php", "image.png", "readme.txt", "sub/index.php",
                          "sub/page.php", "html/index.html", "nested/deeper/index.html", ".env",
                          ".git/config", "sub/.hidden"}) {
      WriteFile(r / f);
    }
    fs::create_directories(r / "empty");
    fs::create_directories(r / "x.php");  // a directory that looks like a script
    WriteFile(r / "x.php" / "index.html");
    fs::create_symlink("a.php", r / "inside-link.php");
    fs::create_symlink("readme.txt", r / "inside-link.txt");
    fs::create_symlink("../outside/secret.txt", r / "escape.txt");
    fs::create_symlink("../outside/evil.php", r / "escape.php");
    fs::create_symlink("../outside", r / "escape-dir");
    fs::create_symlink("../outside/deep", r / "deep-link");
    fs::create_symlink(".env", r / "dot-link.txt");
    fs::create_symlink(".git", r / "git-link");
    fs::create_symlink("../outside/.private", r / "hidden-out");
    fs::create_symlink("../outside/.private/key.txt", r / "hidden-out-file.txt");
    fs::create_symlink("../outside", r / ".dot-escape");
    // A symlinked directory that stays inside the root.
    fs::create_symlink("sub", r / "sub-link");

    const fs::path o = base_ / "outside";
    for (const char* f : {"secret.txt", "evil.php", "index.html", ".hidden.txt", ".private/key.txt",
                          "deep/page.txt"}) {
      WriteFile(o / f);
    }

    const fs::path b = bare_;
    for (const char* f : {"page.html", "image.png"}) WriteFile(b / f);
    fs::create_directories(b / "sub");
  }
  ~Docroots() {
    std::error_code ec;
    fs::remove_all(base_, ec);  // does not follow the symlinks
  }

  const std::string& root() const { return root_; }
  const std::string& bare() const { return bare_; }

 private:
  fs::path base_;
  std::string root_, bare_;
};

Docroots& Roots() {
  static Docroots roots;
  return roots;
}

Route InRoot(std::string_view path, Symlinks symlinks = Symlinks::kFollow) {
  return ResolveRoute(Roots().root(), path, symlinks);
}
Route InBare(std::string_view path) {
  return ResolveRoute(Roots().bare(), path, Symlinks::kFollow);
}

std::string KindName(Kind k) {
  switch (k) {
    case Kind::kPhp: return "php";
    case Kind::kStatic: return "static";
    case Kind::kNotFound: return "404";
    case Kind::kForbidden: return "403";
    case Kind::kBadRequest: return "400";
  }
  return "?";
}

// Checks one route completely: kind, file, script name, PATH_INFO.
void Expect(const Route& got, Kind kind, const std::string& file = "",
            const std::string& script_name = "", const std::string& path_info = "") {
  INFO("kind " << KindName(got.kind) << ", file '" << got.file << "', script_name '"
               << got.script_name << "', path_info '" << got.path_info << "'");
  CHECK(KindName(got.kind) == KindName(kind));
  CHECK(got.file == file);
  CHECK(got.script_name == script_name);
  CHECK(got.path_info == path_info);
}

// Each helper checks one mode (follow, the default) or, with `both`, the
// same answer in both modes.
enum class Modes { kFollow, kRoot, kBoth };

template <typename Check>
void InModes(Modes modes, Check check) {
  if (modes != Modes::kRoot) {
    INFO("--symlinks follow");
    check(Symlinks::kFollow);
  }
  if (modes != Modes::kFollow) {
    INFO("--symlinks root");
    check(Symlinks::kRoot);
  }
}

void ExpectPhp(std::string_view path, const std::string& rel, const std::string& script_name,
               const std::string& path_info = "", Modes modes = Modes::kBoth) {
  INFO("path " << path);
  InModes(modes, [&](Symlinks s) {
    Expect(InRoot(path, s), Kind::kPhp, Roots().root() + "/" + rel, script_name, path_info);
  });
}

void ExpectStatic(std::string_view path, const std::string& rel, const std::string& script_name,
                  Modes modes = Modes::kBoth) {
  INFO("path " << path);
  InModes(modes, [&](Symlinks s) {
    Expect(InRoot(path, s), Kind::kStatic, Roots().root() + "/" + rel, script_name, "");
  });
}

void ExpectFront(std::string_view path) {
  INFO("path " << path << " (front controller)");
  InModes(Modes::kBoth, [&](Symlinks s) {
    Expect(InRoot(path, s), Kind::kPhp, Roots().root() + "/index.php", "/index.php", "");
  });
}

void ExpectRefused(std::string_view path, Kind kind, Modes modes = Modes::kBoth) {
  INFO("path " << path);
  // A refusal carries nothing the server could serve by mistake.
  InModes(modes, [&](Symlinks s) { Expect(InRoot(path, s), kind); });
}

}  // namespace

TEST_CASE("PercentDecode decodes escapes and refuses bad ones", "[router]") {
  std::string out;
  CHECK(PercentDecode("/plain/path", &out));
  CHECK(out == "/plain/path");
  CHECK(PercentDecode("%41%62%2f%2F%20", &out));
  CHECK(out == "Ab// ");
  CHECK(PercentDecode("%e2%82%ac", &out));
  CHECK(out == "\xe2\x82\xac");
  CHECK(PercentDecode("a+b", &out));
  CHECK(out == "a+b");  // '+' is not a space in a path
  CHECK(PercentDecode("%00", &out));
  CHECK(out == std::string(1, '\0'));  // decodes; ResolveRoute refuses it
  CHECK(PercentDecode("", &out));
  CHECK(out.empty());
  for (const char* bad : {"%", "%4", "a%", "a%4", "%zz", "%g1", "%1g", "/x%-1", "%%41"}) {
    INFO("input " << bad);
    CHECK_FALSE(PercentDecode(bad, &out));
  }
}

TEST_CASE("ResolveRoute: scripts and static files by their path", "[router]") {
  ExpectPhp("/a.php", "a.php", "/a.php");
  ExpectPhp("/sub/page.php", "sub/page.php", "/sub/page.php");
  ExpectStatic("/image.png", "image.png", "/image.png");
  ExpectStatic("/readme.txt", "readme.txt", "/readme.txt");
  // Empty and "." segments are dropped.
  ExpectPhp("//a.php", "a.php", "/a.php");
  ExpectPhp("/./sub//./page.php", "sub/page.php", "/sub/page.php");
  // A trailing slash after a file does not make PATH_INFO.
  ExpectPhp("/a.php/", "a.php", "/a.php");
}

TEST_CASE("ResolveRoute: the path is percent-decoded", "[router]") {
  ExpectPhp("/%61.php", "a.php", "/a.php");
  ExpectPhp("/%61%2E%70%68%70", "a.php", "/a.php");
  // An encoded slash is a slash: it separates segments like any other.
  ExpectPhp("/sub%2fpage.php", "sub/page.php", "/sub/page.php");
  ExpectPhp("/sub%2Fpage.php", "sub/page.php", "/sub/page.php");
  // PATH_INFO is the decoded rest.
  ExpectPhp("/a.php/caf%C3%A9%20x", "a.php", "/a.php", "/caf\xC3\xA9 x");
}

TEST_CASE("ResolveRoute: bad escapes, NUL, backslash and non-origin targets are 400",
          "[router]") {
  for (const char* path : {"/%", "/%4", "/a.php%", "/%zz", "/%g0.php", "/a%2", "/%%"}) {
    ExpectRefused(path, Kind::kBadRequest);
  }
  for (const char* path : {"/a.php%00", "/a.php%00.png", "/%00", "/sub%5cpage.php",
                           "/sub%5Cpage.php", "/..%5c..%5cetc%5cpasswd", "/a\\b"}) {
    ExpectRefused(path, Kind::kBadRequest);
  }
  // A raw NUL byte too.
  ExpectRefused(std::string_view("/a.php\0x", 8), Kind::kBadRequest);
  // Only origin-form paths reach the router.
  ExpectRefused("", Kind::kBadRequest);
  ExpectRefused("*", Kind::kBadRequest);
  ExpectRefused("a.php", Kind::kBadRequest);
  ExpectRefused("%2fa.php", Kind::kBadRequest);
}

TEST_CASE("ResolveRoute: climbing above the root is 403, inside it is resolved", "[router]") {
  for (const char* path :
       {"/..", "/../", "/../a.php", "/../root/a.php", "/sub/../../a.php", "/sub/../..",
        "/%2e%2e/a.php", "/%2E%2E/%2e%2e/etc/passwd", "/..%2f..%2fetc%2fpasswd",
        "/sub%2f..%2f..%2fa.php", "/./../a.php", "/a.php/../../x"}) {
    ExpectRefused(path, Kind::kForbidden);
  }
  // ".." that stays inside the root is resolved, not refused.
  ExpectPhp("/sub/../a.php", "a.php", "/a.php");
  ExpectPhp("/sub/%2e%2e/a.php", "a.php", "/a.php");
  ExpectPhp("/x/../a.php", "a.php", "/a.php");  // even through a missing directory
  ExpectPhp("/sub/..", "index.php", "/index.php");  // the root's index
}

TEST_CASE("ResolveRoute: dotfiles and dot-directories are 403", "[router]") {
  for (const char* path :
       {"/.env", "/.git/config", "/.git", "/.git/", "/%2egit/config", "/%2Eenv", "/sub/.hidden",
        "/.htaccess", "/.well-known/x", "/sub/.missing/x.php", "/...", "/sub/...", "/a.php/.x",
        "/.env/../a.php"}) {
    ExpectRefused(path, Kind::kForbidden);
  }
}

TEST_CASE("ResolveRoute: --symlinks root keeps symlinks inside the root", "[router]") {
  for (const char* path : {"/escape.txt", "/escape.php", "/escape.php/info",
                           "/escape-dir/secret.txt", "/escape-dir/evil.php",
                           "/escape-dir/",  // its index.html lies outside
                           "/escape-dir", "/deep-link/page.txt"}) {
    ExpectRefused(path, Kind::kForbidden, Modes::kRoot);
  }
  // Symlinks that stay inside are served under their own URL path.
  ExpectPhp("/inside-link.php", "inside-link.php", "/inside-link.php", "", Modes::kRoot);
  ExpectStatic("/inside-link.txt", "inside-link.txt", "/inside-link.txt", Modes::kRoot);
  ExpectPhp("/sub-link/page.php", "sub-link/page.php", "/sub-link/page.php", "", Modes::kRoot);
}

TEST_CASE("ResolveRoute: --symlinks follow serves what a symlink leads to, under its URL path",
          "[router]") {
  // Files and directories outside the root, as Debian's DokuWiki links
  // lib/tpl: the route names the path under the root, not the target.
  ExpectStatic("/escape.txt", "escape.txt", "/escape.txt", Modes::kFollow);
  ExpectPhp("/escape.php", "escape.php", "/escape.php", "", Modes::kFollow);
  ExpectPhp("/escape.php/info", "escape.php", "/escape.php", "/info", Modes::kFollow);
  ExpectStatic("/escape-dir/secret.txt", "escape-dir/secret.txt", "/escape-dir/secret.txt",
               Modes::kFollow);
  ExpectPhp("/escape-dir/evil.php/x", "escape-dir/evil.php", "/escape-dir/evil.php", "/x",
            Modes::kFollow);
  ExpectStatic("/escape-dir/", "escape-dir/index.html", "/escape-dir/index.html", Modes::kFollow);
  ExpectStatic("/deep-link/page.txt", "deep-link/page.txt", "/deep-link/page.txt", Modes::kFollow);
  // And inside the root, as in root mode.
  ExpectPhp("/inside-link.php", "inside-link.php", "/inside-link.php", "", Modes::kFollow);
  ExpectPhp("/sub-link/page.php", "sub-link/page.php", "/sub-link/page.php", "", Modes::kFollow);
}

TEST_CASE("ResolveRoute: through a symlink, '..' is resolved on the URL path, never the target's",
          "[router]") {
  // The file system would take deep-link/.. to outside/, where secret.txt
  // is; the URL path /deep-link/../secret.txt is /secret.txt, which the root
  // does not have: the front controller.
  ExpectFront("/deep-link/../secret.txt");
  ExpectFront("/escape-dir/../escape.txt/x");
  ExpectStatic("/escape-dir/../readme.txt", "readme.txt", "/readme.txt");
  // And never above the root, symlink or not.
  for (const char* path : {"/escape-dir/../../outside/secret.txt", "/deep-link/../../x",
                           "/escape-dir/%2e%2e/%2e%2e/etc/passwd", "/deep-link/..%2f..%2f..%2fx"}) {
    ExpectRefused(path, Kind::kForbidden);
  }
}

TEST_CASE("ResolveRoute: a symlink never reaches a dotfile, in either mode", "[router]") {
  // A dot segment in the URL, after a symlink or as the symlink's own name.
  for (const char* path : {"/escape-dir/.hidden.txt", "/escape-dir/.private/key.txt",
                           "/.dot-escape/secret.txt", "/.dot-escape/", "/%2edot-escape/index.html",
                           "/deep-link/../.env"}) {
    ExpectRefused(path, Kind::kForbidden);
  }
  // A symlink whose target is a dotfile or lies in a dot-directory, inside
  // the root or outside it.
  for (const char* path : {"/dot-link.txt", "/git-link/config", "/hidden-out/key.txt",
                           "/hidden-out-file.txt"}) {
    ExpectRefused(path, Kind::kForbidden);
  }
}

TEST_CASE("ResolveRoute: a directory is served by its index.php, else index.html", "[router]") {
  ExpectPhp("/", "index.php", "/index.php");
  ExpectPhp("/sub", "sub/index.php", "/sub/index.php");
  ExpectPhp("/sub/", "sub/index.php", "/sub/index.php");
  ExpectStatic("/html", "html/index.html", "/html/index.html");
  ExpectStatic("/html/", "html/index.html", "/html/index.html");
  ExpectStatic("/nested/deeper/", "nested/deeper/index.html", "/nested/deeper/index.html");
  // A directory named like a script is still a directory.
  ExpectStatic("/x.php/", "x.php/index.html", "/x.php/index.html");
  // A directory without an index falls back to the front controller.
  ExpectFront("/empty");
  ExpectFront("/empty/");
  ExpectFront("/nested");
  // Without a front controller either: 404 ...
  Expect(InBare("/sub/"), Kind::kNotFound);
  Expect(InBare("/"), Kind::kNotFound);
  // ... but a file in it is served.
  Expect(InBare("/page.html"), Kind::kStatic, Roots().bare() + "/page.html", "/page.html");
}

TEST_CASE("ResolveRoute: PATH_INFO after a script", "[router]") {
  ExpectPhp("/a.php/x", "a.php", "/a.php", "/x");
  ExpectPhp("/a.php/x/y/z", "a.php", "/a.php", "/x/y/z");
  ExpectPhp("/sub/page.php/deep/er", "sub/page.php", "/sub/page.php", "/deep/er");
  ExpectPhp("/sub/index.php/z", "sub/index.php", "/sub/index.php", "/z");
  // Segments are normalised before the split.
  ExpectPhp("/a.php//x/./y", "a.php", "/a.php", "/x/y");
  ExpectPhp("/a.php/x/../y", "a.php", "/a.php", "/y");
}

TEST_CASE("ResolveRoute: a static file followed by more path is not that file", "[router]") {
  // With a front controller, it takes the request ...
  ExpectFront("/image.png/x");
  ExpectFront("/readme.txt/a/b");
  ExpectFront("/html/index.html/x");
  // ... without one, 404.
  Expect(InBare("/image.png/x"), Kind::kNotFound);
  Expect(InBare("/page.html/"), Kind::kStatic, Roots().bare() + "/page.html", "/page.html");
}

TEST_CASE("ResolveRoute: anything missing goes to the front controller, else 404", "[router]") {
  ExpectFront("/pretty/url");
  ExpectFront("/missing.php");
  ExpectFront("/missing.png");
  ExpectFront("/sub/missing.php/x");
  ExpectFront("/blog/2024/05/hello-world");
  for (const char* path : {"/pretty/url", "/missing.php", "/missing.png", "/sub/missing"}) {
    INFO("path " << path);
    Expect(InBare(path), Kind::kNotFound);
  }
}

TEST_CASE("MimeTypeFor by extension, case-insensitively", "[router]") {
  CHECK(MimeTypeFor("/r/index.html") == "text/html; charset=utf-8");
  CHECK(MimeTypeFor("/r/INDEX.HTM") == "text/html; charset=utf-8");
  CHECK(MimeTypeFor("/r/style.css") == "text/css; charset=utf-8");
  CHECK(MimeTypeFor("/r/app.js") == "text/javascript; charset=utf-8");
  CHECK(MimeTypeFor("/r/mod.mjs") == "text/javascript; charset=utf-8");
  CHECK(MimeTypeFor("/r/data.json") == "application/json");
  CHECK(MimeTypeFor("/r/app.js.map") == "application/json");
  CHECK(MimeTypeFor("/r/notes.txt") == "text/plain; charset=utf-8");
  CHECK(MimeTypeFor("/r/feed.xml") == "application/xml");
  CHECK(MimeTypeFor("/r/logo.svg") == "image/svg+xml");
  CHECK(MimeTypeFor("/r/logo.png") == "image/png");
  CHECK(MimeTypeFor("/r/photo.JPG") == "image/jpeg");
  CHECK(MimeTypeFor("/r/photo.jpeg") == "image/jpeg");
  CHECK(MimeTypeFor("/r/anim.gif") == "image/gif");
  CHECK(MimeTypeFor("/r/pic.webp") == "image/webp");
  CHECK(MimeTypeFor("/r/favicon.ico") == "image/x-icon");
  CHECK(MimeTypeFor("/r/doc.pdf") == "application/pdf");
  CHECK(MimeTypeFor("/r/mod.wasm") == "application/wasm");
  CHECK(MimeTypeFor("/r/font.woff2") == "font/woff2");
  CHECK(MimeTypeFor("/r/font.woff") == "font/woff");
  CHECK(MimeTypeFor("/r/clip.mp4") == "video/mp4");
  CHECK(MimeTypeFor("/r/song.mp3") == "audio/mpeg");
  CHECK(MimeTypeFor("/r/site.webmanifest") == "application/manifest+json");
  CHECK(MimeTypeFor("/r/dist.tar.gz") == "application/gzip");  // the last extension counts
  CHECK(MimeTypeFor("/r/dist.tar") == "application/x-tar");
  // Unknown, missing, or a dot that belongs to a directory.
  CHECK(MimeTypeFor("/r/blob.xyz") == "application/octet-stream");
  CHECK(MimeTypeFor("/r/Makefile") == "application/octet-stream");
  CHECK(MimeTypeFor("/r/dir.d/README") == "application/octet-stream");
  CHECK(MimeTypeFor("/r/trailing.") == "application/octet-stream");
  CHECK(MimeTypeFor("") == "application/octet-stream");
}
