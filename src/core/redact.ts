// Keeping a secret out of text that came from elsewhere (a vendor's error message) before it is relayed or logged.

const REDACTED = '[redacted]';
/** A word sharing this many leading characters with the secret is taken for an echo of it (often masked: sk-ab***yz). */
const ECHO_PREFIX_CHARS = 6;

/**
 * `text` with every occurrence of `secret`, and every word that begins like it (a provider's masked echo such as
 * "sk-proj-abc****wxyz"), replaced by [redacted]. Linear in the text.
 */
export function redactSecret(text: string, secret: string): string {
  if (secret.length === 0 || text.length === 0) return text;
  const whole = text.split(secret).join(REDACTED);
  if (secret.length < ECHO_PREFIX_CHARS) return whole;
  const head = secret.slice(0, ECHO_PREFIX_CHARS);
  if (!whole.includes(head)) return whole;
  return whole
    .split(/(\s+)/)
    .map((word) => (word.replace(/^["'(<[]+/, '').startsWith(head) ? REDACTED : word))
    .join('');
}
