// Teams in Decoy Studio (§6): an owner signs in with email and password,
// makes a project and a mock in it, invites a person who accepts in another
// browser and, as a viewer, cannot edit (the buttons are hidden, and the
// API refuses a forced call); a key made in Studio is used by a plain HTTP
// client, as curl would, then revoked; the audit log shows each step.
// See harness.mjs for what runs it.
import assert from 'node:assert/strict';
import { adminToken, base, expectFailedRequest, journey, newPage, screenshot, signInAsAdmin, step, watch } from './harness.mjs';

const owner = { email: 'olivia@example.com', name: 'Olivia Owner', password: 'olivia-password-0123' };
const viewer = { email: 'vera@example.com', name: 'Vera Viewer', password: 'vera-password-456789' };

// call is a plain HTTP request to the admin API, as a script or curl sends
// it: a bearer token, no cookie.
async function call(method, path, token, body, contentType = 'application/json') {
  const headers = { Authorization: `Bearer ${token}` };
  if (body !== undefined) headers['Content-Type'] = contentType;
  const res = await fetch(`${base}/admin/v1${path}`, { method, headers, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, json, text };
}

// forced sends an admin API call from a page, with its session and CSRF
// token, as a user who skips the hidden buttons would.
function forced(page, method, path, body) {
  return page.evaluate(async ({ method, path, body }) => {
    const s = await (await fetch('/studio/session')).json();
    const res = await fetch('/admin/v1' + path, {
      method, body, headers: { 'X-CSRF-Token': s.csrf_token, 'Content-Type': 'application/json' },
    });
    return { status: res.status, body: await res.json().catch(() => null) };
  }, { method, path, body });
}

await journey(async (browser) => {
  let defaultWS;
  await step('the server admin makes the owner, as a script would', async () => {
    const ws = await call('GET', '/workspaces', adminToken);
    assert.equal(ws.status, 200, ws.text);
    defaultWS = ws.json.workspaces.find((w) => w.name === 'default');
    assert.ok(defaultWS, 'no default workspace');
    const u = await call('POST', '/users', adminToken, owner);
    assert.equal(u.status, 201, u.text);
    const m = await call('POST', `/workspaces/${defaultWS.id}/members`, adminToken, { email: owner.email, role: 'owner' });
    assert.equal(m.status, 201, m.text);
  });

  // ------------------------------------------------------------- the owner
  const { context, page } = await newPage(browser, 'owner');

  await step('a wrong password is refused', async () => {
    await page.goto(base + '/');
    await page.getByLabel('Email', { exact: true }).fill(owner.email);
    await page.getByLabel('Password', { exact: true }).fill('not-the-password-at-all');
    expectFailedRequest('/studio/session', 401);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Invalid email or password' }).waitFor();
    await screenshot(page, 'sign-in-refused');
  });

  await step('the owner signs in with email and password', async () => {
    await page.getByLabel('Password', { exact: true }).fill(owner.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Mocks' }).waitFor();
    assert.match(await page.getByTestId('who').innerText(), /Olivia Owner\s*owner/);
    assert.equal(await page.getByLabel('Workspace', { exact: true }).inputValue(), defaultWS.id);
    await page.getByRole('link', { name: 'users' }).waitFor();
    // Nothing secret in the page's storage or address.
    const leaks = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + location.href);
    assert.ok(!leaks.includes(owner.password), 'the password is kept in the page');
    await screenshot(page, 'owner-mocks');
  });

  await step('search across the workspace is done on the server', async () => {
    const asked = page.waitForRequest((r) => r.url().includes('/admin/v1/mocks?') && r.url().includes('q=prod'));
    await page.getByLabel('Search by name or id').fill('prod');
    const req = await asked;
    assert.match(req.url(), new RegExp(`workspace_id=${defaultWS.id}`));
    await page.getByRole('link', { name: 'products' }).waitFor();
    await page.getByRole('link', { name: 'users' }).waitFor({ state: 'detached' });
    await page.getByLabel('Search by name or id').fill('');
    await page.getByRole('link', { name: 'users' }).waitFor();
  });

  let billing;
  await step('a new project, and a mock created in it', async () => {
    await page.getByRole('button', { name: 'New project' }).click();
    await page.getByLabel('Project name').fill('billing');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.getByRole('link', { name: 'billing' }).waitFor();
    await page.waitForURL(/#\/projects\//);
    billing = page.url().split('/').pop();
    assert.equal(await page.getByRole('link', { name: 'billing' }).getAttribute('aria-current'), 'page');
    await page.getByTestId('empty-state').waitFor();
    await page.getByRole('main').getByRole('link', { name: 'New mock' }).click();
    await page.getByRole('heading', { name: 'New mock' }).waitFor();
    await page.getByLabel('Project', { exact: true }).waitFor();
    await page.waitForFunction((id) => document.getElementById('project-select').value === id, billing);
    await page.getByLabel('Name').fill('invoices');
    await page.getByRole('button', { name: 'Create mock' }).click();
    await page.getByTestId('mock-name').filter({ hasText: 'invoices' }).waitFor();
    await screenshot(page, 'mock-in-project');
    await page.goto(`${base}/#/projects/${billing}`);
    await page.getByRole('link', { name: 'invoices' }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'users' }).count(), 0);
    await screenshot(page, 'project-mocks');
  });
  const invoices = (await call('GET', `/mocks?project_id=${billing}`, adminToken)).json.mocks.find((m) => m.name === 'invoices');
  assert.ok(invoices, 'the mock is not in the project');

  let invitation;
  await step('the owner invites a person as a viewer', async () => {
    await page.getByRole('link', { name: 'Members' }).click();
    await page.getByRole('heading', { name: 'Members of default' }).waitFor();
    await page.getByRole('cell', { name: owner.email, exact: true }).waitFor();
    await page.getByLabel('Email').fill(viewer.email);
    await page.getByLabel('Role', { exact: true }).selectOption('viewer');
    await page.getByRole('button', { name: 'Invite' }).click();
    const dialog = page.getByRole('dialog', { name: 'Send this invitation link' });
    await dialog.waitFor();
    invitation = await dialog.getByTestId('invitation-url').inputValue();
    assert.match(invitation, /\/#\/invite\/dcy_inv_[A-Za-z0-9_-]{43}$/);
    await screenshot(page, 'invitation-link');
    await dialog.getByRole('button', { name: 'Done' }).click();
    await dialog.waitFor({ state: 'detached' });
  });

  // ------------------------------------------------------------ the viewer
  const { context: vContext, page: vPage } = await newPage(browser, 'viewer');

  await step('the invitation is accepted in another browser: a name and a password', async () => {
    await vPage.goto(invitation);
    await vPage.getByRole('heading', { name: /You are invited to default as viewer/ }).waitFor();
    assert.equal(await vPage.getByTestId('invited-email').innerText(), viewer.email);
    await vPage.getByLabel('Your name').fill(viewer.name);
    await vPage.getByLabel('New password').fill('too-short');
    await vPage.getByLabel('Repeat the password').fill('too-short');
    await vPage.getByRole('button', { name: 'Join and sign in' }).click();
    await vPage.getByRole('alert').filter({ hasText: 'at least 12 characters' }).waitFor();
    await vPage.getByLabel('New password').fill(viewer.password);
    await vPage.getByLabel('Repeat the password').fill(viewer.password);
    await screenshot(vPage, 'invitation');
    await vPage.getByRole('button', { name: 'Join and sign in' }).click();
    await vPage.getByRole('heading', { name: 'Mocks' }).waitFor();
    assert.match(await vPage.getByTestId('who').innerText(), /Vera Viewer\s*viewer/);
    assert.ok(!vPage.url().includes('dcy_inv_'), 'the used link stays in the address bar');
  });

  await step('the link works once', async () => {
    const other = await browser.newContext();
    const p = await other.newPage();
    // Not watched: its one 404 is the point.
    await p.goto(invitation);
    await p.getByRole('alert').filter({ hasText: 'Invitation not found' }).waitFor();
    await other.close();
  });

  await step('a viewer sees mocks but no button to change them', async () => {
    await vPage.getByRole('link', { name: 'users' }).waitFor();
    assert.equal(await vPage.getByRole('link', { name: 'New mock' }).count(), 0);
    assert.equal(await vPage.getByRole('button', { name: 'New project' }).count(), 0);
    assert.equal(await vPage.getByRole('link', { name: 'API keys' }).count(), 0);
    await screenshot(vPage, 'viewer-mocks');
    await vPage.goto(`${base}/#/mocks/${invoices.id}`);
    await vPage.getByTestId('mock-name').filter({ hasText: 'invoices' }).waitFor();
    await vPage.locator('#data-editor .cm-content').waitFor();
    assert.equal(await vPage.getByRole('button', { name: 'Delete' }).count(), 0);
    assert.equal(await vPage.getByRole('button', { name: 'Save data' }).count(), 0);
    await vPage.getByTestId('role-note').filter({ hasText: 'needs the editor role' }).waitFor();
    await vPage.getByRole('link', { name: 'Settings' }).click();
    await vPage.getByLabel('Name').waitFor();
    assert.ok(await vPage.getByLabel('Name').isDisabled(), 'a viewer can type in the settings');
    assert.equal(await vPage.getByRole('button', { name: 'Save settings' }).count(), 0);
    await screenshot(vPage, 'viewer-mock');
    await vPage.getByRole('link', { name: 'Members' }).click();
    await vPage.getByRole('cell', { name: viewer.email, exact: true }).waitFor();
    assert.equal(await vPage.getByRole('button', { name: 'Invite' }).count(), 0);
    assert.equal(await vPage.getByRole('button', { name: /^Remove/ }).count(), 0);
    await screenshot(vPage, 'viewer-members');
  });

  await step('the server refuses a viewer what the buttons hide', async () => {
    expectFailedRequest(`/admin/v1/mocks/${invoices.id}`, 403);
    const patch = await forced(vPage, 'PATCH', `/mocks/${invoices.id}`, JSON.stringify({ name: 'hacked' }));
    assert.equal(patch.status, 403);
    assert.deepEqual(patch.body, { error: 'Forbidden: changing mocks needs the editor role' });
    expectFailedRequest(`/admin/v1/workspaces/${defaultWS.id}/keys`, 403);
    const keys = await forced(vPage, 'GET', `/workspaces/${defaultWS.id}/keys`);
    assert.equal(keys.status, 403);
    const still = await call('GET', `/mocks/${invoices.id}`, adminToken);
    assert.equal(still.json.name, 'invoices');
  });

  // --------------------------------------------------- a key, used by curl
  let secret;
  await step('the owner creates a key limited to the project, shown once', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys of default' }).waitFor();
    await page.getByLabel('Key name').fill('ci');
    await page.getByLabel('Key role').selectOption('editor');
    await page.getByLabel('Key project').selectOption({ label: 'billing' });
    await page.getByRole('button', { name: 'Create key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Store this key now' });
    await dialog.waitFor();
    secret = await dialog.getByTestId('key-secret').inputValue();
    assert.match(secret, /^dcy_key_[A-Za-z0-9_-]{43}$/);
    assert.match(await dialog.innerText(), /only time Decoy shows the key/);
    await screenshot(page, 'key-shown-once');
    await dialog.getByRole('button', { name: 'I have stored it' }).click();
    await dialog.waitFor({ state: 'detached' });
    const row = page.locator('tr[data-key="ci"]');
    assert.match(await row.innerText(), /editor[\s\S]*billing[\s\S]*never/);
    assert.ok(!(await page.content()).includes(secret), 'the key is still in the page');
  });

  await step('the key works with a plain HTTP request, as curl sends it', async () => {
    const list = await call('GET', '/mocks', secret);
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.json.mocks.map((m) => m.name), ['invoices']);
    const created = await call('POST', '/mocks?name=from-ci', secret, '[{"id":1}]');
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.project_id, billing);
    const users = await call('GET', `/mocks?workspace_id=${defaultWS.id}&q=users`, secret);
    assert.deepEqual(users.json.mocks, [], 'a project key sees another project');
    await page.getByRole('button', { name: 'Refresh' }).click();
  });

  await step('revoking asks first, and the key stops working', async () => {
    await page.getByRole('button', { name: 'Revoke ci' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke this key?' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Revoke' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByText('Key ci revoked').waitFor();
    const refused = await call('GET', '/mocks', secret);
    assert.equal(refused.status, 401);
    assert.deepEqual(refused.json, { error: 'Invalid admin token' });
  });

  await step('the audit log shows each step, newest first, and no secret', async () => {
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByTestId('audit').waitFor();
    const rows = await page.locator('[data-testid="audit"] tbody tr').evaluateAll((trs) =>
      trs.map((tr) => ({ action: tr.dataset.action, text: tr.innerText })));
    const actions = rows.map((r) => r.action);
    const want = ['key.revoke', 'mock.create', 'key.create', 'member.join', 'member.invite', 'mock.create', 'project.create', 'member.add'];
    assert.deepEqual(actions.slice(0, want.length), want, `audit log: ${actions.join(', ')}`);
    assert.match(rows[1].text, /key ci/);
    assert.match(rows[3].text, new RegExp(viewer.email));
    assert.match(rows[4].text, new RegExp(owner.email));
    assert.match(rows[7].text, /server administrator/);
    const html = await page.content();
    for (const s of [secret, invitation.split('/').pop(), owner.password, viewer.password]) assert.ok(!html.includes(s), 'a secret is in the audit log');
    await screenshot(page, 'audit-log');
    // A viewer reads it too.
    await vPage.getByRole('link', { name: 'Audit log' }).click();
    await vPage.locator('[data-testid="audit"] tr[data-action="key.revoke"]').waitFor();
  });

  let acme;
  await step('the server admin makes a workspace in Studio, and adds the owner to it', async () => {
    const { context: aContext, page: aPage } = await newPage(browser, 'admin');
    await signInAsAdmin(aPage);
    await aPage.getByRole('heading', { name: 'Mocks' }).waitFor();
    await aPage.getByRole('button', { name: 'New workspace' }).click();
    const dialog = aPage.getByRole('dialog', { name: 'New workspace' });
    await dialog.getByLabel('Workspace name').fill('acme');
    await dialog.getByRole('button', { name: 'Create workspace' }).click();
    await aPage.getByRole('heading', { name: 'Projects of acme' }).waitFor();
    acme = await aPage.getByLabel('Workspace', { exact: true }).inputValue();
    await aPage.getByRole('link', { name: 'Members' }).click();
    await aPage.getByRole('heading', { name: 'Members of acme' }).waitFor();
    await aPage.getByLabel('Email').fill(owner.email);
    await aPage.getByLabel('Role', { exact: true }).selectOption('owner');
    await aPage.getByRole('button', { name: 'Invite' }).click();
    // A person who has an account joins at once: no link to pass on.
    await aPage.getByText(`${owner.email} is now a member, as owner.`).waitFor();
    await aPage.getByRole('cell', { name: owner.email, exact: true }).waitFor();
    await screenshot(aPage, 'admin-new-workspace');
    await aContext.close();
  });

  await step('the workspace switcher is remembered across reloads', async () => {
    await page.goto(base + '/#/');
    await page.reload();
    await page.getByLabel('Workspace', { exact: true }).selectOption({ label: 'acme' });
    await page.getByRole('heading', { name: 'Projects of acme' }).waitFor();
    await page.getByTestId('empty-state').waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Projects of acme' }).waitFor();
    assert.equal(await page.getByLabel('Workspace', { exact: true }).inputValue(), acme);
    await screenshot(page, 'switched-workspace');
    const storage = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }));
    assert.ok(!storage.includes('dcy_') && !storage.includes(owner.password), `storage holds ${storage}`);
  });

  await step('at 375 px wide, the team pages fit', async () => {
    await page.setViewportSize({ width: 375, height: 812 });
    // The sidebar folds into a menu at this width.
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByLabel('Workspace', { exact: true }).selectOption({ label: 'default' });
    for (const [hash, heading] of [['#/', 'Mocks'], ['#/members', 'Members of default'], ['#/keys', 'API keys of default'], ['#/audit', 'Audit log of default']]) {
      await page.goto(base + '/' + hash);
      await page.getByRole('heading', { name: heading, exact: true }).waitFor();
      if (hash === '#/audit') await page.getByTestId('audit').waitFor();
      const w = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(w <= 375, `${hash} is ${w} px wide at 375 px`);
      await screenshot(page, `phone-${hash.slice(2) || 'mocks'}`);
    }
  });

  await step('a tab does not act as the person another tab signed in as', async () => {
    // In the viewer's browser, a second tab signs in as the owner: the
    // browser's one session is now the owner's, and the first tab's CSRF
    // token the ended session's.
    const tab = await vContext.newPage();
    watch(tab, 'viewer, second tab');
    await tab.goto(base + '/');
    await tab.getByRole('heading', { name: 'Mocks' }).waitFor();
    await tab.getByRole('link', { name: 'users' }).waitFor();
    const status = await tab.evaluate(async (owner) => (await fetch('/studio/session', {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email: owner.email, password: owner.password }),
    })).status, owner);
    assert.equal(status, 200);
    // The first tab, still the viewer's page, is refused its next call
    // (403, the old CSRF token), and does not send it again as the owner.
    for (const call of [`/workspaces/${defaultWS.id}/members`, `/workspaces/${defaultWS.id}/invitations`, '/mocks?']) expectFailedRequest('/admin/v1' + call, 403);
    await vPage.getByRole('link', { name: 'Members' }).click();
    await vPage.getByText('Another tab signed in as someone else').waitFor();
    await vPage.getByLabel('Email', { exact: true }).waitFor();
    await screenshot(vPage, 'other-tab-signed-in');
    // Reloaded, it is the owner's.
    await vPage.reload();
    await vPage.getByTestId('who').filter({ hasText: 'Olivia Owner' }).waitFor();
    await tab.close();
  });

  await vContext.close();
  await context.close();
});
