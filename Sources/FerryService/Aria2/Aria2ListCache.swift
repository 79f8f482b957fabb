import Synchronization

/// Whole answers of `tellWaiting` and `tellStopped` (their JSON lists), each with the table's last change to the
/// states its list holds (`JobTable.lastChange(among:)`) read before it was made: while no job in those states changes,
/// enters or leaves them, the same question is answered with the same bytes. AriaNg asks the same two pages every second,
/// and they rarely change. Not for `tellActive`: a downloading job's speed changes without its record.
///
/// Owner: none; a Mutex, any thread. Keeps the last `limit` questions' answers (a client asks a few). Otherwise pure.
final class Aria2ListCache: Sendable {
    /// A question: which list, which page of it, which fields, for whom (`JobAccess.onlyKey`).
    struct Question: Hashable, Sendable {
        let stopped: Bool
        let offset: Int64
        let num: Int64
        let fields: Aria2StatusFields
        let onlyKey: String?
    }

    static let limit = 8

    private let answers = Mutex<[Question: (change: UInt64, list: RPCValue)]>([:])

    init() {}

    /// The answer made for `question` when the list's states had last changed at `change`; nil if there is none.
    func answer(_ question: Question, change: UInt64) -> RPCValue? {
        answers.withLock { answers in
            guard let kept = answers[question], kept.change == change else { return nil }
            return kept.list
        }
    }

    /// Keeps `list` as the answer to `question` for the states' last change `change` (read before `list` was made).
    func keep(_ list: RPCValue, for question: Question, change: UInt64) {
        answers.withLock { answers in
            if answers[question] == nil, answers.count >= Self.limit { answers.removeAll() }
            answers[question] = (change, list)
        }
    }

    /// How many answers are kept (tests).
    var count: Int { answers.withLock { $0.count } }
}
