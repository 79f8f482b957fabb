import CLinux

/// Hands memory the allocator holds but no longer uses back to the system, after work that allocated
/// and freed a lot at once (recovery reads every job). Stateless; call from anywhere. Costs a walk over
/// the heap's free lists (a few milliseconds for a heap of ~100 MB), so only after such work.
enum FreeMemory {
    static func returnToSystem() {
        _ = malloc_trim(0)
    }
}
