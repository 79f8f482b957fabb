import FerryCore
import FerryStore
import Foundation

/// Renders a job as API.md's job object. Pure.
enum JobView {
    static func contentURL(_ id: String) -> String { "/api/v1/jobs/\(id)/content" }

    static func progress(_ job: JobRecord) -> Double? {
        guard let expected = job.bytesExpected else { return nil }
        if expected == 0 { return job.state == .finished ? 1 : 0 }
        return min(1, Double(job.bytesReceived) / Double(expected))
    }

    /// Writes the job object. `restartReason` marks the event of a transfer that started over from zero:
    /// `"restarted": true` and `"restartReason"` alongside the job. `node`: the node running it (several nodes),
    /// shown while the job needs running, else null.
    /// `key`: the name of the API key owning the job (API.md, "API keys"), written as `"key"` when there is one.
    static func write(_ job: JobRecord, rates: LiveRates?, into json: inout JSONWriter, restartReason: String? = nil,
                      node: String? = nil, key: String? = nil) {
        let downloading = job.state == .downloading
        json.beginObject()
        json.field("id", job.id)
        json.field("gid", JobGID.of(job.id))
        // Userinfo is kept for the requests to the origin only: whatever shows a URL shows it as `***@`.
        json.field("url", SubmittedURL.redacting(job.url))
        json.field("finalUrl", job.finalURL.map(SubmittedURL.redacting))
        json.field("state", job.state.rawValue)
        json.field("key", key)
        json.field("node", job.state.needsRunning ? node : nil)
        json.field("filename", job.filename)
        json.field("bytesReceived", job.bytesReceived)
        json.field("bytesExpected", job.bytesExpected)
        json.field("progress", progress(job))
        json.field("speed", downloading ? (rates?.speed ?? 0).rounded() : 0)
        json.field("eta", downloading ? rates?.eta : (job.state == .finished ? 0 : nil))
        json.field("contentType", job.contentType)
        json.field("sha256", job.sha256)
        json.field("expectedSha256", job.checksum?.algorithm == .sha256 ? job.checksum?.value : nil)
        json.key("checksum")
        if let checksum = job.checksum {
            json.beginObject()
            json.field("algorithm", checksum.algorithm.rawValue)
            json.field("value", checksum.value)
            json.endObject()
        } else {
            json.null()
        }
        json.key("error")
        if let error = job.error { writeError(error, into: &json) } else { json.null() }
        json.field("attempts", job.attempts)
        json.field("priority", job.priority)
        json.field("maxBytesPerSecond", job.maxBytesPerSecond)
        json.field("connections", job.connections)
        json.key("tags")
        json.beginArray()
        for tag in job.tags { json.string(tag) }
        json.endArray()
        json.field("createdAt", timestamp: job.createdAt)
        json.field("startedAt", timestamp: job.startedAt)
        json.field("finishedAt", timestamp: job.finishedAt)
        json.field("contentUrl", contentURL(job.id))
        json.field("notify", job.notify.map(SubmittedURL.redacting))
        json.key("delivery")
        if let delivery = job.delivery {
            writeDelivery(delivery, rates: job.state == .delivering ? rates : nil, into: &json)
        } else {
            json.null()
        }
        json.key("sources")
        if let sources = job.sources {
            json.beginArray()
            for source in sources { writeSource(source, into: &json) }
            json.endArray()
        } else {
            json.null()
        }
        if let restartReason {
            json.field("restarted", true)
            json.field("restartReason", restartReason)
        }
        json.endObject()
    }

    /// One of `sources`: the URL (userinfo as `***@`), its bytes, `active` or `dropped`, and why it was dropped.
    static func writeSource(_ source: JobSource, into json: inout JSONWriter) {
        json.beginObject()
        json.field("url", SubmittedURL.redacting(source.url))
        json.field("bytesReceived", source.bytesReceived)
        json.field("state", source.isActive ? "active" : "dropped")
        json.key("error")
        if let error = source.error { writeError(error, into: &json) } else { json.null() }
        json.endObject()
    }

    /// The `delivery` object: the target (userinfo as `***@`) and how far the upload got; `rates` while it runs.
    static func writeDelivery(_ delivery: Delivery, rates: LiveRates?, into json: inout JSONWriter) {
        json.beginObject()
        json.field("url", SubmittedURL.redacting(delivery.url))
        json.field("method", delivery.method.rawValue)
        json.field("state", delivery.state.rawValue)
        json.field("bytesSent", delivery.bytesSent)
        json.field("bytesTotal", delivery.bytesTotal)
        json.field("progress", deliveryProgress(delivery))
        json.field("speed", delivery.state == .sending ? (rates?.speed ?? 0).rounded() : 0)
        json.field("eta", delivery.state == .sending ? rates?.eta : (delivery.state == .delivered ? 0 : nil))
        json.field("attempts", delivery.attempts)
        json.field("httpStatus", delivery.httpStatus)
        json.key("error")
        if let error = delivery.error { writeError(error, into: &json) } else { json.null() }
        json.field("deliveredAt", timestamp: delivery.deliveredAt)
        json.field("deleteAfter", delivery.deleteAfter)
        json.endObject()
    }

    static func deliveryProgress(_ delivery: Delivery) -> Double? {
        guard let total = delivery.bytesTotal else { return nil }
        if total == 0 { return delivery.state == .delivered ? 1 : 0 }
        return min(1, Double(delivery.bytesSent) / Double(total))
    }

    static func writeError(_ error: JobFailure, into json: inout JSONWriter) {
        json.beginObject()
        json.field("code", error.code.rawValue)
        json.field("message", error.message)
        if let status = error.httpStatus { json.field("httpStatus", status) }
        json.endObject()
    }

    static func render(_ job: JobRecord, rates: LiveRates?, restartReason: String? = nil, node: String? = nil,
                       key: String? = nil) -> [UInt8] {
        var json = JSONWriter()
        write(job, rates: rates, into: &json, restartReason: restartReason, node: node, key: key)
        return json.bytes
    }

    /// A `progress` event: `{"id","phase":"downloading","bytesReceived","bytesExpected","progress","speed","eta"}`,
    /// or while delivering `{"id","phase":"delivering","bytesSent","bytesTotal","progress","speed","eta"}`.
    static func renderProgress(_ job: JobRecord, rates: LiveRates) -> [UInt8] {
        var json = JSONWriter(capacity: 160)
        json.beginObject()
        json.field("id", job.id)
        if job.state == .delivering, let delivery = job.delivery {
            json.field("phase", "delivering")
            json.field("bytesSent", delivery.bytesSent)
            json.field("bytesTotal", delivery.bytesTotal)
            json.field("progress", deliveryProgress(delivery))
        } else {
            json.field("phase", "downloading")
            json.field("bytesReceived", job.bytesReceived)
            json.field("bytesExpected", job.bytesExpected)
            json.field("progress", progress(job))
        }
        json.field("speed", rates.speed.rounded())
        json.field("eta", rates.eta)
        json.endObject()
        return json.bytes
    }
}
