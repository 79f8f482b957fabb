import FerryClient
import Foundation

/// The progress line of `get` on a terminal (stderr): the file's bar, bytes, speed and time left, measured
/// locally, redrawn at most ten times a second. Draws nothing when stderr is not a terminal. One thread.
final class TransferMeter {
    private let name: String
    private let console: Console
    private let region: LiveRegion?
    private let style: ProgressBar.Style
    private let started = ProcessInfo.processInfo.systemUptime
    private var firstBytes: Int64?
    private var lastDraw = -Double.infinity
    private var latest: Job?

    init(name: String, console: Console) {
        self.name = name
        self.console = console
        region = console.isTerminal ? LiveRegion(console: console) : nil
        style = Console.barStyle(environment: ProcessInfo.processInfo.environment)
    }

    func update(_ bytes: Int64, _ total: Int64) {
        guard region != nil else { return }
        let now = ProcessInfo.processInfo.systemUptime
        let first = firstBytes ?? bytes
        firstBytes = first
        let elapsed = now - started
        let speed = elapsed > 0.2 ? Double(bytes - first) / elapsed : 0
        var job = Job(id: "", url: "", state: .downloading, filename: name, bytesReceived: bytes, bytesExpected: total,
                      speed: speed, eta: speed > 0 ? Double(total - bytes) / speed : nil)
        job.progress = total > 0 ? Double(bytes) / Double(total) : nil
        latest = job
        if now - lastDraw >= 0.1 || bytes == total { draw(now: now) }
    }

    func finish() {
        guard let region else { return }
        draw(now: ProcessInfo.processInfo.systemUptime)
        region.finish()
    }

    private func draw(now: Double) {
        guard let region, let latest else { return }
        lastDraw = now
        region.draw(ProgressLines(width: console.columns ?? 80, style: style).render([latest]))
    }
}
