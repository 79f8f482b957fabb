import FerryTestSupport
import Foundation
import Testing

/// `GET /api/v1/openapi.json` serves `Sources/FerryService/OpenAPI/openapi.json` byte for byte, from the binary
/// alone: the file is embedded at build time, so a `ferry` copied anywhere (as `make install` and the Docker image
/// do) still has it. `Tests/openapi/validate.py` checks the file's content.
@Suite("OpenAPI document")
struct OpenAPIDocumentTests {
    static let documentPath = RunningFerry.repositoryRoot + "/Sources/FerryService/OpenAPI/openapi.json"

    static func fileBytes() throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: documentPath)))
    }

    static func expectTheDocument(_ response: TestResponse, _ file: [UInt8], where place: String) throws {
        #expect(response.status == 200, "\(place): \(response.status)")
        #expect(response.header("Content-Type")?.hasPrefix("application/json") == true, "\(place)")
        #expect(response.body == file, "\(place): served \(response.body.count) bytes, the file has \(file.count)")
        #expect(try response.json()["openapi"] as? String == "3.1.0", "\(place)")
    }

    @Test func servedBytesAreTheFile() async throws {
        let file = try Self.fileBytes()
        try await withFerry(token: "t0ken") { ferry in
            try Self.expectTheDocument(try await ferry.client.get("/api/v1/openapi.json"), file, where: "in process")
            let head = try await ferry.client.request("HEAD", "/api/v1/openapi.json")
            #expect(head.status == 200)
            #expect(head.header("Content-Length") == String(file.count))
            #expect(head.body.isEmpty)
            // Like the rest of /api/, it needs the token.
            var anonymous = ferry.client
            anonymous.token = nil
            #expect(try await anonymous.get("/api/v1/openapi.json").status == 401)
        }
    }

    /// The executable copied alone into an empty directory (no resource bundle, no repository beside it) and
    /// started from there serves the same bytes.
    @Test func theExecutableAloneServesIt() async throws {
        let file = try Self.fileBytes()
        let directory = try Fixture.tempDirectory("ferry-openapi")
        defer { Fixture.removeTree(directory) }
        let copy = directory + "/bin/ferry"
        try FileManager.default.createDirectory(atPath: directory + "/bin", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: try ferryExecutable(), toPath: copy)
        let port = try RestartTests.freePort()
        let process = try ChildProcess.launch(
            copy, ["serve", "--host", "127.0.0.1", "--port", String(port), "--spool", directory + "/spool",
                   "--min-free-space", "0"],
            environment: nil, outputDirectory: directory)
        defer { process.stopInBackground(grace: 2) }
        try await ChildFerry.awaitHealthy(process, port: port)
        let response = try await TestClient(port: port).get("/api/v1/openapi.json")
        try Self.expectTheDocument(response, file, where: "a copied executable")
    }
}
