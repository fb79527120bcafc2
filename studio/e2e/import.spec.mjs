// Import and export in Decoy Studio: drop an OpenAPI description and read
// what it would do before confirming (the mock it creates, the routes it
// mounts), import it and read the API at its own paths; import the same
// file again, which updates the mock in place (same mock, same route ids);
// a bad base path, refused by the server, shown at its field; export the
// project (its slug and routes in the manifest), and import the export
// again under new ids. See harness.mjs for what runs it.
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { adminToken, base, checkA11y, expectFailedRequest, journey, newPage, screenshot, signInAsAdmin, step } from './harness.mjs';

const petstore = `openapi: 3.1.0
info: {title: Pet store, version: 1.0.0}
paths:
  /pets:
    get:
      operationId: listPets
      responses:
        "200":
          description: All pets
          content:
            application/json:
              example:
                - {id: 1, name: Rex, tag: dog}
                - {id: 2, name: Tom, tag: cat}
    post:
      operationId: createPet
      responses:
        "201": {description: Created}
  /pets/{id}:
    get:
      operationId: showPetById
      responses:
        "200":
          description: One pet
          content:
            application/json:
              examples:
                rex: {value: {id: 1, name: Rex, tag: dog}}
        "404": {description: Not found}
`;

// adminGet calls the admin API from the test, with the admin token.
async function adminGet(path) {
  const res = await fetch(base + '/admin/v1' + path, { headers: { Authorization: 'Bearer ' + adminToken } });
  assert.equal(res.status, 200, `GET ${path}`);
  return res.json();
}

// drop drops a file with text on the element matched by selector, as a
// file dragged from the desktop is.
async function drop(page, selector, name, text) {
  const dt = await page.evaluateHandle(([n, t]) => {
    const d = new DataTransfer();
    d.items.add(new File([t], n, { type: 'application/octet-stream' }));
    return d;
  }, [name, text]);
  await page.dispatchEvent(selector, 'dragover', { dataTransfer: dt });
  await page.dispatchEvent(selector, 'drop', { dataTransfer: dt });
}

const plural = (n, one, many = one + 's') => `${n} ${n === 1 ? one : many}`;

// routeRows returns the rows of the routes table in scope (the preview or
// the result) as text: method, path, mock, action, new or not.
async function routeRows(scope) {
  const rows = scope.locator('table.import-routes tbody tr');
  const out = [];
  for (let i = 0; i < (await rows.count()); i++) {
    out.push((await rows.nth(i).locator('td').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim()).join(' | '));
  }
  return out;
}

// read answers a GET of the project's API at path, as an app reads it.
async function read(path) {
  const res = await fetch(base + '/p/default' + path);
  return { status: res.status, text: await res.text() };
}

await journey(async (browser) => {
  const { page } = await newPage(browser, 'desktop');
  const before = (await adminGet('/mocks?limit=1000')).mocks.length;
  const ws = (await adminGet('/workspaces')).workspaces.find((w) => w.name === 'default');
  const project = (await adminGet(`/workspaces/${ws.id}/projects`)).projects.find((p) => p.name === 'default');
  const routesOf = async () => (await adminGet(`/projects/${project.id}/routes`)).routes;
  assert.equal((await routesOf()).length, 0, 'the default project starts with routes');

  await step('open the import and export page', async () => {
    await signInAsAdmin(page);
    await page.getByRole('heading', { name: 'Mocks' }).waitFor();
    await page.getByRole('link', { name: 'Import and export' }).click();
    await page.getByRole('heading', { name: 'Import and export' }).waitFor();
  });

  await step('a dropped OpenAPI description shows the mock it would create and the routes it would mount', async () => {
    await drop(page, '[data-testid=dropzone]', 'petstore.yaml', petstore);
    const preview = page.getByLabel('Preview');
    await preview.getByRole('heading', { name: 'petstore.yaml: 1 mock to create, 3 routes to add' }).waitFor();
    await preview.getByRole('heading', { name: 'To create (1)' }).waitFor();
    await preview.getByRole('table', { name: 'Mocks to create' }).getByRole('cell', { name: 'listPets' }).waitFor();
    assert.deepEqual(await routeRows(preview), [
      'GET | /pets | listPets | read | new',
      'POST | /pets | listPets | create | new',
      'GET | /pets/{id} | listPets | read | new',
    ]);
    assert.match(await preview.innerText(), new RegExp(`followed by its path`));
    // Every operation with a 2xx answer is imported: nothing is skipped.
    assert.equal(await page.getByRole('list', { name: 'Skipped' }).count(), 0);
    // Nothing is stored before the import is confirmed.
    assert.equal((await adminGet('/mocks?limit=1000')).mocks.length, before);
    assert.equal((await routesOf()).length, 0);
    await checkA11y(page, 'import preview');
    await screenshot(page, 'import-preview');
  });

  let listPets, routeIDs;
  await step('confirm the import: the API answers at its own paths', async () => {
    await page.getByRole('button', { name: 'Import: 1 mock, 3 routes' }).click();
    const status = page.getByRole('status').filter({ hasText: 'Imported petstore.yaml: 1 mock created, 3 routes added.' });
    await status.waitFor();
    const mocks = (await adminGet('/mocks?limit=1000')).mocks;
    assert.equal(mocks.length, before + 1);
    listPets = mocks.find((m) => m.name === 'listPets');
    assert.ok(listPets, 'no mock listPets');
    const result = page.getByLabel('Result');
    await result.getByRole('table', { name: 'Mocks created' }).getByRole('link', { name: 'listPets' }).waitFor();
    assert.equal(await result.getByRole('link', { name: 'listPets' }).getAttribute('href'), `#/mocks/${listPets.id}`);
    assert.deepEqual(await routeRows(result), [
      'GET | /pets | listPets | read | new',
      'POST | /pets | listPets | create | new',
      'GET | /pets/{id} | listPets | read | new',
    ]);
    const routes = await routesOf();
    assert.deepEqual(routes.map((r) => `${r.method} ${r.path} ${r.action}`).sort(), ['GET /pets read', 'GET /pets/{id} read', 'POST /pets create']);
    assert.ok(routes.every((r) => r.mock_id === listPets.id), 'a route is not on listPets');
    routeIDs = Object.fromEntries(routes.map((r) => [`${r.method} ${r.path}`, r.id]));
    assert.deepEqual(await read('/pets?filters=tag%3Dcat'), { status: 200, text: '[{"id":2,"name":"Tom","tag":"cat"}]' });
    assert.deepEqual(await read('/pets/1'), { status: 200, text: '{"id":1,"name":"Rex","tag":"dog"}' });
    const link = status.getByRole('link', { name: 'See the routes of default' });
    assert.equal(await link.getAttribute('href'), `#/projects/${project.id}/routes`);
    assert.match(await status.innerText(), new RegExp(`served at ${base}/p/default`));
    await checkA11y(page, 'import result');
    await screenshot(page, 'import-done');
  });

  await step("the link opens the project's routes tab, with the imported routes", async () => {
    await page.getByRole('link', { name: 'See the routes of default' }).click();
    await page.waitForURL(`${base}/#/projects/${project.id}/routes`);
    for (const r of ['GET /pets', 'POST /pets', 'GET /pets/{id}']) await page.locator(`tr[data-route="${r}"]`).waitFor();
    await screenshot(page, 'import-routes-tab');
    await page.goBack();
    await page.getByRole('heading', { name: 'Import and export' }).waitFor();
  });

  await step('the same file again updates the mock in place: nothing created, the same route ids', async () => {
    await drop(page, '[data-testid=dropzone]', 'petstore.yaml', petstore);
    const preview = page.getByLabel('Preview');
    await preview.getByRole('heading', { name: 'petstore.yaml: 1 mock to update, 3 routes to update' }).waitFor();
    assert.equal(await preview.getByRole('heading', { name: /^To create/ }).count(), 0);
    const updated = preview.getByRole('table', { name: 'Mocks to update' });
    assert.equal(await updated.getByRole('link', { name: 'listPets' }).getAttribute('href'), `#/mocks/${listPets.id}/versions`);
    assert.match(await preview.innerText(), /gets the file's data as a new version/);
    assert.deepEqual(await routeRows(preview), [
      'GET | /pets | listPets | read | exists: updated in place',
      'POST | /pets | listPets | create | exists: updated in place',
      'GET | /pets/{id} | listPets | read | exists: updated in place',
    ]);
    await screenshot(page, 'import-again-preview');
    // At 375 px the tables become stacked rows and fit the screen.
    await page.setViewportSize({ width: 375, height: 812 });
    const w = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(w <= 375, `the preview is ${w} px wide at 375 px`);
    await screenshot(page, 'phone-import-again-preview');
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.getByRole('button', { name: 'Import: 1 mock, 3 routes' }).click();
    await page.getByRole('status').filter({ hasText: 'Imported petstore.yaml: 1 mock updated, 3 routes updated.' }).waitFor();
    const mocks = (await adminGet('/mocks?limit=1000')).mocks;
    assert.equal(mocks.length, before + 1, 'the import again created a mock');
    assert.deepEqual(mocks.filter((m) => m.name === 'listPets').map((m) => m.id), [listPets.id]);
    const routes = await routesOf();
    assert.deepEqual(Object.fromEntries(routes.map((r) => [`${r.method} ${r.path}`, r.id])), routeIDs);
    const versions = (await adminGet(`/mocks/${listPets.id}/versions`)).versions;
    assert.equal(versions.length, 2, "the file's data is not a new version");
    assert.deepEqual(await read('/pets/2'), { status: 200, text: '{"id":2,"name":"Tom","tag":"cat"}' });
    await screenshot(page, 'import-again-done');
  });

  await step('a base path the server refuses is shown at its field; a good one puts the routes under it', async () => {
    await page.getByLabel('Base path (optional)').fill('v1');
    expectFailedRequest('/import', 400);
    await drop(page, '[data-testid=dropzone]', 'petstore.yaml', petstore);
    const field = page.getByLabel('Base path (optional)');
    await page.locator('#import-base-path-error').filter({ hasText: '400: Invalid base_path: the path does not start with /' }).waitFor();
    assert.equal(await field.getAttribute('aria-invalid'), 'true');
    assert.match(await field.getAttribute('aria-describedby'), /import-base-path-error/);
    assert.equal(await page.getByLabel('Preview').count(), 0);
    // The dropped file stays chosen: the input names it.
    assert.equal(await page.locator('#import-file').evaluate((i) => i.files.length && i.files[0].name), 'petstore.yaml');
    await checkA11y(page, 'import base path error');
    await screenshot(page, 'import-base-path-error');
    await field.fill('/v1');
    await field.press('Enter');
    const preview = page.getByLabel('Preview');
    await preview.getByRole('heading', { name: 'petstore.yaml: 1 mock to create, 3 routes to add' }).waitFor();
    assert.equal(await page.locator('#import-base-path-error').count(), 0);
    assert.deepEqual((await routeRows(preview)).map((r) => r.split(' | ').slice(0, 2).join(' ')), ['GET /v1/pets', 'POST /v1/pets', 'GET /v1/pets/{id}']);
    await preview.getByRole('button', { name: 'Cancel' }).click();
    await field.fill('');
    assert.equal((await routesOf()).length, 3, 'a preview stored routes');
  });

  let archive;
  await step('export the project: its mocks, slug and routes', async () => {
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export' }).click(),
    ]);
    assert.equal(download.suggestedFilename(), 'decoy-default.tar.gz');
    const chunks = [];
    for await (const c of await download.createReadStream()) chunks.push(c);
    archive = Buffer.concat(chunks);
    const tar = gunzipSync(archive).toString('latin1');
    assert.match(tar, /"format": "decoy-export"/);
    assert.match(tar, /"slug": "default"/);
    assert.match(tar, /"routes": \[/);
    assert.ok(tar.includes('"path": "/pets/{id}"'), 'the export lacks the route GET /pets/{id}');
    assert.ok(tar.includes(`data/${listPets.id}.json`), 'the export lacks the imported mock');
  });

  await step('the export again: its ids are taken, then imported under new ids, the routed mock updated', async () => {
    expectFailedRequest('/import', 409);
    await page.locator('#import-file').setInputFiles({ name: 'decoy-default.tar.gz', mimeType: 'application/gzip', buffer: archive });
    await page.getByRole('alert').filter({ hasText: 'already exists; nothing was imported' }).waitFor();
    await page.getByLabel('New ids (for a Decoy export)').check();
    // The seeded mocks come back as new mocks; listPets, whose routes are
    // at the same methods and paths, gets the export's data.
    const preview = page.getByLabel('Preview');
    await preview.getByRole('heading', { name: `decoy-default.tar.gz: ${plural(before, 'mock')} to create, 1 mock to update, 3 routes to update` }).waitFor();
    await screenshot(page, 'import-export-preview');
    await page.getByRole('button', { name: `Import: ${plural(before + 1, 'mock')}, 3 routes` }).click();
    await page.getByRole('status').filter({ hasText: `Imported decoy-default.tar.gz: ${plural(before, 'mock')} created, 1 mock updated, 3 routes updated.` }).waitFor();
    assert.equal((await adminGet('/mocks?limit=1000')).mocks.length, 2 * before + 1);
    assert.deepEqual(Object.fromEntries((await routesOf()).map((r) => [`${r.method} ${r.path}`, r.id])), routeIDs);
  });

  await step('a file dropped as the page opens, before its project is chosen, is checked once the project is', async () => {
    const { context, page: early } = await newPage(browser, 'desktop');
    // Effects run after the next frame, or 100 ms after a render without
    // one: with no frames, the page chooses its project 100 ms after its
    // select lists the projects, and the file is dropped in between.
    await early.addInitScript(() => {
      window.requestAnimationFrame = () => 0;
    });
    await signInAsAdmin(early);
    await early.getByRole('heading', { name: 'Mocks' }).waitFor();
    await early.goto(base + '/#/transfer');
    await early.locator('#transfer-project option').first().waitFor({ state: 'attached' });
    await drop(early, '[data-testid=dropzone]', 'petstore.yaml', petstore);
    await early.getByLabel('Preview').getByRole('heading', { name: /^petstore\.yaml: / }).waitFor();
    assert.equal(await early.locator('#transfer-project').inputValue(), project.id);
    await context.close();
  });
});
