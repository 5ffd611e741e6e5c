#ifndef PA_MEMORY_H
#define PA_MEMORY_H

// How pricealert keeps its heap's resident memory down; the only process-level tuning it does
// (Docs/performance.md#the-daemons-memory says what it buys). The link settings that keep the
// executable's own pages down are in Package.swift.

/// Gives freed heap pages back to the kernel (glibc `malloc_trim(0)`; a no-op elsewhere).
/// Returns 1 when memory was released.
int pa_release_free_memory(void);

/// Sets glibc's malloc up for pricealert, before the first thread starts (a no-op elsewhere):
/// one heap for all threads (`M_ARENA_MAX` 1: with one per thread, memory freed by one thread
/// is not reused by another, and each heap keeps its own free pages), and when `long_running`,
/// a heap that grows by what is asked rather than 128 KiB more (`M_TOP_PAD` 0; each growth is
/// then a system call, which a short command would feel). Returns 1 when both were set.
int pa_configure_malloc(int long_running);

#endif
