import FerryStore

/// Which aria2 notification a job's change of state is (`aria2.onDownloadStart`, `Pause`, `Stop` for cancelled,
/// `Complete`, `Error`), and the notification's JSON. Pure.
enum Aria2Notifications {
    /// The notification for a job now in `current` that was in `previous` (nil: not seen before); nil for none.
    /// A job seen first paused or waiting (just created) notifies nothing, as aria2 does for a download added paused.
    static func method(from previous: JobState?, to current: JobState) -> String? {
        guard previous != current else { return nil }
        switch current {
        case .downloading: return previous == .delivering ? nil : "aria2.onDownloadStart"
        case .paused: return previous == nil ? nil : "aria2.onDownloadPause"
        case .cancelled: return "aria2.onDownloadStop"
        case .finished: return "aria2.onDownloadComplete"
        case .failed: return "aria2.onDownloadError"
        case .waiting, .delivering: return nil
        }
    }

    /// `{"jsonrpc":"2.0","method":…,"params":[{"gid":…}]}`.
    static func message(_ method: String, gid: String) -> String {
        "{\"jsonrpc\":\"2.0\",\"method\":\"\(method)\",\"params\":[{\"gid\":\"\(gid)\"}]}"
    }

    private static let stateKey = Array("\"state\":\"".utf8)

    /// The `state` of a `job` event's job object, found without decoding the whole object (the job's own `state` is
    /// the first one in it: `JobView` writes it before `delivery` and `sources`, whose objects have states too).
    static func state(inJobEvent data: ArraySlice<UInt8>) -> JobState? {
        guard let start = firstIndex(of: stateKey, in: data) else { return nil }
        let valueStart = start + stateKey.count
        guard let end = data[valueStart...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        return JobState(rawValue: String(decoding: data[valueStart..<end], as: UTF8.self))
    }

    private static func firstIndex(of needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        var index = haystack.startIndex
        let last = haystack.endIndex - needle.count
        while index <= last {
            if haystack[index] == needle[0], haystack[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }
}
