// A web app on another origin, as a browser runs it: a page served by a
// second local server (another port is another origin) reads Decoy's JSON
// error for an unknown path, rather than a CORS failure, reads a private
// mock with its token as a bearer token, and calls the admin API with a
// bearer token. See harness.mjs for what runs it.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { adminToken, base, expectFailedRequest, journey, newPage, screenshot, step } from './harness.mjs';

// app is the other origin: one page, which shows what it read.
const app = createServer((req, res) => {
  res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
  res.end('<!doctype html><html lang="en"><title>An app on another origin</title><main><h1>An app</h1><pre id="out"></pre></main></html>');
});
await new Promise((resolve) => app.listen(0, '127.0.0.1', resolve));
const appURL = `http://127.0.0.1:${app.address().port}/`;

// fetchFromPage fetches url from the page, as the app's own script would,
// and returns {status, body}, or {error} when the browser refused to let
// the page read the answer.
function fetchFromPage(page, url, headers = {}) {
  return page.evaluate(async ({ u, h }) => {
    try {
      const res = await fetch(u, { headers: h, credentials: 'omit', cache: 'no-store' });
      const body = await res.json();
      document.getElementById('out').textContent += `${res.status} ${u}\n${JSON.stringify(body)}\n`;
      return { status: res.status, body };
    } catch (e) {
      return { error: String(e) };
    }
  }, { u: url, h: headers });
}

try {
  await journey(async (browser) => {
    const { page } = await newPage(browser, 'app');
    await step('the app is on another origin than Decoy', async () => {
      await page.goto(appURL);
      assert.notEqual(new URL(appURL).origin, new URL(base).origin);
    });

    await step('an unknown path: the app reads the JSON 404', async () => {
      expectFailedRequest('/no/such/path', 404);
      const r = await fetchFromPage(page, `${base}/no/such/path`);
      assert.deepEqual(r, { status: 404, body: { error: 'Not found' } });
    });

    await step('an unknown mock: the app reads the JSON 404', async () => {
      expectFailedRequest('/mock/00000000-0000-4000-8000-000000000000', 404);
      const r = await fetchFromPage(page, `${base}/mock/00000000-0000-4000-8000-000000000000`);
      assert.deepEqual(r, { status: 404, body: { error: 'Mock api not found' } });
    });

    await step('a private mock, its token sent as Authorization: Bearer (a preflighted request)', async () => {
      const res = await fetch(`${base}/admin/v1/mocks?private=true&name=cors-private`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json' },
        body: '[{"id":1}]',
      });
      const mock = await res.json();
      assert.equal(res.status, 201, JSON.stringify(mock));
      const r = await fetchFromPage(page, `${base}/mock/${mock.id}`, { Authorization: `Bearer ${mock.token}` });
      assert.deepEqual(r, { status: 200, body: [{ id: 1 }] });
    });

    await step('the admin API, with a bearer token (a preflighted request)', async () => {
      const r = await fetchFromPage(page, `${base}/admin/v1/mocks?limit=1`, { Authorization: `Bearer ${adminToken}` });
      assert.equal(r.status, 200, JSON.stringify(r));
      assert.ok(Array.isArray(r.body.mocks), JSON.stringify(r.body));
      await screenshot(page, 'app-on-another-origin');
    });
  });
} finally {
  app.close();
}
