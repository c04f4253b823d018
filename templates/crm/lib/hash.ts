// Content hashes: what a search document or an entity mirror was made from, so unchanged content is not sent twice.

/** The SHA-256 of the text, hex. */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}
