/// The buffers ``PreparedDocument`` analyzes a document with, held by a
/// ``Tokenizer`` between documents: a fresh term table and fresh arrays per
/// document cost about as much allocating and growing as the tokenizing.
struct PreparationScratch {
    var table = TermTable(expected: 128)
    var ranges: [Range<Int>] = []
    var occurrences: [UInt16] = []
}
