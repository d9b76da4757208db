/**
 * The docs page shows each operation's code samples (scripts/codeSamples.ts) under its strict
 * Content-Security-Policy: headless Chromium, with every host but 127.0.0.1 unreachable, opens
 * /v1/docs at one operation, switches the request samples from `curl` to `@team-os/client`, and
 * saves a screenshot (under the test's temporary folder; DOCS_SCREENSHOT=path keeps one, as
 * docs/images/docs-samples.png was made). The operation is `updateTask`, or the one DOCS_SAMPLES_OF
 * names (`make check-op` names its own). Skipped without a Chromium binary, as the other browser tests.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium as playwright, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenAPIV3_1 } from 'openapi-types';
import { CLIENT, CURL, type CodeSample } from '../scripts/codeSamples.js';
import { chromiumArgs, findChromium } from './browser/chromium.js';
import { operations } from './support/contract.js';
import { databaseLabel } from './support/database.js';
import { startTestApp, type TestApp } from './support/testApp.js';

const operationId = process.env.DOCS_SAMPLES_OF || 'updateTask';
const op = operations.find((candidate) => candidate.operationId === operationId);
if (!op) throw new Error(`DOCS_SAMPLES_OF=${operationId} is not an operationId of generated/openapi.json`);
const samples = (op.operation as OpenAPIV3_1.OperationObject & { 'x-codeSamples'?: CodeSample[] })['x-codeSamples'] ?? [];
const sampleOf = (label: string) => samples.find((sample) => sample.label === label)?.source ?? '';
const method = op.method.toUpperCase();
/** Redoc's panel of the samples starts with the method and the path template. */
const heading = `${method}\n${op.path}`;
/** The curl command up to its address (`curl -i -X PATCH`), past the comment a change's sample starts with. */
const curlCommand = /^curl [^"]*(?= ")/m.exec(sampleOf(CURL))?.[0] ?? 'curl';
const clientCall = `await client.${method}('${op.path}'`;
/** Redoc's anchor of an operation: its tag with spaces as dashes, then its operationId. */
const anchor = `tag/${op.operation.tags![0]!.replace(/\s+/g, '-')}/operation/${operationId}`;

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
  it(`renders the curl and the client sample of ${operationId}, with no Content-Security-Policy violation`, { retry: 1, timeout: 600_000 }, async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const console: string[] = [];
    page.on('console', (message) => console.push(message.text()));
    await page.route('**/*', (route) => (new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort()));
    await page.goto(`${app.url}/v1/docs#${anchor}`);

    // Redoc renders the operations around the one linked to, each in a section of its own holding its samples
    // panel headed, e.g., `PATCH /tasks/{id}`. Every step looks the section up again by that heading: Redoc adds
    // the operations around it while the page settles, so a place in the page's list of menus does not last
    // (in a full run a click by such a place once switched the panel of the operation above).
    const menus = page.locator('button[aria-haspopup="menu"]');
    const headingMenu = menus.filter({ hasText: new RegExp(`^${method}\\s*${op.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) });
    const section = page.locator('[data-section-id]').filter({ has: headingMenu }).last();
    const panels = section.locator('button[aria-haspopup="menu"]').locator('xpath=ancestor::*[.//pre or .//code][1]');
    const panelText = async () => (await panels.allInnerTexts()).find((text) => text.startsWith(heading)) ?? '';
    await headingMenu.first().waitFor({ timeout: 240_000 });
    await expect.poll(panelText, { timeout: 120_000 }).toContain(curlCommand);

    // The page is rendered on the server and then hydrated: a click before hydration does nothing, so switch until it took.
    const language = section.locator('button[aria-haspopup="menu"]', { hasText: new RegExp(`^${CURL}$`) }).first();
    const switchToClient = async () => {
      if (await language.isVisible()) {
        await language.click({ timeout: 5_000 });
        await page.getByRole('menuitem').filter({ hasText: CLIENT }).first().click({ timeout: 5_000 }).catch(() => page.keyboard.press('Escape'));
      }
      return panelText();
    };
    await expect
      .poll(switchToClient, { timeout: 240_000, interval: 1_000, message: `the client sample of ${method} ${op.path}` })
      .toContain(clientCall)
      .catch(async (error: unknown) => {
        // What the page showed instead, for the next time this fails in a full run only.
        const headings = (await panels.allInnerTexts().catch(() => [])).map((text) => JSON.stringify(text.slice(0, 60)));
        const buttons = await menus.allInnerTexts().catch(() => []);
        await page.close();
        throw new Error(`${String(error)}\npanels: ${headings.join(', ')}\nlanguage buttons: ${buttons.join(', ')}`);
      });
    expect(await panelText()).toContain('createTeamOsClient');
    expect((await panelText()).startsWith(`${heading}\n${CLIENT}\n`), 'the panel shows the client sample').toBe(true);

    const screenshot = process.env.DOCS_SCREENSHOT ?? join(folder, 'docs-samples.png');
    await page.screenshot({ path: screenshot });
    expect((await stat(screenshot)).size).toBeGreaterThan(10_000);
    expect(console.filter((message) => /Content Security Policy/i.test(message))).toEqual([]);
    await page.close();
  });
});
