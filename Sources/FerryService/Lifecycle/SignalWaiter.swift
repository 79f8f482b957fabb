import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Waits for one of the given signals through a Dispatch signal source (the default action is
/// switched off first, as Dispatch requires). Its state is confined to `queue`.
final class SignalWaiter: @unchecked Sendable {
    private let queue = DispatchQueue(label: "ferry.signals")
    private var sources: [DispatchSourceSignal] = []
    private var continuation: CheckedContinuation<Int32, Never>?
    private var received: Int32?

    init(_ signals: [Int32]) {
        for number in signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [weak self] in self?.fire(number) }
            source.activate()
            sources.append(source)
        }
    }

    private func fire(_ number: Int32) {
        dispatchPrecondition(condition: .onQueue(queue))
        if received == nil { received = number }
        continuation?.resume(returning: number)
        continuation = nil
    }

    func wait() async -> Int32 {
        await withCheckedContinuation { continuation in
            queue.async {
                if let received = self.received { continuation.resume(returning: received) } else { self.continuation = continuation }
            }
        }
    }
}
