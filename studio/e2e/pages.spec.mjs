// Every page of Decoy Studio, as a phone and a desktop show it, in the
// light and the dark scheme: axe-core finds no serious or critical
// violation on any of them, and each is saved as <page>-<width>-<scheme>.png
// (docs/studio.md shows two of them: studio/screenshots_test.go). See
// harness.mjs for what runs it.
import assert from 'node:assert/strict';
import { adminToken, base, checkA11y, expectFailedRequest, journey, log, newPage, screenshot, step } from './harness.mjs';

const widths = [1280, 375];
const schemes = ['light', 'dark'];

// call is a plain HTTP request to the admin API with the admin token.
async function call(method, path, body, contentType = 'application/json') {
  const headers = { Authorization: `Bearer ${adminToken}` };
  if (body !== undefined) headers['Content-Type'] = contentType;
  const res = await fetch(`${base}/admin/v1${path}`, { method, headers, body: typeof body === 'string' || body === undefined ? body : JSON.stringify(body) });
  const text = await res.text();
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

// seen runs axe on page, at each width in each scheme, and saves each
// look as name-width-scheme.png.
async function seen(page, name) {
  for (const width of widths) {
    await page.setViewportSize({ width, height: width > 600 ? 900 : 812 });
    for (const colorScheme of schemes) {
      await page.emulateMedia({ colorScheme });
      // Two frames: the new media queries have been applied and painted.
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      const label = `${name}-${width}-${colorScheme}`;
      const violations = await checkA11y(page, label);
      log(`axe ${label}: ${violations.length} violation(s) of any impact`);
      await screenshot(page, label, { numbered: false });
    }
  }
  // Back to the desktop, whose header shows its pages without the menu.
  await page.setViewportSize({ width: widths[0], height: 900 });
}

await journey(async (browser) => {
  let users, invitationURL, project, defaultProject;
  await step('the data the pages show: reads, a second version, a project, routes, an invitation', async () => {
    const { mocks } = await call('GET', '/mocks');
    users = mocks.find((m) => m.name === 'users');
    assert.ok(users, 'the example mock users is not seeded');
    const data = await call('GET', `/mocks/${users.id}/data`);
    await call('PUT', `/mocks/${users.id}/data`, JSON.stringify([...data, { id: 99, name: 'Grace' }], null, 2));
    const path = new URL(users.url).pathname;
    for (let i = 0; i < 12; i++) await (await fetch(`${base}${path}?_limit=${i}`)).arrayBuffer();
    const ws = (await call('GET', '/workspaces')).workspaces.find((w) => w.name === 'default');
    project = await call('POST', `/workspaces/${ws.id}/projects`, { name: 'billing' });
    defaultProject = (await call('GET', `/workspaces/${ws.id}/projects`)).projects.find((p) => p.name === 'default');
    await call('POST', `/projects/${defaultProject.id}/routes`, { method: 'GET', path: '/users', mock_id: users.id });
    await call('POST', `/projects/${defaultProject.id}/routes`, {
      method: 'GET', path: '/users/{id}', mock_id: users.id, rules: [
        { name: 'maintenance', when: 'header.x-scenario=maintenance', status: 503, headers: { 'Retry-After': '120' }, body: { error: 'Down for maintenance' } },
        { name: 'hello', when: 'query.hello=1', template: { hello: '{{ request.path.id }}', name: '{{ name }}' } },
        { name: 'flaky', when: 'query.flaky=1', times: 2, status: 500 },
      ],
    });
    await call('POST', `/projects/${defaultProject.id}/routes`, { method: 'GET', path: '/people/{handle}/city', mock_id: users.id, bind: { handle: 'username' } });
    await call('POST', `/projects/${defaultProject.id}/routes`, { method: 'POST', path: '/users', mock_id: users.id });
    await call('POST', `/projects/${defaultProject.id}/routes`, { method: 'DELETE', path: '/users/{id}', mock_id: users.id });
    const inv = await call('POST', `/workspaces/${ws.id}/members`, { email: 'newcomer@example.com', role: 'editor' });
    invitationURL = inv.invitation_url;
    assert.ok(invitationURL, `no invitation link in ${JSON.stringify(inv)}`);
  });

  const { page } = await newPage(browser, 'pages');

  await step('sign-in', async () => {
    await page.goto(base + '/');
    await page.getByLabel('Admin token').waitFor();
    await seen(page, 'sign-in');
    expectFailedRequest('/studio/session', 401);
    await page.getByLabel('Admin token').fill('not-the-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Invalid admin token' }).waitFor();
    await seen(page, 'sign-in-refused');
  });

  await step('invitation', async () => {
    await page.goto(invitationURL);
    await page.getByRole('heading', { name: /You are invited to default as editor/ }).waitFor();
    await seen(page, 'invitation');
  });

  await step('mocks', async () => {
    await page.goto(base + '/');
    await page.getByLabel('Admin token').fill(adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Mocks' }).waitFor();
    await page.getByRole('link', { name: 'users' }).waitFor();
    await seen(page, 'mocks');
  });

  await step('project', async () => {
    await page.goto(`${base}/#/projects/${project.id}`);
    await page.getByTestId('empty-state').waitFor();
    await seen(page, 'project');
  });

  await step('project-routes, the route form, the rules dialog with an answer tried, and the delete dialog', async () => {
    await page.goto(`${base}/#/projects/${defaultProject.id}/routes`);
    await page.locator('tr[data-route="GET /users/{id}"]').getByTestId('route-example').waitFor();
    await seen(page, 'project-routes');
    await page.getByRole('button', { name: 'Rules 3 of GET /users/{id}' }).click();
    const rules = page.getByRole('dialog', { name: 'Rules of GET /users/{id}' });
    await rules.locator('li.rule[data-rule="3"]').waitFor();
    await rules.getByLabel('Query').fill('hello=1');
    await rules.getByRole('button', { name: 'Send', exact: true }).click();
    await rules.getByTestId('try-rule').filter({ hasText: 'rule “hello”' }).waitFor();
    await seen(page, 'rules-dialog');
    await rules.getByRole('button', { name: 'JSON' }).click();
    await rules.getByLabel('Rules (JSON)').waitFor();
    await seen(page, 'rules-dialog-json');
    await rules.getByRole('button', { name: 'Close' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Edit GET /people/{handle}/city' }).click();
    await page.getByRole('dialog', { name: 'Edit GET /people/{handle}/city' }).waitFor();
    await seen(page, 'route-dialog');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Delete DELETE /users/{id}' }).click();
    await page.getByRole('dialog', { name: 'Delete this route?' }).waitFor();
    await seen(page, 'delete-route-dialog');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
  });

  await step('project-requests, a request\'s details and the clear dialog', async () => {
    await page.goto(`${base}/#/projects/${defaultProject.id}/requests`);
    await page.locator('table.requests tbody tr').first().waitFor();
    await page.getByTestId('live').filter({ hasText: 'Live' }).waitFor();
    await seen(page, 'project-requests');
    await page.getByRole('button', { name: /^Details of GET \/mock\// }).first().click();
    await page.getByRole('dialog').getByTestId('request-headers').waitFor();
    await seen(page, 'request-dialog');
    await page.getByRole('button', { name: 'Close' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Clear', exact: true }).click();
    await page.getByRole('dialog', { name: 'Clear the requests?' }).waitFor();
    await seen(page, 'clear-requests-dialog');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
  });

  await step('new-mock, then the one-time token dialog', async () => {
    await page.goto(`${base}/#/new`);
    await page.getByRole('heading', { name: 'New mock' }).waitFor();
    await page.locator('#new-data .cm-content').waitFor();
    await seen(page, 'new-mock');
    await page.getByLabel('Name').fill('secret people');
    await page.getByLabel('Private (needs a token, shown once)').check();
    await page.getByRole('button', { name: 'Create mock' }).click();
    await page.getByRole('dialog', { name: 'Store this token now' }).waitFor();
    await seen(page, 'token-dialog');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
  });

  const mockPage = `${base}/#/mocks/${users.id}`;
  await step('mock-data', async () => {
    await page.goto(`${mockPage}/data`);
    await page.locator('#data-editor .cm-content').waitFor();
    await page.getByTestId('validity').waitFor();
    await seen(page, 'mock-data');
  });

  await step('mock-settings', async () => {
    await page.goto(`${mockPage}/settings`);
    await page.getByLabel('Rate limit per minute').waitFor();
    await seen(page, 'mock-settings');
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog', { name: 'Delete this mock?' }).waitFor();
    await seen(page, 'delete-dialog');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
  });

  await step('mock-playground, with an answer', async () => {
    await page.goto(`${mockPage}/playground`);
    await page.getByLabel('Path 1').fill('address.country');
    await page.getByLabel('Value 1').fill('PL');
    await page.getByLabel('Order by').fill('age');
    await page.getByLabel('Limit').fill('2');
    await page.getByRole('button', { name: 'Send request' }).click();
    await page.getByTestId('response-status').filter({ hasText: '200' }).waitFor();
    await seen(page, 'mock-playground');
  });

  await step('mock-usage', async () => {
    await page.goto(`${mockPage}/usage`);
    await page.getByTestId('quota-used').waitFor();
    await page.locator('figure.chart').first().waitFor();
    await seen(page, 'mock-usage');
  });

  await step('mock-versions', async () => {
    await page.goto(`${mockPage}/versions`);
    await page.getByRole('button', { name: /Restore/ }).first().waitFor();
    await seen(page, 'mock-versions');
  });

  await step('generate', async () => {
    await page.goto(`${base}/#/generate`);
    await page.getByRole('heading', { name: 'Generate data' }).waitFor();
    await seen(page, 'generate');
  });

  await step('import-export', async () => {
    await page.goto(`${base}/#/transfer`);
    await page.getByRole('heading', { name: 'Import and export' }).waitFor();
    await seen(page, 'import-export');
  });

  await step('members', async () => {
    await page.goto(`${base}/#/members`);
    await page.getByRole('heading', { name: /Members of default/ }).waitFor();
    await page.getByRole('button', { name: 'Invite' }).waitFor();
    await seen(page, 'members');
  });

  await step('api-keys', async () => {
    await page.goto(`${base}/#/keys`);
    await page.getByRole('heading', { name: /API keys/ }).waitFor();
    await seen(page, 'api-keys');
    await page.getByLabel('Key name').fill('ci');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('dialog', { name: 'Store this key now' }).waitFor();
    await seen(page, 'key-dialog');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
  });

  await step('audit-log', async () => {
    await page.goto(`${base}/#/audit`);
    await page.getByRole('heading', { name: /Audit log/ }).waitFor();
    await page.getByRole('table').first().waitFor();
    await seen(page, 'audit-log');
  });

  await step('account, with personal access tokens, and the revoke dialog', async () => {
    const person = { email: 'paula@example.com', name: 'Paula Person', password: 'paula-password-0123' };
    await call('POST', '/users', person);
    for (const name of ['laptop', 'decoy login on build-agent-7']) {
      const res = await fetch(`${base}/admin/v1/auth/token`, {
        method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email: person.email, password: person.password, name }),
      });
      assert.equal(res.status, 201, await res.text());
    }
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Email', { exact: true }).fill(person.email);
    await page.getByLabel('Password', { exact: true }).fill(person.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('who').filter({ hasText: person.name }).waitFor();
    await page.goto(`${base}/#/account`);
    await page.getByRole('heading', { name: 'Your account' }).waitFor();
    await page.locator('table.tokens tbody tr').nth(1).waitFor();
    await seen(page, 'account');
    await page.getByRole('button', { name: /^Revoke laptop,/ }).click();
    await page.getByRole('dialog', { name: 'Revoke this token?' }).waitFor();
    await seen(page, 'revoke-token-dialog');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
  });
});
