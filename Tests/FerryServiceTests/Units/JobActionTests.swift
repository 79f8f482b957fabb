import FerryStore
import Testing
@testable import FerryService

/// API.md's "Actions by state" table, cell by cell.
@Suite("Job actions by state")
struct JobActionTests {
    typealias Row = (JobAction, JobState, JobAction.Outcome)

    static let table: [Row] = [
        (.pause, .waiting, .apply(.paused)), (.pause, .downloading, .apply(.paused)), (.pause, .paused, .noOp),
        (.pause, .finished, .conflict), (.pause, .failed, .conflict), (.pause, .cancelled, .conflict),
        (.resume, .paused, .apply(.waiting)), (.resume, .failed, .apply(.waiting)), (.resume, .waiting, .noOp),
        (.resume, .downloading, .noOp), (.resume, .finished, .conflict), (.resume, .cancelled, .conflict),
        (.cancel, .waiting, .apply(.cancelled)), (.cancel, .downloading, .apply(.cancelled)),
        (.cancel, .paused, .apply(.cancelled)), (.cancel, .failed, .apply(.cancelled)), (.cancel, .cancelled, .noOp),
        (.cancel, .finished, .conflict),
        (.changeURL, .waiting, .apply(.waiting)), (.changeURL, .downloading, .apply(.downloading)),
        (.changeURL, .paused, .apply(.paused)), (.changeURL, .failed, .apply(.failed)),
        (.changeURL, .finished, .conflict), (.changeURL, .cancelled, .conflict),
        (.changeSettings, .waiting, .apply(.waiting)), (.changeSettings, .paused, .apply(.paused)),
        (.changeSettings, .failed, .apply(.failed)), (.changeSettings, .downloading, .apply(.downloading)),
        (.changeSettings, .finished, .conflict), (.changeSettings, .cancelled, .conflict),
    ]

    @Test func tagsChangeInEveryState() {
        for state in JobState.allCases {
            #expect(JobAction.changeTags.outcome(in: state) == .apply(state))
        }
    }

    @Test func everyCellOfTheTable() {
        for (action, state, outcome) in Self.table {
            #expect(action.outcome(in: state) == outcome, "\(action) in \(state)")
        }
    }

    @Test func deleteAppliesInEveryState() {
        for state in JobState.allCases {
            #expect(JobAction.delete.outcome(in: state) == .apply(state))
        }
    }

    @Test func conflictMessagesNameTheState() {
        #expect(JobAction.pause.conflictMessage(.finished).contains("finished"))
        #expect(JobAction.resume.conflictMessage(.cancelled).contains("cancelled"))
    }
}
