#define _GNU_SOURCE
#include "pa_memory.h"
#include <stdlib.h>  // defines __GLIBC__ on glibc (pa_memory.h alone does not)
#if defined(__GLIBC__)
#include <link.h>
#include <malloc.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
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

#if defined(__GLIBC__)
struct relocations {
    uintptr_t start;
    uintptr_t end;
};

/// Called for the main program first: finds its DT_RELA table and checks that it lies in a
/// loaded segment that is not writable (so no page of it was ever written).
static int find_relocations(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct relocations *found = data;
    uintptr_t rela = 0, relasz = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
        const ElfW(Dyn) *dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
        for (; dyn->d_tag != DT_NULL; dyn++) {
            if (dyn->d_tag == DT_RELA) rela = dyn->d_un.d_ptr;
            else if (dyn->d_tag == DT_RELASZ) relasz = dyn->d_un.d_val;
        }
    }
    if (rela == 0 || relasz == 0) return 1;
    // Some loaders store the table's address relocated, others as written in the file.
    if (rela < info->dlpi_addr) rela += info->dlpi_addr;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W)) continue;
        uintptr_t low = info->dlpi_addr + ph->p_vaddr, high = low + ph->p_filesz;
        if (rela >= low && rela + relasz <= high) {
            found->start = rela;
            found->end = rela + relasz;
        }
    }
    return 1;  // the main program only
}
#endif

size_t pa_release_relocations(void **start, size_t *length) {
    *start = NULL;
    *length = 0;
#if defined(__GLIBC__)
    struct relocations found = {0, 0};
    dl_iterate_phdr(find_relocations, &found);
    if (found.end == 0) return 0;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t low = (found.start + page - 1) & ~(page - 1);
    uintptr_t high = found.end & ~(page - 1);
    if (high <= low) return 0;
    if (madvise((void *)low, high - low, MADV_DONTNEED) != 0) return 0;
    *start = (void *)low;
    *length = high - low;
    return high - low;
#else
    return 0;
#endif
}
