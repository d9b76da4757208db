import { lookup as dnsLookup } from 'node:dns/promises';
import { describe, expect, it } from 'vitest';
import { guardedLookup, isPublicAddress, targetFault, urlFault } from '../../src/webhooks/targets.js';
import { post } from '../../src/webhooks/worker.js';

/** Every address a name resolves to here, in the forms Node gives them. */
const addressesOf = async (hostname: string) => (await dnsLookup(hostname, { all: true, verbatim: true })).map(({ address }) => address);

describe('which addresses may receive webhooks', () => {
  it('refuses loopback, private, shared, link-local, unique-local, multicast and reserved addresses', () => {
    const refused = ['127.0.0.1', '127.8.9.10', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.1', '100.64.0.1', '169.254.169.254',
      '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fc00::1', 'fd12:3456::1', 'fe80::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:10.1.2.3'];
    expect(refused.filter(isPublicAddress)).toEqual([]);
  });

  it('refuses site-local IPv6 and the transition forms that can lead to a private address (6to4, IPv4-compatible, SIIT, NAT64, Teredo)', () => {
    const refused = ['fec0::1', '2002:7f00:1::', '2002:a00:1::1', '::7f00:1', '::a00:1', '::ffff:0:7f00:1', '64:ff9b::7f00:1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001:db8::1', '198.18.0.1'];
    expect(refused.filter(isPublicAddress)).toEqual([]);
  });

  it('takes only the canonical forms Node connects to as addresses, never 127.1 or hexadecimal', () => {
    expect(['127.1', '0x7f.0.0.1', '2130706433', '017700000001'].filter(isPublicAddress)).toEqual([]);
  });

  it('accepts public IPv4 and IPv6 addresses', () => {
    expect(['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:2800:220:1:248:1893:25c8:1946', '::ffff:8.8.8.8'].every(isPublicAddress)).toBe(true);
  });

  it('never takes a name for an address', () => {
    expect(isPublicAddress('localhost')).toBe(false);
  });
});

describe('a subscription URL', () => {
  it('must be https, absolute, and hold no user name or password', () => {
    expect(urlFault('http://hooks.example.com/x', false)).toBe('The URL must use https.');
    expect(urlFault('ftp://hooks.example.com/x', true)).toBe('The URL must use https.');
    expect(urlFault('https://ana:secret@hooks.example.com/x', false)).toMatch(/user name or password/);
    expect(urlFault('/relative', false)).toMatch(/absolute/);
    expect(urlFault('https://hooks.example.com/x', false)).toBeUndefined();
    expect(urlFault('http://127.0.0.1:8080/x', true)).toBeUndefined();
  });

  it('may not name, or resolve to, a non-public address unless private targets are allowed', async () => {
    for (const url of ['https://127.0.0.1/x', 'https://10.0.0.1/x', 'https://169.254.169.254/latest/meta-data', 'https://[::1]/x', 'https://localhost/x',
      'https://[fec0::1]/', 'https://[2002:7f00:1::]/', 'https://[::7f00:1]/', 'https://[::ffff:0:7f00:1]/']) {
      expect(await targetFault(url, false), url).toMatch(/ is not a public address\.$| does not resolve to a public address\.$/);
    }
    expect(await targetFault('https://localhost/x', true)).toBeUndefined();
    expect(await targetFault('https://93.184.216.34/x', false)).toBeUndefined();
  });

  it('is refused without saying the address its host resolves to', async () => {
    const fault = await targetFault('https://localhost/x', false);
    expect(fault).toBe('The host localhost does not resolve to a public address.');
    for (const address of await addressesOf('localhost')) expect(fault).not.toContain(address);
  });

  it('reads the same whether its host resolves to a non-public address or does not resolve (`.invalid` never does)', async () => {
    const faults = [await targetFault('https://localhost/x', false), await targetFault('https://hooks.invalid/x', false)];
    expect(faults).toEqual(['The host localhost does not resolve to a public address.', 'The host hooks.invalid does not resolve to a public address.']);
  });
});

describe('the lookup a delivery connects with', () => {
  const lookup = (hostname: string) =>
    new Promise<string>((resolve, reject) =>
      guardedLookup(false)!(hostname, { all: false }, (error, address) => (error ? reject(error) : resolve(address as string))),
    );

  it('refuses a name that resolves to a non-public address, where the connection is made', async () => {
    await expect(lookup('localhost')).rejects.toThrow(/target refused/);
  });

  it('refuses by the name, never saying the address it resolved to', async () => {
    const refusal = await lookup('localhost').catch((error: Error) => error.message);
    expect(refusal).toBe('target refused: localhost does not resolve to a public address');
    for (const address of await addressesOf('localhost')) expect(refusal).not.toContain(address);
  });

  it('refuses a name that does not resolve in the same words as one that resolves to a non-public address', async () => {
    const refusals = await Promise.all(['localhost', 'hooks.invalid'].map((hostname) => lookup(hostname).catch((error: Error) => error.message)));
    expect(refusals).toEqual(['target refused: localhost does not resolve to a public address', 'target refused: hooks.invalid does not resolve to a public address']);
  });

  it('is Node’s own when private targets are allowed', () => {
    expect(guardedLookup(true)).toBeUndefined();
  });
});

describe('a delivery to a non-public address', () => {
  it('to a name records the name as the attempt\'s error, never the address it resolved to', async () => {
    const { error } = await post(new URL('https://localhost:9/hooks'), {}, '{}', false);
    expect(error).toBe('target refused: localhost does not resolve to a public address');
    for (const address of await addressesOf('localhost')) expect(error).not.toContain(address);
  });

  it('is refused before connecting, whether the URL names the address or a name that resolves to it', async () => {
    for (const url of ['http://127.0.0.1:9/hooks', 'http://[::1]:9/hooks', 'http://localhost:9/hooks']) {
      expect(await post(new URL(url), {}, '{}', false), url).toMatchObject({ statusCode: null, error: expect.stringMatching(/^target refused: .* (is not a public address|does not resolve to a public address)$/) });
    }
  });
});
