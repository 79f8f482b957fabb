import Foundation

/// Takes the bytes of a `GetObject` into a writer at increasing offsets, pausing the read while more than `limit`
/// bytes wait to be written. Confined to the engine queue (the client's sink runs there, and so do the writer's
/// completions).
final class RestoreSink: @unchecked Sendable {
    private let writer: FileWriter
    private let limit: Int64
    var reading: ObjectReading?
    private var offset: Int64
    private var pending: Int64 = 0
    private var written: Int64
    private var failed = false
    private var paused = false
    private var done: ((Int64) -> Void)?

    /// - Parameter from: the file offset of the first byte taken.
    init(writer: FileWriter, limit: Int64, from: Int64 = 0) {
        self.writer = writer
        self.limit = max(1 << 20, limit)
        self.offset = from
        self.written = from
    }

    func take(_ chunk: UnsafeRawBufferPointer) -> ObjectBodyDisposition {
        guard !failed else { return .stop }
        guard pending < limit else { paused = true; return .pause }
        let bytes = [UInt8](chunk), at = offset
        offset += Int64(bytes.count)
        pending += Int64(bytes.count)
        writer.write(bytes, at: at) { [self] error in
            pending -= Int64(bytes.count)
            if error != nil { failed = true } else if !failed { written = at + Int64(bytes.count) }
            if paused, pending < limit / 2 {
                paused = false
                reading?.resume()
            }
            finishIfWritten()
        }
        return .consumed
    }

    /// Calls `done` with the end of the bytes written (contiguous from `from`) once every write has completed.
    func whenWritten(_ done: @escaping (Int64) -> Void) {
        self.done = done
        finishIfWritten()
    }

    private func finishIfWritten() {
        guard pending == 0, let done else { return }
        self.done = nil
        done(written)
    }
}
