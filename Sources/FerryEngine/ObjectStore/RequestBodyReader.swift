import Foundation

/// Hands an object-store request's body to libcurl's read callback piece by piece, in order: a document from
/// memory, or a file's range read with `pread` as it is sent (never a whole part in memory). Each exchange of
/// `ObjectStoreClient` holds one, on the client's queue; it owns the count of bytes sent.
struct RequestBodyReader {
    let body: ObjectStoreRequest.Body
    /// Bytes handed to libcurl so far.
    private(set) var sent: Int64 = 0

    init(_ body: ObjectStoreRequest.Body) {
        self.body = body
    }

    enum Piece: Equatable {
        /// This many bytes were put in the buffer (0: the body is complete).
        case filled(Int)
        /// The file could not be read: the exchange stops, for this reason.
        case failed(String)
    }

    /// Fills `buffer` with the next bytes of the body.
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) -> Piece {
        let wanted = Int(min(Int64(buffer.count), body.length - sent))
        guard wanted > 0 else { return .filled(0) }
        switch body {
        case .none:
            return .filled(0)
        case .bytes(let bytes):
            let start = Int(sent)
            bytes.withUnsafeBytes { source in
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[start..<(start + wanted)]))
            }
            sent += Int64(wanted)
            return .filled(wanted)
        case .file(let descriptor, let offset, let length):
            let n = pread(descriptor, buffer.baseAddress, wanted, off_t(offset + sent))
            guard n > 0 else {
                return .failed(n == 0 ? "the file ended before \(length) bytes from offset \(offset)"
                                      : "reading the file failed: \(SystemError("pread", "descriptor \(descriptor)"))")
            }
            sent += Int64(n)
            return .filled(n)
        }
    }
}
