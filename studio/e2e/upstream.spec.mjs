// A project's upstream and mode in Decoy Studio (§14): the project page
// shows none and mode Mock; an editor changes them, the server's refusals
// (a URL that is not http or https, pass-through with no upstream) show in
// the form, and once saved the page and the admin API agree. The server
// runs without --upstream-allow, so an upstream on loopback is refused
// with 400 before any connection: the journey sends nothing off the
// machine.
import assert from 'node:assert/strict';
import { adminToken, base, checkA11y, expectFailedRequest, journey, newPage, screenshot, signInAsAdmin, step } from './harness.mjs';

// call is a plain HTTP request to the admin API with the admin token.
async function call(method, path, body) {
  const headers = { Authorization: `Bearer ${adminToken}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(`${base}/admin/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

await journey(async (browser) => {
  let project;
  await step('the default project, as a script would find it', async () => {
    const ws = (await call('GET', '/workspaces')).workspaces.find((w) => w.name === 'default');
    project = (await call('GET', `/workspaces/${ws.id}/projects`)).projects.find((p) => p.name === 'default');
    assert.equal(project.mode, 'mock');
    assert.equal(project.upstream, '');
  });

  const { page } = await newPage(browser, 'editor');
  await step('the project page shows no upstream, mode Mock', async () => {
    await signInAsAdmin(page);
    await page.getByRole('heading', { name: 'Mocks' }).waitFor();
    await page.goto(`${base}/#/projects/${project.id}`);
    await page.getByRole('heading', { name: 'default', level: 1 }).waitFor();
    assert.equal(await page.getByTestId('upstream').innerText(), 'none');
    assert.equal(await page.getByTestId('mode').innerText(), 'Mock');
  });

  await step('the server refuses a bad URL and pass-through with none: the form says why', async () => {
    await page.getByRole('button', { name: 'Change upstream' }).click();
    const form = page.getByRole('form', { name: 'Change the upstream' });
    await form.waitFor();
    await checkA11y(page, 'upstream form');
    expectFailedRequest(`/admin/v1/projects/${project.id}`, 400);
    await form.getByRole('radio', { name: /^Pass-through/ }).check();
    await form.getByRole('button', { name: 'Save upstream' }).click();
    await form.getByText('mode passthrough needs an upstream').waitFor();
    expectFailedRequest(`/admin/v1/projects/${project.id}`, 400);
    await form.getByLabel('Upstream URL').fill('ftp://files.example.com');
    await form.getByRole('button', { name: 'Save upstream' }).click();
    await form.getByText('Invalid upstream: the scheme must be http or https').waitFor();
    await screenshot(page, 'upstream-refused');
  });

  await step('an upstream in mode pass-through is saved, shown, and what the admin API gives', async () => {
    const form = page.getByRole('form', { name: 'Change the upstream' });
    await form.getByLabel('Upstream URL').fill('http://127.0.0.1:9/api/');
    await form.getByRole('radio', { name: /^Pass-through/ }).check();
    await form.getByRole('button', { name: 'Save upstream' }).click();
    await form.waitFor({ state: 'detached' });
    await page.getByRole('status').filter({ hasText: 'Saved: pass-through to http://127.0.0.1:9/api.' }).waitFor();
    assert.equal(await page.getByTestId('upstream').innerText(), 'http://127.0.0.1:9/api');
    assert.equal(await page.getByTestId('mode').innerText(), 'Pass-through');
    const p = await call('GET', `/projects/${project.id}`);
    assert.equal(p.upstream, 'http://127.0.0.1:9/api');
    assert.equal(p.mode, 'passthrough');
    await screenshot(page, 'upstream-saved');
  });

  await step('a request no route answers goes to the upstream, whose loopback address is refused', async () => {
    const res = await fetch(`${base}/p/default/anything`);
    assert.equal(res.status, 400);
    assert.deepEqual(await res.json(), { error: 'Upstream address not allowed' });
  });

  await step('back to mode Mock, with no upstream', async () => {
    await page.getByRole('button', { name: 'Change upstream' }).click();
    const form = page.getByRole('form', { name: 'Change the upstream' });
    await form.getByLabel('Upstream URL').fill('');
    await form.getByRole('radio', { name: /^Mock/ }).check();
    await form.getByRole('button', { name: 'Save upstream' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved: only routes answer.' }).waitFor();
    assert.equal(await page.getByTestId('mode').innerText(), 'Mock');
    const res = await fetch(`${base}/p/default/anything`);
    assert.equal(res.status, 404);
  });
});
