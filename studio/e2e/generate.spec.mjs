// Generated data in Decoy Studio: a starter template, its live preview,
// an error shown inline while typing, then a mock that generates fresh data
// on every read, reproduced with Decoy-Seed; its Data tab shows a sample
// and leads to its template, edited on the Generate page. See harness.mjs for what runs
// it.
import assert from 'node:assert/strict';
import { base, expectFailedRequest, journey, newPage, screenshot, setEditor, signInAsAdmin, step } from './harness.mjs';

await journey(async (browser) => {
  const { page } = await newPage(browser, 'generate');
  const preview = page.getByTestId('preview');
  const previewJSON = async () => JSON.parse(await preview.textContent());

  await step('sign in and open Generate', async () => {
    await signInAsAdmin(page);
    await page.getByRole('heading', { name: 'Mocks' }).waitFor();
    await page.getByRole('link', { name: 'Generate' }).click();
    await page.getByRole('heading', { name: 'Generate data' }).waitFor();
  });

  await step('the users starter is previewed', async () => {
    await page.getByTestId('preview-seed').waitFor();
    const users = await previewJSON();
    assert.equal(users.length, 10);
    assert.equal(typeof users[0].age, 'number');
    assert.equal(users[3].id, 3);
    assert.match(users[0].email, /@/);
    await screenshot(page, 'users-preview');
  });

  await step('a typo is named inline, where it is', async () => {
    expectFailedRequest('/admin/v1/generate', 400);
    await setEditor(page, '#template-editor', '{"items": {"$repeat": 2, "$item": {"name": "{{ nmae }}"}}}');
    const err = page.getByTestId('template-error');
    await err.waitFor();
    assert.equal(await err.textContent(), '$.items.name: unknown function "nmae"');
    assert.ok(await page.getByRole('button', { name: 'Create mock' }).isDisabled());
    await screenshot(page, 'template-error');
  });

  await step('fixed, the preview follows', async () => {
    await setEditor(page, '#template-editor', '{"items": {"$repeat": 2, "$item": {"name": "{{ name }}", "n": "{{ index }}"}}}');
    await page.getByTestId('template-error').waitFor({ state: 'detached' });
    await page.waitForFunction(() => document.querySelector('[data-testid=preview]')?.textContent.includes('"items"'));
    const v = await previewJSON();
    assert.deepEqual(v.items.map((x) => x.n), [0, 1]);
  });

  await step('the orders starter, as a mock generating on every read', async () => {
    await page.getByRole('button', { name: 'orders' }).click();
    await page.waitForFunction(() => document.querySelector('[data-testid=preview]')?.textContent.includes('"lines"'));
    await page.getByLabel('Always: fresh data on every read (Decoy-Seed gives an answer again)').check();
    await page.getByLabel('Name').fill('orders');
    await page.getByRole('button', { name: 'Create mock' }).click();
    await page.waitForURL(/#\/mocks\/[0-9a-f-]{36}/);
    assert.equal(await page.getByTestId('template-badge').textContent(), 'generated on every read');
    await screenshot(page, 'orders-mock');
    const id = /#\/mocks\/([0-9a-f-]{36})/.exec(page.url())[1];
    const a = await fetch(`${base}/mock/${id}`);
    const b = await fetch(`${base}/mock/${id}`);
    const seed = a.headers.get('decoy-seed');
    assert.ok(seed && seed !== b.headers.get('decoy-seed'));
    const body = await a.text();
    assert.notEqual(body, await b.text());
    const again = await fetch(`${base}/mock/${id}`, { headers: { 'Decoy-Seed': seed } });
    assert.equal(await again.text(), body);
    assert.ok(JSON.parse(body).every((o) => ['pending', 'paid', 'shipped', 'delivered'].includes(o.status)));
  });

  await step('its Data tab shows a sample, which a read with its seed gets again', async () => {
    const section = page.getByTestId('generated-data');
    await section.waitFor();
    assert.match(await section.textContent(), /generated on every read from its template/);
    await page.getByTestId('sample-seed').waitFor();
    const seed = /seed (\d+)/.exec(await page.getByTestId('sample-seed').textContent())[1];
    const sample = JSON.parse(await page.getByTestId('sample').textContent());
    assert.ok(sample.length >= 5 && sample.every((o) => o.lines.length >= 1));
    const id = /#\/mocks\/([0-9a-f-]{36})/.exec(page.url())[1];
    const read = await fetch(`${base}/mock/${id}`, { headers: { 'Decoy-Seed': seed } });
    assert.deepEqual(await read.json(), sample);
    await screenshot(page, 'always-data-tab');
    await page.getByRole('button', { name: 'Another sample' }).click();
    await page.waitForFunction((s) => {
      const e = document.querySelector('[data-testid=sample-seed]');
      return e && !e.textContent.includes(s);
    }, seed);
  });

  await step('the template is edited on the Generate page, and the sample follows', async () => {
    const id = /#\/mocks\/([0-9a-f-]{36})/.exec(page.url())[1];
    await page.getByRole('link', { name: 'Edit the template' }).click();
    await page.waitForURL(new RegExp(`#/generate/${id}$`));
    await page.getByRole('heading', { name: 'Edit the template' }).waitFor();
    // The mock's template is loaded, and previewed.
    await page.waitForFunction(() => document.querySelector('[data-testid=preview]')?.textContent.includes('"lines"'));
    assert.match(await page.locator('#template-editor .cm-content').textContent(), /"\$repeat": \[5, 10\]/);
    await screenshot(page, 'edit-template');
    assert.ok(await page.getByLabel('Always: fresh data on every read (Decoy-Seed gives an answer again)').isChecked());
    await setEditor(page, '#template-editor', '{"$repeat": 3, "$item": {"n": "{{ index }}", "who": "{{ name }}"}}');
    await page.waitForFunction(() => document.querySelector('[data-testid=preview]')?.textContent.includes('"who"'));
    await page.getByRole('button', { name: 'Save template' }).click();
    await page.waitForURL(new RegExp(`#/mocks/${id}$`));
    await page.waitForFunction(() => document.querySelector('[data-testid=sample]')?.textContent.includes('"who"'));
    const sample = JSON.parse(await page.getByTestId('sample').textContent());
    assert.deepEqual(sample.map((o) => o.n), [0, 1, 2]);
  });

  await step('the preview fits a phone', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(base + '/#/generate');
    await page.getByTestId('preview-seed').waitFor();
    await screenshot(page, 'phone');
  });
});
