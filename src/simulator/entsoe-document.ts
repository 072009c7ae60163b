import { hashString, noiseHex } from './noise.js';
import { formatMinute, type ReplyContext, type SourceReply } from './reply.js';

/**
 * What every simulated ENTSO-E document shares, in the wording of the recorded ones
 * (test/fixtures/upstreams/europe-tso): the request window, the Acknowledgement documents for
 * "no data" and refusals, GL_MarketDocument heads, and the buffer the large documents are
 * written into.
 */

const GL_NAMESPACE = 'urn:iec62325.351:tc57wg16:451-6:generationloaddocument:3:0';
const ACK_NAMESPACE = 'urn:iec62325.351:tc57wg16:451-1:acknowledgementdocument:7:0';
const PLATFORM_EIC = '10X1001A1001A450';
const PERIOD_PARAM = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})$/;

/**
 * `periodStart` and `periodEnd` as epoch ms, or the platform's refusal: unreadable, not in order,
 * or more than the one year a request may cover.
 */
export function requestedPeriod(
  query: URLSearchParams,
  context: ReplyContext,
): { start: number; end: number } | SourceReply {
  const start = parsePeriodParam(query.get('periodStart') as string);
  const end = parsePeriodParam(query.get('periodEnd') as string);
  if (start === undefined || end === undefined) {
    return invalidRequest(
      context,
      'periodStart and periodEnd must be given as yyyyMMddHHmm (UTC).',
    );
  }
  if (end <= start) return invalidRequest(context, 'periodEnd must be after periodStart.');
  const oneYearOn = new Date(start);
  oneYearOn.setUTCFullYear(oneYearOn.getUTCFullYear() + 1);
  if (end > oneYearOn.getTime()) {
    return invalidRequest(
      context,
      'The amount of requested data exceeds allowed limit. The maximum period per request is 1 year.',
    );
  }
  return { start, end };
}

const HOUR_MS = 3_600_000;

/** A requested period widened to whole hours, and as the platform writes it in its replies. */
export function hourWindow(period: { readonly start: number; readonly end: number }): {
  readonly startMs: number;
  readonly endMs: number;
  readonly text: string;
} {
  const startMs = Math.floor(period.start / HOUR_MS) * HOUR_MS;
  const endMs = Math.ceil(period.end / HOUR_MS) * HOUR_MS;
  return { startMs, endMs, text: `${formatMinute(startMs)}/${formatMinute(endMs)}` };
}

/** The reply to a valid A75 request whose window holds no published data. */
export function noMatchingData(context: ReplyContext, eic = '', window = ''): SourceReply {
  return noMatchingItem(
    context,
    `AGGREGATED_GENERATION_PER_TYPE_R3 [16.1.B&C]${eic ? ` (${eic})` : ''}`,
    window,
  );
}

/** "No matching data" for a data item (its name and areas, as the platform words them). */
export function noMatchingItem(context: ReplyContext, item: string, window = ''): SourceReply {
  const text = `No matching data found for Data item ${item}${window ? ` and interval ${window}` : ''}.`;
  // Real servers answer 200 for "no data" (entsoe-py notes the change); errors come with 400.
  return acknowledgement(200, context, text);
}

export function invalidRequest(context: ReplyContext, text: string): SourceReply {
  return acknowledgement(400, context, text);
}

export function acknowledgement(status: number, context: ReplyContext, text: string): SourceReply {
  const id = noiseHex(context.seed, hashString(text), Math.floor(context.nowMs / 1000));
  const created = formatSecond(context.nowMs);
  const body = `<?xml version="1.0" encoding="UTF-8"?>
<Acknowledgement_MarketDocument
\txmlns="${ACK_NAMESPACE}">
\t<mRID>${id.slice(0, 8)}-${id.slice(8, 12)}-${id.slice(12, 13)}</mRID>
\t<createdDateTime>${created}</createdDateTime>
\t<sender_MarketParticipant.mRID codingScheme="A01">${PLATFORM_EIC}</sender_MarketParticipant.mRID>
\t<sender_MarketParticipant.marketRole.type>A32</sender_MarketParticipant.marketRole.type>
\t<receiver_MarketParticipant.mRID codingScheme="A01">${PLATFORM_EIC}</receiver_MarketParticipant.mRID>
\t<receiver_MarketParticipant.marketRole.type>A39</receiver_MarketParticipant.marketRole.type>
\t<received_MarketDocument.createdDateTime>${created}</received_MarketDocument.createdDateTime>
\t<Reason>
\t\t<code>999</code>
\t\t<text>${escapeXml(text)}</text>
\t</Reason>
</Acknowledgement_MarketDocument>`;
  return {
    status,
    headers: {
      'content-type': 'text/xml',
      'content-disposition': 'inline; filename="acknowledgement.xml"',
    },
    body,
  };
}

/**
 * Collects ASCII text into a growing Buffer, a chunk at a time. A year of a 15-minute zone is half
 * a million Points: holding them as strings until a final join costs more in garbage collection
 * than making them, and one Buffer.write per Point costs more than the Point.
 */
export class AsciiSink {
  private buffer: Buffer;
  private length = 0;
  private pending = '';

  constructor(capacity: number) {
    this.buffer = Buffer.allocUnsafe(capacity);
  }

  write(text: string): void {
    this.pending += text;
    if (this.pending.length >= 64 * 1024) this.flush();
  }

  toBuffer(): Buffer {
    this.flush();
    return this.buffer.subarray(0, this.length);
  }

  private flush(): void {
    const needed = this.length + this.pending.length;
    if (needed > this.buffer.length) {
      const grown = Buffer.allocUnsafe(Math.max(2 * this.buffer.length, needed));
      this.buffer.copy(grown, 0, 0, this.length);
      this.buffer = grown;
    }
    this.length += this.buffer.write(this.pending, this.length, 'latin1');
    this.pending = '';
  }
}

/**
 * The head of a GL_MarketDocument up to its first TimeSeries, as the recorded documents word it
 * (the XML declaration's encoding is spelt `utf-8` in A75 replies and `UTF-8` in forecast ones).
 */
export function glDocumentHead(head: {
  readonly declaration: 'utf-8' | 'UTF-8';
  readonly mRID: string;
  readonly type: string;
  readonly processType: string;
  readonly createdMs: number;
  readonly startMs: number;
  readonly endMs: number;
}): string {
  return `<?xml version="1.0" encoding="${head.declaration}"?>
<GL_MarketDocument xmlns="${GL_NAMESPACE}">
\t<mRID>${head.mRID}</mRID>
\t<revisionNumber>1</revisionNumber>
\t<type>${head.type}</type>
\t<process.processType>${head.processType}</process.processType>
\t<sender_MarketParticipant.mRID codingScheme="A01">${PLATFORM_EIC}</sender_MarketParticipant.mRID>
\t<sender_MarketParticipant.marketRole.type>A32</sender_MarketParticipant.marketRole.type>
\t<receiver_MarketParticipant.mRID codingScheme="A01">${PLATFORM_EIC}</receiver_MarketParticipant.mRID>
\t<receiver_MarketParticipant.marketRole.type>A33</receiver_MarketParticipant.marketRole.type>
\t<createdDateTime>${formatSecond(head.createdMs)}</createdDateTime>
\t<time_Period.timeInterval>
\t\t<start>${formatMinute(head.startMs)}</start>
\t\t<end>${formatMinute(head.endMs)}</end>
\t</time_Period.timeInterval>
`;
}

export function periodHead(startMs: number, endMs: number, resolution: string): string {
  return `\t\t<Period>
\t\t\t<timeInterval>
\t\t\t\t<start>${formatMinute(startMs)}</start>
\t\t\t\t<end>${formatMinute(endMs)}</end>
\t\t\t</timeInterval>
\t\t\t<resolution>${resolution}</resolution>
`;
}

function parsePeriodParam(text: string): number | undefined {
  const match = PERIOD_PARAM.exec(text);
  if (!match) return undefined;
  const [, year, month, day, hour, minute] = match.map(Number) as number[];
  const ms = Date.UTC(year as number, (month as number) - 1, day, hour, minute);
  // Reject 20250230 and the like, which Date.UTC would roll over.
  return formatMinute(ms).replace(/\D/g, '') === text ? ms : undefined;
}

export function formatSecond(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19) + 'Z';
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
