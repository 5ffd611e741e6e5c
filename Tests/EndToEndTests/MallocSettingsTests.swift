import CMemory
import Foundation
import Testing

/// `pa_release_relocations` and `pa_configure_malloc`, which `pricealert` calls first thing, and
/// `pa_release_free_memory` (Docs/performance.md).
@Suite struct RelocationReleaseTests {
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

    /// In this test process (a PIE executable too): the table's pages are dropped from the
    /// process, the process goes on working, and a second call finds the same range.
    @Test func theRelocationTableLeavesTheProcessAndNothingBreaks() throws {
        var start: UnsafeMutableRawPointer?
        var length = 0
        let released = pa_release_relocations(&start, &length)
        #expect(released > 0)
        #expect(released == length)
        let first = try #require(start)
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        #expect(Int(bitPattern: first) % page == 0 && length % page == 0)
        // /proc/self/pagemap: bit 63 of each page's entry says whether it is mapped in now.
        let pagemap = try #require(FileHandle(forReadingAtPath: "/proc/self/pagemap"))
        defer { try? pagemap.close() }
        var present = 0
        for p in stride(from: Int(bitPattern: first), to: Int(bitPattern: first) + length, by: page) {
            try pagemap.seek(toOffset: UInt64(p / page * 8))
            let entry = try #require(try pagemap.read(upToCount: 8))
            if entry.withUnsafeBytes({ $0.loadUnaligned(as: UInt64.self) }) >> 63 == 1 { present += 1 }
        }
        #expect(present == 0, "\(present) of \(length / page) pages still mapped")
        // Reading the range again faults it back in from the file: the bytes are still there.
        let bytes = UnsafeRawBufferPointer(start: first, count: length)
        #expect(bytes.contains { $0 != 0 })
        var again: UnsafeMutableRawPointer?
        var againLength = 0
        #expect(pa_release_relocations(&again, &againLength) == released)
        #expect(again == start)
    }
}
