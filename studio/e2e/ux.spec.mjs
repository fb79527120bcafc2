// Work is never lost by accident, and large data is handled before it
// freezes the page: the unsaved-edit guard, the confirmations, the
// one-time secret dialog, the size check before an upload and the upload's
// progress, large documents opened read-only, and the playground kept
// across tabs with its recent and saved queries. See harness.mjs for what
// runs it.
import assert from 'node:assert/strict';
import { adminToken, base, journey, newPage, screenshot, setEditor, signInAsAdmin, step } from './harness.mjs';

const MiB = 1024 * 1024;
// The limit the server is made to announce (GET /me's limits, answered by
// the test), so that the size check is tried without a 64 MiB file.
const FAKE_LIMIT = 1 * MiB;

// api calls the admin API as a script would, with the admin token.
async function api(method, path, body, contentType = 'application/json') {
  const res = await fetch(base + '/admin/v1' + path, {
    method, body, headers: { Authorization: `Bearer ${adminToken}`, 'Content-Type': contentType },
  });
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${await res.clone().text()}`);
  return res.status === 204 ? null : res.json();
}

// records returns a pretty-printed JSON array of about n bytes.
function records(n) {
  const recs = [];
  let size = 2;
  for (let i = 0; size < n; i++) {
    const r = { id: i, name: `Person ${i}`, city: ['Paris', 'Lyon', 'Nice'][i % 3] };
    size += JSON.stringify(r, null, 2).length + 4;
    recs.push(r);
  }
  return JSON.stringify(recs, null, 2);
}

await journey(async (browser) => {
  const { context, page } = await newPage(browser, 'desktop');
  // The server is made to announce a limit of 1 MiB.
  await context.route('**/admin/v1/me', async (route) => {
    const res = await route.fetch();
    const me = await res.json();
    await route.fulfill({ response: res, json: { ...me, limits: { max_data_bytes: FAKE_LIMIT } } });
  });
  // Every upload the page starts, to tell that a refused file never left.
  const uploads = [];
  page.on('request', (r) => {
    if (['POST', 'PUT'].includes(r.method()) && r.url().includes('/admin/v1/')) uploads.push(`${r.method()} ${new URL(r.url()).pathname}`);
  });

  const people = await api('POST', '/mocks?name=ux-people', JSON.stringify([
    { id: 1, name: 'Ada', city: 'Paris' }, { id: 2, name: 'Linus', city: 'Helsinki' }, { id: 3, name: 'Grace', city: 'Paris' },
  ]));
  const editorText = () => page.locator('#data-editor .cm-content').innerText();

  await step('sign in', async () => {
    await signInAsAdmin(page);
    await page.getByRole('heading', { name: 'Mocks' }).waitFor();
  });

  await step('unsaved data: leaving asks, Stay keeps the edits, Discard leaves', async () => {
    await page.goto(`${base}/#/mocks/${people.id}/data`);
    await page.locator('#data-editor .cm-content').waitFor();
    // The sidebar lists the mocks of the project, this one marked.
    assert.equal(await page.getByRole('complementary').getByRole('link', { name: 'ux-people' }).getAttribute('aria-current'), 'page');
    await setEditor(page, '#data-editor', '[{"id": 1, "name": "Edited"}]');
    await page.getByTestId('unsaved').waitFor();
    await page.getByRole('link', { name: 'Settings' }).click();
    const ask = page.getByRole('dialog', { name: 'Leave without saving?' });
    await ask.waitFor();
    await screenshot(page, 'leave-without-saving');
    await ask.getByRole('button', { name: 'Stay' }).click();
    await ask.waitFor({ state: 'detached' });
    assert.match(page.url(), /\/data$/);
    assert.match(await editorText(), /Edited/);
    // The browser asks too, on a reload or a closed tab.
    assert.equal(await page.evaluate(() => {
      const e = new Event('beforeunload', { cancelable: true });
      dispatchEvent(e);
      return e.defaultPrevented;
    }), true);
    await page.getByRole('link', { name: 'Settings' }).click();
    await ask.getByRole('button', { name: 'Discard changes' }).click();
    await page.getByRole('button', { name: 'Save settings' }).waitFor();
    assert.match(page.url(), /\/settings$/);
    await page.getByRole('link', { name: 'Data' }).click();
    await page.locator('#data-editor .cm-content').waitFor();
    assert.match(await editorText(), /Ada/);
    // Nothing unsaved: the browser lets the page go.
    assert.equal(await page.evaluate(() => {
      const e = new Event('beforeunload', { cancelable: true });
      dispatchEvent(e);
      return e.defaultPrevented;
    }), false);
  });

  await step('signing out with unsaved edits asks too', async () => {
    await setEditor(page, '#data-editor', '[{"id": 1, "name": "Edited again"}]');
    await page.getByRole('button', { name: 'Sign out' }).click();
    const ask = page.getByRole('dialog', { name: 'Sign out without saving?' });
    await ask.getByRole('button', { name: 'Stay' }).click();
    await ask.waitFor({ state: 'detached' });
    assert.match(await editorText(), /Edited again/);
    await page.getByRole('button', { name: 'Revert' }).click();
    await page.getByTestId('unsaved').waitFor({ state: 'detached' });
  });

  await step('unsaved settings ask too; the placeholders say the server defaults', async () => {
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByLabel('Rate limit per minute').waitFor();
    await page.waitForFunction(() => document.getElementById('s-rate').placeholder !== 'server default');
    assert.equal(await page.getByLabel('Rate limit per minute').getAttribute('placeholder'), 'server default: 100 a minute');
    assert.match(await page.getByLabel('Monthly quota').getAttribute('placeholder'), /^server default: 50[,.\s\u202f]?000 a month$/);
    await page.getByLabel('Name').fill('ux-people renamed');
    await page.getByRole('link', { name: 'Usage' }).click();
    const ask = page.getByRole('dialog', { name: 'Leave without saving?' });
    await ask.getByRole('button', { name: 'Stay' }).click();
    assert.equal(await page.getByLabel('Name').inputValue(), 'ux-people renamed');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.getByRole('heading', { name: 'Monthly quota' }).waitFor();
  });

  await step('an edited template on the Generate page asks too', async () => {
    await page.goto(`${base}/#/generate`);
    await page.locator('#template-editor .cm-content').waitFor();
    await setEditor(page, '#template-editor', '{"$repeat": 2, "$item": {"id": "{{ index }}"}}');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Mocks' }).click();
    const ask = page.getByRole('dialog', { name: 'Leave without saving?' });
    await ask.getByRole('button', { name: 'Discard changes' }).click();
    await page.getByRole('heading', { name: 'Mocks' }).waitFor();
    await page.goto(`${base}/#/mocks/${people.id}/usage`);
    await page.getByRole('heading', { name: 'Monthly quota' }).waitFor();
  });

  await step('deleting and rotating ask first, naming the consequence', async () => {
    await page.getByRole('button', { name: 'Delete' }).click();
    const del = page.getByRole('dialog', { name: 'Delete this mock?' });
    assert.match(await del.innerText(), /answers 404/);
    await del.getByRole('button', { name: 'Cancel' }).click();
    await del.waitFor({ state: 'detached' });
    const secret = await api('POST', '/mocks?name=ux-secret&private=true', '[]');
    await page.goto(`${base}/#/mocks/${secret.id}/settings`);
    await page.getByRole('button', { name: 'Rotate token' }).click();
    const rotate = page.getByRole('dialog', { name: 'Rotate the token?' });
    assert.match(await rotate.innerText(), /Apps using the current token .* will get 401 at once/);
    await rotate.getByRole('button', { name: 'Cancel' }).click();
    await rotate.waitFor({ state: 'detached' });
    // Cancelled: the old token still works.
    const res = await fetch(secret.url.replace(/^https?:\/\/[^/]+/, base), { headers: { decoyauthtoken: secret.token } });
    assert.equal(res.status, 200);
  });

  await step('a one-time token closes on Escape only once copied or confirmed', async () => {
    await page.getByRole('button', { name: 'Rotate token' }).click();
    await page.getByRole('dialog', { name: 'Rotate the token?' }).getByRole('button', { name: 'Rotate token' }).click();
    const dialog = page.getByRole('dialog', { name: 'Store this token now' });
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await dialog.getByTestId('not-stored').waitFor();
    assert.ok(await dialog.isVisible(), 'Escape closed the one-time dialog');
    await screenshot(page, 'one-time-escape');
    await dialog.getByRole('button', { name: 'I have stored it' }).click();
    await dialog.waitFor({ state: 'detached' });
  });

  await step('the playground keeps its query and answer across tabs, with recent and saved queries', async () => {
    // Coming from another mock's page, the first frame is this mock's, never
    // the last one's (whose form took the typing): effects held back as on a
    // busy machine (frames stopped, so Preact's fall back on its 100 ms timer).
    await page.evaluate(() => { window.keptRAF = window.requestAnimationFrame; window.requestAnimationFrame = () => 0; });
    await page.goto(`${base}/#/mocks/${people.id}/playground`);
    assert.equal(await page.getByTestId('mock-name').innerText(), 'ux-people renamed');
    await page.evaluate(() => { window.requestAnimationFrame = window.keptRAF; });
    await page.getByLabel('Path 1').fill('city');
    await page.getByLabel('Value 1').fill('Paris');
    await page.getByRole('button', { name: 'Send request' }).click();
    await page.getByTestId('response-status').filter({ hasText: '200' }).waitFor();
    assert.equal(JSON.parse(await page.getByTestId('response-body').innerText()).length, 2);
    // Request and response side by side at 1280 px.
    const left = await page.locator('.pg-input').boundingBox();
    const right = await page.locator('.pg-output').boundingBox();
    assert.ok(right.x >= left.x + left.width - 1, `request and response are not side by side: ${JSON.stringify({ left, right })}`);
    await page.getByRole('link', { name: 'Data' }).click();
    await page.locator('#data-editor .cm-content').waitFor();
    await page.getByRole('link', { name: 'Playground' }).click();
    assert.equal(await page.getByLabel('Path 1').inputValue(), 'city');
    assert.equal(await page.getByLabel('Value 1').inputValue(), 'Paris');
    assert.equal(JSON.parse(await page.getByTestId('response-body').innerText()).length, 2);
    await page.getByTestId('recent-queries').getByRole('button', { name: '?filters=city%3DParis' }).waitFor();
    await page.getByLabel('Save this query as').fill('in Paris');
    await page.getByRole('button', { name: 'Save query' }).click();
    await page.getByTestId('saved-queries').getByRole('button', { name: 'in Paris', exact: true }).waitFor();
    await screenshot(page, 'playground-kept');
    // Saved queries and history outlive the page; a click restores them.
    await page.reload();
    await page.getByTestId('saved-queries').getByRole('button', { name: 'in Paris', exact: true }).click();
    assert.equal(await page.getByLabel('Value 1').inputValue(), 'Paris');
  });

  await step('the playground history of a private mock keeps no token', async () => {
    const secret = await api('POST', '/mocks?name=ux-private&private=true', '[{"id":1}]');
    await page.goto(`${base}/#/mocks/${secret.id}/playground`);
    await page.getByLabel('Mock token').fill(secret.token);
    await page.getByLabel('Limit').fill('1');
    await page.getByRole('button', { name: 'Send request' }).click();
    await page.getByTestId('response-status').filter({ hasText: '200' }).waitFor();
    await page.getByTestId('recent-queries').waitFor();
    const storage = await page.evaluate(() => JSON.stringify(localStorage));
    assert.ok(storage.includes('limit=1'), storage);
    assert.ok(!storage.includes(secret.token) && !storage.includes('dcy_'), `storage holds a token: ${storage}`);
  });

  await step('a file over the server limit is refused before a byte is sent', async () => {
    await page.goto(`${base}/#/new`);
    await page.getByRole('heading', { name: 'New mock' }).waitFor();
    const before = uploads.length;
    await page.getByLabel('Or load a file').setInputFiles({ name: 'big.json', mimeType: 'application/json', buffer: Buffer.from(records(FAKE_LIMIT + 200 * 1024)) });
    const alert = page.getByRole('alert').filter({ hasText: "larger than this server's limit" });
    await alert.waitFor();
    assert.match(await alert.innerText(), /big\.json is 1[.,]\d MiB: larger than this server's limit of 1[.,]0 MiB \(--max-data-bytes\)\. Nothing was uploaded\./);
    await screenshot(page, 'refused-before-upload');
    // The same on the import page, and for a data replace.
    await page.goto(`${base}/#/transfer`);
    await page.getByLabel('Choose a file').setInputFiles({ name: 'openapi.json', mimeType: 'application/json', buffer: Buffer.from(records(FAKE_LIMIT + 1024)) });
    await page.getByRole('alert').filter({ hasText: 'Nothing was uploaded' }).waitFor();
    // A db.json streams, each of its values bounded on its own: over the
    // limit whole, it is sent and previewed, an "openapi" member of a
    // record notwithstanding.
    const db = `{"specs": [{"id": 1, "openapi": "3.0.3"}], "people": ${records(FAKE_LIMIT / 2)}, "more": ${records(FAKE_LIMIT / 2 + 1024)}}`;
    await page.getByLabel('Choose a file').setInputFiles({ name: 'db.json', mimeType: 'application/json', buffer: Buffer.from(db) });
    await page.getByLabel('Preview').getByRole('heading', { name: 'db.json: 3 mocks to create, 18 routes to add' }).waitFor();
    assert.equal(await page.getByRole('alert').count(), 0);
    assert.deepEqual(uploads.slice(before), ['POST /admin/v1/projects/a46aab13-8714-5241-b061-dbe8a7f1fe99/import'], 'the db.json was not sent once');
    uploads.splice(before);
    await page.goto(`${base}/#/mocks/${people.id}/data`);
    await page.getByLabel('Replace with a file').setInputFiles({ name: 'data.json', mimeType: 'application/json', buffer: Buffer.from(records(FAKE_LIMIT + 1024)) });
    await page.getByRole('alert').filter({ hasText: 'Nothing was uploaded' }).waitFor();
    assert.deepEqual(uploads.slice(before), [], 'a refused file was sent');
  });

  await step('an upload shows its progress: bytes, total and rate', async () => {
    await page.goto(`${base}/#/new`);
    await page.getByLabel('Name').fill('ux-uploaded');
    await page.getByLabel('Or load a file').setInputFiles({ name: 'ok.json', mimeType: 'application/json', buffer: Buffer.from(records(700 * 1024)) });
    await page.getByTestId('validity').filter({ hasText: 'Valid JSON' }).waitFor();
    // A slow link (DevTools' network throttling): the bar moves as the
    // bytes leave.
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 20, downloadThroughput: -1, uploadThroughput: 256 * 1024 });
    await page.getByRole('button', { name: 'Create mock' }).click();
    const progress = page.getByTestId('upload-progress');
    await progress.waitFor();
    await page.waitForFunction(() => / KiB of \d+[.,]\d KiB · \d+[.,]\d KiB\/s/.test(document.querySelector('[data-testid="upload-progress"]').innerText));
    await screenshot(page, 'upload-progress');
    await page.getByTestId('mock-name').filter({ hasText: 'ux-uploaded' }).waitFor({ timeout: 30000 });
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    await cdp.detach();
  });

  await step('a document too large to edit opens read-only, with a download', async () => {
    const big = await api('POST', '/mocks?name=ux-big', records(5.5 * MiB));
    await page.goto(`${base}/#/mocks/${big.id}/data`);
    const card = page.getByTestId('large-doc');
    await card.waitFor();
    assert.equal(await page.locator('#data-editor').count(), 0);
    // Its live state is read from the headers alone.
    await page.getByTestId('live-note').filter({ hasText: 'Live data: version 1, unchanged.' }).waitFor();
    await screenshot(page, 'large-doc');
    const [download] = await Promise.all([page.waitForEvent('download'), card.getByRole('button', { name: 'Download' }).click()]);
    assert.equal(download.suggestedFilename(), 'ux-big.json');
  });

  await step('at 375 px the sidebar folds into a menu', async () => {
    await page.setViewportSize({ width: 375, height: 812 });
    await page.goto(`${base}/#/mocks/${people.id}/data`);
    await page.locator('#data-editor .cm-content').waitFor();
    assert.equal(await page.getByLabel('Workspace', { exact: true }).isVisible(), false);
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByLabel('Workspace', { exact: true }).waitFor();
    await screenshot(page, 'phone-menu');
    const w = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(w <= 375, `the menu is ${w} px wide at 375 px`);
  });

  await context.close();
});
