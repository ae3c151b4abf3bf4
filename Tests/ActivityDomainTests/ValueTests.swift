import Foundation
import Testing
import TextIndex
@testable import ActivityDomain

@Suite("userInfo values: tagged JSON and Protocol Buffers")
struct ValueTests {
    static let sample: UserInfoValue = [
        "int": 42, "negative": -7, "double": 2.5, "whole": 3.0, "bool": true, "null": nil, "text": "héllo \"q\"\n",
        "date": .date(ISO8601Time.date(from: "2026-11-22T10:00:00.123456Z")!),
        "data": .data(Data([0, 1, 2, 255])), "url": .url(URL(string: "https://example.com/a?b=c")!),
        "uuid": .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
        "array": [1, "two", [3.5]], "nested": ["a": ["b": nil]], "tagLike": ["$date": "not a tag"],
    ]

    @Test("tagged JSON round-trips, sorted keys, integers stay integers")
    func jsonRoundTrip() throws {
        let text = Self.sample.json.serialized()
        let back = try UserInfoValue(json: JSONValue(parsing: text))
        #expect(back == Self.sample)
        #expect(text.hasPrefix(#"{"array":[1,"two",[3.5]],"bool":true,"data":{"$data":"AAEC/w=="},"date":{"$date":"2026-11-22T10:00:00.123456Z"}"#))
        #expect(text.contains(#""whole":3.0"#))
        #expect(text.contains(#""tagLike":{"$dictionary":{"$date":"not a tag"}}"#))
        #expect(try UserInfoValue(json: JSONValue(parsing: "1")) == .integer(1))
        #expect(try UserInfoValue(json: JSONValue(parsing: "1.0")) == .double(1))
        #expect(try UserInfoValue(json: JSONValue(parsing: "1e2")) == .double(100))
        #expect(try UserInfoValue(json: JSONValue(parsing: #"{"$url":"https://x.example"}"#)) == .url(URL(string: "https://x.example")!))
    }

    @Test("malformed tagged values and JSON are errors with a place")
    func jsonErrors() throws {
        #expect(throws: UserInfoJSONError.self) { try UserInfoValue(json: JSONValue(parsing: #"{"$date":"yesterday"}"#)) }
        #expect(throws: UserInfoJSONError.self) { try UserInfoValue(json: JSONValue(parsing: #"{"$uuid":"nope"}"#)) }
        #expect(throws: UserInfoJSONError.self) { try UserInfoValue(json: JSONValue(parsing: #"{"$what":"x"}"#)) }
        do {
            _ = try JSONValue(parsing: "{\"a\":\n  [1, 2,, 3]}")
            Issue.record("should not parse")
        } catch let error as JSONParseError {
            #expect(error.line == 2)
            #expect(error.column == 9)
        }
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: "99999999999999999999") }
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: String(repeating: "[", count: 10_000)) }
    }

    @Test("Protocol Buffers form round-trips and is deterministic")
    func protobufRoundTrip() throws {
        let proto = Self.sample.proto
        #expect(try UserInfoValue(proto: proto) == Self.sample)
        let a: [UInt8] = try proto.serializedBytes()
        let b: [UInt8] = try Self.sample.normalized.proto.serializedBytes()
        #expect(a == b)
    }

    @Test("ISO-8601 times")
    func iso8601() {
        #expect(ISO8601Time.string(from: Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
        #expect(ISO8601Time.string(from: Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.5Z")
        #expect(ISO8601Time.date(from: "2024-02-29T12:00:00+02:00") == ISO8601Time.date(from: "2024-02-29T10:00:00Z"))
        #expect(ISO8601Time.date(from: "2023-02-29T12:00:00Z") == nil)
        #expect(ISO8601Time.date(from: "2026-11-22 10:00:00Z") == nil)
        let date = ISO8601Time.date(from: "2026-11-22T10:00:00.000001Z")!
        #expect(ISO8601Time.string(from: date) == "2026-11-22T10:00:00.000001Z")
    }
}
