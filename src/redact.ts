/**
 * A database or Redis URL fit for messages and logs: the password, in the user part or in a
 * `password=` parameter (node-postgres reads both), replaced by `***`; the rest kept so that the
 * reader can tell which server and database were meant.
 */
export function redactUrl(url: string): string {
  return url
    .replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@')
    .replace(/([?&](?:ssl)?password=)[^&#]*/gi, '$1***');
}
