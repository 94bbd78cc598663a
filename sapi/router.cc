#include "router.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cctype>
#include <vector>

namespace ephpm {
namespace {

bool IsDir(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool IsFile(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool IsPhp(std::string_view file) { return EndsWith(file, ".php"); }

// Whether some component of `path` ("/a/b") starts with '.'.
bool HasDotComponent(std::string_view path) {
  for (size_t slash = path.find('/'); slash != std::string_view::npos;
       slash = path.find('/', slash + 1)) {
    if (slash + 1 < path.size() && path[slash + 1] == '.') return true;
  }
  return false;
}

// Whether `file` (which exists, lexically under docroot) may be served: its
// resolved path, symlinks followed, has no dot component below the root and
// lies inside it, or, when symlinks may lead anywhere, has no dot component
// at all.
bool MayServe(const std::string& docroot, const std::string& file, Symlinks symlinks) {
  char resolved[PATH_MAX];
  if (realpath(file.c_str(), resolved) == nullptr) return false;
  const std::string_view r(resolved);
  const std::string_view root = docroot == "/" ? std::string_view() : std::string_view(docroot);
  const bool inside =
      r.size() > root.size() && r.substr(0, root.size()) == root && r[root.size()] == '/';
  if (inside) return !HasDotComponent(r.substr(root.size()));
  return symlinks == Symlinks::kFollow && !HasDotComponent(r);
}

Route Serve(const std::string& docroot, Symlinks symlinks, const std::string& file,
            std::string script_name, std::string path_info) {
  Route route;
  if (!MayServe(docroot, file, symlinks)) {
    route.kind = Route::Kind::kForbidden;
    return route;
  }
  route.kind = IsPhp(file) ? Route::Kind::kPhp : Route::Kind::kStatic;
  route.file = file;
  route.script_name = std::move(script_name);
  route.path_info = std::move(path_info);
  if (route.kind == Route::Kind::kStatic) route.path_info.clear();
  return route;
}

}  // namespace

bool PercentDecode(std::string_view in, std::string* out) {
  out->clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out->push_back(in[i]);
      continue;
    }
    if (i + 2 >= in.size() || !std::isxdigit(static_cast<unsigned char>(in[i + 1])) ||
        !std::isxdigit(static_cast<unsigned char>(in[i + 2]))) {
      return false;
    }
    auto hex = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : (std::tolower(c) - 'a' + 10); };
    out->push_back(static_cast<char>(hex(in[i + 1]) * 16 + hex(in[i + 2])));
    i += 2;
  }
  return true;
}

Route ResolveRoute(const std::string& docroot, std::string_view raw_path, Symlinks symlinks) {
  Route bad;
  std::string path;
  if (raw_path.empty() || raw_path[0] != '/' || !PercentDecode(raw_path, &path) ||
      path.find('\0') != std::string::npos || path.find('\\') != std::string::npos) {
    bad.kind = Route::Kind::kBadRequest;
    return bad;
  }
  // Resolve the segments.
  std::vector<std::string> segs;
  size_t start = 1;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const std::string seg = path.substr(start, end - start);
    start = end + 1;
    if (seg.empty() || seg == ".") continue;
    if (seg == "..") {
      if (segs.empty()) {  // above the document root
        bad.kind = Route::Kind::kForbidden;
        return bad;
      }
      segs.pop_back();
      continue;
    }
    if (seg[0] == '.') {  // dotfiles and dot-directories are never served
      bad.kind = Route::Kind::kForbidden;
      return bad;
    }
    segs.push_back(seg);
  }
  // Walk down: the first segment that names a file ends the script part;
  // for a PHP script the rest is PATH_INFO.
  std::string fs = docroot, url;
  bool all_dirs = true;
  for (size_t i = 0; i < segs.size() && all_dirs; ++i) {
    fs += "/" + segs[i];
    url += "/" + segs[i];
    if (IsFile(fs)) {
      std::string info;
      for (size_t j = i + 1; j < segs.size(); ++j) info += "/" + segs[j];
      if (info.empty() || IsPhp(fs)) return Serve(docroot, symlinks, fs, url, info);
      all_dirs = false;  // "/image.png/x": nothing there
    } else if (!IsDir(fs)) {
      all_dirs = false;
    }
  }
  if (all_dirs) {  // the path names a directory: its index
    for (const char* index : {"/index.php", "/index.html"}) {
      if (IsFile(fs + index)) return Serve(docroot, symlinks, fs + index, url + index, "");
    }
  }
  // Front controller fallback.
  if (IsFile(docroot + "/index.php")) {
    return Serve(docroot, symlinks, docroot + "/index.php", "/index.php", "");
  }
  Route none;
  none.kind = Route::Kind::kNotFound;
  return none;
}

std::string_view MimeTypeFor(std::string_view file) {
  const size_t dot = file.rfind('.');
  const size_t slash = file.rfind('/');
  if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash)) {
    return "application/octet-stream";
  }
  std::string ext(file.substr(dot + 1));
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const struct {
    const char* ext;
    const char* type;
  } kTypes[] = {
      {"html", "text/html; charset=utf-8"}, {"htm", "text/html; charset=utf-8"},
      {"css", "text/css; charset=utf-8"}, {"js", "text/javascript; charset=utf-8"},
      {"mjs", "text/javascript; charset=utf-8"}, {"json", "application/json"},
      {"map", "application/json"}, {"txt", "text/plain; charset=utf-8"},
      {"md", "text/markdown; charset=utf-8"}, {"csv", "text/csv; charset=utf-8"},
      {"xml", "application/xml"}, {"svg", "image/svg+xml"}, {"png", "image/png"},
      {"jpg", "image/jpeg"}, {"jpeg", "image/jpeg"}, {"gif", "image/gif"},
      {"webp", "image/webp"}, {"avif", "image/avif"}, {"ico", "image/x-icon"},
      {"bmp", "image/bmp"}, {"pdf", "application/pdf"}, {"wasm", "application/wasm"},
      {"woff", "font/woff"}, {"woff2", "font/woff2"}, {"ttf", "font/ttf"},
      {"otf", "font/otf"}, {"eot", "application/vnd.ms-fontobject"},
      {"mp4", "video/mp4"}, {"webm", "video/webm"}, {"ogv", "video/ogg"},
      {"mp3", "audio/mpeg"}, {"ogg", "audio/ogg"}, {"wav", "audio/wav"},
      {"zip", "application/zip"}, {"gz", "application/gzip"}, {"tar", "application/x-tar"},
      {"webmanifest", "application/manifest+json"},
  };
  for (const auto& t : kTypes) {
    if (ext == t.ext) return t.type;
  }
  return "application/octet-stream";
}

}  // namespace ephpm
