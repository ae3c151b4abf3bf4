import ArgumentParser
import Foundation

/// A single-valued option given twice is a usage error, never "the last
/// one wins": `forget --user alice --user bob` would forget bob alone, and
/// on a destructive command that is the wrong user's data. Every option of
/// `eventlog` takes one value (lists are comma-separated), so any `--NAME`
/// of an `@Option` (the command's own and its option groups') found more
/// than once among the arguments (before a `--`) stops the command before
/// it runs, naming the option and its values.
///
/// ```swift
/// try RepeatedOptions.check(command, arguments: ["forget", "--user", "alice", "--user", "bob"])
/// // throws: "--user is given 2 times (alice, bob); it takes one value: give it once"
/// ```
enum RepeatedOptions {
    /// The long names of the options of `value` (a parsed command) that
    /// take a value: its `@Option` properties, found by reflection, and
    /// those of its `@OptionGroup`s, as swift-argument-parser names them
    /// (`transactionSize` is `--transaction-size`).
    static func valueOptions(of value: Any, depth: Int = 0) -> Set<String> {
        var names = Set<String>()
        guard depth < 6 else { return names }
        for child in Mirror(reflecting: value).children {
            let type = String(describing: Swift.type(of: child.value))
            if type.hasPrefix("Option<"), let label = child.label {
                names.insert(kebab(label.hasPrefix("_") ? String(label.dropFirst()) : label))
            } else if type.hasPrefix("OptionGroup<") || type.hasPrefix("Parsed<") || (child.label == "value" && depth > 0) {
                names.formUnion(valueOptions(of: child.value, depth: depth + 1))
            }
        }
        return names
    }

    /// `batchSizes` → `batch-sizes`.
    static func kebab(_ name: String) -> String {
        var result = ""
        for character in name {
            if character.isUppercase {
                result += "-" + character.lowercased()
            } else {
                result.append(character)
            }
        }
        return result
    }

    /// Throws a ``CLIError`` when an option of `command` is given more than once in `arguments`.
    static func check(_ command: Any, arguments: [String]) throws {
        let options = valueOptions(of: command)
        var values: [String: [String]] = [:]
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" { break }
            if argument.hasPrefix("--") {
                let body = argument.dropFirst(2)
                let name = String(body.prefix { $0 != "=" })
                if options.contains(name) {
                    if let equals = body.firstIndex(of: "=") {
                        values[name, default: []].append(String(body[body.index(after: equals)...]))
                    } else {
                        values[name, default: []].append(index + 1 < arguments.count ? arguments[index + 1] : "")
                        index += 1
                    }
                }
            }
            index += 1
        }
        if let (name, given) = values.filter({ $0.value.count > 1 }).min(by: { $0.key < $1.key }) {
            throw CLIError("--\(name) is given \(given.count) times (\(given.map { "\"\($0)\"" }.joined(separator: ", "))); "
                + "it takes one value: give it once")
        }
    }
}
