import FerryStore

/// What a user can do to a job, and the rules of API.md's "Actions by state" table.
///
/// Pure: `outcome(in:)` says whether an action applies, is a no-op, or conflicts, without touching
/// the job. The supervisor applies the result.
enum JobAction: String, Sendable, CaseIterable {
    case pause, resume, cancel, changeURL, changeSettings, changeTags, delete

    enum Outcome: Equatable, Sendable {
        /// The action applies; the job moves to this state (the supervisor may pick `downloading`
        /// over `waiting` for resume once the engine starts it).
        case apply(JobState)
        /// Already done: answer 200 with the job unchanged.
        case noOp
        /// Does not apply in this state: 409.
        case conflict
    }

    func outcome(in state: JobState) -> Outcome {
        switch (self, state) {
        case (.pause, .waiting), (.pause, .downloading), (.pause, .delivering): .apply(.paused)
        case (.pause, .paused): .noOp
        case (.pause, _): .conflict

        case (.resume, .paused), (.resume, .failed): .apply(.waiting)
        case (.resume, .waiting), (.resume, .downloading), (.resume, .delivering): .noOp
        case (.resume, _): .conflict

        case (.cancel, .waiting), (.cancel, .downloading), (.cancel, .delivering), (.cancel, .paused), (.cancel, .failed): .apply(.cancelled)
        case (.cancel, .cancelled): .noOp
        case (.cancel, _): .conflict

        case (.changeURL, .waiting), (.changeURL, .downloading), (.changeURL, .paused), (.changeURL, .failed): .apply(state)
        case (.changeURL, _): .conflict

        case (.changeSettings, .finished), (.changeSettings, .cancelled): .conflict
        case (.changeSettings, _): .apply(state)

        case (.changeTags, _): .apply(state)

        case (.delete, _): .apply(state)
        }
    }

    /// The sentence a 409 carries.
    func conflictMessage(_ state: JobState) -> String {
        switch self {
        case .pause: "a \(state.rawValue) job cannot be paused"
        case .resume: "a \(state.rawValue) job cannot be resumed"
        case .cancel: "a \(state.rawValue) job cannot be cancelled"
        case .changeURL: "the URL of a \(state.rawValue) job cannot be changed"
        case .changeSettings: "a \(state.rawValue) job cannot be changed"
        case .changeTags: "the tags of a \(state.rawValue) job cannot be changed"
        case .delete: "a \(state.rawValue) job cannot be deleted"
        }
    }
}
