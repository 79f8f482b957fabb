import Dispatch
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Answers one request. Runs in a Task per request; the response is written on the connection's queue.
public typealias HTTPHandler = @Sendable (HTTPRequest) async -> HTTPResponse
/// Answers a request at once on its connection's queue, or returns nil to pass it to the `HTTPHandler`.
/// For cheap answers that must not wait behind busy async handlers (liveness probes) or are not worth a hop to the
/// concurrency pool and back; it must not block. (`HTTPResponder` decides both ways at once.)
public typealias ImmediateResponder = @Sendable (HTTPRequest) -> HTTPResponse?
/// Decides, once and on the connection's queue, how a request is answered: at once, or by work run on the
/// concurrency pool (whatever the decision resolved, such as the route and the caller's access, travels with it).
public typealias HTTPResponder = @Sendable (HTTPRequest) -> HTTPAnswer

/// How a request is answered (`HTTPResponder`).
public enum HTTPAnswer: Sendable {
    /// On the connection's queue, now: cheap answers that must not wait behind busy async work (liveness probes,
    /// snapshot reads, refusals, 404); whatever made them must not block.
    case now(HTTPResponse)
    /// In a task of its own on the concurrency pool; the response is written on the connection's queue.
    case later(@Sendable () async -> HTTPResponse)
}

/// An HTTP/1.1 server on POSIX sockets and Dispatch sources.
///
/// Listening sockets and the connection registry are confined to `controlQueue` (accepting runs there);
/// each connection is confined to one of a few serial `ConnectionQueue`s, assigned round-robin.
/// Lifecycle: `init`, `start()` once, `shutdown(grace:)` once.
public final class HTTPServer: @unchecked Sendable {
    let context: ServerContext
    let controlQueue = DispatchQueue(label: "ferry.http.control")
    private let queues: [ConnectionQueue]

    // Confined to controlQueue.
    private var listeners: [Int32: DispatchSourceRead] = [:]
    private var ports: [Int] = []
    private var connections: [ObjectIdentifier: Connection] = [:]
    private var pausedListeners: Set<Int32> = []
    private var nextQueue = 0
    private var shuttingDown = false
    private var started = false

    /// A server whose requests go to `immediate` first, and to `handler` when it returns nil.
    public convenience init(configuration: HTTPServerConfiguration, logger: Logger, immediate: ImmediateResponder? = nil,
                            handler: @escaping HTTPHandler) {
        self.init(configuration: configuration, logger: logger) { request in
            if let response = immediate?(request) { return .now(response) }
            return .later { await handler(request) }
        }
    }

    /// A server whose requests are answered as `responder` decides.
    public init(configuration: HTTPServerConfiguration, logger: Logger, responder: @escaping HTTPResponder) {
        context = ServerContext(configuration: configuration, logger: logger, responder: responder)
        let target = DispatchQueue.global(qos: .userInitiated)
        queues = (0..<max(1, configuration.connectionQueues)).map {
            ConnectionQueue(label: "ferry.http.connections.\($0)", target: target)
        }
        context.server = self
    }

    /// Binds every address the configured host resolves to and starts accepting.
    /// - Returns: the bound port of each listening socket (port 0 is replaced by the one the system chose; all
    ///   addresses share it).
    public func start() throws -> [Int] {
        signal(SIGPIPE, SIG_IGN)
        let configuration = context.configuration
        let addresses = try SocketAddress.resolve(host: configuration.host, port: configuration.port)
        var opened: [(fd: Int32, address: SocketAddress)] = []
        var firstError: Error?
        for var address in addresses {
            if let first = opened.first, configuration.port == 0 { address.port = first.address.port }
            do {
                opened.append(try ListeningSocket.open(address))
            } catch {
                // e.g. ::1 on a host without IPv6: fine as long as one address is bound.
                firstError = firstError ?? error
                context.logger.warning("cannot listen", metadata: ["address": "\(address.description)", "error": "\(error)"])
            }
        }
        guard !opened.isEmpty else {
            throw firstError ?? AddressResolutionError(host: configuration.host, code: EAI_NONAME)
        }
        controlQueue.sync {
            precondition(!started, "HTTPServer.start() called twice")
            started = true
            for (fd, address) in opened {
                let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: controlQueue)
                source.setEventHandler { [unowned self] in self.acceptConnections(on: fd) }
                let group = context.group
                group.enter()
                source.setCancelHandler {
                    Glibc.close(fd)
                    group.leave()
                }
                listeners[fd] = source
                ports.append(address.port)
                source.resume()
                context.logger.info("listening", metadata: ["address": "\(address.description)"])
            }
        }
        return controlQueue.sync { ports }
    }

    /// The first bound port, once started.
    public var boundPort: Int? { controlQueue.sync { ports.first } }

    public var openConnectionCount: Int { context.openConnections.load(ordering: .relaxed) }

    /// Largest output buffer any connection has held, in bytes (for backpressure tests).
    var peakOutputBufferBytes: Int { context.peakOutputBuffer.load(ordering: .relaxed) }

    // MARK: - Accepting

    private func acceptConnections(on listenFD: Int32) {
        dispatchPrecondition(condition: .onQueue(controlQueue))
        let configuration = context.configuration
        while !shuttingDown {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(listenFD, $0, &length) }
            }
            if fd < 0 {
                switch errno {
                case EINTR, ECONNABORTED:
                    continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // Out of descriptors: stop accepting briefly instead of spinning on a readable listener.
                    context.logger.warning("accept failed; pausing", metadata: ["error": "\(SocketError("accept"))"])
                    if pausedListeners.insert(listenFD).inserted { listeners[listenFD]?.suspend() }
                    controlQueue.asyncAfter(deadline: .now() + 0.1) { self.resumeListener(listenFD) }
                    return
                default:
                    return  // EAGAIN: drained
                }
            }
            let flags = fcntl(fd, F_GETFL)
            _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            var one: Int32 = 1
            _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))

            if context.openConnections.load(ordering: .relaxed) >= configuration.maxConnections {
                Self.refuse(fd)
                continue
            }
            let remote = SocketAddress(storage: storage, length: length).description
            let home = queues[nextQueue % queues.count]
            nextQueue &+= 1
            context.openConnections.add(1, ordering: .relaxed)
            context.group.enter()
            let connection = Connection(fd: fd, home: home, context: context, remoteAddress: remote)
            connections[ObjectIdentifier(connection)] = connection
            home.queue.async { connection.start() }
        }
    }

    private func resumeListener(_ fd: Int32) {
        guard pausedListeners.remove(fd) != nil else { return }
        listeners[fd]?.resume()
    }

    /// Over the connection cap: a best-effort 503 and close.
    private static func refuse(_ fd: Int32) {
        let body = #"{"error":{"code":"unavailable","message":"Too many connections."}}"#
        let response = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\nRetry-After: 1\r\n\r\n\(body)"
        _ = response.withCString { Glibc.send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        Glibc.close(fd)
    }

    /// Called by a connection after its fd was closed.
    func connectionClosed(_ connection: Connection) {
        controlQueue.async {
            self.connections.removeValue(forKey: ObjectIdentifier(connection))
            self.context.group.leave()
        }
    }

    // MARK: - Shutdown

    /// Stops accepting, lets in-flight requests finish within `grace` seconds (streams are finished, idle keep-alive
    /// connections closed at once), then closes whatever is left. Returns when every fd is closed.
    public func shutdown(grace: Double) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            controlQueue.async {
                self.beginShutdown(grace: grace)
                self.context.group.notify(queue: self.controlQueue) { continuation.resume() }
            }
        }
    }

    private func beginShutdown(grace: Double) {
        dispatchPrecondition(condition: .onQueue(controlQueue))
        guard !shuttingDown else { return }
        shuttingDown = true
        for (fd, listener) in listeners {
            listener.cancel()
            if pausedListeners.remove(fd) != nil { listener.resume() }  // a suspended source never runs its cancel handler
        }
        listeners.removeAll()
        for connection in connections.values {
            connection.queue.async { connection.beginShutdown() }
        }
        controlQueue.asyncAfter(deadline: .now() + max(0, grace)) {
            for connection in self.connections.values {
                connection.queue.async { connection.closeNow() }
            }
        }
    }
}
