// Unit tests of api.js's session handling, with a fake fetch: run by
// TestStudioUnits (studio/dist_test.go), or node --test studio/web/test.
//
// A browser has one session. A tab made for person A keeps working when
// another tab signs in again as A (it learns the new CSRF token), and
// never sends a call as anyone else: not the call refused, not one whose
// refusal comes back later, not one made after.
import test from 'node:test';
import assert from 'node:assert/strict';

const api = await import('../src/api.js');

// server is the browser's session as the server sees it; sent lists the
// admin API calls it accepted, with whose token they came.
let server;
let sent;
let gate = null; // a promise the next /slow call waits on before answering
function reset(user) {
  server = { user, csrf: 'csrf-' + user };
  sent = [];
}
globalThis.fetch = async (url, opts = {}) => {
  const answer = (status, body) => ({ ok: status < 300, status, statusText: '', headers: new Map(), json: async () => body });
  if (url === '/studio/session') {
    if (opts.method === 'POST') return answer(200, { signed_in: true, csrf_token: server.csrf, user_id: server.user });
    return answer(200, server.user === null ? { signed_in: false } : { signed_in: true, csrf_token: server.csrf, user_id: server.user });
  }
  if (url.endsWith('/slow') && gate) await gate;
  const token = opts.headers['X-CSRF-Token'];
  if (server.user === null) return answer(401, { error: 'Session expired or signed out; sign in again' });
  if (token !== server.csrf) return answer(403, { error: 'Missing or invalid CSRF token' });
  sent.push(`${opts.method} ${url} as ${server.user}`);
  return answer(200, {});
};
const notices = [];
api.setSignedOutHandler((why) => notices.push(why || 'ended'));
const status = (p) => p.then(() => 200, (e) => e.status);

test('the same person signed in again in another tab: the call is sent again with the new token', async () => {
  reset('A');
  await api.session();
  server.csrf = 'csrf-A2'; // another tab signed in again as A
  assert.equal(await status(api.admin('DELETE', '/mocks/x')), 200);
  assert.deepEqual(sent, ['DELETE /admin/v1/mocks/x as A']);
  assert.deepEqual(notices, []);
});

test('someone else signed in in another tab: no call is sent as them, now or later', async () => {
  reset('A');
  await api.session();
  notices.length = 0;
  server = { user: 'B', csrf: 'csrf-B' };
  let release;
  gate = new Promise((r) => { release = r; });
  const slow = status(api.admin('DELETE', '/mocks/slow')); // its 403 comes back after the next one's
  assert.equal(await status(api.admin('DELETE', '/mocks/fast')), 403);
  assert.equal(notices.length, 1);
  assert.match(notices[0], /Another tab signed in as someone else/);
  release();
  gate = null;
  assert.equal(await slow, 403);
  assert.equal(await status(api.admin('GET', '/me')), 403, 'a call after the page went to sign-in');
  assert.deepEqual(sent, [], 'calls sent as B');
  // Signing in here again makes the page the new session's.
  await api.signIn({ email: 'b@example.com', password: 'x' });
  assert.equal(await status(api.admin('GET', '/me')), 200);
  assert.deepEqual(sent, ['GET /admin/v1/me as B']);
});

test('a page that knew no session does not send its call as whoever signed in', async () => {
  reset(null);
  await api.session(); // signed out
  server = { user: 'B', csrf: 'csrf-B' };
  assert.equal(await status(api.admin('GET', '/me')), 403);
  assert.deepEqual(sent, []);
});
