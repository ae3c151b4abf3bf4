import Foundation
import FuzzTargets
import Testing

/// Replays every committed fuzz input (`Corpus/TARGET/`, grown and minimized
/// by `Scripts/fuzz.sh`, regression inputs included) through its target,
/// without a sanitizer build: an input that crashed once must never crash
/// again, nor break a promise.
@Suite("Fuzz corpora")
struct FuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Corpus")

    @Test("every committed input passes", arguments: FuzzTarget.allCases)
    func replay(_ target: FuzzTarget) throws {
        let dir = Self.corpus.appendingPathComponent(target.rawValue)
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        #expect(files.count >= 10, "the \(target.rawValue) corpus has \(files.count) inputs")
        for file in files {
            let input = Array(try Data(contentsOf: dir.appendingPathComponent(file)))
            #expect(throws: Never.self, "\(target.rawValue)/\(file)") { try target.run(input) }
        }
    }

    @Test("the seed inputs pass", arguments: FuzzTarget.allCases)
    func seeds(_ target: FuzzTarget) throws {
        let seeds = try target.seeds()
        #expect(!seeds.isEmpty)
        for seed in seeds { #expect(throws: Never.self) { try target.run(seed) } }
    }
}
