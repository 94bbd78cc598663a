#include "php_host.h"

#include <pthread.h>
#include <sys/time.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <future>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "ephpm/settings.h"
#include "mutex.h"

extern "C" {
#include "SAPI.h"
#include "php.h"
#include "php_ini.h"
#include "php_main.h"
#include "php_variables.h"
#include "zend_ini.h"
// The extension, compiled into the host: its module entry and its door for
// the host's ops table.
#include "ephpm_ops.h"
#include "php_ephpm.h"
}

namespace ephpm {
namespace {

// The request a worker thread is running, for the SAPI callbacks.
struct RequestContext {
  PhpRequest* request = nullptr;
  PhpResponse* response = nullptr;
  size_t body_read = 0;
  std::string cookies;       // every Cookie header, joined with "; "
  std::string content_type;
};

thread_local RequestContext* tl_request = nullptr;

PhpHostOptions* g_options = nullptr;  // set before PHP starts, read-only after

// ---- max_execution_time without a thread-safe PHP ---------------------------
//
// A non-thread-safe PHP arms ITIMER_PROF, which counts the CPU time of the
// whole process: the HTTP and RESP threads would use up a script's time.  So
// the host disarms that timer each time PHP arms it, and this watchdog
// measures the PHP worker thread's own CPU time instead, interrupting the
// script the way PHP's timer does (EG(timed_out) and EG(vm_interrupt); the VM
// then raises "Maximum execution time of N seconds exceeded").

#ifndef ZTS
void DisarmProcessTimer() {
  struct itimerval none {};
  setitimer(ITIMER_PROF, &none, nullptr);
}

class CpuWatchdog {
 public:
  explicit CpuWatchdog(pthread_t worker) {
    pthread_getcpuclockid(worker, &clock_);
    thread_ = std::thread([this] { Run(); });
  }
  ~CpuWatchdog() {
    {
      MutexLock l(&mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  // (Re)starts the limit for the running request; 0 = none.
  void Arm(zend_long seconds) {
    MutexLock l(&mu_);
    deadline_ns_ = seconds > 0 ? CpuNs() + static_cast<int64_t>(seconds) * 1000000000 : 0;
  }
  // The request ended: after this returns the watchdog will not touch it.
  void Disarm() {
    MutexLock l(&mu_);
    deadline_ns_ = 0;
  }

 private:
  int64_t CpuNs() const {
    struct timespec ts;
    clock_gettime(clock_, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  }

  void Run() {
    MutexLock l(&mu_);
    while (!stop_) {
      l.WaitUntil(&cv_, std::chrono::steady_clock::now() + std::chrono::milliseconds(10));
      if (deadline_ns_ != 0 && CpuNs() >= deadline_ns_) {
        deadline_ns_ = 0;
        zend_atomic_bool_store_ex(&EG(timed_out), true);
        zend_atomic_bool_store_ex(&EG(vm_interrupt), true);
      }
    }
  }

  clockid_t clock_{};
  Mutex mu_;
  std::condition_variable cv_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  int64_t deadline_ns_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

CpuWatchdog* g_watchdog = nullptr;
decltype(zend_ini_entry::on_modify) g_orig_timeout_handler = nullptr;

// max_execution_time changed (set_time_limit, ini_set): PHP re-arms its
// process timer; take it off again and restart the watchdog's count.
ZEND_INI_MH(OnUpdateTimeoutForHost) {
  const int r = g_orig_timeout_handler(entry, new_value, mh_arg1, mh_arg2, mh_arg3, stage);
  if (stage == ZEND_INI_STAGE_RUNTIME && g_watchdog != nullptr) {
    DisarmProcessTimer();
    g_watchdog->Arm(ZEND_ATOL(ZSTR_VAL(new_value)));
  }
  return r;
}
#endif  // !ZTS

// ---- SAPI callbacks ------------------------------------------------------------

// PHP formats its startup errors (an extension= that does not load, a
// failing MINIT) by html_errors, which is on unless configured off: they
// would be printed as "<br />\n<b>Warning</b>: ...".  The CLI and embed
// SAPIs turn html_errors off for good; the host keeps the configured value
// for its pages and turns it off only from the registration of the built-in
// extensions (after the INI entries took their values, before any extension
// loads) to the end of startup.
int (*g_register_internal_extensions)() = nullptr;
bool g_configured_html_errors = false;

int RegisterInternalExtensionsWithTextErrors() {
  g_configured_html_errors = PG(html_errors);
  PG(html_errors) = false;
  return g_register_internal_extensions();
}

int Startup(sapi_module_struct* module) {
  g_register_internal_extensions = php_register_internal_extensions_func;
  php_register_internal_extensions_func = RegisterInternalExtensionsWithTextErrors;
  const int r = php_module_startup(module, &ephpm_module_entry);
  php_register_internal_extensions_func = g_register_internal_extensions;
  PG(html_errors) = g_configured_html_errors;
  return r;
}

size_t UbWrite(const char* str, size_t len) {
  if (tl_request != nullptr) {
    tl_request->response->body.append(str, len);
  } else if (fwrite(str, 1, len, stdout) != len) {
    return 0;
  }
  return len;
}

void Flush(void*) {}

int SendHeaders(sapi_headers_struct* headers) {
  if (tl_request == nullptr) return SAPI_HEADER_SENT_SUCCESSFULLY;
  PhpResponse* r = tl_request->response;
  r->status = headers->http_response_code > 0 ? headers->http_response_code : 200;
  zend_llist_position pos;
  for (auto* h = static_cast<sapi_header_struct*>(zend_llist_get_first_ex(&headers->headers, &pos));
       h != nullptr;
       h = static_cast<sapi_header_struct*>(zend_llist_get_next_ex(&headers->headers, &pos))) {
    std::string_view line(h->header, h->header_len);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    r->headers.emplace_back(std::string(line.substr(0, colon)), std::string(value));
  }
  return SAPI_HEADER_SENT_SUCCESSFULLY;
}

size_t ReadPost(char* buffer, size_t count) {
  if (tl_request == nullptr) return 0;
  const std::string& body = tl_request->request->body;
  const size_t n = std::min(count, body.size() - tl_request->body_read);
  std::memcpy(buffer, body.data() + tl_request->body_read, n);
  tl_request->body_read += n;
  return n;
}

char* ReadCookies() {
  if (tl_request == nullptr || tl_request->cookies.empty()) return nullptr;
  return tl_request->cookies.data();
}

void AddVar(const char* name, std::string_view value, zval* track) {
  size_t new_len = 0;
  char* val = estrndup(value.data(), value.size());
  if (sapi_module.input_filter(PARSE_SERVER, name, &val, value.size(), &new_len)) {
    php_register_variable_safe(name, val, new_len, track);
  }
  efree(val);
}

// A request header, repeats folded into one.
struct FoldedHeader {
  std::string key;    // what made headers repeats of each other
  std::string name;   // as the client first sent it
  std::string value;  // the values in order, joined by ", " ("; " for Cookie)
};

// The request's headers, one per key_of(name) in the order first seen;
// headers whose key is "" are left out.  Joined as a proxy folds repeated
// fields (RFC 9110 5.3), Cookie as HTTP/2 does (RFC 9113 8.2.3).
template <typename KeyOf>
std::vector<FoldedHeader> FoldHeaders(const PhpRequest& q, KeyOf key_of) {
  std::vector<FoldedHeader> folded;
  for (const auto& [name, value] : q.headers) {
    std::string key = key_of(name);
    if (key.empty()) continue;
    auto it = std::find_if(folded.begin(), folded.end(), [&](auto& f) { return f.key == key; });
    if (it == folded.end()) {
      folded.push_back(FoldedHeader{std::move(key), name, value});
    } else {
      it->value += (EqualsIgnoreCase(name, "Cookie") ? "; " : ", ") + value;
    }
  }
  return folded;
}

// getallheaders() and its alias apache_request_headers(), which Apache,
// FPM and the CLI server provide: the request's headers under the names the
// client sent (a repeated header once, under its first spelling, with its
// values joined).  Registered through the SAPI's additional_functions.
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_getallheaders, 0, 0, IS_ARRAY, 0)
ZEND_END_ARG_INFO()

void GetAllHeaders(INTERNAL_FUNCTION_PARAMETERS) {
  ZEND_PARSE_PARAMETERS_NONE();
  array_init(return_value);
  if (tl_request == nullptr) return;  // PHP functions run inside a request only
  const auto folded = FoldHeaders(*tl_request->request, [](const std::string& name) {
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return lower;
  });
  for (const FoldedHeader& h : folded) {
    zval value;
    ZVAL_STRINGL(&value, h.value.data(), h.value.size());
    zend_symtable_str_update(Z_ARRVAL_P(return_value), h.name.data(), h.name.size(), &value);
  }
}

const zend_function_entry kHostFunctions[] = {
    ZEND_RAW_FENTRY("getallheaders", GetAllHeaders, arginfo_getallheaders, 0)
    ZEND_RAW_FENTRY("apache_request_headers", GetAllHeaders, arginfo_getallheaders, 0)
    ZEND_FE_END};

void RegisterVariables(zval* track) {
  if (tl_request == nullptr) return;
  const PhpRequest& q = *tl_request->request;
  // Headers first, so the server's own values below win over a client
  // sending e.g. "Script-Name".
  const auto folded = FoldHeaders(q, [](const std::string& name) {
    if (EqualsIgnoreCase(name, "Content-Type") || EqualsIgnoreCase(name, "Content-Length") ||
        EqualsIgnoreCase(name, "Proxy")) {  // HTTP_PROXY would poison outgoing clients (httpoxy)
      return std::string();
    }
    std::string var = "HTTP_";
    for (char c : name) {
      var.push_back(c == '-' ? '_'
                             : static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    }
    return var;
  });
  for (const FoldedHeader& h : folded) AddVar(h.key.c_str(), h.value, track);

  AddVar("SERVER_SOFTWARE", "ephpm/" PHP_EPHPM_VERSION, track);
  AddVar("GATEWAY_INTERFACE", "CGI/1.1", track);
  AddVar("SERVER_PROTOCOL", q.protocol, track);
  AddVar("SERVER_NAME", q.server_name, track);
  AddVar("SERVER_ADDR", q.server_addr, track);
  AddVar("SERVER_PORT", std::to_string(q.server_port), track);
  AddVar("REMOTE_ADDR", q.remote_addr, track);
  AddVar("REMOTE_PORT", std::to_string(q.remote_port), track);
  AddVar("REQUEST_METHOD", q.method, track);
  AddVar("REQUEST_URI", q.uri, track);
  AddVar("QUERY_STRING", q.query, track);
  AddVar("DOCUMENT_ROOT", q.document_root, track);
  AddVar("SCRIPT_FILENAME", q.script_filename, track);
  AddVar("SCRIPT_NAME", q.script_name, track);
  AddVar("PHP_SELF", q.script_name + q.path_info, track);
  if (!q.path_info.empty()) AddVar("PATH_INFO", q.path_info, track);
  if (q.https) AddVar("HTTPS", "on", track);
  if (!tl_request->content_type.empty()) AddVar("CONTENT_TYPE", tl_request->content_type, track);
  for (const auto& [name, value] : q.headers) {
    if (EqualsIgnoreCase(name, "Content-Length")) AddVar("CONTENT_LENGTH", value, track);
  }
}

void LogMessage(const char* message, int) {
  if (g_options != nullptr && g_options->log) {
    g_options->log(message);
  } else {
    std::fprintf(stderr, "%s\n", message);
  }
}

sapi_module_struct MakeModule() {
  sapi_module_struct m{};
  m.name = const_cast<char*>("ephpm");
  m.pretty_name = const_cast<char*>("ephpm application server");
  m.startup = Startup;
  m.shutdown = php_module_shutdown_wrapper;
  m.ub_write = UbWrite;
  m.flush = Flush;
  m.sapi_error = php_error;
  m.send_headers = SendHeaders;
  m.read_post = ReadPost;
  m.read_cookies = ReadCookies;
  m.register_server_variables = RegisterVariables;
  m.log_message = LogMessage;
  m.default_post_reader = php_default_post_reader;
  m.treat_data = php_default_treat_data;
  m.input_filter = php_default_input_filter;
  m.additional_functions = kHostFunctions;
  return m;
}

sapi_module_struct g_module = MakeModule();

}  // namespace

// ---- the host ----------------------------------------------------------------------

class PhpHost::Impl {
 public:
  explicit Impl(PhpHostOptions options) : options_(std::move(options)) {}

  bool Start(const ephpm_kv_ops* ops, std::string* error) {
    g_options = &options_;
    ephpm_set_kv_ops(ops);
    std::string ini;
    for (const auto& [k, v] : options_.ini) ini += k + "=" + v + "\n";
    ini_entries_ = ini;
    std::promise<std::string> started;
    auto result = started.get_future();
    primary_ = std::thread([this, &started] { PrimaryMain(&started); });
    *error = result.get();
    if (!error->empty()) {
      primary_.join();
      return false;
    }
    return true;
  }

  ~Impl() {
    {
      MutexLock l(&mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (primary_.joinable()) primary_.join();
    g_options = nullptr;
  }

  void Submit(std::shared_ptr<PhpRequest> request, std::function<void(PhpResponse)> done) {
    {
      MutexLock l(&mu_);
      queue_.push_back(Job{std::move(request), std::move(done)});
      ++pending_;
    }
    cv_.notify_one();
  }

  size_t pending() const {
    MutexLock l(&mu_);
    return pending_;
  }

 private:
  struct Job {
    std::shared_ptr<PhpRequest> request;
    std::function<void(PhpResponse)> done;
  };

  // The first worker: starts PHP, starts the other workers (thread-safe
  // PHP only), serves requests, and shuts PHP down once every worker is
  // done, all on this thread (startup and shutdown belong to one thread).
  void PrimaryMain(std::promise<std::string>* started) {
#ifdef ZTS
    php_tsrm_startup();
#endif
    sapi_startup(&g_module);  // clears ini_entries: set them after it
    g_module.ini_entries = ini_entries_.data();
    g_module.php_ini_ignore = options_.ini_file.empty() ? 1 : 0;
    g_module.php_ini_path_override =
        options_.ini_file.empty() ? nullptr : options_.ini_file.data();
    if (g_module.startup(&g_module) == FAILURE) {
      sapi_shutdown();
#ifdef ZTS
      tsrm_shutdown();
#endif
      started->set_value("PHP failed to start (see the messages above)");
      return;
    }
#ifndef ZTS
    // A thread-safe PHP times each thread itself (its execution timers); a
    // non-thread-safe one needs the watchdog.
    CpuWatchdog watchdog(pthread_self());
    g_watchdog = &watchdog;
    if (auto* e = static_cast<zend_ini_entry*>(
            zend_hash_str_find_ptr(EG(ini_directives), ZEND_STRL("max_execution_time")))) {
      g_orig_timeout_handler = e->on_modify;
      e->on_modify = OnUpdateTimeoutForHost;
    }
#endif
    started->set_value("");
#ifdef ZTS
    for (size_t i = 1; i < options_.workers; ++i) {
      secondaries_.emplace_back([this] {
        (void)ts_resource(0);  // this thread's PHP globals
        Serve();
        ts_free_thread();
      });
    }
#endif
    Serve();
    for (auto& t : secondaries_) t.join();
#ifndef ZTS
    g_watchdog = nullptr;
#endif
    php_module_shutdown();
    sapi_shutdown();
#ifdef ZTS
    tsrm_shutdown();
#endif
  }

  // Runs queued requests until stopping with an empty queue.
  void Serve() {
    for (;;) {
      Job job;
      {
        MutexLock l(&mu_);
        while (!stopping_ && queue_.empty()) l.Wait(&cv_);
        if (queue_.empty()) return;  // stopping, and everything queued is done
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      PhpResponse response;
      Execute(*job.request, &response);
      job.done(std::move(response));
      MutexLock l(&mu_);
      --pending_;
    }
  }

  void Execute(PhpRequest& q, PhpResponse* r) {
    RequestContext ctx;
    ctx.request = &q;
    ctx.response = r;
    const char* authorization = nullptr;
    for (const auto& [name, value] : q.headers) {
      if (EqualsIgnoreCase(name, "Cookie")) {
        if (!ctx.cookies.empty()) ctx.cookies += "; ";
        ctx.cookies += value;
      } else if (EqualsIgnoreCase(name, "Content-Type")) {
        ctx.content_type = value;
      } else if (EqualsIgnoreCase(name, "Authorization")) {
        authorization = value.c_str();
      }
    }
    tl_request = &ctx;
    SG(server_context) = &ctx;
    SG(request_info).request_method = q.method.c_str();
    SG(request_info).query_string = q.query.empty() ? nullptr : q.query.data();
    SG(request_info).request_uri = q.uri.data();
    SG(request_info).path_translated = q.script_filename.data();
    SG(request_info).content_type = ctx.content_type.empty() ? nullptr : ctx.content_type.c_str();
    SG(request_info).content_length = static_cast<zend_long>(q.body.size());
    SG(request_info).proto_num = q.protocol == "HTTP/1.0" ? 1000 : 1001;
    SG(request_info).headers_only = q.method == "HEAD";
    SG(sapi_headers).http_response_code = 200;
    php_handle_auth_data(authorization);

    if (php_request_startup() == FAILURE) {
      r->status = 500;
      r->body = "PHP could not start the request\n";
      zend_try { php_request_shutdown(nullptr); } zend_end_try();
    } else {
#ifndef ZTS
      DisarmProcessTimer();
      g_watchdog->Arm(EG(timeout_seconds));  // as php_request_startup set it
#endif
      zend_file_handle fh;
      zend_stream_init_filename(&fh, q.script_filename.c_str());
      zend_first_try {
        php_execute_script(&fh);
      } zend_end_try();
      zend_destroy_file_handle(&fh);
#ifndef ZTS
      g_watchdog->Disarm();
#endif
      // Also after a fatal error or exit(): this is what runs the session
      // handler's close and so releases the session lock.
      zend_try { php_request_shutdown(nullptr); } zend_end_try();
    }
    SG(server_context) = nullptr;
    tl_request = nullptr;
  }

  PhpHostOptions options_;
  std::string ini_entries_;
  std::thread primary_;
  std::vector<std::thread> secondaries_;
  mutable Mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_ ABSL_GUARDED_BY(mu_);
  size_t pending_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
};

std::unique_ptr<PhpHost> PhpHost::Start(const PhpHostOptions& options, const ephpm_kv_ops* ops,
                                        std::string* error) {
  auto impl = std::make_unique<Impl>(options);
  if (!impl->Start(ops, error)) return nullptr;
  return std::unique_ptr<PhpHost>(new PhpHost(std::move(impl)));
}

PhpHost::PhpHost(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PhpHost::~PhpHost() = default;

void PhpHost::Submit(std::shared_ptr<PhpRequest> request, std::function<void(PhpResponse)> done) {
  impl_->Submit(std::move(request), std::move(done));
}

size_t PhpHost::pending() const { return impl_->pending(); }

bool PhpHost::ThreadSafe() {
#ifdef ZTS
  return true;
#else
  return false;
#endif
}

}  // namespace ephpm
