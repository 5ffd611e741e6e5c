#include "pa_memory.h"
#include <stdlib.h>  // defines __GLIBC__ on glibc (pa_memory.h alone does not)
#if defined(__GLIBC__)
#include <malloc.h>
#endif

int pa_release_free_memory(void) {
#if defined(__GLIBC__)
    return malloc_trim(0);
#else
    return 0;
#endif
}

int pa_configure_malloc(int long_running) {
#if defined(__GLIBC__)
    int arenas = mallopt(M_ARENA_MAX, 1);
    int pad = long_running ? mallopt(M_TOP_PAD, 0) : 1;
    return arenas == 1 && pad == 1;
#else
    (void)long_running;
    return 0;
#endif
}
