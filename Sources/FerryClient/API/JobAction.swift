/// The state changes a job takes by `POST /api/v1/jobs/{id}/<action>`.
public enum JobAction: String, Sendable, CaseIterable {
    case pause, resume, cancel
}
