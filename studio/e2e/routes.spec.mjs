// Routes in Decoy Studio (§11): the project page shows the base URL; a
// route GET /users is added on the seeded users mock, its curl copied and
// run, and it answers the data; an item route /users/{id} answers one
// record at the example value the page filled in; the server's refusals
// show in the form; a route is edited (a new path and a bound field), the
// slug changed, and a route deleted after a confirmation, after which its
// URL answers 404 No route for GET …; a viewer sees the routes but no
// button to change them; and the page fits 375 px. See harness.mjs for
// what runs it.
import assert from 'node:assert/strict';
import { adminToken, base, expectFailedRequest, journey, newPage, screenshot, signInAsAdmin, step } from './harness.mjs';

const viewer = { email: 'rita@example.com', name: 'Rita Reader', password: 'rita-password-012345' };

// call is a plain HTTP request to the admin API with the admin token.
async function call(method, path, body) {
  const headers = { Authorization: `Bearer ${adminToken}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(`${base}/admin/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

// urlOf is the URL a curl command asks for: its last, quoted, argument.
function urlOf(cmd) {
  const m = /'(https?:\/\/[^']+)'$/.exec(cmd.trim());
  assert.ok(m, `no URL at the end of ${cmd}`);
  return m[1];
}

// fetchFromPage reads url from the page, as the app a project stands in
// for would: {status, body}.
function fetchFromPage(page, url) {
  return page.evaluate(async (u) => {
    const res = await fetch(u, { credentials: 'omit', cache: 'no-store' });
    return { status: res.status, body: await res.json() };
  }, url);
}

// copiedCurl clicks a route's copy button and returns what reached the
// clipboard, checked against the command the row shows.
async function copiedCurl(page, route) {
  const row = page.locator(`tr[data-route="${route}"]`);
  await row.getByRole('button', { name: `Copy the curl of ${route}` }).click();
  await row.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  assert.equal(copied, await row.getByTestId('route-curl').innerText());
  return copied;
}

await journey(async (browser) => {
  let users, data, project, ws;
  await step('the seeded users mock, its data, another project and a viewer, as a script would make them', async () => {
    users = (await call('GET', '/mocks')).mocks.find((m) => m.name === 'users');
    assert.ok(users, 'the example mock users is not seeded');
    data = await call('GET', `/mocks/${users.id}/data`);
    ws = (await call('GET', '/workspaces')).workspaces.find((w) => w.name === 'default');
    project = (await call('GET', `/workspaces/${ws.id}/projects`)).projects.find((p) => p.name === 'default');
    assert.equal(project.base_url, `${base}/p/default`);
    await call('POST', `/workspaces/${ws.id}/projects`, { name: 'billing' });
    await call('POST', '/users', viewer);
    await call('POST', `/workspaces/${ws.id}/members`, { email: viewer.email, role: 'viewer' });
  });

  const { context, page } = await newPage(browser, 'editor');
  const routesTab = page.getByRole('navigation', { name: 'Project sections' }).getByRole('link', { name: 'Routes' });

  await step('sign in, open the project from the sidebar: its base URL and slug', async () => {
    await signInAsAdmin(page);
    await page.getByRole('heading', { name: 'Mocks' }).waitFor();
    await page.getByRole('navigation', { name: 'Projects of default' }).getByRole('link', { name: 'default', exact: true }).click();
    await page.waitForURL(`${base}/#/projects/${project.id}`);
    await page.getByRole('heading', { name: 'default', level: 1 }).waitFor();
    assert.equal(await page.getByTestId('base-url').innerText(), `${base}/p/default`);
    assert.equal(await page.getByTestId('slug').innerText(), 'default');
    await page.getByRole('main').getByRole('link', { name: 'users' }).waitFor();
    await page.getByRole('button', { name: 'Copy base URL' }).click();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), `${base}/p/default`);
    await screenshot(page, 'project-page');
    await routesTab.click();
    await page.waitForURL(`${base}/#/projects/${project.id}/routes`);
    await page.getByTestId('no-routes').waitFor();
    await screenshot(page, 'no-routes');
  });

  let listURL;
  await step('add GET /users on the users mock; its curl, copied and run, answers the data', async () => {
    await page.getByRole('button', { name: 'Add route' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a route' });
    await dialog.waitFor();
    assert.equal(await dialog.getByLabel('Method').inputValue(), 'GET');
    await dialog.getByLabel('Path').fill('/users');
    await dialog.getByLabel('Mock', { exact: true }).selectOption({ label: 'users' });
    assert.equal(await dialog.getByLabel('Action').inputValue(), '');
    assert.match(await dialog.getByLabel('Action').locator('option:checked').innerText(), /Default: read/);
    await screenshot(page, 'add-route-form');
    await dialog.getByRole('button', { name: 'Create route' }).click();
    await dialog.waitFor({ state: 'detached' });
    const row = page.locator('tr[data-route="GET /users"]');
    await row.waitFor();
    await page.getByRole('status').filter({ hasText: 'Route GET /users added.' }).waitFor();
    assert.match(await row.innerText(), /GET[\s\S]*\/users[\s\S]*read[\s\S]*users/);
    assert.equal(await row.getByRole('link', { name: 'users' }).getAttribute('href'), `#/mocks/${users.id}`);
    const cmd = await copiedCurl(page, 'GET /users');
    assert.equal(cmd, `curl '${base}/p/default/users'`);
    listURL = urlOf(cmd);
    const res = await fetchFromPage(page, listURL);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, data);
    await screenshot(page, 'route-users');
  });

  let itemURL;
  await step('add the item route GET /users/{id}: the curl names the first record, and answers it', async () => {
    await page.getByRole('button', { name: 'Add route' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a route' });
    await dialog.getByLabel('Path').fill('/users/{id}');
    await dialog.getByLabel('Mock', { exact: true }).selectOption({ label: 'users' });
    // The parameter gets a row of its own, to bind it to another field.
    await dialog.getByLabel('Field for {id}').waitFor();
    await dialog.getByRole('button', { name: 'Create route' }).click();
    await dialog.waitFor({ state: 'detached' });
    const row = page.locator('tr[data-route="GET /users/{id}"]');
    await row.getByTestId('route-example').filter({ hasText: `{id} = ${data[0].id}` }).waitFor();
    const cmd = await copiedCurl(page, 'GET /users/{id}');
    assert.equal(cmd, `curl '${base}/p/default/users/${data[0].id}'`);
    itemURL = urlOf(cmd);
    const res = await fetchFromPage(page, itemURL);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, data[0]);
    const other = await fetchFromPage(page, `${base}/p/default/users/${data[1].id}`);
    assert.deepEqual(other.body, data[1]);
    await screenshot(page, 'route-user-item');
  });

  await step('the server refuses a route that exists and a path without /: the form says why', async () => {
    await page.getByRole('button', { name: 'Add route' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a route' });
    await dialog.getByLabel('Path').fill('/users/{uid}');
    await dialog.getByLabel('Mock', { exact: true }).selectOption({ label: 'users' });
    expectFailedRequest(`/admin/v1/projects/${project.id}/routes`, 409);
    await dialog.getByRole('button', { name: 'Create route' }).click();
    await dialog.getByRole('alert').filter({ hasText: '409: Route exists: GET /users/{id}' }).waitFor();
    await screenshot(page, 'route-exists');
    await dialog.getByLabel('Path').fill('users');
    expectFailedRequest(`/admin/v1/projects/${project.id}/routes`, 400);
    await dialog.getByRole('button', { name: 'Create route' }).click();
    await dialog.getByRole('alert').filter({ hasText: '400: Invalid path: it must start with /' }).waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.equal(await page.locator('tr[data-route]').count(), 2);
  });

  let editedURL;
  await step('edit the item route: /people/{handle}, bound to the username field', async () => {
    await page.getByRole('button', { name: 'Edit GET /users/{id}' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit GET /users/{id}' });
    assert.equal(await dialog.getByLabel('Path').inputValue(), '/users/{id}');
    assert.equal(await dialog.getByLabel('Mock', { exact: true }).inputValue(), users.id);
    await dialog.getByLabel('Path').fill('/people/{handle}');
    await dialog.getByLabel('Field for {handle}').fill('username');
    await screenshot(page, 'edit-route-form');
    await dialog.getByRole('button', { name: 'Save route' }).click();
    await dialog.waitFor({ state: 'detached' });
    const row = page.locator('tr[data-route="GET /people/{handle}"]');
    await row.getByTestId('route-example').filter({ hasText: `{handle} = ${data[0].username}` }).waitFor();
    assert.match(await row.innerText(), /\{handle\} is username/);
    assert.equal(await page.locator('tr[data-route="GET /users/{id}"]').count(), 0);
    const cmd = await copiedCurl(page, 'GET /people/{handle}');
    editedURL = urlOf(cmd);
    assert.equal(editedURL, `${base}/p/default/people/${data[0].username}`);
    const res = await fetchFromPage(page, editedURL);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, data[0]);
    expectFailedRequest(new URL(itemURL).pathname, 404);
    const gone = await fetchFromPage(page, itemURL);
    assert.deepEqual(gone, { status: 404, body: { error: `No route for GET /users/${data[0].id}` } });
    await screenshot(page, 'route-edited');
  });

  await step('change the slug: a bad one and a taken one are refused, then the base URL and every curl follow', async () => {
    await page.getByRole('button', { name: 'Change slug' }).click();
    const slug = page.getByLabel('Slug', { exact: true });
    await slug.fill('Not A Slug');
    expectFailedRequest(`/admin/v1/projects/${project.id}`, 400);
    await page.getByRole('button', { name: 'Save slug' }).click();
    await page.getByRole('alert').filter({ hasText: '400: Invalid slug' }).waitFor();
    await slug.fill('billing');
    expectFailedRequest(`/admin/v1/projects/${project.id}`, 409);
    await page.getByRole('button', { name: 'Save slug' }).click();
    await page.getByRole('alert').filter({ hasText: '409: Slug taken' }).waitFor();
    await screenshot(page, 'slug-taken');
    await slug.fill('demo-api');
    await page.getByRole('button', { name: 'Save slug' }).click();
    await page.getByRole('status').filter({ hasText: 'The slug is now demo-api' }).waitFor();
    assert.equal(await page.getByTestId('base-url').innerText(), `${base}/p/demo-api`);
    const cmd = await copiedCurl(page, 'GET /users');
    assert.equal(cmd, `curl '${base}/p/demo-api/users'`);
    listURL = urlOf(cmd);
    const res = await fetchFromPage(page, listURL);
    assert.equal(res.status, 200);
    assert.equal(res.body.length, data.length);
    await screenshot(page, 'slug-changed');
  });

  await step('delete GET /users after a confirmation: its URL answers 404 No route', async () => {
    await page.getByRole('button', { name: 'Delete GET /users', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this route?' });
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /GET \/users stops answering at once/);
    await screenshot(page, 'delete-route-dialog');
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByRole('status').filter({ hasText: 'Route GET /users deleted.' }).waitFor();
    assert.equal(await page.locator('tr[data-route="GET /users"]').count(), 0);
    expectFailedRequest(new URL(listURL).pathname, 404);
    const gone = await fetchFromPage(page, listURL);
    assert.deepEqual(gone, { status: 404, body: { error: 'No route for GET /users' } });
    const left = (await call('GET', `/projects/${project.id}/routes`)).routes;
    assert.deepEqual(left.map((r) => `${r.method} ${r.path}`), ['GET /people/{handle}']);
    await screenshot(page, 'route-deleted');
  });

  await step('at 375 px the routes and the form fit the screen', async () => {
    await page.setViewportSize({ width: 375, height: 812 });
    await page.locator('tr[data-route="GET /people/{handle}"]').waitFor();
    let w = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(w <= 375, `the routes are ${w} px wide at 375 px`);
    await screenshot(page, 'phone-routes');
    await page.getByRole('button', { name: 'Add route' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a route' });
    await dialog.getByLabel('Path').fill('/teams/{team}/members/{member}');
    await dialog.getByLabel('Field for {member}').waitFor();
    w = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(w <= 375, `the form is ${w} px wide at 375 px`);
    await screenshot(page, 'phone-route-form');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
  });

  // ------------------------------------------------------------ a viewer
  const { context: vContext, page: vPage } = await newPage(browser, 'viewer');
  await step('a viewer sees the routes and their curl, but no button to change them', async () => {
    await vPage.goto(base + '/');
    await vPage.getByLabel('Email', { exact: true }).fill(viewer.email);
    await vPage.getByLabel('Password', { exact: true }).fill(viewer.password);
    await vPage.getByRole('button', { name: 'Sign in' }).click();
    await vPage.getByRole('heading', { name: 'Mocks' }).waitFor();
    await vPage.goto(`${base}/#/projects/${project.id}/routes`);
    const row = vPage.locator('tr[data-route="GET /people/{handle}"]');
    await row.getByTestId('route-example').waitFor();
    assert.equal(urlOf(await row.getByTestId('route-curl').innerText()), editedURL.replace('/p/default/', '/p/demo-api/'));
    await vPage.getByTestId('role-note').filter({ hasText: 'needs the editor role' }).waitFor();
    for (const name of ['Add route', 'Change slug', 'Edit GET /people/{handle}', 'Delete GET /people/{handle}']) {
      assert.equal(await vPage.getByRole('button', { name }).count(), 0, `a viewer sees ${name}`);
    }
    await screenshot(vPage, 'viewer-routes');
  });

  await vContext.close();
  await context.close();
});
