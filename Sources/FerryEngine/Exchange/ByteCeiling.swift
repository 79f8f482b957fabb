/// The most bytes a file may reach, and the failure when a body goes past it (the size limit, or the room the
/// spool's quota left). Checked per chunk when the response did not give the file's size up front.
struct ByteCeiling: Equatable, Sendable {
    let bytes: Int64
    let failure: FailureCause

    /// The lower of the size limit (`maxFileSize`) and the room the spool's quota left (`spoolRoom`); nil when
    /// neither is set.
    static func lowest(maxFileSize: Int64?, spoolRoom: Int64?) -> ByteCeiling? {
        var ceilings: [ByteCeiling] = []
        if let max = maxFileSize {
            ceilings.append(ByteCeiling(bytes: max, failure: .tooLarge("the file is larger than the limit of \(max) bytes")))
        }
        if let room = spoolRoom {
            ceilings.append(ByteCeiling(bytes: room, failure: .quotaExceeded("the file grew past \(room) bytes, the room left under the spool's quota")))
        }
        return ceilings.min { $0.bytes < $1.bytes }
    }
}
