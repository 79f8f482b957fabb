/// The `SELECT` of `PostgresJobStore.list` for one `JobFilter`, and its parameters.
///
/// Like `SQLiteJobQuery`: with a tag, the walk starts in `job_tags`' primary key (tag, sequence), which gives that
/// tag's jobs in list order, and joins each to its row; without one, it walks `jobs` by sequence. States
/// (`state = ANY($n::text[])`) and the search text (`LIKE '%text%'` on `search_text`, the text's `%`, `_` and `\`
/// escaped, so a literal substring as `JobFilter.matches` compares) narrow the walk, which stops after `LIMIT`
/// matching rows; the planner may instead start from the trigram index (schema 2) when matches look rare. A pure value.
struct PostgresJobQuery {
    let sql: String
    let parameters: [PostgresParameter]

    /// - Parameters:
    ///   - after: the sequence the page starts after.
    ///   - limit: rows to return (the caller asks one more than a page to learn whether another follows).
    init(_ filter: JobFilter, after: Int64, limit: Int) {
        var parameters: [PostgresParameter] = [PostgresParameter(after), PostgresParameter(limit)]
        var conditions: [String] = []
        if let states = filter.states {
            parameters.append(.textArray(JobState.allCases.filter { states.contains($0) }.map(\.rawValue)))
            conditions.append("jobs.state = ANY($\(parameters.count)::text[])")
        }
        if let text = filter.text, !text.isEmpty {
            parameters.append(.text("%" + Self.escapedForLike(JobFilter.folded(text)) + "%"))
            conditions.append("jobs.search_text LIKE $\(parameters.count)")
        }
        if let ownerKey = filter.ownerKey {
            parameters.append(.text(ownerKey))
            conditions.append("jobs.owner_key = $\(parameters.count)")
        }
        let narrowing = conditions.map { " AND " + $0 }.joined()
        if let tag = filter.tag {
            parameters.append(.text(tag))
            sql = """
                SELECT \(PostgresJobRow.selectColumns) FROM job_tags JOIN jobs ON jobs.sequence = job_tags.sequence \
                WHERE job_tags.tag = $\(parameters.count) AND job_tags.sequence > $1\(narrowing) \
                ORDER BY job_tags.sequence LIMIT $2
                """
        } else {
            sql = """
                SELECT \(PostgresJobRow.selectColumns) FROM jobs WHERE jobs.sequence > $1\(narrowing) \
                ORDER BY jobs.sequence LIMIT $2
                """
        }
        self.parameters = parameters
    }

    /// `text` as a literal `LIKE` pattern: `\`, `%` and `_` escaped with `\` (LIKE's default escape character).
    static func escapedForLike(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if character == "\\" || character == "%" || character == "_" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }
}
