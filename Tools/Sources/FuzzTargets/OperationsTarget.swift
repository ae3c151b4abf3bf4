import ActivityDomain

/// `eventlog apply`'s decoding, line by line: a line that is not UTF-8 is
/// rejected before decoding; every other failure must be a
/// ``JSONParseError`` or an ``ActivityError``, the two that `apply`
/// reports with the line's number (anything else would end the whole run).
enum OperationsTarget {
    static let decoder = OperationDecoder()

    static func run(_ input: [UInt8]) throws {
        for line in input.split(separator: 0x0A) {
            guard let text = String(validating: line, as: UTF8.self) else { continue }
            do {
                _ = try decoder.decode(text)
            } catch is JSONParseError {
            } catch is ActivityError {
            } catch {
                throw FuzzFailure("decoding \(text.debugDescription) threw \(type(of: error)): \(error); apply reports only JSONParseError and ActivityError per line")
            }
        }
    }
}

extension OperationsTarget {
    /// SPEC §6's examples, and the tagged userInfo values.
    static let examples = [
        #"{"op":"updateActivity","activity":"a1","title":"Oat latte","keywords":["coffee","oat"]}"#,
        #"{"op":"addUserInfoEntries","activity":"a1","entries":{"size":"medium","d":{"$data":"AAEC"},"u":{"$url":"https://example.com/a?b=1"},"id":{"$uuid":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F"},"n":null,"x":[1,2.5,true,{"k":"v"}]}}"#,
        #"{"op":"resignCurrent","activity":"a1"}"#,
        #"{"op":"invalidate","activity":"a1"}"#,
        #"{"op":"deleteSavedUserActivities","persistentIdentifiers":["order-42"]}"#,
        #"{"op":"deleteAllSavedUserActivities"}"#,
        #"{"op":"deleteSearchableItems","identifiers":["order-1"]}"#,
        #"{"op":"deleteSearchableItemsInDomains","domains":["orders"]}"#,
        #"{"op":"deleteAllSearchableItems"}"#,
        #"{"op":"beginIndexBatch","index":"orders-indexer"}"#,
        #"{"op":"endIndexBatch","index":"orders-indexer","clientState":"AAEC","expectedClientState":null}"#,
        #"{"op":"purgeExpired","now":"2026-12-31T00:00:00Z"}"#,
        #"{"op":"indexSearchableItems","items":[{"uniqueIdentifier":"x","isUpdate":true,"attributeSet":{"title":null,"rating":1e3}}]}"#,
    ]
}
