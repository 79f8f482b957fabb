import Testing
@testable import FerryEngine

/// `ObjectStoreLocation` parsing (each wrong part refused with its own line), the key layout, the logged form,
/// and the credentials read from the environment.
@Suite("ObjectStoreLocation")
struct ObjectStoreLocationTests {
    @Test func parsesEveryPart() throws {
        let location = try ObjectStoreLocation(parsing: "s3://ferry-files/cache/v1?endpoint=http://127.0.0.1:8333&region=eu-west-1")
        #expect(location.bucket == "ferry-files")
        #expect(location.prefix == "cache/v1")
        #expect(location.endpoint == "http://127.0.0.1:8333")
        #expect(location.region == "eu-west-1")
        #expect(location.bucketURL == "http://127.0.0.1:8333/ferry-files")
    }

    @Test func fillsDefaults() throws {
        let location = try ObjectStoreLocation(parsing: "s3://files")
        #expect(location.prefix == "")
        #expect(location.region == "us-east-1")
        #expect(location.endpoint == "https://s3.us-east-1.amazonaws.com")
        let regional = try ObjectStoreLocation(parsing: "S3://files/?region=ap-south-1")
        #expect(regional.endpoint == "https://s3.ap-south-1.amazonaws.com")
    }

    @Test func normalizesSlashesAndDecodesTheEndpoint() throws {
        let location = try ObjectStoreLocation(parsing: "s3://files//a/b//?endpoint=http%3A%2F%2F[::1]%3A9000%2F")
        #expect(location.prefix == "a/b")
        #expect(location.endpoint == "http://[::1]:9000")
    }

    @Test func keyLayoutIsPrefixJobAndFilename() throws {
        let withPrefix = try ObjectStoreLocation(parsing: "s3://files/cache?endpoint=http://h:1")
        #expect(withPrefix.key(jobID: "j1", filename: "a b.iso") == "cache/j1/a b.iso")
        let root = try ObjectStoreLocation(parsing: "s3://files?endpoint=http://h:1")
        #expect(root.key(jobID: "j1", filename: "a.iso") == "j1/a.iso")
    }

    @Test func descriptionIsCanonicalAndReparses() throws {
        let location = try ObjectStoreLocation(parsing: "s3://files/p/?endpoint=https://s3.example.net/")
        #expect(location.description == "s3://files/p?endpoint=https://s3.example.net&region=us-east-1")
        #expect(try ObjectStoreLocation(parsing: location.description) == location)
    }

    @Test(arguments: [
        ("http://files/p", "must start with s3://"),
        ("s3:///p", "has no bucket name"),
        ("s3://Files", "bucket name \"Files\" is not valid"),
        ("s3://ab", "bucket name \"ab\" is not valid"),
        ("s3://a..b", "is not valid"),
        ("s3://-files", "is not valid"),
        ("s3://files/a/../b", "has an empty, \".\" or \"..\" segment"),
        ("s3://files/a%2Fb", "must not contain % escapes"),
        ("s3://files#x", "must not contain a fragment"),
        ("s3://files?endpoint=ftp://h", "endpoint must start with http:// or https://"),
        ("s3://files?endpoint=http://h:1/path", "must be only scheme, host and port"),
        ("s3://files?endpoint=http://h:0", "port \"0\" is not a number from 1 to 65535"),
        ("s3://files?endpoint=http://h:x", "port \"x\""),
        ("s3://files?endpoint=http://", "has no valid host"),
        ("s3://files?endpoint=", "parameter \"endpoint\" needs a value"),
        ("s3://files?region", "parameter \"region\" needs a value"),
        ("s3://files?region=us_east", "region \"us_east\" is not valid"),
        ("s3://files?endpoint=http://h&endpoint=http://i", "given twice"),
        ("s3://files?bucket=x", "unknown parameter \"bucket\""),
    ])
    func refusesEachWrongPart(value: String, expected: String) {
        #expect {
            _ = try ObjectStoreLocation(parsing: value)
        } throws: { error in
            let message = (error as? ObjectStoreLocationError)?.description ?? ""
            return message.contains(expected) && !message.contains("\n")
        }
    }

    @Test func neverEchoesCredentialsInTheEndpoint() {
        #expect {
            _ = try ObjectStoreLocation(parsing: "s3://files?endpoint=http://key:hunter2@h:1")
        } throws: { error in
            let message = "\(error)"
            return message.contains("must not carry credentials") && !message.contains("hunter2") && !message.contains("key:")
        }
    }

    @Test func credentialsComeFromTheEnvironment() throws {
        let credentials = try ObjectStoreCredentials.fromEnvironment(["AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": "s3cr3t"])
        #expect(credentials.accessKeyID == "AKIAEXAMPLE")
        #expect(credentials.secretAccessKey == "s3cr3t")
        #expect(credentials.description == "access key AKIA… (secret hidden)")
        #expect(!"\(credentials)".contains("s3cr3t"))
    }

    @Test(arguments: [
        (["AWS_SECRET_ACCESS_KEY": "s"], "AWS_ACCESS_KEY_ID is not set"),
        (["AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": ""], "AWS_SECRET_ACCESS_KEY is not set"),
    ])
    func missingCredentialsNameTheVariable(environment: [String: String], expected: String) {
        #expect {
            _ = try ObjectStoreCredentials.fromEnvironment(environment)
        } throws: { error in "\(error)".contains(expected) }
    }
}
