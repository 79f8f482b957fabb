/// An error that decides its own HTTP response. The router answers a thrown `HTTPResponseError` with its response;
/// any other thrown error becomes a 500 `internal` JSON error.
public protocol HTTPResponseError: Error {
    func response(for request: HTTPRequest) -> HTTPResponse
}
