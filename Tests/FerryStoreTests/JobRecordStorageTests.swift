import FerryCore
import Foundation
import Testing
@testable import FerryStore

/// `JobRecord` is a plain value: copies are independent, unset fields read as their defaults, and every field
/// takes part in equality. Also the `jobs` row mapping and the string interner the SQLite store reads rows with.
@Suite("JobRecord value, headers column, string interning")
struct JobRecordStorageTests {
    @Test func copiesAreIndependentValues() {
        let original = JobRecord.makeFull("a")
        var copy = original
        copy.state = .paused
        copy.bytesReceived = 7
        copy.etag = nil
        copy.headers = []
        copy.error = JobFailure(code: .retrying, message: "again")
        #expect(original == JobRecord.makeFull("a"))
        #expect(original.state == .failed && original.etag == "\"s1-4194304\"" && original.headers.count == 3)
        #expect(copy.state == .paused && copy.bytesReceived == 7 && copy.etag == nil && copy.headers.isEmpty)
        #expect(copy != original)
    }

    @Test func unsetFieldsReadAsDefaultsAndCanBeSetAndCleared() {
        var job = JobRecord.make("b")
        #expect(job.headers.isEmpty && job.finalURL == nil && job.startedAt == nil && job.lastModified == nil)
        #expect(job.updatedAt == job.createdAt && job.sequence == 0 && job.bytesReceived == 0 && job.attempts == 0)
        let before = job
        job.filename = "x.bin"
        job.lastModified = ""
        #expect(job.filename == "x.bin" && job.lastModified == "")
        #expect(before.filename == nil && before.lastModified == nil)
        job.filename = nil
        job.lastModified = nil
        #expect(job == before)
        // Clearing a field nobody set changes nothing.
        var plain = JobRecord.make("c")
        plain.contentType = nil
        plain.headers = []
        #expect(plain == JobRecord.make("c"))
    }

    @Test func everyFieldTakesPartInEquality() {
        let base = JobRecord.makeFull("d")
        var changes: [(inout JobRecord) -> Void] = [
            { $0.id = "e" }, { $0.sequence += 1 }, { $0.url += "?" }, { $0.finalURL = nil }, { $0.state = .waiting },
            { $0.filename = "other" }, { $0.requestedFilename = nil }, { $0.bytesReceived += 1 },
            { $0.bytesExpected = nil }, { $0.contentType = "text/plain" }, { $0.sha256 = nil },
            { $0.checksum = nil }, { $0.error = nil }, { $0.attempts += 1 }, { $0.priority += 1 },
            { $0.maxBytesPerSecond = nil }, { $0.connections = 1 }, { $0.headers = [] }, { $0.dedupeKey = "k" },
            { $0.etag = nil }, { $0.lastModified = nil },
            { $0.createdAt += 1 }, { $0.startedAt = nil }, { $0.finishedAt = nil }, { $0.updatedAt += 1 },
        ]
        for index in changes.indices {
            var changed = base
            changes[index](&changed)
            #expect(changed != base, "change \(index) went unnoticed")
        }
        changes.removeAll()
    }

    @Test func detailsReadAndWriteAsTheRecordsOwnFields() {
        var job = JobRecord.make("g")
        job.headers.append(HeaderField(name: "Accept", value: "*/*"))
        job.error = JobFailure(code: .httpError, message: "503", httpStatus: 503)
        job.error?.message = "busy"
        #expect(job.headers == [HeaderField(name: "Accept", value: "*/*")] && job.error?.message == "busy")
        #expect([job].map(\.headers.count) == [1])
        job.headers = []
        job.error = nil
        #expect(job == JobRecord.make("g"))
    }

    /// The supervisor's table holds records inline in a dictionary slot: the fields most jobs leave unset stay
    /// out of line (see `JobRecord`), keeping 100,000 jobs within the store bench's 150 MB.
    @Test func theInlinePartStaysSmall() {
        #expect(MemoryLayout<JobRecord>.size <= 136)
    }

    /// An API key's job keeps the shared empty box: with the key among the details, each of 100,000 keyed jobs held
    /// a box of its own (~500 bytes: +52 MB in the store bench).
    @Test func aKeysJobNeedsNoDetailsBoxOfItsOwn() {
        var job = JobRecord.make("k")
        job.ownerKey = "key-1"
        #expect(job.details === JobRecord.DetailsBox.none)
        job.etag = "\"v1\""
        #expect(job.details !== JobRecord.DetailsBox.none)
    }

    @Test func headersColumnRoundTrips() throws {
        #expect(try SQLiteJobRow.encodeHeaders([]) == "[]")
        #expect(SQLiteJobRow.decodeHeaders("[]") == [])
        let headers = JobRecord.makeFull("f").headers
        #expect(SQLiteJobRow.decodeHeaders(try SQLiteJobRow.encodeHeaders(headers)) == headers)
        #expect(SQLiteJobRow.decodeHeaders("[{\"name\":\"A\"}]") == nil)
        #expect(SQLiteJobRow.decodeHeaders("not json") == nil)
    }

    @Test func columnPositionsFollowTheColumnList() {
        #expect(JobColumn.allCases.count == SQLiteJobRow.columns.count)
        for column in JobColumn.allCases {
            // finalURL → final_url, errorHTTPStatus → error_http_status, errorHTTPStatus → error_http_status
            let name = Array(String(describing: column))
            var snake = ""
            for (index, character) in name.enumerated() {
                if character.isUppercase, index > 0,
                   !name[index - 1].isUppercase || (index + 1 < name.count && name[index + 1].isLowercase) {
                    snake += "_"
                }
                snake += character.lowercased()
            }
            #expect(SQLiteJobRow.columns[Int(column.rawValue)] == snake)
        }
    }

    @Test func internerSharesEqualStringsUpToItsLimit() {
        var strings = StringInterner(limit: 2)
        let url = "https://origin.example/a/rather/long/path.bin"
        let first = strings.intern(url)
        let again = strings.intern(String(url.utf8.map { Character(UnicodeScalar($0)) }))
        #expect(again == url)
        #expect(strings.count == 1)
        #expect(first.utf8.withContiguousStorageIfAvailable { $0.baseAddress }
            == again.utf8.withContiguousStorageIfAvailable { $0.baseAddress })
        _ = strings.intern("short")
        #expect(strings.count == 1, "inline strings are not kept")
        _ = strings.intern(url + "/2")
        _ = strings.intern(url + "/3")
        #expect(strings.count == 2)
        #expect(strings.intern(url + "/3") == url + "/3")
    }
}
