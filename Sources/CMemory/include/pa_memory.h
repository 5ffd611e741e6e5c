#ifndef PA_MEMORY_H
#define PA_MEMORY_H

/// Gives freed heap pages back to the kernel (glibc `malloc_trim(0)`; a no-op elsewhere).
/// Returns 1 when memory was released.
int pa_release_free_memory(void);

#endif
