import FerryEngine
import FerryHTTP
import Foundation

/// A finished file's response body read from the object store instead of the spool: the same response
/// `ContentController.respond` builds for a local file (whole, one range, or multipart/byteranges), with each
/// file region fetched as a ranged `GetObject` and streamed as it arrives.
///
/// Back-pressure: while the client's socket has more than `highWater` bytes queued, the sink answers `.pause`
/// and the get waits (`ObjectReading`) until the stream drains; a client that goes away stops the get. The
/// length is known in advance, so a store failing midway aborts the connection rather than end a short body.
enum ObjectBody {
    /// Bytes queued for the client before the object's bytes are held back.
    static let highWater = 1 << 20

    /// `response` with its file body (any `path`) replaced by the same regions of the object `key`.
    static func replacingFiles(in response: HTTPResponse, key: String, client: ObjectStoreClient) -> HTTPResponse {
        var response = response
        switch response.body {
        case .file(let file):
            response.body = stream([.file(file)], key: key, client: client)
        case .parts(let parts):
            response.body = stream(parts, key: key, client: client)
        case .empty, .bytes, .stream, .upgrade:
            break
        }
        return response
    }

    private static func stream(_ parts: [BodyPart], key: String, client: ObjectStoreClient) -> ResponseBody {
        let length = parts.reduce(0) { $0 + $1.length }
        return .stream(length: length) { stream in
            guard !stream.isClosed else { return }  // HEAD, or a client already gone
            Task {
                do {
                    for part in parts {
                        switch part {
                        case .bytes(let bytes):
                            stream.write(bytes)
                        case .file(let region) where region.length > 0:
                            try await copy(region, of: key, from: client, to: stream)
                        case .file:
                            break
                        }
                    }
                    stream.finish()
                } catch {
                    stream.abort()
                }
            }
        }
    }

    /// One region of the object, into the stream, waiting whenever the client is behind.
    /// - Parameter wrote: told the size of each chunk written to the stream, in order (a reader that goes on from
    ///   where a failed copy stopped).
    static func copy(_ region: FileBody, of key: String, from client: ObjectStoreClient, to stream: ResponseStream,
                     wrote: (@Sendable (Int) -> Void)? = nil) async throws(ObjectStoreError) {
        let reading = ObjectReading()
        // A client gone while the get waits: the sink is offered the bytes again and stops.
        stream.onClose { reading.resume() }
        _ = try await client.getObject(key: key, range: region.offset...(region.offset + region.length - 1),
                                              reading: reading) { bytes in
            if stream.isClosed { return .stop }
            if stream.bufferedByteCount >= highWater {
                stream.onDrain(threshold: highWater / 2) { reading.resume() }
                return .pause
            }
            stream.write(Array(bytes))
            wrote?(bytes.count)
            return .consumed
        }
    }
}
