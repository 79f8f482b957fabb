/// One element of a batch body, decoded on its own so that one bad item does not spoil the rest.
struct BatchItem: Decodable {
    let result: Result<JobDraft.Body, APIError>

    init(from decoder: any Decoder) throws {
        do {
            result = .success(try JobDraft.Body(from: decoder))
        } catch let error as DecodingError {
            result = .failure(APIError(.invalidRequest, RequestDecoding.describe(error)))
        }
    }
}
