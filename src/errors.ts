/**
 * An error the API answers with its own status and the contract's `{error, hint}` body.
 * `message` and `hint` are shown to clients: never a stack, SQL or a server path.
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly statusCode: number,
    message: string,
    readonly hint?: string,
    /** Extra response headers, e.g. retry-after on 503. */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}
