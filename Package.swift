// swift-tools-version: 6.0
// Ferry: a server-side download proxy. See docs/ARCHITECTURE.md for the module map.
import PackageDescription

let logging: Target.Dependency = .product(name: "Logging", package: "swift-log")
let argumentParser: Target.Dependency = .product(name: "ArgumentParser", package: "swift-argument-parser")

let package = Package(
    name: "Ferry",
    products: [
        .executable(name: "ferry", targets: ["ferry"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    ],
    targets: [
        // C libraries, each behind a module map with typed `static inline` wrappers for the
        // variadic calls Swift cannot make.
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CPostgres", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // Linux calls the Glibc module hides (sync_file_range for write-behind, malloc_trim).
        .systemLibrary(name: "CLinux"),

        // Pure logic shared by the engine, the server and the service: URL hosts, address classes,
        // filenames, retry schedules, sizes, durations and timestamps, and the HTTP vocabulary both the
        // engine and the server speak (`HTTPDate`, `ContentRange`). No I/O. That vocabulary lives here
        // rather than in a target of its own: it is pure values like the rest, `HTTPDate` shares its
        // calendar (`CivilDate`) with `Timestamp`, so a separate target would depend on this one anyway,
        // and the engine stays independent of the server with no module added.
        .target(name: "FerryCore"),
        // The HTTP/1.1 server on Dispatch sources, and the vocabulary only the server needs (ETags,
        // `Range` requests, multipart answers).
        .target(name: "FerryHTTP", dependencies: ["CCrypto", "FerryCore", logging]),
        // The download engine: libcurl multi-socket on Dispatch, the spool, digests.
        .target(name: "FerryEngine", dependencies: ["CCurl", "CCrypto", "CLinux", "FerryCore", logging]),
        // The job store protocol and its SQLite and PostgreSQL implementations.
        .target(name: "FerryStore", dependencies: ["CPostgres", "CSQLite", "FerryCore"]),
        // The service: REST API, events, auth, recovery. Glues server, engine and store.
        // Its OpenAPI document is a JSON file compiled into the binary (see OpenAPI/OpenAPIDocument.swift for why).
        .target(name: "FerryService", dependencies: ["CCrypto", "CLinux", "FerryCore", "FerryHTTP", "FerryEngine", "FerryStore", logging],
                resources: [.embedInCode("OpenAPI/openapi.json")]),
        // A client of Ferry's HTTP API (requests, event streams) for the terminal commands.
        .target(name: "FerryClient", dependencies: ["CCurl", "CCrypto", "FerryCore"]),
        // The `ferry` command: `serve` and the terminal client.
        .executableTarget(name: "ferry", dependencies: ["FerryService", "FerryClient", "FerryCore", argumentParser, logging]),

        // Test harness: real origins (nginx, the fault origin) and a PostgreSQL server, started and stopped by pid.
        .target(name: "FerryTestSupport", dependencies: ["CCrypto", "CPostgres"], path: "Tests/FerryTestSupport"),
        .testTarget(name: "FerryCoreTests", dependencies: ["FerryCore"]),
        .testTarget(name: "FerryHTTPTests", dependencies: ["FerryHTTP", "FerryTestSupport"]),
        .testTarget(name: "FerryEngineTests", dependencies: ["FerryEngine", "FerryTestSupport"]),
        .testTarget(name: "FerryStoreTests", dependencies: ["FerryStore", "FerryTestSupport"]),
        .testTarget(name: "FerryClientTests", dependencies: ["FerryClient", "FerryTestSupport", "FerryService", "ferry", logging]),
        .testTarget(name: "FerryServiceTests", dependencies: ["FerryService", "FerryTestSupport", "ferry"]),
    ]
)

// CI builds the project's own targets with warnings as errors (`FERRY_WARNINGS_AS_ERRORS=1`, set by `.ci/run`), so
// the build stays warning-free; dependencies are not affected.
if Context.environment["FERRY_WARNINGS_AS_ERRORS"] == "1" {
    for target in package.targets where target.type != .system {
        target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-warnings-as-errors"])]
    }
}
