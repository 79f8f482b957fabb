import FerryEngine
import FerryHTTP
import FerryStore
import Foundation

/// `/healthz`, `/readyz`, `/metrics` and `/api/v1/openapi.json`: what operators and tools poll.
struct OperationsController: Sendable {
    let supervisor: JobSupervisor
    let store: any JobStore
    let spool: Spool
    let commits: CommitPipeline
    let hub: EventHub
    let metrics: ServiceMetrics
    let minFreeSpace: Int64
    /// The object store finished files are kept in, when there is one (`--object-store`).
    let objects: ObjectStoreClient?
    let openConnections: @Sendable () -> Int
    /// Whether `/metrics` shows the allocator's figures: only a service that owns its process's memory
    /// (`ServiceConfiguration.managesProcessMemory`); an embedded one would show, and walk, its host's whole heap.
    let reportsHeap: Bool

    func register(_ routes: RouteTable) {
        routes.add(.GET, "/healthz") { _ in Self.healthy }
        routes.add(.GET, "/readyz", ready)
        routes.add(.GET, "/metrics", prometheus)
        routes.add(.GET, "/api/v1/openapi.json") { _ in
            var response = HTTPResponse.json(.ok, OpenAPIDocument.bytes)
            response.headers["Cache-Control"] = "no-cache"
            return response
        }
    }

    /// `/healthz`: the process serves. Also answered on the connection queue itself (`immediate`),
    /// so a liveness probe never waits behind busy request handlers.
    static let healthy = HTTPResponse.json(.ok, Array(#"{"status":"ok"}"#.utf8))

    /// Answers `GET`/`HEAD /healthz` at once; nil for everything else.
    static func immediate(metrics: ServiceMetrics) -> ImmediateResponder {
        { request in
            guard request.path == "/healthz", request.method == .GET || request.method == .HEAD else { return nil }
            metrics.request(route: "/healthz", method: request.method.rawValue, status: 200)
            return healthy
        }
    }

    /// Ready when the store answers, the spool takes a write, and free space is above the reserve.
    func ready(_ request: HTTPRequest) async throws -> HTTPResponse {
        var reasons: [String] = []
        do { _ = try await store.value(forKey: "schema-probe") } catch { reasons.append("the job store does not answer: \(error)") }
        if let failure = commits.failure { reasons.append("the last job store write failed: \(failure)") }
        let probe = spool.root + "/.readyz-probe"
        if FileManager.default.createFile(atPath: probe, contents: Data("ok".utf8)) {
            try? FileManager.default.removeItem(atPath: probe)
        } else {
            reasons.append("the spool \(spool.root) is not writable")
        }
        if let objects {
            do throws(ObjectStoreError) { try await objects.checkBucket() } catch {
                reasons.append("the object store does not answer: \(error)")
            }
        }
        let free = spool.freeBytes()
        if let free, free < minFreeSpace {
            reasons.append("free space \(free) bytes is below the reserve of \(minFreeSpace) bytes")
        }
        var json = JSONWriter()
        json.beginObject()
        json.field("status", reasons.isEmpty ? "ok" : "unavailable")
        json.key("reasons")
        json.beginArray()
        for reason in reasons { json.string(reason) }
        json.endArray()
        json.field("freeBytes", free)
        json.field("spoolBytes", spool.usedBytes())
        json.field("minFreeSpace", minFreeSpace)
        if !reasons.isEmpty {
            json.key("error")
            json.beginObject()
            json.field("code", "unavailable")
            json.field("message", reasons.joined(separator: "; "))
            json.endObject()
        }
        json.endObject()
        var response = HTTPResponse.json(reasons.isEmpty ? .ok : .serviceUnavailable, json.bytes)
        response.headers["Cache-Control"] = "no-store"
        return response
    }

    func prometheus(_ request: HTTPRequest) async throws -> HTTPResponse {
        // A key's jobs only (`JobAccess`); the server's own figures are the same for everyone.
        // Read from the job table, never by waiting for the supervisor: it may be behind when someone looks.
        let table = supervisor.table
        let tally = table.tally(onlyKey: JobAccess.current.onlyKey)
        let hubFigures = hub.gauges.current
        let gauges = ServiceMetrics.Gauges(
            jobsByState: Dictionary(uniqueKeysWithValues: tally.counts.map { ($0.key.rawValue, $0.value) }),
            downloadSpeed: tally.speed,
            subscribers: hub.subscriberCount,
            spoolBytes: spool.usedBytes(),
            freeBytes: spool.freeBytes(),
            openConnections: openConnections(),
            objectStore: objects?.counts,
            node: supervisor.role.map { ($0.node, table.leasesHeld) },
            heap: reportsHeap ? FreeMemory.figures() : nil,
            eventWindow: (hubFigures.windowEvents, hubFigures.windowCapacity),
            privateStreams: (hubFigures.readingLog, hubFigures.heldEvents))
        var headers: HTTPHeaders = [:]
        headers["Content-Type"] = "text/plain; version=0.0.4; charset=utf-8"
        headers["Cache-Control"] = "no-store"
        return HTTPResponse(status: .ok, headers: headers, body: .bytes(Array(metrics.render(gauges).utf8)))
    }
}
