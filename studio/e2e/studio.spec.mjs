// The first journey through Decoy Studio: sign in with the admin token,
// create, read, edit, share and delete a mock, on a desktop and a phone.
// See harness.mjs for what runs it.
import assert from 'node:assert/strict';
import { adminToken, base, expectFailedRequest, journey, newPage, screenshot, setEditor as setEditorOf, step, watch } from './harness.mjs';

const data = [
  { id: 1, name: 'Ada', city: 'Paris', age: 36 },
  { id: 2, name: 'Linus', city: 'Helsinki', age: 28 },
  { id: 3, name: 'Grace', city: 'Paris', age: 45 },
  { id: 4, name: 'Ken', city: 'Berkeley', age: 50 },
];

await journey(async (browser) => {
  // ---------------------------------------------------------------- desktop
  const { context, page } = await newPage(browser, 'desktop');
  const setEditor = (selector, text) => setEditorOf(page, selector, text);
  const readToken = async () => {
    const dialog = page.getByRole('dialog', { name: 'Store this token now' });
    await dialog.waitFor();
    const token = await dialog.getByTestId('token').inputValue();
    assert.match(token, /^dcy_[A-Za-z0-9_-]{43}$/);
    return token;
  };
  const closeTokenDialog = async () => {
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
  };

  await step('the Studio opens on the sign-in page', async () => {
    const res = await page.goto(base + '/');
    assert.equal(res.status(), 200);
    assert.match(res.headers()['content-security-policy'], /script-src 'self'/);
    await page.getByLabel('Admin token').waitFor();
    await screenshot(page, 'sign-in');
  });

  await step('a wrong admin token is refused', async () => {
    expectFailedRequest('/studio/session', 401);
    await page.getByLabel('Admin token').fill('not-the-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Invalid admin token' }).waitFor();
    await screenshot(page, 'sign-in-refused');
  });

  await step('sign in with the keyboard alone', async () => {
    await page.getByLabel('Admin token').fill('');
    await page.getByLabel('Admin token').focus();
    await page.keyboard.type(adminToken);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Mocks' }).waitFor();
    // The token is kept nowhere in the page: not in storage, not in a
    // URL, and the session cookie cannot be read by scripts.
    const leaks = await page.evaluate((t) => ({
      storage: JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }),
      cookie: document.cookie,
      url: location.href,
      html: document.documentElement.outerHTML.includes(t),
    }), adminToken);
    assert.ok(!leaks.storage.includes(adminToken) && leaks.storage === '{}{}', `storage holds ${leaks.storage}`);
    assert.equal(leaks.cookie, '', 'the session cookie is readable by scripts');
    assert.ok(!leaks.url.includes(adminToken) && !leaks.html, 'the token is in the URL or the page');
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === 'decoy_session');
    assert.ok(session && session.httpOnly && session.sameSite === 'Strict', `cookie ${JSON.stringify(session)}`);
    await page.getByRole('cell', { name: 'users' }).waitFor();
    await screenshot(page, 'mocks-list');
  });

  await step('the list searches', async () => {
    await page.getByLabel('Search by name or id').fill('prod');
    await page.getByRole('link', { name: 'products' }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'users' }).count(), 0);
    await page.getByLabel('Search by name or id').fill('');
  });

  let mockURL, mockID, token;
  await step('create a private mock from JSON, with live validation', async () => {
    await page.getByRole('link', { name: 'New mock' }).first().click();
    await page.getByRole('heading', { name: 'New mock' }).waitFor();
    await page.getByLabel('Name').fill('people');
    await page.getByLabel('Private (needs a token, shown once)').check();
    await setEditor('#new-data', '[\n  {"id": 1,\n   "name": "Ada",}\n]');
    await page.getByTestId('validity').filter({ hasText: 'Invalid JSON at line 3, column' }).waitFor();
    assert.ok(await page.getByRole('button', { name: 'Create mock' }).isDisabled());
    await screenshot(page, 'create-invalid-json');
    await setEditor('#new-data', JSON.stringify(data, null, 2));
    await page.getByTestId('validity').filter({ hasText: 'Valid JSON · an array of 4 records' }).waitFor();
    await screenshot(page, 'create-valid-json');
    await page.getByRole('button', { name: 'Create mock' }).click();
  });

  await step('the token is shown once, with a notice and a copy button', async () => {
    token = await readToken();
    const dialog = page.getByRole('dialog');
    assert.match(await dialog.innerText(), /only time Decoy shows the token/);
    await dialog.getByRole('button', { name: 'Copy' }).click();
    await dialog.getByText('Copied').waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), token);
    // The dialog keeps the focus: tabbing never leaves it.
    for (let i = 0; i < 6; i++) {
      await page.keyboard.press('Tab');
      assert.ok(await page.evaluate(() => !!document.activeElement.closest('dialog')), 'focus left the dialog');
    }
    await screenshot(page, 'token-shown-once');
    await closeTokenDialog();
    mockURL = await page.getByTestId('mock-url').innerText();
    mockID = mockURL.split('/').pop();
    assert.match(mockID, /^[0-9a-f-]{36}$/);
    assert.equal(await page.getByTestId('mock-name').innerText(), 'people');
    // Shown once: the mock as the API gives it has no token.
    const got = await page.evaluate(async (id) => {
      const s = await (await fetch('/studio/session')).json();
      return (await fetch('/admin/v1/mocks/' + id, { headers: { 'X-CSRF-Token': s.csrf_token } })).json();
    }, mockID);
    assert.equal(got.token, undefined);
    assert.equal(got.private, true);
  });

  // run sends the playground's request and waits for its answer.
  const run = async () => {
    const runs = Number(await page.getByTestId('response').getAttribute('data-runs'));
    await page.getByRole('button', { name: 'Send request' }).click();
    await page.locator(`[data-testid="response"][data-runs="${runs + 1}"]`).waitFor();
  };
  const header = (name) => page.locator(`[data-header="${name}"]`).innerText();

  await step('query it in the playground with a filter and a limit', async () => {
    await page.getByRole('link', { name: 'Playground' }).click();
    await page.getByLabel('Path 1').fill('city');
    await page.getByLabel('Operator 1').selectOption('$eq');
    await page.getByLabel('Value 1').fill('Paris');
    await page.getByLabel('Limit').fill('1');
    // The exact URL, with the whole filters value encoded.
    const want = `${mockURL}?filters=city%3DParis&limit=1`;
    assert.equal(await page.getByTestId('request-url').innerText(), want);
    assert.match(await page.getByTestId('curl').innerText(), new RegExp(`^curl -i -H 'decoyauthtoken: ${token}' '${want.replace(/[?.]/g, '\\$&')}'$`));
    await run();
    assert.equal(await page.getByTestId('response-status').innerText(), '200 OK');
    assert.equal(await header('X-Total-Count'), '2');
    assert.equal(await header('X-RateLimit-Limit'), '100');
    assert.equal(await header('X-RateLimit-Remaining'), '99');
    assert.equal(await header('X-Quota-Remaining'), '49999');
    const body = JSON.parse(await page.getByTestId('response-body').innerText());
    assert.deepEqual(body, [data[0]]);
    await screenshot(page, 'playground-filter-limit');
  });

  await step('operators, ordering and several conditions are encoded as the spec says', async () => {
    await page.getByRole('button', { name: 'Add filter' }).click();
    await page.getByLabel('Path 2').fill('name');
    await page.getByLabel('Operator 2').selectOption('$nei');
    await page.getByLabel('Value 2').fill('a&b=c');
    await page.getByLabel('Order by').fill('age');
    await page.getByLabel('Direction').selectOption('desc');
    await page.getByLabel('Limit').fill('');
    const url = await page.getByTestId('request-url').innerText();
    assert.equal(url, `${mockURL}?filters=city%3DParis%26name%5B%24nei%5D%3Da%2526b%253Dc&order_by=age&order_direction=desc`);
    await run();
    const body = JSON.parse(await page.getByTestId('response-body').innerText());
    assert.deepEqual(body.map((r) => r.name), ['Grace', 'Ada']);
    await page.getByRole('button', { name: 'Remove filter 2' }).click();
    await page.getByLabel('Order by').fill('');
  });

  await step('server errors are shown as the user would see them', async () => {
    await page.getByLabel('Operator 1').selectOption('$eq');
    await page.getByLabel('Path 1').fill('city');
    await page.getByLabel('Offset').fill('-1');
    expectFailedRequest('/mock/' + mockID, 400);
    await run();
    assert.equal(await page.getByTestId('response-status').innerText(), '400 Bad Request');
    assert.deepEqual(JSON.parse(await page.getByTestId('response-body').innerText()), { error: 'Offset must be 0 or greater' });
    await screenshot(page, 'playground-error');
    await page.getByLabel('Offset').fill('');
  });

  await step('edit the data and see the change in the playground', async () => {
    await page.getByRole('link', { name: 'Data' }).click();
    await page.locator('#data-editor .cm-content').waitFor();
    const edited = [...data, { id: 5, name: 'Hedy', city: 'Paris', age: 41 }];
    await setEditor('#data-editor', JSON.stringify(edited, null, 2));
    await page.getByTestId('validity').filter({ hasText: 'an array of 5 records' }).waitFor();
    await page.getByRole('button', { name: 'Save data' }).click();
    await page.getByText('Saved: the next read gets the new data.').waitFor();
    await screenshot(page, 'data-edited');
    await page.getByRole('link', { name: 'Playground' }).click();
    await page.getByLabel('Path 1').fill('city');
    await page.getByLabel('Value 1').fill('Paris');
    await page.getByLabel('Limit').fill('5');
    await run();
    assert.equal(await header('X-Total-Count'), '3');
    const body = JSON.parse(await page.getByTestId('response-body').innerText());
    assert.deepEqual(body.map((r) => r.name), ['Ada', 'Grace', 'Hedy']);
    await screenshot(page, 'playground-after-edit');
  });

  await step('the data editor folds and formats', async () => {
    await page.getByRole('link', { name: 'Data' }).click();
    await setEditor('#data-editor', '[{"a":1},{"b":{"c":2}}]');
    await page.getByRole('button', { name: 'Format' }).click();
    const text = await page.locator('#data-editor .cm-content').innerText();
    assert.match(text, /^\[\n  \{\n    "a": 1\n  \},/);
    assert.ok(await page.locator('#data-editor .cm-foldGutter').count() > 0, 'no fold gutter');
    assert.ok(await page.locator('#data-editor .cm-content span').count() > 0, 'no syntax highlighting');
    // The keyboard can leave the editor, and the focus shows where it went.
    await page.locator('#data-editor .cm-content').click();
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => {
      const el = document.activeElement;
      return { tag: el.tagName, text: el.textContent, outline: getComputedStyle(el).outlineStyle };
    });
    assert.equal(focused.tag, 'BUTTON', `Tab from the editor went to ${JSON.stringify(focused)}`);
    assert.notEqual(focused.outline, 'none', 'the focused button shows no focus ring');
    await page.getByRole('button', { name: 'Revert' }).click();
  });

  let newToken;
  await step('rotate the token and see the old one refused', async () => {
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('button', { name: 'Rotate token' }).click();
    // Rotation asks first, naming what it breaks.
    const confirm = page.getByRole('dialog', { name: 'Rotate the token?' });
    assert.match(await confirm.innerText(), /Apps using the current token .* will get 401 at once/);
    await confirm.getByRole('button', { name: 'Rotate token' }).click();
    newToken = await readToken();
    assert.notEqual(newToken, token);
    await screenshot(page, 'token-rotated');
    // Escape closes the one-time dialog only once the token was copied.
    await page.keyboard.press('Escape');
    await page.getByTestId('not-stored').waitFor();
    await page.getByRole('dialog').getByRole('button', { name: 'Copy' }).click();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    await page.getByRole('link', { name: 'Playground' }).click();
    await page.getByLabel('Mock token').fill(token);
    expectFailedRequest('/mock/' + mockID, 401);
    await run();
    assert.equal(await page.getByTestId('response-status').innerText(), '401 Unauthorized');
    assert.deepEqual(JSON.parse(await page.getByTestId('response-body').innerText()), { error: 'Invalid auth token' });
    await screenshot(page, 'old-token-refused');
    await page.getByLabel('Mock token').fill(newToken);
    await run();
    assert.equal(await page.getByTestId('response-status').innerText(), '200 OK');
  });

  await step('settings: a rate limit, and the refusals it makes', async () => {
    await page.getByRole('link', { name: 'Settings' }).click();
    // Past the server's bound of every rate limit, the form says so
    // before anything is sent.
    await page.getByLabel('Rate limit per minute').fill('1000001');
    assert.equal(await page.getByLabel('Rate limit per minute').evaluate((e) => e.validity.rangeOverflow), true);
    await page.getByLabel('Rate limit per minute').fill('6');
    await page.getByLabel('Delay (ms)').fill('0');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    await page.getByRole('link', { name: 'Playground' }).click();
    await page.getByLabel('Mock token').fill(newToken);
    // The rate limit counted 5 reads this minute (4 served, the 400): one
    // more is served, then 429.
    await run();
    assert.equal(await page.getByTestId('response-status').innerText(), '200 OK');
    assert.equal(await header('X-RateLimit-Remaining'), '0');
    expectFailedRequest('/mock/' + mockID, 429);
    await run();
    assert.equal(await page.getByTestId('response-status').innerText(), '429 Too Many Requests');
    assert.deepEqual(JSON.parse(await page.getByTestId('response-body').innerText()), { error: 'Rate limit exceeded. Maximum 6 requests per minute.' });
    assert.equal(await header('X-RateLimit-Remaining'), '0');
    assert.ok(Number(await header('Retry-After')) > 0);
    await screenshot(page, 'playground-rate-limited');
  });

  await step('usage: served and refused reads, and the quota consumed', async () => {
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.getByTestId('minutes-served').waitFor();
    // Served: the five 200 answers; refused: the 429 (the 400 and the 401
    // are neither).
    assert.equal(await page.getByTestId('minutes-served').innerText(), '5');
    assert.equal(await page.getByTestId('minutes-refused').innerText(), '1');
    assert.equal(await page.getByTestId('days-served').innerText(), '5');
    assert.equal(await page.getByTestId('days-refused').innerText(), '1');
    assert.match(await page.getByTestId('quota-used').innerText(), /^5 served this month of 50[,.\s\u202f]?000/);
    assert.ok(await page.locator('.chart rect.refused').count() >= 2, 'no refused bar');
    await screenshot(page, 'usage');
  });

  // 375 px: every page fits the width, and works.
  await step('at 375 px wide', async () => {
    const phone = await browser.newContext({ viewport: { width: 375, height: 812 }, isMobile: true, hasTouch: true });
    const p = await phone.newPage();
    watch(p, 'phone');
    await p.goto(base + '/');
    await p.getByLabel('Admin token').fill(adminToken);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.getByRole('heading', { name: 'Mocks' }).waitFor();
    await p.getByRole('link', { name: 'people' }).waitFor();
    const fits = async (what) => {
      const w = await p.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(w <= 375, `${what} is ${w} px wide at 375 px`);
    };
    await fits('the list');
    await screenshot(p, 'phone-list');
    for (const tab of ['data', 'settings', 'playground', 'usage']) {
      await p.goto(`${base}/#/mocks/${mockID}/${tab}`);
      await p.getByRole('heading', { name: 'people' }).waitFor();
      if (tab === 'data') await p.locator('#data-editor .cm-content').waitFor();
      if (tab === 'usage') await p.getByTestId('minutes-served').waitFor();
      await fits(`the ${tab} tab`);
      await screenshot(p, `phone-${tab}`);
    }
    await phone.close();
  });

  await step('delete asks first', async () => {
    await page.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this mock?' });
    await dialog.waitFor();
    await screenshot(page, 'delete-confirm');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.equal(await page.getByTestId('mock-name').innerText(), 'people');
  });

  await step('sign out and see the admin pages refused', async () => {
    const csrf = await page.evaluate(async () => (await (await fetch('/studio/session')).json()).csrf_token);
    const cookie = (await context.cookies()).find((c) => c.name === 'decoy_session');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('Signed out.').waitFor();
    await page.getByLabel('Admin token').waitFor();
    await screenshot(page, 'signed-out');
    // The session is over on the server: its cookie, replayed with its
    // CSRF token, opens nothing.
    const res = await fetch(`${base}/admin/v1/mocks`, { headers: { Cookie: `decoy_session=${cookie.value}`, 'X-CSRF-Token': csrf } });
    assert.equal(res.status, 401);
    assert.deepEqual(await res.json(), { error: 'Session expired or signed out; sign in again' });
    // The admin pages show the sign-in page, and the API refuses the browser.
    await page.goto(`${base}/#/mocks/${mockID}/settings`);
    await page.getByLabel('Admin token').waitFor();
    assert.equal(await page.getByRole('heading', { name: 'people' }).count(), 0);
    expectFailedRequest('/admin/v1/mocks', 401);
    const status = await page.evaluate(async () => (await fetch('/admin/v1/mocks')).status);
    assert.equal(status, 401);
    await screenshot(page, 'admin-refused-after-sign-out');
  });

  await step('sign in again and delete the mock', async () => {
    await page.getByLabel('Admin token').fill(adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('mock-name').waitFor();
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('heading', { name: 'Mocks' }).waitFor();
    await page.getByRole('link', { name: 'users' }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'people' }).count(), 0);
    await screenshot(page, 'deleted');
  });

  await context.close();
});
