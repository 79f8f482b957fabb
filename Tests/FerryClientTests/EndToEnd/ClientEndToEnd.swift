import Testing

/// Every end-to-end test of the terminal client: real nginx origins, a real Ferry in this process, and the
/// built `ferry` executable run as a child process. Serialized: each test starts its own servers, and the
/// machine has two cores.
@Suite("ferry client, end to end", .serialized)
struct ClientEndToEnd {}
