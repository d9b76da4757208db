import { describe, expect, it } from 'vitest';
import { isLinkUrl } from '../../src/rules/documents.js';

describe('document links', () => {
  it('are http:// or https:// addresses with a host, in any letter case, with port, path, query and fragment', () => {
    for (const url of ['http://northwind.example', 'https://crm.northwind.example/a?b=c#d', 'HTTPS://10.0.0.7:8080/', 'http://[::1]/']) {
      expect(isLinkUrl(url), url).toBe(true);
    }
  });

  it('refuse other schemes, addresses without a host and text that is no address', () => {
    for (const url of ['javascript:alert(1)', 'data:text/html,x', 'ftp://files.example/a', 'file:///etc/passwd', 'https://:443/', 'http://[::1', 'northwind.example', '']) {
      expect(isLinkUrl(url), url).toBe(false);
    }
  });
});
