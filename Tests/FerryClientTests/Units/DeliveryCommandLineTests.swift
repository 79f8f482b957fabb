@testable import ferry
import FerryClient
import Testing

/// `ferry add`'s delivery flags, parsed as the `ferry` executable parses them (no server involved).
@Suite("ferry add --deliver-to, command line")
struct DeliveryCommandLineTests {
    @Test func addParsesTheDeliveryFlags() throws {
        let command = try AddCommand.parse([
            "http://a/1", "--deliver-to", "https://up.example.org/upload", "--method", "POST", "--field", "upload",
            "--form-field", "folder=in", "--form-field", "note=x=y", "--delivery-header", "Authorization: Bearer t",
            "--delivery-header", "X-Trace: 1", "--delete-after", "--wait",
        ])
        #expect(command.deliverTo == "https://up.example.org/upload")
        #expect(command.method == "POST")
        #expect(command.field == "upload")
        #expect(command.formFields == ["folder=in", "note=x=y"])
        #expect(command.deliveryHeaders == ["Authorization: Bearer t", "X-Trace: 1"])
        #expect(command.deleteAfter && command.wait)
        let plain = try AddCommand.parse(["http://a/1"])
        #expect(plain.deliverTo == nil && plain.method == nil && plain.formFields.isEmpty && !plain.deleteAfter)
    }
}
