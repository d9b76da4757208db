/**
 * No server-side request forgery through webhooks: a subscription's URL must be `https` and name a
 * host whose every address is public — never loopback, private, carrier-grade NAT, link-local (the
 * cloud metadata service at 169.254.169.254 among them), unique-local, site-local, multicast, reserved,
 * or a transition form that may lead to one (6to4, Teredo, NAT64, IPv4-compatible). The
 * URL is checked when it is stored, and again at every delivery through the lookup the connection
 * itself uses, so a name that resolves elsewhere later (DNS rebinding) is caught where it connects.
 *
 * The operator allows private targets and plain `http` with WEBHOOKS_ALLOW_PRIVATE_TARGETS=true
 * (development, tests, `make run`).
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * IPv4-compatible IPv6 (`::a.b.c.d`, deprecated by RFC 4291) is the one special block ipaddr.js
 * calls `unicast`; some stacks still route it to the IPv4 address it holds.
 */
const ipv4Compatible = ipaddr.parseCIDR('::/96');

/**
 * Whether an IP address may receive webhooks: only what ipaddr.js (the maintained table of IANA's
 * special-purpose registries) calls `unicast`. IPv4 written inside IPv6 (`::ffff:10.0.0.1`) is judged
 * as the IPv4 address it carries. Only the canonical forms Node connects to count as addresses
 * (`isIP`), never `127.1` or `0x7f.0.0.1`.
 */
export function isPublicAddress(address: string): boolean {
  if (isIP(address) === 0) return false;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().range() === 'unicast';
    if (v6.match(ipv4Compatible)) return false;
  }
  return parsed.range() === 'unicast';
}

export class TargetRefused extends Error {}

/** The URL's own faults, before any name is resolved. */
export function urlFault(text: string, allowPrivate: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'The URL is not an absolute URL.';
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) return 'The URL must use https.';
  if (url.username || url.password) return 'The URL must not hold a user name or password.';
  if (!url.hostname) return 'The URL must name a host.';
  return undefined;
}

const resolveAll = (hostname: string): Promise<LookupAddress[]> =>
  new Promise((resolved, failed) => dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? failed(error) : resolved(addresses))));

/**
 * The one refusal of a name, whether it resolves to a non-public address or does not resolve at all:
 * two texts would let anyone who may subscribe ask which names the server's own network knows.
 * Never the address either: it would tell them what those names resolve to.
 */
const notPublicName = (hostname: string) => `${hostname} does not resolve to a public address`;

/** Why a URL may not receive webhooks, or undefined when it may: checked when a subscription is stored. */
export async function targetFault(text: string, allowPrivate: boolean): Promise<string | undefined> {
  const fault = urlFault(text, allowPrivate);
  if (fault || allowPrivate) return fault;
  const hostname = new URL(text).hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(hostname)) return isPublicAddress(hostname) ? undefined : `The host ${hostname} is not a public address.`;
  const addresses = await resolveAll(hostname).catch((): LookupAddress[] => []);
  if (addresses.length > 0 && addresses.every(({ address }) => isPublicAddress(address))) return undefined;
  return `The host ${notPublicName(hostname)}.`;
}

/**
 * The lookup a delivery connects with: Node's own, refusing any non-public address it returns, so the
 * address checked is the address connected to. A name that does not resolve is refused in the same
 * words: the deliveries list shows this text to the subscription's Owners and Admins.
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction | undefined {
  if (allowPrivate) return undefined;
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true, verbatim: true }, (error, addresses) => {
      const list = error ? [] : (addresses as LookupAddress[]);
      if (list.length === 0 || !list.every(({ address }) => isPublicAddress(address))) {
        return callback(new TargetRefused(`target refused: ${notPublicName(hostname)}`), '', 0);
      }
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
}
