#ifndef PRICEALERT_CCURL_H
#define PRICEALERT_CCURL_H

#include <stddef.h>
#include <curl/curl.h>

/* libcurl is loaded when pricealert first needs it (dlopen of "libcurl.so.4", its ABI name
   since 2006), not when it starts: only webhook sinks use it, so a process without one neither
   maps libcurl and the libraries it loads (TLS, Kerberos, LDAP, SSH, ...; their resident size is
   in Docs/performance.md, "Where the memory goes") nor pays for their relocation at start-up. The build still needs libcurl's headers (libcurl4-openssl-dev).

   pa_curl_load loads the library and runs curl_global_init once (thread-safe); it returns 0, or
   -1 with the reason in `error`. Every other function here may be called only after it returned
   0. The setopt/getinfo wrappers fix one argument type each: Swift cannot call the variadic
   curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt. */
int pa_curl_load(char *error, size_t size);

CURL *pa_curl_easy_init(void);
void pa_curl_easy_cleanup(CURL *easy);
const char *pa_curl_easy_strerror(CURLcode code);
struct curl_slist *pa_curl_slist_append(struct curl_slist *list, const char *line);
void pa_curl_slist_free_all(struct curl_slist *list);
CURLM *pa_curl_multi_init(void);
CURLMcode pa_curl_multi_cleanup(CURLM *multi);
CURLMcode pa_curl_multi_add_handle(CURLM *multi, CURL *easy);
CURLMcode pa_curl_multi_remove_handle(CURLM *multi, CURL *easy);
CURLMcode pa_curl_multi_perform(CURLM *multi, int *running);
CURLMcode pa_curl_multi_poll(CURLM *multi, struct curl_waitfd *extra, unsigned int count, int timeout_ms, int *ready);
CURLMcode pa_curl_multi_wakeup(CURLM *multi);
CURLMsg *pa_curl_multi_info_read(CURLM *multi, int *left);

CURLcode pa_easy_setopt_long(CURL *h, CURLoption o, long v);
CURLcode pa_easy_setopt_ptr(CURL *h, CURLoption o, const void *v);
CURLcode pa_easy_setopt_off(CURL *h, CURLoption o, curl_off_t v);
CURLcode pa_easy_setopt_write(CURL *h, CURLoption o, size_t (*f)(char *, size_t, size_t, void *));
CURLcode pa_easy_getinfo_long(CURL *h, CURLINFO i, long *v);
CURLcode pa_easy_getinfo_double(CURL *h, CURLINFO i, double *v);
CURLcode pa_easy_getinfo_off(CURL *h, CURLINFO i, curl_off_t *v);
CURLcode pa_easy_getinfo_ptr(CURL *h, CURLINFO i, void *v);
CURLMcode pa_multi_setopt_long(CURLM *m, CURLMoption o, long v);

#endif
