/// One item of a batch answer: a job, or why that URL was refused.
public enum BatchItem: Sendable, Equatable {
    case job(Job)
    case refused(code: String, message: String)
}
