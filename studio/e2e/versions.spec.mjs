// The Versions tab of a mock: the list of versions, the side-by-side diff
// of two, and a restore that asks first, then serves the old data again.
// See harness.mjs for what runs it.
import assert from 'node:assert/strict';
import { adminToken, base, journey, newPage, screenshot, signInAsAdmin, step } from './harness.mjs';

// call calls the admin API with the admin token, as a script would.
async function call(method, path, body) {
  const res = await fetch(base + '/admin/v1' + path, {
    method,
    headers: { Authorization: 'Bearer ' + adminToken, 'Content-Type': 'application/json' },
    body,
  });
  const text = await res.text();
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

const v1 = JSON.stringify([
  { id: 1, name: 'Ada', city: 'Paris' },
  { id: 2, name: 'Linus', city: 'Helsinki' },
]);
const v2 = JSON.stringify([
  { id: 1, name: 'Ada', city: 'London' },
  { id: 2, name: 'Linus', city: 'Helsinki' },
  { id: 3, name: 'Grace', city: 'Arlington' },
]);
const v3 = JSON.stringify([{ id: 3, name: 'Grace', city: 'Arlington' }]);

await journey(async (browser) => {
  const { page } = await newPage(browser, 'desktop');
  const m = await call('POST', '/mocks?name=team', v1);
  await call('PUT', `/mocks/${m.id}/data`, v2);
  await call('PUT', `/mocks/${m.id}/data`, v3);
  const summary = page.getByTestId('diff-summary');

  await step('the Versions tab lists every version, newest first', async () => {
    await signInAsAdmin(page);
    await page.getByRole('heading', { name: 'Mocks' }).waitFor();
    await page.goto(`${base}/#/mocks/${m.id}/versions`);
    await page.getByRole('link', { name: 'Versions' }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'Versions' }).getAttribute('aria-current'), 'page');
    await page.getByTestId('version-3').waitFor();
    const rows = await page.locator('table.versions-list tbody tr').evaluateAll((trs) => trs.map((tr) => tr.dataset.testid));
    assert.deepEqual(rows, ['version-3', 'version-2', 'version-1']);
    assert.match(await page.getByTestId('version-3').innerText(), /current/);
    assert.match(await page.getByTestId('version-3').innerText(), /admin token/);
    // The current version has nothing to restore.
    assert.equal(await page.getByTestId('version-3').getByRole('button', { name: /Restore/ }).count(), 0);
  });

  await step('the diff compares the current data with the one before, side by side', async () => {
    await summary.filter({ hasText: 'only in version 2' }).waitFor();
    assert.equal(await page.getByLabel('Compare').inputValue(), '2');
    assert.equal(await page.getByLabel('with').inputValue(), '3');
    const diff = page.getByTestId('diff');
    // Indented before comparing: each field is a line of its own.
    await diff.locator('td.del', { hasText: '"city": "London"' }).waitFor();
    await diff.locator('tr.same', { hasText: '"name": "Grace"' }).waitFor();
    await screenshot(page, 'versions-diff-2-3');
  });

  await step('two other versions are chosen to compare', async () => {
    await page.getByLabel('Compare').selectOption('1');
    await page.getByLabel('with').selectOption('2');
    await summary.filter({ hasText: 'only in version 1' }).waitFor();
    const diff = page.getByTestId('diff');
    await diff.locator('td.del', { hasText: '"city": "Paris"' }).waitFor();
    await diff.locator('td.ins', { hasText: '"city": "London"' }).waitFor();
    await diff.locator('td.ins', { hasText: '"name": "Grace"' }).waitFor();
    // Kept lines stay on both sides.
    await diff.locator('tr.same', { hasText: '"name": "Linus"' }).first().waitFor();
    await screenshot(page, 'versions-diff-1-2');
  });

  await step('Restore asks first; Cancel changes nothing', async () => {
    await page.getByRole('button', { name: 'Restore version 1' }).click();
    const dialog = page.getByRole('dialog', { name: 'Restore version 1?' });
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /becomes the mock's data again, as a new version/);
    await screenshot(page, 'versions-restore-confirm');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.equal((await call('GET', `/mocks/${m.id}/versions`)).versions.length, 3);
  });

  await step('Restore makes version 1 the data again, as version 4', async () => {
    await page.getByRole('button', { name: 'Restore version 1' }).click();
    const dialog = page.getByRole('dialog', { name: 'Restore version 1?' });
    await dialog.getByRole('button', { name: 'Restore' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByRole('status').filter({ hasText: 'Version 1 restored' }).waitFor();
    await page.getByTestId('version-4').filter({ hasText: 'current' }).waitFor();
    // Served at once, byte for byte.
    const res = await fetch(`${base}/mock/${m.id}`);
    assert.equal(await res.text(), v1);
    // The diff now sets the restored version beside the new one.
    await summary.filter({ hasText: 'No differences.' }).waitFor();
    assert.equal(await page.getByLabel('Compare').inputValue(), '1');
    assert.equal(await page.getByLabel('with').inputValue(), '4');
    await screenshot(page, 'versions-restored');
  });

  await step('the Data tab shows the restored data', async () => {
    await page.getByRole('link', { name: 'Data' }).click();
    await page.locator('#data-editor .cm-content').filter({ hasText: 'Paris' }).waitFor();
  });

  await step('the tab reads on a phone', async () => {
    const { page: phone } = await newPage(browser, 'phone', 375, 740);
    await signInAsAdmin(phone);
    await phone.getByRole('heading', { name: 'Mocks' }).waitFor();
    await phone.goto(`${base}/#/mocks/${m.id}/versions`);
    await phone.getByTestId('version-4').waitFor();
    await phone.getByTestId('diff-summary').waitFor();
    const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`);
    await screenshot(phone, 'versions-phone');
  });
});
