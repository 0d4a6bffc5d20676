import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';
import type { FastifyInstance } from 'fastify';
import { buildApiApp } from '../../src/roles';
import { startHarness, type Harness, type HarnessOptions } from './harness';

/** Debian's Chromium, headless, with nothing that talks to the network on its own. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run'],
  });
}

export const TEMPORAL_UI_URL = 'http://temporal-ui.test:8233';

/**
 * The harness's world served over real HTTP, as `npm start` composes it: with the dev mailbox in
 * Settings and links to a Temporal UI.
 */
export async function listenDashboard(h: Harness): Promise<{ app: FastifyInstance; base: string }> {
  const app = await buildApiApp({
    config: h.config, orm: h.orm, starter: h.starter, storage: h.storage, clock: () => new Date(),
    devMailbox: h.mailbox, temporalUiUrl: TEMPORAL_UI_URL,
  });
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, base };
}

const SCREENSHOTS = path.resolve(__dirname, '../../docs/screenshots');

/** Saves the page as docs/screenshots/<name>.png (committed, shown in the README). */
export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** Signs in through the form, as a person would. */
export async function signInAs(page: Page, base: string, email: string, password: string): Promise<void> {
  await page.goto(`${base}/`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
}

/**
 * A fresh context and page at the dashboard tests' size, collecting every script error and every
 * console error other than an expected 403/404 answer, for the tests to assert there are none.
 */
export async function openDashboardPage(
  browser: Browser, options: BrowserContextOptions = {},
): Promise<{ context: BrowserContext; page: Page; pageErrors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, ...options });
  const page = await context.newPage();
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of 40[34]/.test(message.text())) pageErrors.push(message.text());
  });
  return { context, page, pageErrors };
}

/** A dashboard test page as `openDashboardPage` gives it. */
export type DashboardPage = Awaited<ReturnType<typeof openDashboardPage>>;

/**
 * The hooks every dashboard browser test file needs: before its tests, a harness, the dashboard
 * listening on it and one Chromium (`started` hears of them, before the file's own `beforeAll`
 * seeds); before each test a fresh context and page (`opened` hears of them), closed after it;
 * after the last test, the browser, the app and the harness closed.
 */
export function useDashboardBrowser(hooks: {
  harness?: HarnessOptions;
  context?: BrowserContextOptions;
  started: (world: { h: Harness; base: string; browser: Browser }) => void;
  opened: (page: DashboardPage) => void;
}): void {
  let h: Harness | undefined;
  let app: FastifyInstance | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;
  beforeAll(async () => {
    h = await startHarness(hooks.harness);
    const listening = await listenDashboard(h);
    app = listening.app;
    browser = await launchBrowser();
    hooks.started({ h, base: listening.base, browser });
  });
  beforeEach(async () => {
    const opened = await openDashboardPage(browser!, hooks.context);
    context = opened.context;
    hooks.opened(opened);
  });
  afterEach(async () => {
    await context?.close();
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await h?.close();
  });
}
