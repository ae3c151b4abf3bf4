// The seeded generator and temporary directories every test target shares
// (`Sources/TestSupport`), visible in each file of this target.
@_exported import TestSupport
