// Rules in Decoy Studio (§13.1): on the route GET /users/{id}, the rules
// dialog adds two rules with the form (in the wrong order, then moved),
// shows what is wrong at the field (a status that is not a number) and the
// server's refusal at the rule it names (a header name in capitals), and
// saves them: the first call answers normally (a rule that holds once),
// the second fails with 503 (a rule that holds once, after it), the third
// answers normally again. The try panel sends those calls from the page
// and shows both answers and which rule made each; the counts are reset
// and the first call answers normally again; the JSON view refuses what
// is not JSON, and adds a fault, which the panel shows as a network error;
// a viewer sees the rules and tries them, without controls to change
// them; the dialog fits 375 px; and, the counts reset, two calls an app
// makes appear live in the project's Requests tab: the 200, then the 503.
// See harness.mjs for what runs it.
import assert from 'node:assert/strict';
import { adminToken, base, expectFailedRequest, journey, newPage, screenshot, signInAsAdmin, step } from './harness.mjs';

const viewer = { email: 'vera@example.com', name: 'Vera Viewer', password: 'vera-password-012345' };

// call is a plain HTTP request to the admin API with the admin token.
async function call(method, path, body) {
  const headers = { Authorization: `Bearer ${adminToken}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(`${base}/admin/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

const route = 'GET /users/{id}';

// send clicks Send in the try panel and returns the newest answer, once
// it is listed: {status, rule, text}.
async function send(dialog, n) {
  await dialog.getByRole('button', { name: 'Send', exact: true }).click();
  const result = dialog.getByTestId('try-result').first();
  await result.filter({ hasText: `#${n}` }).waitFor();
  return {
    status: await result.getByTestId('try-status').innerText(),
    rule: await result.getByTestId('try-rule').innerText(),
    text: await result.innerText(),
  };
}

await journey(async (browser) => {
  let users, data, project;
  await step('the seeded users mock, a route on it, and a viewer, as a script would make them', async () => {
    users = (await call('GET', '/mocks')).mocks.find((m) => m.name === 'users');
    assert.ok(users, 'the example mock users is not seeded');
    data = await call('GET', `/mocks/${users.id}/data`);
    const ws = (await call('GET', '/workspaces')).workspaces.find((w) => w.name === 'default');
    project = (await call('GET', `/workspaces/${ws.id}/projects`)).projects.find((p) => p.name === 'default');
    await call('POST', `/projects/${project.id}/routes`, { method: 'GET', path: '/users/{id}', mock_id: users.id });
    await call('POST', '/users', viewer);
    await call('POST', `/workspaces/${ws.id}/members`, { email: viewer.email, role: 'viewer' });
  });

  const { context, page } = await newPage(browser, 'editor');
  const dialog = page.getByRole('dialog', { name: `Rules of ${route}` });
  const itemPath = `/p/default/users/${data[0].id}`;

  await step('open the rules of GET /users/{id} from its row: none yet', async () => {
    await signInAsAdmin(page);
    await page.getByRole('heading', { name: 'Mocks' }).waitFor();
    await page.goto(`${base}/#/projects/${project.id}/routes`);
    const row = page.locator(`tr[data-route="${route}"]`);
    await row.getByTestId('route-example').waitFor();
    assert.equal(await row.getByTestId('rule-count').innerText(), '0');
    await row.getByRole('button', { name: `Rules 0 of ${route}` }).click();
    await dialog.waitFor();
    await dialog.getByTestId('no-rules').waitFor();
    assert.equal(await dialog.getByLabel(/^Parameter/).inputValue(), String(data[0].id));
    await screenshot(page, 'rules-none');
  });

  await step('add the failing rule, then the rule before it, and move that one up', async () => {
    await dialog.getByRole('button', { name: 'Add rule' }).click();
    const first = dialog.locator('li.rule[data-rule="1"]');
    await first.getByLabel('Name').fill('then down');
    await first.getByLabel('Times').fill('1');
    await first.getByLabel('Status').fill('503');
    await first.getByLabel('Headers').fill('Retry-After: 1');
    await first.getByLabel('Answer').selectOption('body');
    await first.getByLabel('Body (JSON)').fill('{"error":"Down for a moment"}');
    await dialog.getByRole('button', { name: 'Add rule' }).click();
    const second = dialog.locator('li.rule[data-rule="2"]');
    await second.getByLabel('Name').fill('first ok');
    await second.getByLabel('Times').fill('1');
    await dialog.getByRole('button', { name: 'Move rule 2 up' }).click();
    assert.equal(await dialog.locator('li.rule[data-rule="1"]').getByLabel('Name').inputValue(), 'first ok');
    assert.equal(await dialog.locator('li.rule[data-rule="2"]').getByLabel('Name').inputValue(), 'then down');
    await screenshot(page, 'rules-form');
  });

  await step('what is wrong shows at the field, and the server refusal at the rule it names', async () => {
    const second = dialog.locator('li.rule[data-rule="2"]');
    await second.getByLabel('Status').fill('five hundred');
    await dialog.getByRole('button', { name: 'Save rules' }).click();
    await second.getByText('The status must be a whole number').waitFor();
    assert.equal(await second.getByLabel('Status').getAttribute('aria-invalid'), 'true');
    await second.getByLabel('Status').fill('503');
    await second.getByLabel('When').fill('header.X-Mode=down');
    expectFailedRequest('/admin/v1/routes/', 400);
    await dialog.getByRole('button', { name: 'Save rules' }).click();
    await second.getByTestId('rule-refused').filter({ hasText: 'when: header.X-Mode: header names are written in lower case (header.x-mode)' }).waitFor();
    assert.equal(await dialog.locator('li.rule[data-rule="1"]').getByTestId('rule-refused').count(), 0);
    await screenshot(page, 'rules-refused');
    await second.getByLabel('When').fill('');
    await dialog.getByRole('button', { name: 'Save rules' }).click();
    await dialog.getByRole('status').filter({ hasText: 'Rules saved (2)' }).waitFor();
    const saved = (await call('GET', `/projects/${project.id}/routes`)).routes[0].rules;
    assert.deepEqual(saved.map((r) => [r.name, r.times, r.status]), [['first ok', 1, null], ['then down', 1, 503]]);
    assert.deepEqual(saved[1].body, { error: 'Down for a moment' });
    assert.deepEqual(saved[1].headers, { 'Retry-After': '1' });
    assert.equal(await page.locator(`tr[data-route="${route}"]`).getByTestId('rule-count').innerText(), '2');
  });

  await step('try it: the first call answers normally, the second fails with 503, the third answers normally', async () => {
    const one = await send(dialog, 1);
    assert.equal(one.status, '200 OK');
    assert.equal(one.rule, 'rule “first ok”');
    assert.match(one.text, new RegExp(`"id": ${data[0].id}`));
    expectFailedRequest(itemPath, 503);
    const two = await send(dialog, 2);
    assert.equal(two.status, '503 Service Unavailable');
    assert.equal(two.rule, 'rule “then down”');
    assert.match(two.text, /Down for a moment/);
    const three = await send(dialog, 3);
    assert.equal(three.status, '200 OK');
    assert.equal(three.rule, "the route's normal answer");
    // Both answers are on the page, newest first.
    const listed = await dialog.getByTestId('try-result').allInnerTexts();
    assert.equal(listed.length, 3);
    assert.match(listed[1], /#2[\s\S]*503/);
    assert.match(listed[2], /#1[\s\S]*200/);
    await screenshot(page, 'rules-tried');
  });

  await step('reset the counts: the rules hold again', async () => {
    await dialog.getByRole('button', { name: 'Reset counts' }).click();
    await dialog.getByRole('status').filter({ hasText: 'Counts started again' }).waitFor();
    const again = await send(dialog, 4);
    assert.equal(again.rule, 'rule “first ok”');
  });

  await step('the JSON view: what is not JSON is refused there; a fault added there shows as a network error', async () => {
    await dialog.getByRole('button', { name: 'JSON' }).click();
    const text = dialog.getByLabel('Rules (JSON)');
    const rules = JSON.parse(await text.inputValue());
    assert.deepEqual(rules.map((r) => r.name), ['first ok', 'then down']);
    await text.fill('[{"name": "drop",');
    await dialog.getByRole('button', { name: 'Save rules' }).click();
    await dialog.getByText(/^Not an array of rules/).waitFor();
    await screenshot(page, 'rules-json-refused');
    await text.fill(JSON.stringify([{ name: 'drop', when: 'query.fault=reset', fault: 'reset' }, ...rules], null, 2));
    await dialog.getByRole('button', { name: 'Save rules' }).click();
    await dialog.getByRole('status').filter({ hasText: 'Rules saved (3)' }).waitFor();
    await dialog.getByRole('button', { name: 'Form' }).click();
    assert.equal(await dialog.locator('li.rule[data-rule="1"]').getByLabel('Fault').inputValue(), 'reset');
    await dialog.getByLabel('Query').fill('fault=reset');
    expectFailedRequest(itemPath, 'network');
    const dropped = await send(dialog, 5);
    assert.equal(dropped.status, 'Network error');
    assert.match(dropped.rule, /no answer/);
    await screenshot(page, 'rules-fault');
  });

  await step('at 375 px the dialog fits the screen', async () => {
    await page.setViewportSize({ width: 375, height: 812 });
    const w = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(w <= 375, `the rules dialog is ${w} px wide at 375 px`);
    const box = await dialog.boundingBox();
    assert.ok(box.width <= 375, `the dialog is ${box.width} px wide`);
    await screenshot(page, 'phone-rules');
    await dialog.getByRole('button', { name: 'Close' }).click();
    await dialog.waitFor({ state: 'detached' });
  });

  // ------------------------------------------------------------ a viewer
  const { context: vContext, page: vPage } = await newPage(browser, 'viewer');
  await step('a viewer sees the rules and tries them, but has nothing to change them with', async () => {
    await vPage.goto(base + '/');
    await vPage.getByLabel('Email', { exact: true }).fill(viewer.email);
    await vPage.getByLabel('Password', { exact: true }).fill(viewer.password);
    await vPage.getByRole('button', { name: 'Sign in' }).click();
    await vPage.getByRole('heading', { name: 'Mocks' }).waitFor();
    await vPage.goto(`${base}/#/projects/${project.id}/routes`);
    await vPage.locator(`tr[data-route="${route}"]`).getByRole('button', { name: `Rules 3 of ${route}` }).click();
    const vDialog = vPage.getByRole('dialog', { name: `Rules of ${route}` });
    const list = vDialog.getByTestId('rule-summaries');
    await list.waitFor();
    assert.match(await list.innerText(), /drop[\s\S]*fault reset[\s\S]*first ok[\s\S]*then down[\s\S]*503/);
    for (const name of ['Save rules', 'Add rule', 'Reset counts']) {
      assert.equal(await vDialog.getByRole('button', { name }).count(), 0, `a viewer sees ${name}`);
    }
    const tried = await send(vDialog, 1);
    assert.equal(tried.rule, 'rule “first ok”'); // counted afresh since the rules changed
    await screenshot(vPage, 'viewer-rules');
  });

  // ------------------------------------------------ the live journal
  await step('the live journal: an app calls twice, and the Requests tab shows the 200, then the 503, as they happen', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${base}/#/projects/${project.id}/requests`);
    const rows = page.locator('table.requests tbody tr');
    await rows.first().waitFor();
    await page.getByTestId('live').filter({ hasText: 'Live' }).waitFor();
    // The calls the try panel sent are there already: its 503 among them.
    assert.ok(await rows.filter({ hasText: itemPath }).filter({ hasText: '503' }).count() >= 1, 'the try panel’s 503 is not in the journal');
    const loads = await page.evaluate(() => performance.getEntriesByType('navigation').length);
    // The counts start again, and an app (this script, not the page)
    // calls twice: the rule "first ok" answers the first, "then down" fails the second.
    const { id } = (await call('GET', `/projects/${project.id}/routes`)).routes[0];
    await call('POST', `/routes/${id}/rules/reset`);
    const statuses = [];
    for (const n of [1, 2]) {
      const res = await fetch(`${base}${itemPath}?call=${n}`);
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    assert.deepEqual(statuses, [200, 503]);
    const second = rows.filter({ hasText: `${itemPath}?call=2` });
    await second.waitFor();
    assert.match(await second.innerText(), /GET[\s\S]*503/);
    const first = rows.filter({ hasText: `${itemPath}?call=1` });
    assert.match(await first.innerText(), /GET[\s\S]*200/);
    // Newest first: the 503 above the 200; and no reload brought them.
    assert.match(await rows.nth(0).innerText(), /call=2/);
    assert.match(await rows.nth(1).innerText(), /call=1/);
    assert.equal(await page.evaluate(() => performance.getEntriesByType('navigation').length), loads);
    await screenshot(page, 'rules-journal');
  });

  await vContext.close();
  await context.close();
});
