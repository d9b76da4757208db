import { describe, expect, it } from 'vitest';
import { readConfig } from '../../src/config.js';

const corsOrigins = (value: string | undefined) => readConfig({ CORS_ORIGINS: value }).corsOrigins;

describe('CORS_ORIGINS', () => {
  it('allows no origin when unset or empty', () => {
    expect(readConfig({}).corsOrigins).toEqual([]);
    expect(corsOrigins('')).toEqual([]);
    expect(corsOrigins(' , ')).toEqual([]);
  });

  it('reads a comma-separated list, spaces around the commas allowed', () => {
    expect(corsOrigins('http://localhost:5173, http://127.0.0.1:5173 ,https://app.example.com')).toEqual([
      'http://localhost:5173',
      'http://127.0.0.1:5173',
      'https://app.example.com',
    ]);
  });

  it('keeps each origin as a browser sends it in Origin, once', () => {
    expect(corsOrigins('HTTPS://App.Example.com/,https://app.example.com:443,http://[::1]:5173,https://bücher.example')).toEqual([
      'https://app.example.com',
      'http://[::1]:5173',
      'https://xn--bcher-kva.example',
    ]);
  });

  it.each([
    ['a wildcard', '*'],
    ['the opaque origin', 'null'],
    ['a host without a scheme', 'localhost:5173'],
    ['a path', 'https://app.example.com/app'],
    ['a query', 'https://app.example.com/?x=1'],
    ['a fragment', 'https://app.example.com#top'],
    ['user info', 'https://user@app.example.com'],
    ['a scheme other than http and https', 'ftp://app.example.com'],
    ['a port out of range', 'http://localhost:99999'],
  ])('refuses %s with a message naming the setting and the entry', (_name, entry) => {
    expect(() => corsOrigins(`http://localhost:5173,${entry}`)).toThrow(
      `CORS_ORIGINS must list origins such as https://app.example.com or http://localhost:5173, separated by commas, not "${entry}"`,
    );
  });
});
