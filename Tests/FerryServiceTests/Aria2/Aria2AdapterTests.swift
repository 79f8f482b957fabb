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
        await d.answer(Aria2Call(id: .int(1), method: method, params: params), authorization: Self.open)
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
}
