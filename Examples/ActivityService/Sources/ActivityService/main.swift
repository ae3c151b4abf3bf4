import ActivityServiceCore
import Foundation
import Hummingbird

// activity-service                 serve (configuration from the environment: ServiceConfiguration)
// activity-service token USER [SECONDS]   print a bearer token for USER signed with ACTIVITY_SERVICE_KEY
let arguments = Array(CommandLine.arguments.dropFirst())
do {
    let configuration = try ServiceConfiguration()
    if arguments.first == "token" {
        guard arguments.count >= 2 else {
            FileHandle.standardError.write(Data("usage: ActivityService token USER [SECONDS]\n".utf8))
            exit(64)
        }
        let seconds = arguments.count > 2 ? TimeInterval(arguments[2]) ?? 3600 : 3600
        print(BearerToken.issue(user: arguments[1], expires: Date().addingTimeInterval(seconds), key: configuration.signingKey))
        exit(0)
    }
    let app = try ActivityServiceApplication.make(configuration: configuration)
    try await app.runService(gracefulShutdownSignals: [.sigterm, .sigint])
} catch {
    FileHandle.standardError.write(Data("activity-service: \(error)\n".utf8))
    exit(1)
}
