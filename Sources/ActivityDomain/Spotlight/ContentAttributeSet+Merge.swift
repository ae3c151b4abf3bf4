/// What an `isUpdate` item does to the stored attribute set: given
/// attributes replace, attributes given as null are removed, the others stay.
///
/// ```swift
/// let merged = stored.merged(with: update.attributeSet, removing: ["keywords"])
/// ```
extension ContentAttributeSet {
    /// Whether the attribute `name` has a value (a non-empty list for keywords and authorNames).
    func has(_ name: String) -> Bool {
        switch name {
        case "title": title != nil
        case "displayName": displayName != nil
        case "contentDescription": contentDescription != nil
        case "keywords": !keywords.isEmpty
        case "authorNames": !authorNames.isEmpty
        case "comment": comment != nil
        case "contentType": contentType != nil
        case "contentCreationDate": contentCreationDate != nil
        case "contentModificationDate": contentModificationDate != nil
        case "rating": rating != nil
        case "latitude": latitude != nil
        case "longitude": longitude != nil
        case "thumbnailData": thumbnailData != nil
        default: false
        }
    }

    /// The names of the attributes that have a value, in ``knownAttributes`` order.
    var setAttributeNames: [String] { Self.knownAttributes.filter(has) }

    /// This set with `update`'s set attributes replacing these, and `removed` cleared.
    func merged(with update: ContentAttributeSet, removing removed: Set<String>) -> ContentAttributeSet {
        var result = self
        if let v = update.title { result.title = v }
        if let v = update.displayName { result.displayName = v }
        if let v = update.contentDescription { result.contentDescription = v }
        if !update.keywords.isEmpty { result.keywords = update.keywords }
        if !update.authorNames.isEmpty { result.authorNames = update.authorNames }
        if let v = update.comment { result.comment = v }
        if let v = update.contentType { result.contentType = v }
        if let v = update.contentCreationDate { result.contentCreationDate = v }
        if let v = update.contentModificationDate { result.contentModificationDate = v }
        if let v = update.rating { result.rating = v }
        if let v = update.latitude { result.latitude = v }
        if let v = update.longitude { result.longitude = v }
        if let v = update.thumbnailData { result.thumbnailData = v }
        for name in removed {
            switch name {
            case "title": result.title = nil
            case "displayName": result.displayName = nil
            case "contentDescription": result.contentDescription = nil
            case "keywords": result.keywords = []
            case "authorNames": result.authorNames = []
            case "comment": result.comment = nil
            case "contentType": result.contentType = nil
            case "contentCreationDate": result.contentCreationDate = nil
            case "contentModificationDate": result.contentModificationDate = nil
            case "rating": result.rating = nil
            case "latitude": result.latitude = nil
            case "longitude": result.longitude = nil
            case "thumbnailData": result.thumbnailData = nil
            default: break
            }
        }
        return result
    }
}
