// The request journal in Decoy Studio (§13.2): a project's Requests tab
// shows, without a reload, a read through a route as it is answered; its
// details show the route, the mock, the query and the headers, a token
// header among them REDACTED (the token appears nowhere on the page);
// the filters narrow the list, live ones included; the journal is cleared
// after a confirmation; a viewer sees the requests but no Clear button;
// and the tab fits 375 px. See harness.mjs for what runs it.
import assert from 'node:assert/strict';
import { adminToken, base, journey, newPage, screenshot, signInAsAdmin, step } from './harness.mjs';

const viewer = { email: 'vera@example.com', name: 'Vera Viewer', password: 'vera-password-012345' };
const secret = 'journey-secret-0123456789';

// call is a plain HTTP request to the admin API with the admin token.
async function call(method, path, body) {
  const headers = { Authorization: `Bearer ${adminToken}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(`${base}/admin/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

// read sends a request as an app would (from this script, not the page):
// its status.
async function read(path, headers = {}) {
  const res = await fetch(base + path, { headers });
  await res.arrayBuffer();
  return res.status;
}

await journey(async (browser) => {
  let users, project, route;
  await step('the seeded users mock, a route GET /users on it, and a viewer, as a script would make them', async () => {
    users = (await call('GET', '/mocks')).mocks.find((m) => m.name === 'users');
    assert.ok(users, 'the example mock users is not seeded');
    const ws = (await call('GET', '/workspaces')).workspaces.find((w) => w.name === 'default');
    project = (await call('GET', `/workspaces/${ws.id}/projects`)).projects.find((p) => p.name === 'default');
    route = await call('POST', `/projects/${project.id}/routes`, { method: 'GET', path: '/users', mock_id: users.id });
    await call('POST', '/users', viewer);
    await call('POST', `/workspaces/${ws.id}/members`, { email: viewer.email, role: 'viewer' });
  });

  const { context, page } = await newPage(browser, 'editor');
  const tab = page.getByRole('navigation', { name: 'Project sections' }).getByRole('link', { name: 'Requests' });
  const rows = page.locator('table.requests tbody tr');

  await step('open the project: the Requests tab is empty and live', async () => {
    await signInAsAdmin(page);
    await page.getByRole('heading', { name: 'Mocks' }).waitFor();
    await page.goto(`${base}/#/projects/${project.id}`);
    await page.getByRole('heading', { name: 'default', level: 1 }).waitFor();
    await tab.click();
    await page.waitForURL(`${base}/#/projects/${project.id}/requests`);
    await page.getByTestId('no-requests').waitFor();
    await page.getByTestId('live').filter({ hasText: 'Live' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'New mock' }).count(), 0, 'the Requests tab shows New mock');
    await screenshot(page, 'no-requests');
  });

  await step('a read through the route appears at once, without a reload', async () => {
    assert.equal(await read('/p/default/users?limit=2', { serviceauthtoken: secret, 'X-Journey': 'first' }), 200);
    const row = rows.filter({ hasText: '/p/default/users' });
    await row.waitFor();
    assert.match(await row.innerText(), /GET[\s\S]*\/p\/default\/users\?limit=2[\s\S]*200/);
    assert.equal(await page.evaluate(() => performance.getEntriesByType('navigation').length), 1);
    // Two more: a path with no route, and a read at /mock/{id}.
    assert.equal(await read('/p/default/nowhere'), 404);
    assert.equal(await read(`/mock/${users.id}?limit=1`), 200);
    await rows.filter({ hasText: '/mock/' }).waitFor();
    assert.equal(await rows.count(), 3);
    assert.match(await rows.first().innerText(), /\/mock\//, 'the newest is not first');
    await screenshot(page, 'requests-live');
  });

  await step('its details: route, mock, query, headers, the token header REDACTED', async () => {
    await page.getByRole('button', { name: 'Details of GET /p/default/users?limit=2' }).click();
    const dialog = page.getByRole('dialog', { name: 'GET /p/default/users' });
    await dialog.waitFor();
    const text = await dialog.innerText();
    assert.match(text, /Status\s*200/);
    assert.ok(text.includes(route.id), `no route id in ${text}`);
    assert.equal(await dialog.getByRole('link', { name: users.id }).getAttribute('href'), `#/mocks/${users.id}`);
    assert.equal(await dialog.getByTestId('request-query').innerText(), 'limit=2');
    const headers = dialog.getByTestId('request-headers');
    assert.equal(await headers.getByRole('row', { name: /Serviceauthtoken/ }).getByRole('cell').innerText(), 'REDACTED');
    assert.equal(await headers.getByRole('row', { name: /X-Journey/ }).getByRole('cell').innerText(), 'first');
    assert.ok(!(await page.content()).includes(secret), 'the token is on the page');
    await screenshot(page, 'request-details');
    await dialog.getByRole('button', { name: 'Close' }).click();
    await dialog.waitFor({ state: 'detached' });
  });

  await step('filters: by status, by a path prefix, live; then all again', async () => {
    await page.getByLabel('Status').fill('404');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByRole('button', { name: 'Show all' }).waitFor();
    await rows.first().filter({ hasText: '/p/default/nowhere' }).waitFor();
    assert.equal(await rows.count(), 1);
    // Live under the filter: a 404 comes in, a 200 does not.
    await page.getByTestId('live').filter({ hasText: 'Live' }).waitFor();
    assert.equal(await read('/p/default/users'), 200);
    assert.equal(await read('/p/default/elsewhere'), 404);
    await rows.filter({ hasText: '/p/default/elsewhere' }).waitFor();
    assert.equal(await rows.count(), 2);
    await screenshot(page, 'requests-filtered');

    await page.getByLabel('Status').fill('');
    await page.getByLabel('Path').fill('/mock/*');
    await page.getByRole('button', { name: 'Filter' }).click();
    // At least one row: every() holds for the empty table between the two lists.
    await page.waitForFunction(() => {
      const rows = [...document.querySelectorAll('table.requests tbody tr')];
      return rows.length > 0 && rows.every((r) => r.innerText.includes('/mock/'));
    });
    assert.equal(await rows.count(), 1);
    await page.getByLabel('Method').selectOption('POST');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByTestId('no-requests').filter({ hasText: 'No request matches' }).waitFor();

    await page.getByRole('button', { name: 'Show all' }).click();
    await page.waitForFunction(() => document.querySelectorAll('table.requests tbody tr').length === 5);
    assert.equal(await page.getByLabel('Path').inputValue(), '');
  });

  await step('clear, after a confirmation: the journal is empty', async () => {
    await page.getByRole('button', { name: 'Clear', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Clear the requests?' });
    await dialog.waitFor();
    await screenshot(page, 'clear-dialog');
    await dialog.getByRole('button', { name: 'Clear', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByRole('status').filter({ hasText: 'The requests were cleared.' }).waitFor();
    await page.getByTestId('no-requests').waitFor();
    assert.deepEqual(await call('GET', `/projects/${project.id}/requests/count`), { count: 0 });
    // The feed goes on.
    assert.equal(await read('/p/default/users?after=clear'), 200);
    await rows.filter({ hasText: 'after=clear' }).waitFor();
    await screenshot(page, 'requests-cleared');
  });

  await step('at 375 px the requests and their details fit the screen', async () => {
    await page.setViewportSize({ width: 375, height: 812 });
    await rows.first().waitFor();
    let w = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(w <= 375, `the requests are ${w} px wide at 375 px`);
    await screenshot(page, 'phone-requests');
    await page.getByRole('button', { name: /^Details of / }).first().click();
    await page.getByRole('dialog').waitFor();
    w = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(w <= 375, `the details are ${w} px wide at 375 px`);
    await screenshot(page, 'phone-request-details');
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
  });

  const { context: vContext, page: vPage } = await newPage(browser, 'viewer');
  await step('a viewer sees the requests, and no Clear button', async () => {
    await vPage.goto(base + '/');
    await vPage.getByLabel('Email', { exact: true }).fill(viewer.email);
    await vPage.getByLabel('Password', { exact: true }).fill(viewer.password);
    await vPage.getByRole('button', { name: 'Sign in' }).click();
    await vPage.getByRole('heading', { name: 'Mocks' }).waitFor();
    await vPage.goto(`${base}/#/projects/${project.id}/requests`);
    await vPage.locator('table.requests tbody tr').filter({ hasText: 'after=clear' }).waitFor();
    await vPage.getByTestId('role-note').filter({ hasText: 'clearing the requests needs the editor role' }).waitFor();
    assert.equal(await vPage.getByRole('button', { name: 'Clear', exact: true }).count(), 0, 'a viewer sees Clear');
    await screenshot(vPage, 'viewer-requests');
  });

  await vContext.close();
  await context.close();
});
