// Generated data in Decoy Studio: a starter template, its live preview,
// an error shown inline while typing, then a mock that generates fresh data
// on every read, reproduced with Decoy-Seed. See harness.mjs for what runs
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

  await step('the preview fits a phone', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(base + '/#/generate');
    await page.getByTestId('preview-seed').waitFor();
    await screenshot(page, 'phone');
  });
});
