// The everyday friction of a first trial, gone: a workspace with no
// members says so, and lists its pending invitations, which an owner
// revokes; two mocks of one name are told apart in the sidebar; a mock
// generated on every read shows no stored size; and at 375 px the header
// is one row, its pages and the sidebar behind one Menu button. See
// harness.mjs for what runs it.
import assert from 'node:assert/strict';
import { adminToken, base, checkA11y, journey, newPage, screenshot, signInAsAdmin, step } from './harness.mjs';

// call is a plain HTTP request to the admin API with the admin token.
async function call(method, path, body, contentType = 'application/json') {
  const headers = { Authorization: `Bearer ${adminToken}` };
  if (body !== undefined) headers['Content-Type'] = contentType;
  const res = await fetch(`${base}/admin/v1${path}`, { method, headers, body: typeof body === 'string' || body === undefined ? body : JSON.stringify(body) });
  const text = await res.text();
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

await journey(async (browser) => {
  let team, twins, generated;
  await step('a workspace with no members but an invitation; two mocks of one name; a mock generated on every read', async () => {
    team = await call('POST', '/workspaces', { name: 'team' });
    const inv = await call('POST', `/workspaces/${team.id}/members`, { email: 'bob@example.com', role: 'editor' });
    assert.ok(inv.invitation_url, 'no invitation link');
    const ws = (await call('GET', '/workspaces')).workspaces.find((w) => w.name === 'default');
    const project = (await call('GET', `/workspaces/${ws.id}/projects`)).projects.find((p) => p.name === 'default');
    const create = (name, data) => call('POST', `/mocks?name=${name}&project_id=${project.id}`, data);
    twins = [await create('twin', '[1]'), await create('twin', '[2]')];
    generated = await create('always-fresh', '[]');
    await call('PUT', `/mocks/${generated.id}/template?mode=always`, '{"$repeat": 3, "$item": {"name": "{{ name }}"}}');
  });

  const { context, page } = await newPage(browser, 'admin');
  await step('sign in and open the members of team', async () => {
    await signInAsAdmin(page);
    await page.getByRole('heading', { name: 'Mocks' }).waitFor();
    await page.getByLabel('Workspace', { exact: true }).selectOption({ label: 'team' });
    await page.goto(`${base}/#/members`);
    await page.getByRole('heading', { name: 'Members of team' }).waitFor();
  });

  await step('no members: a message says so; the pending invitation is listed', async () => {
    const empty = page.getByTestId('members-empty');
    await empty.waitFor();
    assert.match(await empty.innerText(), /team has no members yet/);
    const pending = page.getByTestId('pending-invitations');
    await pending.getByRole('heading', { name: 'Pending invitations' }).waitFor();
    assert.match(await pending.getByRole('row').nth(1).innerText(), /bob@example\.com\s+editor/);
    await checkA11y(page, 'members-empty');
    await screenshot(page, 'members-pending');
  });

  await step('an owner revokes the invitation; its link stops working', async () => {
    await page.getByRole('button', { name: 'Revoke the invitation of bob@example.com' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke this invitation?' });
    await dialog.getByRole('button', { name: 'Revoke' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByText('The invitation of bob@example.com was revoked.').waitFor();
    await page.getByTestId('pending-invitations').waitFor({ state: 'detached' });
    assert.match(await page.getByTestId('members-empty').innerText(), /invite someone below/);
    const { invitations } = await call('GET', `/workspaces/${team.id}/invitations`);
    assert.deepEqual(invitations, []);
  });

  await step('the list: a mock generated on every read shows "generated", not a size', async () => {
    await page.getByLabel('Workspace', { exact: true }).selectOption({ label: 'default' });
    await page.goto(`${base}/#/`);
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'always-fresh', exact: true }) });
    await row.waitFor();
    assert.equal((await row.locator('td[data-label="Size"]').innerText()).trim(), 'generated');
    const twinRow = page.getByRole('row').filter({ hasText: twins[0].id });
    assert.equal((await twinRow.locator('td[data-label="Size"]').innerText()).trim(), '3 B');
  });

  await step('two mocks of one name are told apart in the sidebar', async () => {
    await page.goto(`${base}/#/mocks/${twins[0].id}`);
    await page.getByTestId('mock-name').waitFor();
    const side = page.getByRole('complementary', { name: 'Projects and mocks' });
    for (const m of twins) {
      const link = side.locator(`a[href="#/mocks/${m.id}"]`);
      await link.waitFor();
      assert.match(await link.innerText(), new RegExp(`^twin\\s+${m.id.slice(0, 8)}$`));
    }
    const other = side.locator(`a[href="#/mocks/${generated.id}"]`);
    assert.equal((await other.innerText()).trim(), 'always-fresh');
    await checkA11y(page, 'sidebar-twins');
    await screenshot(page, 'sidebar-twins');
  });

  await step('at 375 px the header is one row, with one Menu button', async () => {
    await page.setViewportSize({ width: 375, height: 812 });
    const header = await page.locator('header.top').boundingBox();
    const brand = await page.locator('header.top .brand').boundingBox();
    const menu = page.getByRole('button', { name: 'Menu', exact: true });
    const button = await menu.boundingBox();
    assert.ok(header.height < 2 * Math.max(brand.height, button.height), `the header is ${header.height} px high`);
    assert.ok(Math.abs((brand.y + brand.height / 2) - (button.y + button.height / 2)) < 8, 'the brand and the menu button are not on one row');
    let shown = 0;
    for (const b of await page.getByRole('button', { name: /menu/i }).all()) if (await b.isVisible()) shown++;
    assert.equal(shown, 1, `${shown} menu buttons`);
    assert.equal(await page.getByRole('link', { name: 'Members' }).isVisible(), false);
    await screenshot(page, 'phone-header');
  });

  await step('the Menu button opens the pages and the sidebar; a link followed closes it', async () => {
    await page.getByRole('button', { name: 'Menu', exact: true }).click();
    await page.getByRole('link', { name: 'Members' }).waitFor();
    await page.getByLabel('Workspace', { exact: true }).waitFor();
    await checkA11y(page, 'phone-menu-open');
    await screenshot(page, 'phone-menu-open');
    const w = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(w <= 375, `the open menu is ${w} px wide at 375 px`);
    await page.getByRole('link', { name: 'Members' }).click();
    await page.getByRole('heading', { name: 'Members of default' }).waitFor();
    await page.getByRole('link', { name: 'Members' }).waitFor({ state: 'hidden' });
    assert.equal(await page.getByRole('button', { name: 'Menu', exact: true }).getAttribute('aria-expanded'), 'false');
  });

  await context.close();
});
