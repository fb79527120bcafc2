// Personal access tokens in Decoy Studio (§6.1): a user signs in, finds the
// tokens it made through the API on its account page (names, creation,
// last use), revokes one after confirming, and that token answers 401;
// when a server admin resets the user's password, the user's other token
// answers 401 too, and the Studio signs the user out; the user then
// changes its own password on the account page, which ends its sessions
// and tokens too. See harness.mjs for what runs it.
import assert from 'node:assert/strict';
import { adminToken, base, expectFailedRequest, journey, log, newPage, screenshot, step } from './harness.mjs';

const user = { email: 'tess@example.com', name: 'Tess Tokens', password: 'tess-password-0123' };

// call is a plain HTTP request to the admin API, as a script or curl sends
// it: a bearer token ('' for none), no cookie.
async function call(method, path, token, body) {
  const headers = {};
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(`${base}/admin/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, json, text };
}

// token asks for a personal access token named name, as decoy login does.
async function token(name, password = user.password) {
  const r = await call('POST', '/auth/token', '', { email: user.email, password, name });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.name, name);
  return r.json;
}

await journey(async (browser) => {
  let userID, laptop, ci;
  await step('the server admin makes the user; the user makes two tokens through the API', async () => {
    const u = await call('POST', '/users', adminToken, user);
    assert.equal(u.status, 201, u.text);
    userID = u.json.id;
    const ws = (await call('GET', '/workspaces', adminToken)).json.workspaces.find((w) => w.name === 'default');
    const m = await call('POST', `/workspaces/${ws.id}/members`, adminToken, { email: user.email, role: 'viewer' });
    assert.equal(m.status, 201, m.text);
    laptop = await token('laptop');
    // Apart in time, so that the listing's order (newest first) is known.
    await new Promise((r) => setTimeout(r, 20));
    ci = await token('ci');
    assert.equal((await call('GET', '/me', laptop.token)).status, 200);
    assert.equal((await call('GET', '/me', ci.token)).status, 200);
  });

  const { page } = await newPage(browser, 'user');

  await step('the user signs in and opens its account from its name', async () => {
    await page.goto(base + '/');
    await page.getByLabel('Email', { exact: true }).fill(user.email);
    await page.getByLabel('Password', { exact: true }).fill(user.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Mocks' }).waitFor();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: user.name }).click();
    await page.getByRole('heading', { name: 'Your account' }).waitFor();
    assert.match(await page.getByTestId('account-who').innerText(), new RegExp(user.email));
  });

  const row = (t) => page.locator(`tr[data-token="${t.id}"]`);
  await step('its tokens are listed, newest first, with their last use', async () => {
    await row(ci).waitFor();
    await row(laptop).waitFor();
    const names = await page.locator('table.tokens tbody tr td:first-child').allInnerTexts();
    assert.deepEqual(names, ['ci', 'laptop']);
    // Last uses are written in batches: the first at once, the next
    // within ten seconds.
    const deadline = Date.now() + 20000;
    while ((await row(laptop).getByTestId('token-last-used').innerText()) === 'never') {
      assert.ok(Date.now() < deadline, 'the last use of laptop was never shown');
      await new Promise((r) => setTimeout(r, 500));
      await page.getByRole('button', { name: 'Refresh' }).click();
    }
    log('last use of laptop:', await row(laptop).getByTestId('token-last-used').innerText());
    // Never a secret.
    const text = await page.locator('main').innerText();
    assert.ok(!text.includes(laptop.token) && !text.includes(ci.token), 'a secret is on the page');
    assert.ok(!text.includes('dcy_pat_'), 'a token secret is on the page');
    await screenshot(page, 'account-tokens');
  });

  await step('revoking ci asks first; then ci answers 401 and laptop still works', async () => {
    await row(ci).getByRole('button', { name: /^Revoke ci,/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke this token?' });
    await dialog.waitFor();
    await screenshot(page, 'revoke-token-dialog');
    // Cancel keeps it.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.equal((await call('GET', '/me', ci.token)).status, 200);
    await row(ci).getByRole('button', { name: /^Revoke ci,/ }).click();
    await dialog.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('status').filter({ hasText: 'Token ci revoked' }).waitFor();
    await row(ci).waitFor({ state: 'detached' });
    await row(laptop).waitFor();
    const r = await call('GET', '/me', ci.token);
    assert.equal(r.status, 401, r.text);
    assert.equal(r.json.error, 'Invalid admin token');
    assert.equal((await call('GET', '/me', laptop.token)).status, 200);
    await screenshot(page, 'token-revoked');
  });

  await step('a server admin resets the password: laptop answers 401, the Studio signs the user out', async () => {
    const r = await call('PATCH', `/users/${userID}`, adminToken, { password: 'a-brand-new-password' });
    assert.equal(r.status, 200, r.text);
    const after = await call('GET', '/me', laptop.token);
    assert.equal(after.status, 401, after.text);
    assert.equal((await call('POST', '/auth/token', '', { email: user.email, password: user.password })).status, 401);
    expectFailedRequest('/admin/v1/me/tokens', 401);
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.getByText('Your session ended: sign in again.').waitFor();
    await screenshot(page, 'signed-out-by-reset');
  });

  await step('signed in with the new password, the user has no token left', async () => {
    await page.getByLabel('Email', { exact: true }).fill(user.email);
    await page.getByLabel('Password', { exact: true }).fill('a-brand-new-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.goto(`${base}/#/account`);
    await page.getByRole('heading', { name: 'Your account' }).waitFor();
    await page.getByTestId('no-tokens').waitFor();
    await screenshot(page, 'no-tokens-left');
  });

  await step('the user changes its own password: a wrong current one is refused; the right one ends its sessions and tokens', async () => {
    const kept = await token('kept', 'a-brand-new-password');
    const current = page.getByLabel('Current password', { exact: true });
    const fresh = page.getByLabel('New password', { exact: true });
    const again = page.getByLabel('Repeat the new password', { exact: true });
    await fresh.fill('my-own-new-password');
    await again.fill('my-own-new-password');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('Fill in your current password.').waitFor();
    await current.fill('not-my-password-at-all');
    await fresh.fill('my-own-new-password');
    await again.fill('my-own-new-password');
    expectFailedRequest('/admin/v1/me/password', 400);
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('The current password is wrong').waitFor();
    assert.equal((await call('GET', '/me', kept.token)).status, 200, 'a refused change revoked a token');
    await again.fill('my-own-new-passwort');
    await current.fill('a-brand-new-password');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('The two new passwords differ.').waitFor();
    await again.fill('my-own-new-password');
    await screenshot(page, 'change-password');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('Your password is changed').waitFor();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    const r = await call('GET', '/me', kept.token);
    assert.equal(r.status, 401, r.text);
    assert.equal((await call('POST', '/auth/token', '', { email: user.email, password: 'a-brand-new-password' })).status, 401);
    await page.getByLabel('Email', { exact: true }).fill(user.email);
    await page.getByLabel('Password', { exact: true }).fill('my-own-new-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Your account' }).waitFor(); // where it was
    await page.getByTestId('no-tokens').waitFor();
    await screenshot(page, 'signed-in-with-own-new-password');
  });
});
