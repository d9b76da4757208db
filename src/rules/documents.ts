/**
 * A document link must be a web address a browser opens safely: `http://` or `https://` with a host.
 * The contract's pattern refuses other schemes (`javascript:`, `data:`, `ftp:` …) as a format error;
 * this rule also refuses what the pattern lets through but no browser can open, such as
 * `https://:443/` or `http://[::1`.
 */

const LINK_PROTOCOLS: ReadonlySet<string> = new Set(['http:', 'https:']);

export function isLinkUrl(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  return LINK_PROTOCOLS.has(parsed.protocol) && parsed.hostname !== '';
}
