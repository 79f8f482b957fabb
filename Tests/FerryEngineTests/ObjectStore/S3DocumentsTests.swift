import Testing
@testable import FerryEngine

/// The XML documents S3 answers with, read by `S3XML`/`S3Documents` without sockets, including the ways they can
/// be wrong.
@Suite("S3Documents")
struct S3DocumentsTests {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func trimsSpacesTabsAndLineBreaksOnly() {
        #expect(S3XMLElement.trimmed(" \t ETag: \"abc\"\r\n") == "ETag: \"abc\"")
        #expect(S3XMLElement.trimmed("x-amz-meta-name: é ü\r\n") == "x-amz-meta-name: é ü")
        #expect(S3XMLElement.trimmed("\r\n") == "")
        #expect(S3XMLElement.trimmed("") == "")
        #expect(S3XMLElement.trimmed("plain") == "plain")
        var head = ObjectStoreResponseHead()
        head.read("HTTP/1.1 200 OK\r\n")
        head.read("Content-Length:  12 \r\n")
        head.read("x-amz-meta-sha256: ab\r\n")
        #expect(head.status == 200 && head.object.size == 12 && head.object.metadata == ["sha256": "ab"])
    }

    @Test func readsTheUploadID() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <InitiateMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>b</Bucket>\
            <Key>p/a b.bin</Key><UploadId>3d56_6d3d</UploadId></InitiateMultipartUploadResult>
            """
        #expect(try S3Documents.uploadID(bytes(xml)) == "3d56_6d3d")
        #expect(throws: S3XMLError.self) { try S3Documents.uploadID(bytes("<InitiateMultipartUploadResult/>")) }
        #expect(throws: S3XMLError.self) { try S3Documents.uploadID(bytes("<Other><UploadId>x</UploadId></Other>")) }
    }

    @Test func readsTheUnfinishedUploads() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>b</Bucket>\
            <Upload><Key>jobs/j1/a.bin</Key><UploadId>u1</UploadId></Upload>\
            <Upload><Key>jobs/j1/a b.bin</Key><UploadId>u2</UploadId></Upload></ListMultipartUploadsResult>
            """
        #expect(try S3Documents.unfinishedUploads(bytes(xml)) == [UnfinishedUpload(key: "jobs/j1/a.bin", uploadID: "u1"),
                                                                   UnfinishedUpload(key: "jobs/j1/a b.bin", uploadID: "u2")])
        #expect(try S3Documents.unfinishedUploads(bytes("<ListMultipartUploadsResult/>")).isEmpty)
        #expect(throws: S3XMLError.self) {
            try S3Documents.unfinishedUploads(bytes("<ListMultipartUploadsResult><Upload><Key>k</Key></Upload></ListMultipartUploadsResult>"))
        }
    }

    @Test func readsAPageOfParts() throws {
        let xml = """
            <ListPartsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
              <Bucket>b</Bucket><Key>k</Key><UploadId>u</UploadId>
              <PartNumberMarker>0</PartNumberMarker><NextPartNumberMarker>2</NextPartNumberMarker>
              <MaxParts>2</MaxParts><IsTruncated>true</IsTruncated>
              <Part><PartNumber>1</PartNumber><LastModified>2026-11-24T19:37:37Z</LastModified>
                <ETag>&quot;0a1b&quot;</ETag><Size>5242880</Size></Part>
              <Part><PartNumber>2</PartNumber><ETag>"2c3d"</ETag><Size>17</Size></Part>
            </ListPartsResult>
            """
        let page = try S3Documents.partsPage(bytes(xml))
        #expect(page.parts == [UploadedPart(number: 1, etag: "\"0a1b\"", size: 5_242_880), UploadedPart(number: 2, etag: "\"2c3d\"", size: 17)])
        #expect(page.nextMarker == 2)
        let last = try S3Documents.partsPage(bytes("<ListPartsResult><IsTruncated>false</IsTruncated></ListPartsResult>"))
        #expect(last == S3Documents.PartsPage(parts: [], nextMarker: nil))
    }

    @Test(arguments: [
        "<ListPartsResult><Part><PartNumber>0</PartNumber><ETag>x</ETag><Size>1</Size></Part></ListPartsResult>",
        "<ListPartsResult><Part><PartNumber>1</PartNumber><Size>1</Size></Part></ListPartsResult>",
        "<ListPartsResult><Part><PartNumber>1</PartNumber><ETag>x</ETag><Size>-1</Size></Part></ListPartsResult>",
        "<ListPartsResult><IsTruncated>true</IsTruncated></ListPartsResult>",
    ])
    func refusesABadPartsPage(xml: String) {
        #expect(throws: S3XMLError.self) { try S3Documents.partsPage(bytes(xml)) }
    }

    @Test func readsAnError() {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match.</Message>\
            <Resource>/b/k</Resource></Error>
            """
        #expect(S3Documents.error(bytes(xml)) == .init(code: "SignatureDoesNotMatch", message: "The request signature we calculated does not match."))
        #expect(S3Documents.error(bytes("<CompleteMultipartUploadResult/>")) == nil)
        #expect(S3Documents.error(bytes("not xml")) == nil)
        #expect(S3Documents.error([]) == nil)
    }

    @Test func readsACompletionAndItsLateError() throws {
        let done = "<CompleteMultipartUploadResult><Location>l</Location><ETag>\"abc-3\"</ETag></CompleteMultipartUploadResult>"
        #expect(try S3Documents.completedETag(bytes(done)) == "\"abc-3\"")
        let late = "\n\n<Error><Code>InternalError</Code><Message>We encountered an internal error.</Message></Error>"
        #expect(S3Documents.error(bytes(late))?.code == "InternalError")
        #expect(throws: S3XMLError.self) { try S3Documents.completedETag(bytes(late)) }
    }

    @Test func xmlReaderHandlesTheLexicalCorners() throws {
        let xml = """
            <?xml version="1.0"?><!-- a comment --><s3:Root xmlns:s3="ns" a='x>y' b="1">\
            <s3:Item>&lt;&amp;&gt;&quot;&apos;&#65;&#x42;</s3:Item><Empty/><Data><![CDATA[<raw & text>]]></Data>\
            <!-- inside --></s3:Root>
            """
        let root = try S3XML.parse(bytes(xml))
        #expect(root.name == "Root")
        #expect(root.value("Item") == "<&>\"'AB")
        #expect(root.child("Empty") == S3XMLElement(name: "Empty"))
        #expect(root.value("Data") == "<raw & text>")
        #expect(root.children.map(\.name) == ["Item", "Empty", "Data"])
    }

    @Test(arguments: [
        ("", "no root element"),
        ("<a><b></a>", "does not close"),
        ("<a>", "is not closed"),
        ("<a></a><b/>", "content after the root element"),
        ("<!DOCTYPE a [<!ENTITY x \"y\">]><a>&x;</a>", "document type declarations"),
        ("<a>&unknown;</a>", "unknown entity"),
        ("<a>&amp</a>", "unterminated entity"),
        ("<a b=\"x></a>", "unterminated attribute"),
        ("<a><!-- x</a>", "missing"),
    ])
    func xmlReaderRefusesBrokenDocuments(xml: String, reason: String) {
        #expect {
            _ = try S3XML.parse(Array(xml.utf8))
        } throws: { error in (error as? S3XMLError)?.reason.contains(reason) == true }
    }

    @Test func escapesText() {
        #expect(S3XML.escaped("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&apos;")
    }
}
