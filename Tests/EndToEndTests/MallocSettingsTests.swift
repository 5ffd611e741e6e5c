import CMemory
import Testing

/// `pa_configure_malloc`, which `pricealert` calls first thing, and `pa_release_free_memory`
/// (Docs/performance.md#the-daemons-memory).
@Suite struct MallocSettingsTests {
    /// Freed heap pages go back to the kernel: on glibc the call does its work (the C file sees
    /// `__GLIBC__` only through a libc header such as `stdlib.h`).
    @Test func freedHeapPagesAreGivenBack() {
        // 16 MB in small blocks (from the heap, not separate mappings), then all freed.
        let blocks = (0..<16_384).map { _ in UnsafeMutableRawPointer.allocate(byteCount: 1_000, alignment: 8) }
        for block in blocks { block.initializeMemory(as: UInt8.self, repeating: 1, count: 1_000) }
        for block in blocks { block.deallocate() }
        #expect(pa_release_free_memory() == 1)
    }

    /// glibc accepts the settings `pricealert` makes before its first thread (one heap for all
    /// threads). The top pad (the daemon's) is left alone here: it would slow the other tests'
    /// allocations. That they lower the daemon's peak is measured by
    /// Benchmarks/run-daemon-memory.sh, not here (this process's threads have their heaps).
    @Test func mallocTakesTheSettings() {
        #expect(pa_configure_malloc(0) == 1)
    }
}
