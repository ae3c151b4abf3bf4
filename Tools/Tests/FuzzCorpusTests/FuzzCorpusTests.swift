import Foundation
import FuzzTargets
import Testing

/// Replays every committed fuzz input through its target, without a
/// sanitizer build: `Corpus/TARGET/`, grown and minimized by
/// `Scripts/fuzz.sh`, and `Regressions/TARGET/`, each input that once
/// crashed or broke a promise, kept by hand: none may fail again.
@Suite("Fuzz corpora")
struct FuzzCorpusTests {
    static let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    static let corpus = here.appendingPathComponent("Corpus")
    static let regressions = here.appendingPathComponent("Regressions")

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

    @Test("every input that once failed passes")
    func regressions() throws {
        for target in FuzzTarget.allCases {
            let dir = Self.regressions.appendingPathComponent(target.rawValue)
            let files = ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).sorted()
            for file in files {
                let input = Array(try Data(contentsOf: dir.appendingPathComponent(file)))
                #expect(throws: Never.self, "\(target.rawValue)/\(file)") { try target.run(input) }
            }
        }
    }

    @Test("the seed inputs pass", arguments: FuzzTarget.allCases)
    func seeds(_ target: FuzzTarget) throws {
        let seeds = try target.seeds()
        #expect(!seeds.isEmpty)
        for seed in seeds { #expect(throws: Never.self) { try target.run(seed) } }
    }
}
