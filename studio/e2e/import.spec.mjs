// Import and export in Decoy Studio: drop an OpenAPI description, read
// what it would create and skip before confirming, import it, export the
// project, and import the export again under new ids. See harness.mjs for
// what runs it.
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { adminToken, base, expectFailedRequest, journey, newPage, screenshot, signInAsAdmin, step } from './harness.mjs';

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

await journey(async (browser) => {
  const { page } = await newPage(browser, 'desktop');
  const before = (await adminGet('/mocks?limit=1000')).mocks.length;

  await step('open the import and export page', async () => {
    await signInAsAdmin(page);
    await page.getByRole('heading', { name: 'Mocks' }).waitFor();
    await page.getByRole('link', { name: 'Import and export' }).click();
    await page.getByRole('heading', { name: 'Import and export' }).waitFor();
  });

  await step('a dropped OpenAPI description shows what it would create and skip', async () => {
    await drop(page, '[data-testid=dropzone]', 'petstore.yaml', petstore);
    const preview = page.getByLabel('Preview');
    await preview.getByRole('heading', { name: 'petstore.yaml: 2 mocks to create' }).waitFor();
    await preview.getByRole('cell', { name: 'listPets' }).waitFor();
    await preview.getByRole('cell', { name: 'showPetById' }).waitFor();
    const skipped = await page.getByRole('list', { name: 'Skipped' }).innerText();
    assert.match(skipped, /POST \/pets: not a GET operation/);
    assert.match(skipped, /GET \/pets\/\{id\} 404: not a 2xx response/);
    // Nothing is stored before the import is confirmed.
    assert.equal((await adminGet('/mocks?limit=1000')).mocks.length, before);
    await screenshot(page, 'import-preview');
  });

  let listPets;
  await step('confirm the import', async () => {
    await page.getByRole('button', { name: 'Import 2 mocks' }).click();
    await page.getByRole('status').filter({ hasText: 'Imported 2 mocks' }).waitFor();
    const mocks = (await adminGet('/mocks?limit=1000')).mocks;
    assert.equal(mocks.length, before + 2);
    listPets = mocks.find((m) => m.name === 'listPets');
    const res = await fetch(base + '/mock/' + listPets.id + '?filters=tag%3Dcat');
    assert.equal(await res.text(), '[{"id":2,"name":"Tom","tag":"cat"}]');
    await screenshot(page, 'import-done');
  });

  let archive;
  await step('export the project', async () => {
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
    assert.ok(tar.includes(`data/${listPets.id}.json`), 'the export lacks the imported mock');
  });

  await step('the export again: its ids are taken, then imported under new ids', async () => {
    expectFailedRequest('/import', 409);
    await page.locator('#import-file').setInputFiles({ name: 'decoy-default.tar.gz', mimeType: 'application/gzip', buffer: archive });
    await page.getByRole('alert').filter({ hasText: 'already exists; nothing was imported' }).waitFor();
    await page.getByLabel('New ids (for a Decoy export)').check();
    const n = before + 2;
    await page.getByLabel('Preview').getByRole('heading', { name: `decoy-default.tar.gz: ${n} mocks to create` }).waitFor();
    await screenshot(page, 'import-export-preview');
    await page.getByRole('button', { name: `Import ${n} mocks` }).click();
    await page.getByRole('status').filter({ hasText: `Imported ${n} mocks` }).waitFor();
    assert.equal((await adminGet('/mocks?limit=1000')).mocks.length, 2 * n);
  });
});
