/** What a simulated upstream answers, before the server applies any injected fault. */
export interface SourceReply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** Large documents are built straight into a Buffer. */
  readonly body: string | Buffer;
}

/** What every simulated upstream needs besides the request itself. */
export interface ReplyContext {
  readonly seed: number;
  readonly nowMs: number;
}

export function jsonReply(status: number, body: unknown): SourceReply {
  return { status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

export function textReply(status: number, contentType: string, body: string): SourceReply {
  return { status, headers: { 'content-type': contentType }, body };
}

/** `2025-10-21T12:00Z`: the minute-precision form both ENTSO-E and NESO use. */
export function formatMinute(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16) + 'Z';
}
