import FerryCore
import FerryStore
import Foundation
import Logging
import Testing
@testable import FerryService

/// aria2's methods through `Aria2Dispatcher` against a real supervisor (memory store, fake engine): the adapter
/// makes the same supervisor operations as the REST API.
@Suite("aria2 adapter over the supervisor")
struct Aria2AdapterTests {
    let h = SupervisorHarness()

    func dispatcher() -> Aria2Dispatcher {
        let settings = LiveSettings(current: RuntimeSettings(maxBytesPerSecond: nil, maxConcurrent: 4), store: h.store,
                                    logger: Logger(label: "test"), apply: { _ in })
        let queries = Aria2Queries(supervisor: h.supervisor, settings: settings, status: Aria2Status(directory: "/s/files"),
                                   sessionID: "s")
        return Aria2Dispatcher(queries: queries, actions: Aria2Actions(queries: queries, destinations: AddressPolicy()))
    }

    static let open = Aria2Authorization(isOpen: true, crossSite: false, bearer: nil) { _ in nil }

    func call(_ d: Aria2Dispatcher, _ method: String, _ params: [RPCValue]) async -> Result<RPCValue, Aria2Error> {
        // As a client reads the answer (status objects come written, `RPCValue.json`).
        await d.answer(Aria2Call(id: .int(1), method: method, params: params), authorization: Self.open)
            .map { RPCValue.parse($0.bytes) ?? $0 }
    }

    static func code(_ result: Result<RPCValue, Aria2Error>) -> Int? {
        if case .failure(let error) = result { return error.code }
        return nil
    }

    @Test func addPauseUnpauseRemoveGoThroughTheSupervisor() async throws {
        let d = dispatcher()
        let gid = try #require(try await call(d, "aria2.addUri", [.array([.string("http://example.org/a.iso")]),
                                                                   .object(["pause": .string("true"), "out": .string("a.bin")])]).get().string)
        let id = try #require(h.supervisor.peekID(gid: gid))
        let created = try #require(await h.job(id))
        #expect(created.state == .paused && created.filename == "a.bin")
        #expect(await call(d, "aria2.pause", [.string(gid)]) == .failure(.cannot("paused", gid: gid)))
        _ = try await call(d, "aria2.changeOption", [.string(gid), .object(["split": .string("3")])]).get()
        #expect(await h.job(id)?.connections == 3)
        #expect(try await call(d, "aria2.unpause", [.string(gid)]).get() == .string(gid))
        let resumed = await h.job(id)
        #expect(resumed?.state == .waiting && h.engine.log.contains("submit \(id)"))
        #expect(Self.code(await call(d, "aria2.changeOption", [.string(gid), .object(["out": .string("b.bin")])])) == 1)
        #expect(try await call(d, "aria2.remove", [.string(gid)]).get() == .string(gid))
        #expect(await h.job(id)?.state == .cancelled)
        let stopped = try await call(d, "aria2.tellStopped", [.int(0), .int(10), .array([.string("gid"), .string("status")])]).get()
        #expect(stopped == .array([.object(["gid": .string(gid), "status": .string("removed")])]))
        #expect(try await call(d, "aria2.removeDownloadResult", [.string(gid)]).get() == .string("OK"))
        #expect(h.supervisor.peekID(gid: gid) == nil)
        #expect(await call(d, "aria2.tellStatus", [.string(gid)]) == .failure(.notFound(gid: gid)))
    }

    @Test func validationIsTheRESTAPIs() async throws {
        let d = dispatcher()
        let refused = await call(d, "aria2.addUri", [.array([.string("http://127.0.0.1/x")])])
        #expect(Self.code(refused) == 1)
        #expect(Self.code(await call(d, "aria2.addUri", [.array([.string("gopher://x/")])])) == 1)
        // Dedupe: the same URL answers the same job.
        let first = try await call(d, "aria2.addUri", [.array([.string("http://example.org/b.iso")])]).get()
        let again = try await call(d, "aria2.addUri", [.array([.string("http://example.org/b.iso")])]).get()
        #expect(first == again)
    }

    @Test func positionsAndURIChangesAreQueuePrioritiesAndPatches() async throws {
        let d = dispatcher()
        func add(_ name: String, position: Int64? = nil) async throws -> String {
            var params: [RPCValue] = [.array([.string("http://example.org/\(name)")]), .object(["pause": .string("true")])]
            if let position { params.append(.int(position)) }
            return try #require(try await call(d, "aria2.addUri", params).get().string)
        }
        let a = try await add("a"), b = try await add("b"), c = try await add("c", position: 0)
        func queue() async throws -> [RPCValue] {
            try #require(try await call(d, "aria2.tellWaiting", [.int(0), .int(10), .array([.string("gid")])]).get().array)
        }
        #expect(try await queue() == [c, a, b].map { .object(["gid": .string($0)]) })
        #expect(try await call(d, "aria2.changePosition", [.string(c), .int(0), .string("POS_END")]).get() == .int(2))
        #expect(try await queue() == [a, b, c].map { .object(["gid": .string($0)]) })
        let reversed = try await call(d, "aria2.tellWaiting", [.int(-1), .int(2), .array([.string("gid")])]).get()
        #expect(reversed == .array([c, b].map { .object(["gid": .string($0)]) }))
        let changed = try await call(d, "aria2.changeUri", [.string(a), .int(1), .array([.string("http://example.org/a")]),
                                                           .array([.string("http://example.org/a2")])]).get()
        #expect(changed == .array([.int(1), .int(1)]))
        let id = try #require(h.supervisor.peekID(gid: a))
        #expect(await h.job(id)?.url == "http://example.org/a2")
        #expect(Self.code(await call(d, "aria2.changeUri", [.string(a), .int(2), .array([]), .array([])])) == 1)
    }
}
