// Live data in Decoy Studio (§12.2): a record POSTed through a project's
// route shows in the mock's Data tab, which says the live data changed
// since the current version; Reset (asked first, cancelled once) brings the
// version back; a second record, found by Refresh, is kept by Save as
// version, which the Versions tab then lists as the current version; Save
// data over edits made before a write asks first; a
// viewer sees the live data and its state but neither button, and finds a
// new record when the browser tab is shown again; the tab
// passes axe in the light and the dark scheme and fits 375 px. See
// harness.mjs for what runs it.
import assert from 'node:assert/strict';
import { adminToken, base, checkA11y, journey, newPage, screenshot, setEditor, signInAsAdmin, step } from './harness.mjs';

const viewer = { email: 'vera@example.com', name: 'Vera Viewer', password: 'vera-password-012345' };
const v1 = JSON.stringify([{ id: 1, name: 'Ada' }]);

// call is a plain HTTP request to the admin API with the admin token:
// {status, headers, body}, the body parsed when it is JSON.
async function call(method, path, body, contentType = 'application/json') {
  const headers = { Authorization: `Bearer ${adminToken}` };
  if (body !== undefined) headers['Content-Type'] = contentType;
  const res = await fetch(`${base}/admin/v1${path}`, { method, headers, body: typeof body === 'string' || body === undefined ? body : JSON.stringify(body) });
  const text = await res.text();
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`);
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

// editorText is the text the Data tab's editor shows.
const editorText = (page) => page.locator('#data-editor .cm-content').innerText();

// editorHas waits until the Data tab's editor (in a shadow root, which
// locators pierce) does, or with present false does not, show text.
async function editorHas(page, text, present = true) {
  await page.locator('#data-editor .cm-content').filter(present ? { hasText: text } : { hasNotText: text }).waitFor();
}

// inSchemes runs axe on page in the light and the dark scheme, and saves
// each look as name-scheme.png.
async function inSchemes(page, name) {
  for (const colorScheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme });
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    await checkA11y(page, `${name}-${colorScheme}`);
    await screenshot(page, `${name}-${colorScheme}`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

await journey(async (browser) => {
  let mock, project, things;
  await step('a project with a mock of things, GET /things and POST /things, and a viewer, as a script would make them', async () => {
    const ws = (await call('GET', '/workspaces')).body.workspaces.find((w) => w.name === 'default');
    project = (await call('POST', `/workspaces/${ws.id}/projects`, { name: 'live things' })).body;
    assert.equal(project.slug, 'live-things');
    mock = (await call('POST', `/mocks?name=things&project_id=${project.id}`, v1)).body;
    await call('POST', `/projects/${project.id}/routes`, { method: 'GET', path: '/things', mock_id: mock.id });
    const post = (await call('POST', `/projects/${project.id}/routes`, { method: 'POST', path: '/things', mock_id: mock.id })).body;
    assert.equal(post.action, 'create');
    things = `${base}/p/${project.slug}/things`;
    await call('POST', '/users', viewer);
    await call('POST', `/workspaces/${ws.id}/members`, { email: viewer.email, role: 'viewer' });
  });

  // write POSTs a record through the route, as the app the project stands
  // in for would, and returns the stored record.
  const write = async (record) => {
    const res = await fetch(things, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(record) });
    const text = await res.text();
    assert.equal(res.status, 201, `POST ${things}: ${res.status} ${text}`);
    return JSON.parse(text);
  };

  const { context, page } = await newPage(browser, 'editor');
  const note = page.getByTestId('live-note');
  const dataTab = page.getByRole('navigation', { name: 'Mock sections' }).getByRole('link', { name: 'Data' });

  await step('the Data tab of a mock no write has touched: version 1, nothing to reset or save', async () => {
    await signInAsAdmin(page);
    await page.getByRole('heading', { name: 'Mocks' }).waitFor();
    await page.goto(`${base}/#/mocks/${mock.id}`);
    await note.filter({ hasText: 'Live data: version 1, unchanged.' }).waitFor();
    await editorHas(page, 'Ada');
    assert.equal(await page.getByRole('button', { name: 'Reset', exact: true }).isDisabled(), true);
    assert.equal(await page.getByRole('button', { name: 'Save as version' }).isDisabled(), true);
    await screenshot(page, 'live-version');
  });

  await step('a record POSTed through the route shows when the tab is opened again, with the changed notice', async () => {
    const grace = await write({ name: 'Grace' });
    assert.equal(grace.name, 'Grace');
    assert.equal(grace.id, 2);
    // Another tab and back: the Data tab reads afresh.
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByLabel('Name', { exact: true }).waitFor();
    await dataTab.click();
    await note.filter({ hasText: 'Live data: changed by writes through routes since version 1.' }).waitFor();
    await editorHas(page, 'Grace');
    assert.match(await editorText(page), /"name":\s*"Ada"/);
    assert.equal(await page.getByRole('button', { name: 'Reset', exact: true }).isEnabled(), true);
    await inSchemes(page, 'live-changed');
  });

  await step('Reset asks first; Cancel changes nothing', async () => {
    await page.getByRole('button', { name: 'Reset', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Reset the live data?' });
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /goes back to version 1/);
    await checkA11y(page, 'reset-dialog');
    await screenshot(page, 'live-reset-confirm');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    const d = await call('GET', `/mocks/${mock.id}/data`);
    assert.equal(d.headers.get('Decoy-Live'), 'changed');
    assert.equal(d.body.length, 2);
  });

  await step('Reset, confirmed, brings version 1 back: the record is gone, the notice says it is the version', async () => {
    await page.getByRole('button', { name: 'Reset', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Reset the live data?' });
    await dialog.getByRole('button', { name: 'Reset', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByTestId('data-note').filter({ hasText: 'Reset: the live data is version 1 again.' }).waitFor();
    await note.filter({ hasText: 'Live data: version 1, unchanged.' }).waitFor();
    await editorHas(page, 'Grace', false);
    await editorHas(page, 'Ada');
    // Every read sees it: the route answers the version's one record.
    assert.deepEqual(await (await fetch(things)).json(), JSON.parse(v1));
    assert.equal((await call('GET', `/mocks/${mock.id}/versions`)).body.versions.length, 1);
    await screenshot(page, 'live-reset');
  });

  await step('Refresh finds a new record; Save as version, confirmed, keeps it as version 2', async () => {
    const linus = await write({ name: 'Linus' });
    assert.equal(linus.id, 2);
    await page.getByRole('button', { name: 'Refresh' }).click();
    await note.filter({ hasText: 'changed by writes through routes since version 1' }).waitFor();
    await editorHas(page, 'Linus');
    await page.getByRole('button', { name: 'Save as version' }).click();
    const dialog = page.getByRole('dialog', { name: 'Save the live data as a version?' });
    await dialog.waitFor();
    await checkA11y(page, 'save-dialog');
    await screenshot(page, 'live-save-confirm');
    await dialog.getByRole('button', { name: 'Save as version' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByTestId('data-note').filter({ hasText: 'Saved as version 2, now the current one' }).waitFor();
    await note.filter({ hasText: 'Live data: version 2, unchanged.' }).waitFor();
    await editorHas(page, 'Linus');
    const d = await call('GET', `/mocks/${mock.id}/data`);
    assert.equal(d.headers.get('Decoy-Live'), 'version');
    assert.deepEqual(d.body.map((r) => r.name), ['Ada', 'Linus']);
    await screenshot(page, 'live-saved');
  });

  await step('the Versions tab lists version 2 as the current one', async () => {
    await page.getByTestId('data-note').getByRole('link', { name: 'Versions' }).click();
    await page.getByTestId('version-2').filter({ hasText: 'current' }).waitFor();
    await page.getByTestId('version-1').waitFor();
    assert.equal(await page.locator('table.versions-list tbody tr').count(), 2);
    await page.getByTestId('diff-summary').filter({ hasText: 'only in version 2' }).waitFor();
    await screenshot(page, 'live-versions');
  });

  await step('Save data over a write made since the tab read the data asks first: Cancel keeps the edits, Save my edits replaces it', async () => {
    await dataTab.click();
    await note.filter({ hasText: 'Live data: version 2, unchanged.' }).waitFor();
    await editorHas(page, 'Linus');
    await setEditor(page, '#data-editor', '[{"id":1,"name":"Ada Lovelace"}]');
    await page.getByTestId('unsaved').waitFor();
    // Unsaved edits hold the live actions back.
    assert.equal(await page.getByRole('button', { name: 'Refresh' }).isDisabled(), true);
    await write({ name: 'Katherine' });
    const save = page.getByRole('button', { name: 'Save data' });
    const dialog = page.getByRole('dialog', { name: 'Replace the changed live data?' });
    await save.click();
    await dialog.waitFor();
    await checkA11y(page, 'overwrite-dialog');
    await screenshot(page, 'live-overwrite-confirm');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByTestId('unsaved').waitFor();
    await editorHas(page, 'Ada Lovelace');
    // The check found the write: the notice says so.
    await note.filter({ hasText: 'changed by writes through routes since version 2' }).waitFor();
    assert.deepEqual((await (await fetch(things)).json()).map((r) => r.name), ['Ada', 'Linus', 'Katherine']);
    await save.click();
    await dialog.getByRole('button', { name: 'Save my edits' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByTestId('data-note').filter({ hasText: 'Saved: the next read gets the new data.' }).waitFor();
    // The live data it replaced, Katherine's write with it, is kept as
    // version 3; the edits are version 4.
    await note.filter({ hasText: 'Live data: version 4, unchanged.' }).waitFor();
    assert.deepEqual(await (await fetch(things)).json(), [{ id: 1, name: 'Ada Lovelace' }]);
    assert.match(JSON.stringify((await call('GET', `/mocks/${mock.id}/versions/3/data`)).body), /Katherine/);
  });

  await step('at 375 px, in both schemes, the changed notice and its buttons fit the screen', async () => {
    await write({ name: 'Margaret' });
    await page.setViewportSize({ width: 375, height: 812 });
    await page.getByRole('button', { name: 'Refresh' }).click();
    await note.filter({ hasText: 'changed by writes through routes since version 4' }).waitFor();
    await editorHas(page, 'Margaret');
    const w = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(w <= 375, `the Data tab is ${w} px wide at 375 px`);
    await inSchemes(page, 'live-phone');
    await page.getByRole('button', { name: 'Reset', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Reset the live data?' });
    await dialog.waitFor();
    const dw = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(dw <= 375, `the dialog is ${dw} px wide at 375 px`);
    await screenshot(page, 'live-phone-reset-confirm');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
  });

  const { context: vContext, page: vPage } = await newPage(browser, 'viewer');
  await step('a viewer sees the live data and that it changed, with Refresh but no Reset or Save as version', async () => {
    await vPage.goto(base + '/');
    await vPage.getByLabel('Email', { exact: true }).fill(viewer.email);
    await vPage.getByLabel('Password', { exact: true }).fill(viewer.password);
    await vPage.getByRole('button', { name: 'Sign in' }).click();
    await vPage.getByRole('heading', { name: 'Mocks' }).waitFor();
    await vPage.goto(`${base}/#/mocks/${mock.id}`);
    await vPage.getByTestId('live-note').filter({ hasText: 'changed by writes through routes since version 4' }).waitFor();
    await editorHas(vPage, 'Margaret');
    await vPage.getByRole('button', { name: 'Refresh' }).waitFor();
    for (const name of ['Reset', 'Save as version']) {
      assert.equal(await vPage.getByRole('button', { name, exact: true }).count(), 0, `a viewer sees ${name}`);
    }
    // Back in the browser tab after a write: the tab reads afresh.
    await write({ name: 'Barbara' });
    await vPage.evaluate(() => document.dispatchEvent(new Event('visibilitychange')));
    await editorHas(vPage, 'Barbara');
    await checkA11y(vPage, 'viewer-live');
    await screenshot(vPage, 'live-viewer');
  });

  await vContext.close();
  await context.close();
});
