/// Where a `FileWriter` publishes its file's gapless prefix (`GrowingFiles`, under the job's id) for readers that
/// stream the file while it downloads, and the prefix it published last, so that it tells only when the prefix
/// moved. Held by the writer and confined to its queue.
struct GrowingPrefix {
    let files: GrowingFiles
    let jobID: String
    /// The prefix last published; -1 while the file is closed.
    private var published: Int64 = -1

    init(files: GrowingFiles, jobID: String) {
        self.files = files
        self.jobID = jobID
    }

    /// A reader streams the file now (it is then written through the page cache only).
    var isWatched: Bool { files.isWatched(jobID) }

    /// Tells the readers the gapless prefix, when it moved.
    mutating func publish(_ prefix: Int64) {
        guard prefix != published else { return }
        published = prefix
        files.publish(jobID, prefix: prefix)
    }

    /// The writer created the file: whatever a reader saw under this id is gone (the prefix is published next).
    func created() { files.emptied(jobID) }

    /// The writer emptied the file.
    mutating func emptied() {
        files.emptied(jobID)
        published = 0
    }

    /// The writer closed the file.
    mutating func closed() {
        files.closed(jobID)
        published = -1
    }
}
