import Dispatch
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Log lines bound for a file descriptor (standard error), written in batches.
///
/// A busy server logs a line per request (the access log); writing each with its own `write(2)`, as
/// `StreamLogHandler` does, costs more than answering a small request. Here lines of level `info` and
/// below wait in a buffer for at most `delay` (or until `limit` bytes are waiting) and go out in one
/// write; a line of level `notice` or above is written at once, after everything before it. Lines
/// keep their order. Call `flush()` before the process exits (an `atexit` hook does it for
/// `standardError`); a crash loses at most `delay` of info lines.
///
/// Owner: its locks: `pending` guards the buffer (held only to append or take it), `writing` makes
/// one flush at a time, so batches leave in the order their lines came. Usable from any thread.
public final class BatchedLog: Sendable {
    public static let standardError: BatchedLog = {
        let log = BatchedLog(fd: 2)
        atexit { BatchedLog.standardError.flush() }
        return log
    }()

    private struct Pending {
        var bytes: [UInt8] = []
        var flushScheduled = false
        /// The second `stamp` was formatted for.
        var stampSecond = -1
        var stamp: [UInt8] = []
    }

    private let fd: Int32
    private let delay: DispatchTimeInterval
    private let limit: Int
    private let pending = Mutex(Pending())
    private let writing = Mutex(())
    private let queue = DispatchQueue(label: "ferry.log", qos: .utility)

    public init(fd: Int32, delay: DispatchTimeInterval = .milliseconds(50), limit: Int = 32 * 1024) {
        self.fd = fd
        self.delay = delay
        self.limit = limit
        tzset()
    }

    /// Appends one line (after the local time, before a newline); writes at once when `urgent`.
    public func append(_ line: String, urgent: Bool) {
        let now = time(nil)
        let (full, schedule) = pending.withLock { pending -> (Bool, Bool) in
            if pending.stampSecond != now {
                pending.stampSecond = now
                pending.stamp = Self.localTimestamp(now)
            }
            pending.bytes.append(contentsOf: pending.stamp)
            pending.bytes.append(contentsOf: line.utf8)
            pending.bytes.append(UInt8(ascii: "\n"))
            let schedule = !pending.flushScheduled
            pending.flushScheduled = true
            return (pending.bytes.count >= limit, schedule)
        }
        if urgent || full {
            flush()
        } else if schedule {
            queue.asyncAfter(deadline: .now() + delay) { [self] in flush() }
        }
    }

    /// Writes every waiting line.
    public func flush() {
        writing.withLock { _ in
            let bytes = pending.withLock { pending -> [UInt8] in
                pending.flushScheduled = false
                defer { pending.bytes.removeAll(keepingCapacity: pending.bytes.capacity <= 4 * limit) }
                return pending.bytes
            }
            bytes.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                    if n > 0 { offset += n } else if n < 0 && errno == EINTR { continue } else { return }
                }
            }
        }
    }

    /// `StreamLogHandler`'s time format: local time, `%Y-%m-%dT%H:%M:%S%z`.
    static func localTimestamp(_ seconds: time_t) -> [UInt8] {
        var seconds = seconds
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else { return Array("<unknown>".utf8) }
        var buffer = [Int8](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &parts)
        return buffer[0..<count].map { UInt8(bitPattern: $0) }
    }
}
