/// The `SELECT` of `SQLiteJobStore.list` for one `JobFilter`, and its parameters (besides `:after` and `:limit`).
///
/// With a tag, the walk starts in `job_tags`' primary key (tag, sequence), which gives that tag's jobs already in
/// list order, and joins each to its row; without one, it walks `jobs` by sequence. States (`jobs_state_sequence`)
/// and the search text (`instr` on `search_text`, byte for byte, as `JobFilter.matches` compares) narrow the walk,
/// which stops after `LIMIT` matching rows. Each shape of filter is one SQL text, so one cached statement: states
/// are always listed in `JobState.allCases` order. A pure value; its statement runs on the store's queue.
struct SQLiteJobQuery {
    let sql: String
    private let states: [JobState]?
    private let tag: String?
    private let text: String?
    private let ownerKey: String?

    init(_ filter: JobFilter) {
        ownerKey = filter.ownerKey
        states = filter.states.map { wanted in JobState.allCases.filter { wanted.contains($0) } }
        tag = filter.tag
        text = filter.text.flatMap { $0.isEmpty ? nil : JobFilter.folded($0) }
        var conditions: [String] = []
        if let states {
            conditions.append("jobs.state IN (\(states.indices.map { ":state\($0)" }.joined(separator: ", ")))")
        }
        if text != nil { conditions.append("instr(jobs.search_text, :text) > 0") }
        if ownerKey != nil { conditions.append("jobs.owner_key = :owner_key") }
        let narrowing = conditions.map { " AND " + $0 }.joined()
        if tag != nil {
            sql = """
                SELECT \(SQLiteJobRow.qualifiedSelectColumns) FROM job_tags JOIN jobs ON jobs.sequence = job_tags.sequence \
                WHERE job_tags.tag = :tag AND job_tags.sequence > :after\(narrowing) \
                ORDER BY job_tags.sequence LIMIT :limit
                """
        } else if ownerKey != nil {
            // One key's jobs straight from `jobs_owner_key_sequence`, in list order.
            sql = """
                SELECT \(SQLiteJobRow.qualifiedSelectColumns) FROM jobs INDEXED BY jobs_owner_key_sequence \
                WHERE jobs.sequence > :after\(narrowing) ORDER BY jobs.sequence LIMIT :limit
                """
        } else {
            sql = """
                SELECT \(SQLiteJobRow.qualifiedSelectColumns) FROM jobs WHERE jobs.sequence > :after\(narrowing) \
                ORDER BY jobs.sequence LIMIT :limit
                """
        }
    }

    /// Binds the filter's values (the caller binds `:after` and `:limit`).
    func bind(to statement: Statement) throws {
        if let states {
            for (index, state) in states.enumerated() { try statement.bind(state.rawValue, to: ":state\(index)") }
        }
        if let tag { try statement.bind(tag, to: ":tag") }
        if let text { try statement.bind(text, to: ":text") }
        if let ownerKey { try statement.bind(ownerKey, to: ":owner_key") }
    }
}
