import Testing
@testable import FerryHTTP

struct TeapotError: HTTPResponseError {
    func response(for request: HTTPRequest) -> HTTPResponse {
        errorResponse(HTTPStatus(code: 418, reason: "I'm a teapot"), code: "teapot", message: "short and stout")
    }
}

struct PlainError: Error {}

func text(_ response: HTTPResponse) -> String {
    if case .bytes(let bytes) = response.body { return String(decoding: bytes, as: UTF8.self) }
    return ""
}

@Suite struct RouterTests {
    func makeRouter() -> Router {
        let router = Router()
        router.add(.GET, "/api/v1/jobs") { _ in .text(.ok, "list") }
        router.add(.POST, "/api/v1/jobs") { _ in .text(.created, "created") }
        router.add(.GET, "/api/v1/jobs/:id") { request in .text(.ok, "job \(request.pathParameters["id"]!)") }
        router.add(.DELETE, "/api/v1/jobs/:id") { _ in HTTPResponse(status: .noContent) }
        router.add(.GET, "/api/v1/jobs/events") { _ in .text(.ok, "events") }
        router.add(.POST, "/api/v1/jobs/:id/pause") { request in .text(.ok, "pause \(request.pathParameters["id"]!)") }
        router.add(.GET, "/files/*rest") { request in .text(.ok, "rest=\(request.pathParameters["rest"]!)") }
        router.add(.GET, "/teapot") { _ in throw TeapotError() }
        router.add(.GET, "/boom") { _ in throw PlainError() }
        return router
    }

    @Test func literalAndParameterRoutes() async {
        let router = makeRouter()
        #expect(text(await router.handle(HTTPRequest(target: "/api/v1/jobs"))) == "list")
        #expect(text(await router.handle(HTTPRequest(method: .POST, target: "/api/v1/jobs"))) == "created")
        #expect(text(await router.handle(HTTPRequest(target: "/api/v1/jobs/abc?x=1"))) == "job abc")
        #expect(text(await router.handle(HTTPRequest(target: "/api/v1/jobs/a%20b"))) == "job a b")
        #expect(text(await router.handle(HTTPRequest(method: .POST, target: "/api/v1/jobs/j1/pause"))) == "pause j1")
    }

    @Test func literalBeatsParameterWhateverTheOrder() async {
        #expect(text(await makeRouter().handle(HTTPRequest(target: "/api/v1/jobs/events"))) == "events")
    }

    @Test func routePatternAndParametersAreFilled() async {
        let router = Router()
        router.add(.GET, "/a/:x/b/:y") { request in
            .text(.ok, "\(request.routePattern ?? "-") \(request.pathParameters["x"]!) \(request.pathParameters["y"]!)")
        }
        #expect(text(await router.handle(HTTPRequest(target: "/a/1/b/2"))) == "/a/:x/b/:y 1 2")
    }

    @Test func restSegments() async {
        let router = makeRouter()
        #expect(text(await router.handle(HTTPRequest(target: "/files/a/b/c.txt"))) == "rest=a/b/c.txt")
        #expect(text(await router.handle(HTTPRequest(target: "/files/"))) == "rest=")
        #expect(text(await router.handle(HTTPRequest(target: "/files"))) == "rest=")
    }

    @Test func notFound() async {
        let router = makeRouter()
        for target in ["/nope", "/api/v1/jobs/a/b", "/api/v1/jobs/", "/api/v1", "/api/v1/jobs//pause"] {
            let response = await router.handle(HTTPRequest(target: target))
            #expect(response.status == .notFound, "\(target)")
            #expect(text(response).contains("\"not_found\""))
        }
    }

    @Test func methodNotAllowedListsAllow() async {
        let router = makeRouter()
        let response = await router.handle(HTTPRequest(method: .PUT, target: "/api/v1/jobs/x"))
        #expect(response.status == .methodNotAllowed)
        #expect(response.headers["Allow"] == "DELETE, GET, HEAD")
        #expect(text(response).contains("\"method_not_allowed\""))
        let post = await router.handle(HTTPRequest(method: .GET, target: "/api/v1/jobs/x/pause"))
        #expect(post.status == .methodNotAllowed)
        #expect(post.headers["Allow"] == "POST")
    }

    @Test func headUsesGet() async {
        let router = makeRouter()
        let response = await router.handle(HTTPRequest(method: .HEAD, target: "/api/v1/jobs/7"))
        #expect(response.status == .ok)
        #expect(text(response) == "job 7")
        // An explicit HEAD route wins.
        router.add(.HEAD, "/api/v1/jobs/:id") { _ in HTTPResponse(status: .noContent) }
        #expect(await router.handle(HTTPRequest(method: .HEAD, target: "/api/v1/jobs/7")).status == .noContent)
    }

    @Test func thrownErrors() async {
        let router = makeRouter()
        let teapot = await router.handle(HTTPRequest(target: "/teapot"))
        #expect(teapot.status.code == 418)
        #expect(text(teapot).contains("\"teapot\""))
        let boom = await router.handle(HTTPRequest(target: "/boom"))
        #expect(boom.status == .internalServerError)
        #expect(text(boom).contains("\"internal\""))
    }

    @Test func fallbackOnlyWhenNoPatternMatches() async {
        let router = makeRouter()
        router.fallback = { request in .text(.ok, "fallback \(request.path)") }
        #expect(text(await router.handle(HTTPRequest(target: "/index.html"))) == "fallback /index.html")
        #expect(await router.handle(HTTPRequest(method: .PUT, target: "/api/v1/jobs")).status == .methodNotAllowed)
    }

    @Test func percentEncodedLiteralsAndParameters() async {
        let router = makeRouter()
        #expect(text(await router.handle(HTTPRequest(target: "/api/v1/%6Aobs/x%2Fy"))) == "job x/y")
        #expect(text(await router.handle(HTTPRequest(target: "/api/v1/jobs/%65vents"))) == "events")
        #expect(text(await router.handle(HTTPRequest(target: "/files/a%20b/c"))) == "rest=a b/c")
        #expect(await router.handle(HTTPRequest(target: "/")).status == .notFound)
    }

    @Test func immediateRoutesAnswerWithoutTheAsyncPath() async {
        let router = makeRouter()
        router.addImmediate(.GET, "/now/:x") { request in .text(.ok, "now \(request.pathParameters["x"]!)") }
        router.addImmediate(.GET, "/now/fail") { _ in throw TeapotError() }
        router.fallback = { _ in .text(.ok, "fallback") }
        /// The response when `answer` gives one now; nil when it is work for later.
        func now(_ request: HTTPRequest) -> HTTPResponse? {
            if case .now(let response) = router.answer(request) { return response }
            return nil
        }
        #expect(now(HTTPRequest(target: "/now/1")).map(text) == "now 1")
        #expect(now(HTTPRequest(method: .HEAD, target: "/now/2")).map(text) == "now 2")
        #expect(now(HTTPRequest(target: "/now/fail"))?.status.code == 418)
        #expect(text(await router.handle(HTTPRequest(target: "/now/3"))) == "now 3")
        // Async routes and the fallback are work for later, their route already chosen; the router's own 405 is
        // answered at once.
        #expect(now(HTTPRequest(target: "/api/v1/jobs/7")) == nil)
        #expect(now(HTTPRequest(target: "/elsewhere")) == nil)
        if case .later(let work) = router.answer(HTTPRequest(target: "/api/v1/jobs/7")) {
            #expect(text(await work()) == "job 7")
        } else {
            Issue.record("an async route is answered later")
        }
        if case .later(let work) = router.answer(HTTPRequest(target: "/elsewhere")) {
            #expect(text(await work()) == "fallback")
        } else {
            Issue.record("the fallback is answered later")
        }
        #expect(now(HTTPRequest(method: .PUT, target: "/now/1"))?.status == .methodNotAllowed)
        #expect(RoutePattern("/now/:x").match("/now/%41") == ["x": "A"])
        #expect(RoutePattern("/now/:x").match("now/1") == nil)
    }
}
