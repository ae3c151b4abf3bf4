/// Trains a zstd dictionary for the log's payloads from samples of its
/// records, keeping in it only text that no single user wrote
/// (`Docs/LogFormat.md`, "Dictionaries").
///
/// zstd's trainer (`ZDICT_trainFromBuffer`) picks the dictionary's content
/// from the samples, verbatim. Of that content this keeps only the bytes
/// that lie in an 8-byte run found in the samples of at least
/// ``minimumOwners`` owners (``ProjectionSet/dictionaryOwner(of:)``); the
/// runs kept are joined and finished into a dictionary
/// (`ZDICT_finalizeDictionary`) with the entropy tables of the samples. So
/// a dictionary holds text several users share (field names, activity
/// types, common words) and nothing that one user alone wrote: forgetting a
/// user never needs a new dictionary.
///
/// ```swift
/// let sample = [DictionaryTrainer.Sample(owner: Array("u1".utf8), payload: bytes), …]
/// let dictionary = DictionaryTrainer.train(sample, id: 3)   // nil: too little shared text
/// ```
enum DictionaryTrainer {
    /// The largest dictionary trained, in bytes.
    static let capacity = 112 << 10
    /// How many owners' samples a run of content must appear in.
    static let minimumOwners = 3
    /// The length of the runs compared.
    static let run = 8
    /// At most this many bytes of samples are read.
    static let sampleBytes = 8 << 20

    struct Sample {
        var owner: [UInt8]?
        var payload: [UInt8]
    }

    /// A dictionary with id `id` trained on `samples`; nil when they share
    /// too little text (or are too few) to make one.
    static func train(_ samples: [Sample], id: UInt32) -> [UInt8]? {
        // Content is kept only where ``minimumOwners`` owners wrote it: with fewer, none would be (and zstd's trainer is not run).
        guard Set(samples.compactMap(\.owner)).count >= minimumOwners else { return nil }
        // Samples as the codec meets them: one a block.
        let block = 1 << Int(CompressedPayload.blockShift)
        let pieces = samples.flatMap { sample in
            stride(from: 0, to: sample.payload.count, by: block).map {
                Array(sample.payload[$0..<min($0 + block, sample.payload.count)])
            }
        }
        guard pieces.count >= 8, let trained = Zstd.train(samples: pieces, capacity: capacity),
              let content = Zstd.content(ofDictionary: trained) else { return nil }
        let shared = sharedRuns(of: Array(content), in: samples)
        guard shared.count >= 256 else { return nil }
        return Zstd.finalize(content: shared, samples: pieces, capacity: capacity, id: id)
    }

    /// The bytes of `content` that lie in a run of ``run`` bytes found in
    /// the payloads of at least ``minimumOwners`` owners, in order.
    static func sharedRuns(of content: [UInt8], in samples: [Sample]) -> [UInt8] {
        guard content.count >= run else { return [] }
        func word(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UInt64 { bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self) }
        // Every run of the content, and the owners seen holding it (up to the minimum).
        var owners: [UInt64: [Int]] = [:]
        content.withUnsafeBytes { bytes in
            for i in 0...(bytes.count - run) { owners[word(bytes, i)] = [] }
        }
        var ownerIndex: [[UInt8]: Int] = [:]
        for sample in samples {
            guard let owner = sample.owner, sample.payload.count >= run else { continue }
            let index = ownerIndex[owner] ?? { let next = ownerIndex.count; ownerIndex[owner] = next; return next }()
            sample.payload.withUnsafeBytes { bytes in
                for i in 0...(bytes.count - run) {
                    let key = word(bytes, i)
                    guard let seen = owners[key], seen.count < minimumOwners, !seen.contains(index) else { continue }
                    owners[key]!.append(index)
                }
            }
        }
        var keep = [Bool](repeating: false, count: content.count)
        content.withUnsafeBytes { bytes in
            for i in 0...(bytes.count - run) where (owners[word(bytes, i)]?.count ?? 0) >= minimumOwners {
                for j in i..<(i + run) { keep[j] = true }
            }
        }
        return zip(content, keep).compactMap { $1 ? $0 : nil }
    }
}
