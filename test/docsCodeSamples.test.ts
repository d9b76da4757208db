/**
 * The docs page shows each operation's code samples (scripts/codeSamples.ts) under its strict
 * Content-Security-Policy: headless Chromium, with every host but 127.0.0.1 unreachable, opens
 * /v1/docs at one operation, switches the request samples from `curl` to `@team-os/client`, and
 * saves a screenshot (under the test's temporary folder; DOCS_SCREENSHOT=path keeps one, as
 * docs/images/docs-samples.png was made). Skipped without a Chromium binary, as the other browser tests.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium as playwright, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT, CURL } from '../scripts/codeSamples.js';
import { chromiumArgs, findChromium } from './browser/chromium.js';
import { databaseLabel } from './support/database.js';
import { startTestApp, type TestApp } from './support/testApp.js';

const chromium = findChromium();
if (!chromium) console.warn('docsCodeSamples.test.ts: no Chromium binary (chromium, chromium-browser, google-chrome or CHROMIUM_BIN): the samples on the docs page are not checked');

describe.skipIf(!chromium)(`the docs page shows the code samples (${databaseLabel})`, () => {
  let app: TestApp;
  let browser: Browser;
  let folder: string;
  beforeAll(async () => {
    app = await startTestApp();
    browser = await playwright.launch({ executablePath: chromium!, args: chromiumArgs });
    folder = await mkdtemp(join(tmpdir(), 'teamos-docs-samples-'));
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  // One retry, on a new page: once in a full run on two busy cores (never alone, nor under a CPU hog) the
  // panel lost its heading while the language menu was switched and never got it back; a new page did.
  it('renders the curl and the client sample of an operation, with no Content-Security-Policy violation', { retry: 1, timeout: 600_000 }, async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const console: string[] = [];
    page.on('console', (message) => console.push(message.text()));
    await page.route('**/*', (route) => (new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort()));
    await page.goto(`${app.url}/v1/docs#tag/Tasks/operation/updateTask`);

    // Redoc renders the operations around the one linked to: the samples panel headed `PATCH /tasks/{id}`.
    const menus = page.locator('button[aria-haspopup="menu"]');
    const panels = menus.locator('xpath=ancestor::*[.//pre or .//code][1]');
    const panelText = async () => (await panels.allInnerTexts()).find((text) => text.startsWith('PATCH\n/tasks/{id}')) ?? '';
    await menus.first().waitFor({ timeout: 240_000 });
    await expect.poll(panelText, { timeout: 120_000 }).toContain('curl -i -X PATCH');

    // The page is rendered on the server and then hydrated: a click before hydration does nothing, so switch until it took.
    const languages = page.locator('button[aria-haspopup="menu"]', { hasText: new RegExp(`^${CURL}$`) });
    const switchToClient = async () => {
      const index = (await languages.locator('xpath=ancestor::*[.//pre or .//code][1]').allInnerTexts()).findIndex((text) => text.startsWith('PATCH\n/tasks/{id}'));
      if (index >= 0) {
        await languages.nth(index).click({ timeout: 5_000 });
        await page.getByRole('menuitem').filter({ hasText: CLIENT }).first().click({ timeout: 5_000 }).catch(() => page.keyboard.press('Escape'));
      }
      return panelText();
    };
    await expect
      .poll(switchToClient, { timeout: 240_000, interval: 1_000, message: 'the client sample of PATCH /tasks/{id}' })
      .toContain("await client.PATCH('/tasks/{id}'")
      .catch(async (error: unknown) => {
        // What the page showed instead, for the next time this fails in a full run only.
        const headings = (await panels.allInnerTexts().catch(() => [])).map((text) => JSON.stringify(text.slice(0, 60)));
        const buttons = await menus.allInnerTexts().catch(() => []);
        await page.close();
        throw new Error(`${String(error)}\npanels: ${headings.join(', ')}\nlanguage buttons: ${buttons.join(', ')}`);
      });
    expect(await panelText()).toContain('createTeamOsClient');
    expect(await panelText()).toMatch(new RegExp(`^PATCH\n/tasks/\\{id\\}\n${CLIENT}\n`));

    const screenshot = process.env.DOCS_SCREENSHOT ?? join(folder, 'docs-samples.png');
    await page.screenshot({ path: screenshot });
    expect((await stat(screenshot)).size).toBeGreaterThan(10_000);
    expect(console.filter((message) => /Content Security Policy/i.test(message))).toEqual([]);
    await page.close();
  });
});
