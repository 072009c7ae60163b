import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The Standard Webhooks signing scheme (extensions §13): `webhook-signature: v1,<base64 of
 * HMAC-SHA256("{id}.{timestamp}.{body}")>`. Secrets are `whsec_` + base64 of 32 random bytes and
 * the HMAC key is the decoded bytes, as the Standard Webhooks libraries expect, so a receiver can
 * verify with any of them.
 */

const SECRET_PREFIX = 'whsec_';

export function newSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

function keyOf(secret: string): Buffer {
  return Buffer.from(
    secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    'base64',
  );
}

export interface SignedHeaders {
  readonly 'webhook-id': string;
  readonly 'webhook-timestamp': string;
  readonly 'webhook-signature': string;
}

export function signWebhook(
  secret: string,
  id: string,
  timestampSeconds: number,
  body: string,
): SignedHeaders {
  const mac = createHmac('sha256', keyOf(secret))
    .update(`${id}.${timestampSeconds}.${body}`)
    .digest('base64');
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': `v1,${mac}`,
  };
}

/**
 * Whether a presented secret is the subscription's, in constant time (both hashed first, so
 * their lengths match).
 */
export function secretMatches(presented: string, secret: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(presented), digest(secret));
}
