import Foundation

extension Fixture {
    /// Lower-case hex digest of the file at `path` by coreutils (`sha256sum`, `sha512sum`, `sha1sum`, `md5sum`):
    /// an implementation independent of Ferry's, to check Ferry's against.
    /// - Parameter algorithm: API.md's name, `sha-256`, `sha-512`, `sha-1` or `md5`.
    public static func digestHex(ofFile path: String, algorithm: String) async throws -> String {
        let tool = algorithm.replacingOccurrences(of: "-", with: "") + "sum"
        guard let executable = ExecutableSearch.find(tool, candidates: ["/usr/bin/\(tool)", "/bin/\(tool)"]) else {
            throw FixtureError.startFailed(tool, detail: "\(tool) not found (coreutils)")
        }
        let child = try ChildProcess.launch(executable, ["-b", path])
        defer { Fixture.removeTree(child.outputDirectory) }
        guard await child.exit(within: 60) == 0 else {
            child.killGroup()
            throw FixtureError.startFailed(tool, detail: child.standardError())
        }
        guard let hex = child.standardOutput().split(separator: " ").first, !hex.isEmpty else {
            throw FixtureError.malformedResponse("\(tool) printed \(child.standardOutput())")
        }
        return String(hex)
    }
}
