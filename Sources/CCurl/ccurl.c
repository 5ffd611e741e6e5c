#include "ccurl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

/* The libcurl functions pricealert calls, resolved once by load(). */
static struct {
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_cleanup)(CURLM *);
    CURLMcode (*multi_setopt)(CURLM *, CURLMoption, ...);
    CURLMcode (*multi_add_handle)(CURLM *, CURL *);
    CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
    CURLMcode (*multi_perform)(CURLM *, int *);
    CURLMcode (*multi_poll)(CURLM *, struct curl_waitfd *, unsigned int, int, int *);
    CURLMcode (*multi_wakeup)(CURLM *);
    CURLMsg *(*multi_info_read)(CURLM *, int *);
} api;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;
static char failure[512];

static int resolve(void *library, void **slot, const char *name) {
    *slot = dlsym(library, name);
    if (*slot == NULL) snprintf(failure, sizeof failure, "libcurl.so.4 has no %s", name);
    return *slot != NULL;
}

#define RESOLVE(field) resolve(library, (void **)&api.field, "curl_" #field)

static void load(void) {
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(failure, sizeof failure, "cannot load libcurl (on Debian and Ubuntu: apt install libcurl4): %s", dlerror());
        return;
    }
    if (!(RESOLVE(global_init) && RESOLVE(easy_init) && RESOLVE(easy_cleanup) && RESOLVE(easy_strerror)
          && RESOLVE(easy_setopt) && RESOLVE(easy_getinfo) && RESOLVE(slist_append) && RESOLVE(slist_free_all)
          && RESOLVE(multi_init) && RESOLVE(multi_cleanup) && RESOLVE(multi_setopt) && RESOLVE(multi_add_handle)
          && RESOLVE(multi_remove_handle) && RESOLVE(multi_perform) && RESOLVE(multi_poll)
          && RESOLVE(multi_wakeup) && RESOLVE(multi_info_read))) {
        return;
    }
    CURLcode code = api.global_init(CURL_GLOBAL_ALL);
    if (code != CURLE_OK) {
        snprintf(failure, sizeof failure, "curl_global_init failed: %s", api.easy_strerror(code));
        return;
    }
    loaded = 1;
}

int pa_curl_load(char *error, size_t size) {
    pthread_once(&once, load);
    if (loaded) return 0;
    if (size > 0) snprintf(error, size, "%s", failure);
    return -1;
}

CURL *pa_curl_easy_init(void) { return api.easy_init(); }
void pa_curl_easy_cleanup(CURL *easy) { api.easy_cleanup(easy); }
const char *pa_curl_easy_strerror(CURLcode code) { return api.easy_strerror(code); }
struct curl_slist *pa_curl_slist_append(struct curl_slist *list, const char *line) { return api.slist_append(list, line); }
void pa_curl_slist_free_all(struct curl_slist *list) { api.slist_free_all(list); }
CURLM *pa_curl_multi_init(void) { return api.multi_init(); }
CURLMcode pa_curl_multi_cleanup(CURLM *multi) { return api.multi_cleanup(multi); }
CURLMcode pa_curl_multi_add_handle(CURLM *multi, CURL *easy) { return api.multi_add_handle(multi, easy); }
CURLMcode pa_curl_multi_remove_handle(CURLM *multi, CURL *easy) { return api.multi_remove_handle(multi, easy); }
CURLMcode pa_curl_multi_perform(CURLM *multi, int *running) { return api.multi_perform(multi, running); }
CURLMcode pa_curl_multi_poll(CURLM *multi, struct curl_waitfd *extra, unsigned int count, int timeout_ms, int *ready) {
    return api.multi_poll(multi, extra, count, timeout_ms, ready);
}
CURLMcode pa_curl_multi_wakeup(CURLM *multi) { return api.multi_wakeup(multi); }
CURLMsg *pa_curl_multi_info_read(CURLM *multi, int *left) { return api.multi_info_read(multi, left); }

CURLcode pa_easy_setopt_long(CURL *h, CURLoption o, long v) { return api.easy_setopt(h, o, v); }
CURLcode pa_easy_setopt_ptr(CURL *h, CURLoption o, const void *v) { return api.easy_setopt(h, o, v); }
CURLcode pa_easy_setopt_off(CURL *h, CURLoption o, curl_off_t v) { return api.easy_setopt(h, o, v); }
CURLcode pa_easy_setopt_write(CURL *h, CURLoption o, size_t (*f)(char *, size_t, size_t, void *)) { return api.easy_setopt(h, o, f); }
CURLcode pa_easy_getinfo_long(CURL *h, CURLINFO i, long *v) { return api.easy_getinfo(h, i, v); }
CURLcode pa_easy_getinfo_double(CURL *h, CURLINFO i, double *v) { return api.easy_getinfo(h, i, v); }
CURLcode pa_easy_getinfo_off(CURL *h, CURLINFO i, curl_off_t *v) { return api.easy_getinfo(h, i, v); }
CURLcode pa_easy_getinfo_ptr(CURL *h, CURLINFO i, void *v) { return api.easy_getinfo(h, i, v); }
CURLMcode pa_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return api.multi_setopt(m, o, v); }
