#ifndef PA_MEMORY_H
#define PA_MEMORY_H

#include <stddef.h>

// How pricealert keeps its resident memory down; the only process-level tuning it does. The
// three work together: one heap for all threads, freed heap pages given back at the points
// where a daemon has just dropped what it read (rule files, saved state, the market list, the
// first frame), and the executable's relocation table dropped at start. Together they take
// 12-14 % off the daemon's peak RSS with 100 000 rules and about 4 % off a cron `check`'s
// (`Benchmarks/Check/compare.py daemon`); any one of them alone less than 4 %.

/// Gives freed heap pages back to the kernel (glibc `malloc_trim(0)`; a no-op elsewhere).
/// Returns 1 when memory was released.
int pa_release_free_memory(void);

/// Sets glibc's malloc up for pricealert, before the first thread starts (a no-op elsewhere):
/// one heap for all threads (`M_ARENA_MAX` 1: with one per thread, memory freed by one thread
/// is not reused by another, and each heap keeps its own free pages), and when `long_running`,
/// a heap that grows by what is asked rather than 128 KiB more (`M_TOP_PAD` 0; each growth is
/// then a system call, which a short command would feel). Returns 1 when both were set.
int pa_configure_malloc(int long_running);

/// Unmaps from this process the pages of the executable's own relocation table (`.rela.dyn`,
/// megabytes in the static build), which the dynamic loader reads once at start and nothing
/// reads again. Only whole pages inside a read-only segment are dropped (`MADV_DONTNEED`); a
/// later read would fault them back in from the file. Sets `*start` and `*length` to the range
/// dropped and returns its length in bytes, or 0 when nothing was (not Linux/glibc, no such
/// table, or less than a page of it).
size_t pa_release_relocations(void **start, size_t *length);

#endif
