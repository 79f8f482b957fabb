/// One run of body bytes on its way to the disk: raw memory of a fixed capacity, laid out for direct I/O.
///
/// Filled on the engine queue (`FileWriter.stage`, under `RunStaging`'s lock), then only read: by the
/// writer's queue (`pwrite`) and its digest queue (hashing), after which the writer takes it back for a later run.
/// Reusing a few buffers spares the allocator a fresh megabyte per run, with its page faults, zeroed pages and
/// `madvise`/`brk` calls (about 4% of the download's CPU when profiled).
///
/// A run starting at file offset `o` begins `o % alignment` bytes into the memory, so every byte's address is
/// congruent to its file offset modulo `alignment`: the aligned middle of any run can go to an `O_DIRECT`
/// descriptor straight from this memory.
final class RunBuffer: @unchecked Sendable {
    /// Block alignment of the memory (and of direct writes): 4 KiB, a multiple of every logical block size.
    static let alignment = 4096
    /// Bytes a run may hold, whatever its start.
    let capacity: Int
    private(set) var count = 0
    /// Where the run starts in the memory: its file offset modulo `alignment`.
    private var lead = 0
    private let base: UnsafeMutableRawPointer

    init(capacity: Int) {
        self.capacity = capacity
        self.base = .allocate(byteCount: capacity + Self.alignment, alignment: Self.alignment)
    }

    deinit { base.deallocate() }

    /// Bytes that still fit.
    var room: Int { capacity - count }

    /// The bytes appended so far.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base + lead, count: count) }

    /// Empties the buffer for a run starting at file offset `offset`.
    func reset(startingAt offset: Int64) {
        count = 0
        lead = Int(offset % Int64(Self.alignment))
    }

    /// Copies `source` after the bytes already there; it must fit (`room`).
    func append(_ source: UnsafeRawBufferPointer) {
        precondition(source.count <= room, "RunBuffer overflow")
        guard let from = source.baseAddress, source.count > 0 else { return }
        (base + lead + count).copyMemory(from: from, byteCount: source.count)
        count += source.count
    }
}
