#if canImport(Glibc)
import Glibc
#endif

/// Hands memory the allocator holds but no longer uses back to the system, after work that allocated
/// and freed a lot at once (recovery reads every job). Stateless; call from anywhere. Costs a walk over
/// the heap's free lists (a few milliseconds for a heap of ~100 MB), so only after such work.
enum FreeMemory {
    static func returnToSystem() {
        #if canImport(Glibc)
        // glibc's `malloc_trim` (declared in <malloc.h>, which the Glibc module does not import).
        typealias Trim = @convention(c) (Int) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") {
            _ = unsafeBitCast(symbol, to: Trim.self)(0)
        }
        #endif
    }
}
