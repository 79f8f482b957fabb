import CCurl

/// The S3 call a request makes; errors name it.
public enum ObjectStoreOperation: String, Sendable, Equatable {
    case checkBucket = "ListObjectsV2"
    case createMultipartUpload = "CreateMultipartUpload"
    case uploadPart = "UploadPart"
    case uploadPartCopy = "UploadPartCopy"
    case listParts = "ListParts"
    case listMultipartUploads = "ListMultipartUploads"
    case completeMultipartUpload = "CompleteMultipartUpload"
    case abortMultipartUpload = "AbortMultipartUpload"
    case putObject = "PutObject"
    case copyObject = "CopyObject"
    case headObject = "HeadObject"
    case getObject = "GetObject"
    case deleteObject = "DeleteObject"
}

/// Why an object-store request failed, with its origin: the operation, the bucket's URL, the HTTP status and the
/// S3 error code when the store answered, libcurl's error when it did not.
///
/// Each failure is classified once (`Kind`, from `classify`), and `isRetryable` says whether trying again can
/// help. Refused credentials are their own kind and never retryable: a wrong key fails at once, not after a
/// round of back-offs.
public struct ObjectStoreError: Error, Equatable, CustomStringConvertible, Sendable {
    public enum Kind: String, Sendable, Equatable {
        /// The store refused the credentials or the signature (`InvalidAccessKeyId`, `SignatureDoesNotMatch`,
        /// `AccessDenied`, a 403 without a body, …): fix the key pair, region or permissions.
        case credentialsRejected
        /// No connection: the name did not resolve, the connection was refused or timed out.
        case unreachable
        /// The connection broke or stalled during the exchange.
        case transfer
        /// The bucket, object or multipart upload does not exist (`NoSuchBucket`, `NoSuchKey`, `NoSuchUpload`, 404).
        case notFound
        /// The store is busy or failing (5xx, `SlowDown`, 408, 429): worth another try later.
        case unavailable
        /// Any other refusal (4xx): the request itself is wrong for this store.
        case rejected
        /// The store answered something that is not the document the operation expects.
        case malformedResponse
        /// The request could not be made (bad metadata, a libcurl setup failure, an unreadable file).
        case invalidRequest
        /// Stopped by Ferry: the caller's sink refused more bytes, or the client was stopped.
        case stopped
    }

    public let operation: ObjectStoreOperation
    public let kind: Kind
    /// `endpoint/bucket`, so a message says which store.
    public let endpoint: String
    /// The HTTP status the store answered, nil when it did not answer.
    public let status: Int?
    /// The S3 error code (`<Error><Code>`), when the answer had one.
    public let code: String?
    /// The store's `<Message>`, or libcurl's error, or what Ferry found wrong.
    public let message: String

    public init(operation: ObjectStoreOperation, kind: Kind, endpoint: String, status: Int? = nil, code: String? = nil, message: String) {
        self.operation = operation
        self.kind = kind
        self.endpoint = endpoint
        self.status = status
        self.code = code
        self.message = message
    }

    public var isRetryable: Bool {
        switch kind {
        case .unreachable, .transfer, .unavailable: return true
        case .credentialsRejected, .notFound, .rejected, .malformedResponse, .invalidRequest, .stopped: return false
        }
    }

    /// One line: which store, which operation, what happened, and the store's own words.
    public var description: String {
        let what: String
        switch kind {
        case .credentialsRejected:
            what = "credentials rejected (check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, the region and the key's permissions)"
        case .unreachable: what = "unreachable"
        case .transfer: what = "connection failed during the exchange"
        case .notFound: what = "not found"
        case .unavailable: what = "store unavailable"
        case .rejected: what = "request refused"
        case .malformedResponse: what = "unexpected answer"
        case .invalidRequest: what = "request not made"
        case .stopped: what = "stopped"
        }
        let origin = [code, status.map { "HTTP \($0)" }].compactMap { $0 }.joined(separator: ", ")
        let detail = message.isEmpty ? "" : ": \(message)"
        return "object store \(endpoint): \(operation.rawValue) \(what)\(origin.isEmpty ? "" : " (\(origin))")\(detail)"
    }

    // MARK: classification (pure)

    /// S3 codes that mean the key pair, its signature or its permissions are wrong.
    static let credentialCodes: Set<String> = [
        "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "InvalidToken", "ExpiredToken",
        "AuthorizationHeaderMalformed", "InvalidSecurity", "RequestTimeTooSkewed", "MissingSecurityHeader",
    ]

    /// The kind of an answer that is not a success: from its S3 code when there is one, else from its status.
    static func kind(status: Int, code: String?) -> Kind {
        if let code {
            if credentialCodes.contains(code) { return .credentialsRejected }
            if code.hasPrefix("NoSuch") { return .notFound }
            if ["SlowDown", "ServiceUnavailable", "InternalError", "RequestTimeout"].contains(code) { return .unavailable }
        }
        switch status {
        case 401, 403: return .credentialsRejected
        case 404: return .notFound
        case 408, 429, 500...599: return .unavailable
        default: return .rejected
        }
    }

    /// The kind of an exchange libcurl ended with an error: no connection at all, or a broken one.
    static func kind(curlCode code: CURLcode) -> Kind {
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT,
             CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION:
            return .unreachable
        case CURLE_OPERATION_TIMEDOUT, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE,
             CURLE_HTTP2, CURLE_HTTP2_STREAM:
            return .transfer
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL, CURLE_OUT_OF_MEMORY, CURLE_BAD_FUNCTION_ARGUMENT:
            return .invalidRequest
        default:
            return .transfer
        }
    }
}
