// One HTTP request as PHP sees it, and the response PHP produced.  Plain C++:
// the HTTP side fills a PhpRequest, a PHP worker fills the PhpResponse.

#ifndef EPHPM_SAPI_PHP_REQUEST_H_
#define EPHPM_SAPI_PHP_REQUEST_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ephpm {

struct PhpRequest {
  std::string method;           // "GET"
  std::string uri;              // the request target as received: "/a/b.php?x=1"
  std::string query;            // after '?', undecoded
  std::string protocol;         // "HTTP/1.1"
  std::vector<std::pair<std::string, std::string>> headers;  // as received
  std::string body;
  std::string script_filename;  // absolute path of the script to run
  std::string script_name;      // its URL path: "/b.php"
  std::string path_info;        // what follows the script in the path, or ""
  std::string document_root;
  std::string remote_addr;
  uint16_t remote_port = 0;
  std::string server_addr;
  uint16_t server_port = 0;
  std::string server_name;
  bool https = false;
};

struct PhpResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;  // "Name", "value"
  std::string body;
};

}  // namespace ephpm

#endif  // EPHPM_SAPI_PHP_REQUEST_H_
