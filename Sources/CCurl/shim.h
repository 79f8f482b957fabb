// Typed wrappers for libcurl's variadic entry points, which Swift cannot call.
// One wrapper per argument kind; nothing here holds state.
#ifndef FERRY_CCURL_SHIM_H
#define FERRY_CCURL_SHIM_H

#include <curl/curl.h>

// MARK: curl_easy_setopt

static inline CURLcode ferry_easy_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ferry_easy_setopt_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ferry_easy_setopt_ptr(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ferry_easy_setopt_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ferry_easy_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ferry_easy_setopt_write_cb(CURL *h, CURLoption o, curl_write_callback v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ferry_easy_setopt_read_cb(CURL *h, curl_read_callback v) { return curl_easy_setopt(h, CURLOPT_READFUNCTION, v); }
static inline CURLcode ferry_easy_setopt_xferinfo_cb(CURL *h, curl_xferinfo_callback v) { return curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, v); }
static inline CURLcode ferry_easy_setopt_opensocket_cb(CURL *h, curl_opensocket_callback v) { return curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, v); }
static inline CURLcode ferry_easy_setopt_closesocket_cb(CURL *h, curl_closesocket_callback v) { return curl_easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, v); }
static inline CURLcode ferry_easy_setopt_sockopt_cb(CURL *h, curl_sockopt_callback v) { return curl_easy_setopt(h, CURLOPT_SOCKOPTFUNCTION, v); }
static inline CURLcode ferry_easy_setopt_prereq_cb(CURL *h, curl_prereq_callback v) { return curl_easy_setopt(h, CURLOPT_PREREQFUNCTION, v); }
static inline CURLcode ferry_easy_setopt_sshkey_cb(CURL *h, curl_sshkeycallback v) { return curl_easy_setopt(h, CURLOPT_SSH_KEYFUNCTION, v); }

// MARK: curl_multi_setopt

static inline CURLMcode ferry_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }
static inline CURLMcode ferry_multi_setopt_ptr(CURLM *m, CURLMoption o, void *v) { return curl_multi_setopt(m, o, v); }
static inline CURLMcode ferry_multi_setopt_socket_cb(CURLM *m, curl_socket_callback v) { return curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, v); }
static inline CURLMcode ferry_multi_setopt_timer_cb(CURLM *m, curl_multi_timer_callback v) { return curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, v); }

// MARK: curl_easy_getinfo

static inline CURLcode ferry_easy_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode ferry_easy_getinfo_off(CURL *h, CURLINFO i, curl_off_t *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode ferry_easy_getinfo_double(CURL *h, CURLINFO i, double *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode ferry_easy_getinfo_ptr(CURL *h, CURLINFO i, void **v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode ferry_easy_getinfo_string(CURL *h, CURLINFO i, const char **v) { return curl_easy_getinfo(h, i, v); }

// MARK: macros Swift does not import (they contain casts)

static inline size_t ferry_writefunc_pause(void) { return CURL_WRITEFUNC_PAUSE; }
static inline curl_socket_t ferry_socket_bad(void) { return CURL_SOCKET_BAD; }
static inline curl_socket_t ferry_socket_timeout(void) { return CURL_SOCKET_TIMEOUT; }
static inline int ferry_cselect_in(void) { return CURL_CSELECT_IN; }
static inline int ferry_cselect_out(void) { return CURL_CSELECT_OUT; }
static inline int ferry_cselect_err(void) { return CURL_CSELECT_ERR; }
static inline int ferry_pause_cont(void) { return CURLPAUSE_CONT; }
static inline size_t ferry_readfunc_pause(void) { return CURL_READFUNC_PAUSE; }
static inline size_t ferry_readfunc_abort(void) { return CURL_READFUNC_ABORT; }
static inline int ferry_seekfunc_cantseek(void) { return CURL_SEEKFUNC_CANTSEEK; }
static inline CURLcode ferry_mime_data_string(curl_mimepart *part, const char *data) { return curl_mime_data(part, data, CURL_ZERO_TERMINATED); }
static inline int ferry_pause_recv(void) { return CURLPAUSE_RECV; }
static inline int ferry_prereqfunc_ok(void) { return CURL_PREREQFUNC_OK; }
static inline int ferry_prereqfunc_abort(void) { return CURL_PREREQFUNC_ABORT; }
static inline long ferry_http_version_2tls(void) { return CURL_HTTP_VERSION_2TLS; }
static inline long ferry_ssh_auth_password_publickey(void) { return CURLSSH_AUTH_PASSWORD | CURLSSH_AUTH_PUBLICKEY; }

#endif
