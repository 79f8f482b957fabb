import FerryCore
import Foundation
@testable import FerryStore

extension JobRecord {
    /// A minimal waiting job; dates deliberately off the millisecond grid so normalization is exercised.
    static func make(
        _ id: String,
        state: JobState = .waiting,
        dedupeKey: String? = nil,
        tags: [String] = [],
        url: String? = nil,
        filename: String? = nil,
        createdAt: Date = Date(timeIntervalSince1970: 1_795_000_000.123_456_7)
    ) -> JobRecord {
        JobRecord(
            id: id,
            url: url ?? "https://origin.example/\(id).bin",
            state: state,
            filename: filename,
            tags: tags,
            dedupeKey: dedupeKey ?? url ?? "https://origin.example/\(id).bin",
            createdAt: createdAt
        )
    }

    /// A job with every optional field set, including odd text.
    static func makeFull(_ id: String) -> JobRecord {
        JobRecord(
            id: id,
            sequence: 4242,  // the store must ignore this and assign its own
            url: "https://origin.example/a%20b/файл.zip?sig=1&x=2",
            finalURL: "https://cdn.example/after/redirects.zip",
            state: .failed,
            filename: "файл (1).zip",
            requestedFilename: "wanted.zip",
            bytesReceived: 1_048_576,
            bytesExpected: 4_194_304,
            contentType: "application/zip",
            sha256: String(repeating: "ab", count: 32),
            checksum: try! Checksum(algorithm: .sha512, value: String(repeating: "CD", count: 64)),
            error: JobFailure(code: .httpError, message: "origin answered 503 \"busy\"\n", httpStatus: 503),
            attempts: 3,
            priority: -7,
            maxBytesPerSecond: 65_536,
            connections: 4,
            headers: [HeaderField(name: "Authorization", value: "Bearer x/y+z="),
                      HeaderField(name: "X-Empty", value: ""),
                      HeaderField(name: "authorization", value: "second")],
            tags: ["release", "ünïcode ✓", "release"],
            notify: "https://user:pw@hooks.example/ferry?k=1",
            dedupeKey: "https://origin.example/a%20b/файл.zip?sig=1&x=2",
            etag: "\"s1-4194304\"",
            lastModified: "Sun, 22 Nov 2026 04:05:06 GMT",
            createdAt: Date(timeIntervalSince1970: 1_795_000_000.123_456_7),
            startedAt: Date(timeIntervalSince1970: 1_795_000_001.000_499_9),
            finishedAt: Date(timeIntervalSince1970: 1_795_000_002.999_9),
            updatedAt: Date(timeIntervalSince1970: 1_795_000_003.000_5)
        )
    }
}
