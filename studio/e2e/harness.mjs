// What every browser journey of Decoy Studio shares: the server it runs
// against, the browser, screenshots, steps, and the account of console and
// page errors. Each *.spec.mjs in this folder is one journey, run by
// TestBrowser (studio/e2e_test.go) against its own fresh `decoy serve`,
// which sets:
//
//   DECOY_URL          the server's base URL
//   DECOY_ADMIN_TOKEN  its admin token
//   DECOY_ARTIFACTS    the folder for this journey's screenshots
//   CHROMIUM           the browser (default /usr/bin/chromium)
//
// A journey is:
//
//   import { journey, step, screenshot } from './harness.mjs';
//   await journey(async (browser) => { ... });
//
// and fails on a thrown error, on any console or page error its steps
// did not declare with expectFailedRequest, or on any serious or critical
// accessibility violation that checkA11y finds.
import { chromium } from 'playwright-core';
import { readFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

export const base = process.env.DECOY_URL;
export const adminToken = process.env.DECOY_ADMIN_TOKEN;
export const artifacts = process.env.DECOY_ARTIFACTS || path.join(import.meta.dirname, 'artifacts');
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
if (!base || !adminToken) {
  console.error('DECOY_URL and DECOY_ADMIN_TOKEN must be set');
  process.exit(2);
}

const started = Date.now();
let shot = 0;
export const log = (...a) => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s]`, ...a);

// Console errors and page errors. Steps that make the server refuse a
// request on purpose (a wrong token) declare it with expectFailedRequest;
// Chromium reports such an answer as a console error, which is then
// accounted for instead of failing the journey.
const problems = [];
const expected = [];
// status is the answer's status, or 'network' for a request that got no
// answer (a connection reset or closed: a rule's fault).
export function expectFailedRequest(urlPart, status) {
  expected.push({ urlPart, status, seen: false });
}

// watch records the page's errors under label.
export function watch(page, label) {
  page.on('pageerror', (e) => problems.push(`${label}: page error: ${e.message}`));
  page.on('console', (msg) => {
    if (msg.type() !== 'error' && msg.type() !== 'warning') return;
    const text = msg.text();
    const url = msg.location().url || '';
    const m = /status of (\d+)/.exec(text);
    const code = m ? Number(m[1]) : /net::ERR_/.test(text) ? 'network' : null;
    const hit = code !== null && expected.find((e) => !e.seen && url.includes(e.urlPart) && code === e.status);
    if (hit) {
      hit.seen = true;
      return;
    }
    if (msg.type() === 'error') problems.push(`${label}: console error: ${text} (${url})`);
    else log(`${label}: console warning: ${text}`);
  });
}

// screenshot saves the whole page as NN-name.png, numbered in the order
// of the journey, or as name.png with { numbered: false }.
export async function screenshot(page, name, { numbered = true } = {}) {
  shot++;
  const file = path.join(artifacts, numbered ? `${String(shot).padStart(2, '0')}-${name}.png` : `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  log('screenshot', path.basename(file));
}

export async function step(name, f) {
  log('step:', name);
  await f();
}

// axe-core, read from this folder's node_modules and evaluated in the page
// through the DevTools protocol, which the Studio's Content-Security-Policy
// does not govern (a <script> tag would be refused).
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const failingImpacts = ['serious', 'critical'];

// checkA11y runs axe-core on the page as it is now, open shadow roots (the
// editors) included, and counts every serious or critical violation as a
// problem of the journey under label; lesser ones are logged.
export async function checkA11y(page, label) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) {
    await page.evaluate(axeSource);
  }
  const violations = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({
      id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.map((n) => `${JSON.stringify(n.target)}: ${(n.failureSummary || "").replace(/\s+/g, ' ')}`),
    }));
  });
  for (const v of violations) {
    const text = `${label}: axe ${v.impact} ${v.id} (${v.help}) on ${v.nodes.length} element(s):\n    ${v.nodes.slice(0, 5).join('\n    ')}`;
    if (failingImpacts.includes(v.impact)) problems.push(text);
    else log(text);
  }
  return violations;
}

// newPage opens a page in a fresh context of the given width, its errors
// watched under label.
export async function newPage(browser, label, width = 1280, height = 900) {
  const context = await browser.newContext({ viewport: { width, height }, permissions: ['clipboard-read', 'clipboard-write'] });
  context.setDefaultTimeout(10000);
  const page = await context.newPage();
  watch(page, label);
  return { context, page };
}

// setEditor replaces the whole text of the CodeMirror editor in selector,
// as a paste would.
export async function setEditor(page, selector, text) {
  await page.locator(`${selector} .cm-content`).click();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
}

// signInAsAdmin signs page in with the admin token.
export async function signInAsAdmin(page) {
  await page.goto(base + '/');
  await page.getByLabel('Admin token').fill(adminToken);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

// journey launches the browser, runs f with it, and reports the result in
// the line TestBrowser looks for; it exits 1 on failure.
export async function journey(f) {
  await rm(artifacts, { recursive: true, force: true });
  await mkdir(artifacts, { recursive: true });
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    // Playwright gives the browser a fresh profile of its own. Without the
    // background-networking flags Chromium dials out, and a closed network
    // refuses it.
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
  try {
    await f(browser);
  } catch (e) {
    problems.push(`failed: ${e.stack || e}`);
  } finally {
    await browser.close();
  }
  const unseen = expected.filter((e) => !e.seen);
  if (unseen.length) log('expected failures not reported by the browser:', unseen.map((e) => `${e.status} ${e.urlPart}`).join(', '));
  const took = ((Date.now() - started) / 1000).toFixed(1);
  if (problems.length) {
    console.error(problems.join('\n'));
    console.log(`0 passed, 1 failed (${took}s; screenshots in ${artifacts})`);
    process.exit(1);
  }
  console.log(`1 passed, 0 failed (${took}s; ${shot} screenshots in ${artifacts})`);
}
