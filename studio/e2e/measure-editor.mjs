// Not a journey: measures how long the Data tab's editor takes to open a
// document, and to answer a keystroke, at a few sizes, the figures behind
// EDITOR_MAX_BYTES (studio/web/src/main.jsx). Run against a server:
//
//   DECOY_URL=http://127.0.0.1:8080 DECOY_ADMIN_TOKEN=… node measure-editor.mjs
import { chromium } from 'playwright-core';

const base = process.env.DECOY_URL;
const adminToken = process.env.DECOY_ADMIN_TOKEN;
const MiB = 1024 * 1024;

// doc returns a JSON array of records of about n bytes, pretty-printed as
// people paste it.
function doc(n) {
  const recs = [];
  let size = 2;
  for (let i = 0; size < n; i++) {
    const r = { id: i, name: `Person ${i}`, email: `person${i}@example.com`, city: ['Paris', 'Lyon', 'Nice'][i % 3], age: 20 + (i % 50), tags: ['a', 'b'] };
    size += JSON.stringify(r, null, 2).length + 4;
    recs.push(r);
  }
  return JSON.stringify(recs, null, 2);
}

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
page.setDefaultTimeout(120000);
await page.goto(base + '/');
await page.getByLabel('Admin token').fill(adminToken);
await page.getByRole('button', { name: 'Sign in' }).click();
await page.getByRole('heading', { name: 'Mocks' }).waitFor();
for (const mib of (process.argv[2] || '1,2,5,10,20').split(',').map(Number)) {
  const body = doc(mib * MiB);
  const res = await fetch(`${base}/admin/v1/mocks?name=measure-${mib}`, { method: 'POST', headers: { Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json' }, body });
  const m = await res.json();
  await page.goto(`${base}/#/mocks/${m.id}/usage`);
  await page.getByRole('heading', { name: `measure-${mib}` }).waitFor();
  const t0 = Date.now();
  await page.getByRole('link', { name: 'Data', exact: true }).click();
  const anyway = page.getByRole('button', { name: 'Open in the editor anyway' });
  await Promise.race([anyway.waitFor().then(() => anyway.click()), page.locator('#data-editor .cm-content').waitFor()]);
  await page.locator('#data-editor .cm-content').waitFor();
  await page.getByTestId('validity').waitFor();
  const open = Date.now() - t0;
  // One keystroke at the end of the first line, until the page has painted it.
  await page.locator('#data-editor .cm-line').first().click();
  const key = await page.evaluate(() => new Promise((resolve) => {
    const t = performance.now();
    document.execCommand('insertText', false, ' ');
    requestAnimationFrame(() => setTimeout(() => resolve(performance.now() - t), 0));
  }));
  console.log(`${mib} MiB (${body.length} bytes): editor open ${open} ms, one keystroke ${Math.round(key)} ms`);
  await page.getByRole('button', { name: 'Revert' }).click();
  await page.getByTestId('unsaved').waitFor({ state: 'detached' });
}
await browser.close();
