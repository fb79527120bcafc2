// Unit tests of actor.js: run by TestStudioUnits (studio/dist_test.go), or
// node --test studio/web/test.
import test from 'node:test';
import assert from 'node:assert/strict';

const { actorLabel, versionActor } = await import('../src/actor.js');

// A recording is the server's doing for a project, and says so; the
// admin token's changes are the server administrator's (they looked the
// same, found by a review).
test('actors', () => {
  const recording = { kind: 'server_admin', id: '', label: 'recording' };
  const admin = { kind: 'server_admin', id: '', label: '' };
  assert.equal(actorLabel(recording), 'server (recording)');
  assert.equal(actorLabel(admin), 'server administrator');
  assert.equal(actorLabel({ kind: 'key', id: 'k1', label: 'ci' }), 'key ci');
  assert.equal(actorLabel({ kind: 'user', id: 'u1', label: 'ann@example.com' }), 'ann@example.com');
  assert.equal(versionActor(recording), 'server (recording)');
  assert.equal(versionActor(admin), 'admin token');
  assert.equal(versionActor(undefined), 'admin token');
  assert.equal(versionActor({ kind: 'user', id: 'u1', label: 'ann@example.com' }), 'ann@example.com');
});
