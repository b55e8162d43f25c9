// AI SDK 5, 6 and 7 against the v2 endpoint, through the classes useChat is
// built on: AbstractChat (the base of the React/Vue/Svelte Chat) with
// DefaultChatTransport, which fetches, parses the SSE and validates every
// chunk against the SDK's own schema. Also the strict-era ai@5.0.0, whose
// schema rejects unknown keys, against a domain that leaves the top-level
// finish threadId out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { server, skip, endpoint, headers, recordingFetch, siteURL, MemoryState } from './server.mjs';

const require = createRequire(import.meta.url);

// The clients under test, by npm alias (package.json).
const clients = ['ai-v5', 'ai-v6', 'ai-v7'];
const strictClient = 'ai-v5-0-0';

async function newChat(pkg, domain) {
  const { AbstractChat, DefaultChatTransport } = await import(pkg);
  class Chat extends AbstractChat {
    constructor(init) {
      super({ ...init, state: new MemoryState() });
    }
  }
  const responses = [];
  const errors = [];
  // The recommended integration: a transport with the URL, the key and
  // the body fields.
  const transport = new DefaultChatTransport({
    api: endpoint('v2', domain),
    headers: headers(),
    body: { fp: 'anonymous', retrievalPageSize: 5 },
    fetch: recordingFetch(responses),
  });
  const chat = new Chat({ transport, onError: (e) => errors.push(e) });
  return {
    chat,
    responses,
    errors,
    // ask sends a question like useChat's sendMessage and returns the
    // assistant message it ended with.
    async ask(text, body) {
      try {
        await chat.sendMessage({ text }, body ? { body } : undefined);
      } catch (err) {
        errors.push(err);
      }
      const last = chat.messages.at(-1);
      return last?.role === 'assistant' ? last : undefined;
    },
  };
}

const textOf = (m) => m.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
const sourcesOf = (m) => m.parts.filter((p) => p.type === 'source-url');

for (const pkg of clients) {
  const version = require(`${pkg}/package.json`).version;

  test(`ai@${version} UI message stream: a cited answer, then a follow-up in the same thread`, { skip }, async () => {
    const c = await newChat(pkg, server.domain);
    const first = await c.ask('How do I exclude files from a sync?');
    assert.deepEqual(c.errors, []);
    assert.equal(c.chat.status, 'ready');
    assert.ok(first, 'an assistant message');
    const thread = first.metadata?.threadId;
    assert.match(thread ?? '', /^thr_[0-9a-f]{32}$/, 'threadId is in message.metadata');
    assert.equal(c.responses[0].threadHeader, thread, 'x-thread-id matches');

    const sources = sourcesOf(first);
    assert.ok(sources.length > 0, 'citations arrive as source-url parts');
    for (const s of sources) {
      assert.ok(s.url.startsWith(siteURL), s.url);
      assert.ok(s.title);
      assert.match(s.sourceId, /^src_\d+$/);
    }
    assert.equal(sources[0].url.split('#')[0], `${siteURL}guides/sync`, 'the first citation links a section of the sync page');
    assert.equal(first.metadata?.answerStatus?.status, 'answered', 'the answer status is in the message metadata');
    assert.ok(first.parts.findIndex((p) => p.type === 'source-url') < first.parts.findIndex((p) => p.type === 'text'), 'sources come before the text');
    assert.match(textOf(first), /\.ternignore/);

    // The app sends the thread back in the body, as the integration guide says.
    const second = await c.ask('And what about conflicts?', { threadId: thread });
    assert.deepEqual(c.errors, []);
    assert.equal(second.metadata?.threadId, thread, 'the follow-up stays in the thread');
    assert.equal(c.responses[1].threadHeader, thread);
    assert.equal(c.chat.messages.length, 4);

    // Even without it, the metadata in the history the client resends is enough.
    const third = await c.ask('How do I cap the bandwidth?');
    assert.equal(third.metadata?.threadId, thread);
    assert.ok(sourcesOf(third).some((s) => s.url.split('#')[0] === `${siteURL}guides/schedules`));
  });

  test(`ai@${version} UI message stream: an unknown domain is an HTTP error the client surfaces`, { skip }, async () => {
    const c = await newChat(pkg, 'no-such-domain');
    await c.ask('How do I sync?');
    assert.equal(c.chat.status, 'error');
    assert.equal(c.responses[0].status, 404);
    assert.match(String(c.chat.error?.message), /not found/);
  });
}

test(`ai@${require('ai-v5/package.json').version} UI message stream: a model answer cites only this turn's passages`, { skip: skip || (!server.modelDomain && 'DOCSMITH_MODEL_DOMAIN is not set') }, async () => {
  const c = await newChat('ai-v5', server.modelDomain);
  const m = await c.ask('How do I exclude files from a sync?');
  assert.deepEqual(c.errors, []);
  assert.ok(sourcesOf(m).length > 0);
  assert.match(textOf(m), /\[1\]/);
  assert.doesNotMatch(textOf(m), /\[8\]/, 'a marker to a passage not retrieved is removed');
});

const strictVersion = require(`${strictClient}/package.json`).version;

test(`ai@${strictVersion} (strict chunk schema) works against a domain without the top-level finish threadId`, { skip }, async () => {
  const c = await newChat(strictClient, server.strictDomain);
  const first = await c.ask('How do I exclude files from a sync?');
  assert.deepEqual(c.errors, []);
  assert.equal(c.chat.status, 'ready');
  const thread = first.metadata?.threadId;
  assert.match(thread ?? '', /^thr_[0-9a-f]{32}$/);
  assert.ok(sourcesOf(first).length > 0);
  const second = await c.ask('And conflicts?', { threadId: thread });
  assert.equal(second.metadata?.threadId, thread);
});

test(`ai@${strictVersion} (strict chunk schema) rejects the top-level finish threadId, which is why a domain can turn it off`, { skip }, async () => {
  const c = await newChat(strictClient, server.domain);
  const m = await c.ask('How do I exclude files from a sync?');
  assert.equal(c.chat.status, 'error');
  assert.match(String(c.chat.error?.message), /threadId/);
  assert.match(textOf(m), /\.ternignore/, 'the text streamed before the finish chunk is kept');
});
