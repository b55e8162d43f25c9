// Every client version against a stream that carries what an honest answer
// adds to its text: the answer's status, a grounding verdict per sentence
// and a quote on each source (served by the wireServer of
// internal/app/aisdk_clients_test.go). Each piece must parse and land where
// the SDK keeps it: message.annotations in AI SDK 4; message.parts data-*
// parts, message.metadata and the source parts' providerMetadata in 5+.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { callChatApi, generateId } from '@ai-sdk/ui-utils';
import { server, MemoryState } from './server.mjs';

const require = createRequire(import.meta.url);
const skip = server.wire ? false : 'DOCSMITH_WIRE_URL is not set (run through go test ./internal/app -run TestAISDKClients)';

// What the wire server sends (internal/app/aisdk_wire_test.go).
const threadId = 'thr_00000000000000000000000000000abc';
const text = 'Run `tern sync --exclude` to skip files [1]. It retries 42 times [2].';
const status = { status: 'partial', note: "The docs don't mention Datadog.", missing: ['Datadog'] };
const firstSentence = 'Run `tern sync --exclude` to skip files [1].';
const secondSentence = 'It retries 42 times [2].';
const quotes = {
  src_1: { quote: 'Pass `--exclude` to tern sync, or list patterns in a .ternignore file.', path: 'guides/sync' },
  src_2: { quote: 'When both sides changed, tern keeps both copies.', path: 'guides/conflicts' },
};

// spanText is the text a grounding span covers, with JavaScript's own
// (UTF-16) string offsets, as the widget reads it.
const spanText = (g) => text.slice(g.start, g.end);

function checkGrounding(all) {
  assert.equal(all.length, 2, 'one grounding per sentence');
  const [supported, unsupported] = all;
  assert.equal(supported.textId, 'txt_0');
  assert.equal(spanText(supported), firstSentence);
  assert.deepEqual(supported.sources, ['src_1']);
  assert.equal(supported.supported, true);
  assert.equal(spanText(unsupported), secondSentence);
  assert.equal(unsupported.supported, false);
  assert.deepEqual(unsupported.missing, ['42']);
}

const v4 = require('ai-v4/package.json').version;

test(`ai@${v4} data stream: status, grounding and quotes land in annotations and source parts`, { skip }, async () => {
  const user = { id: generateId(), createdAt: new Date(), role: 'user', content: 'How do I skip files?', parts: [{ type: 'text', text: 'How do I skip files?' }] };
  let finished;
  await callChatApi({
    api: `${server.wire}/v1`,
    body: { id: generateId(), messages: [user] },
    streamProtocol: 'data',
    credentials: undefined,
    headers: {},
    abortController: () => null,
    restoreMessagesOnFailure() {},
    onResponse: undefined,
    onUpdate() {},
    onFinish(message, details) {
      finished = { message, ...details };
    },
    onToolCall: undefined,
    generateId,
    fetch: globalThis.fetch,
    lastMessage: user,
    requestType: 'generate',
  });
  assert.ok(finished, 'onFinish ran');
  const m = finished.message;
  assert.equal(finished.finishReason, 'stop');
  assert.equal(m.content, text);
  const ann = m.annotations ?? [];
  assert.equal(ann.find((a) => a.threadId)?.threadId, threadId);
  assert.deepEqual(ann.find((a) => a.answerStatus)?.answerStatus, status, 'the status is a message annotation');
  checkGrounding(ann.filter((a) => a.grounding).map((a) => a.grounding));
  const sources = m.parts.filter((p) => p.type === 'source').map((p) => p.source);
  assert.equal(sources.length, 2);
  for (const s of sources) assert.deepEqual(s.providerMetadata?.docsmith, quotes[s.id], `${s.id} carries its quote`);
});

for (const pkg of ['ai-v5', 'ai-v5-0-0', 'ai-v6', 'ai-v7']) {
  const version = require(`${pkg}/package.json`).version;
  test(`ai@${version} UI message stream: status, grounding and quotes land in parts and metadata`, { skip }, async () => {
    const { AbstractChat, DefaultChatTransport } = await import(pkg);
    class Chat extends AbstractChat {
      constructor(init) {
        super({ ...init, state: new MemoryState() });
      }
    }
    const errors = [];
    const data = [];
    const chat = new Chat({
      transport: new DefaultChatTransport({ api: `${server.wire}/v2` }),
      onError: (e) => errors.push(e),
      onData: (d) => data.push(d),
    });
    await chat.sendMessage({ text: 'How do I skip files?' });
    assert.deepEqual(errors, []);
    assert.equal(chat.status, 'ready');
    const m = chat.messages.at(-1);
    assert.equal(m.role, 'assistant');
    assert.equal(m.parts.filter((p) => p.type === 'text').map((p) => p.text).join(''), text);
    assert.equal(m.metadata?.threadId, threadId);
    assert.deepEqual(m.metadata?.answerStatus, status, 'the finish metadata carries the status');
    const statusParts = m.parts.filter((p) => p.type === 'data-answer-status');
    assert.equal(statusParts.length, 1);
    assert.deepEqual(statusParts[0].data, status);
    checkGrounding(m.parts.filter((p) => p.type === 'data-grounding').map((p) => p.data));
    assert.deepEqual(
      data.map((d) => d.type),
      ['data-answer-status', 'data-grounding', 'data-grounding'],
      'onData sees each data part',
    );
    const sources = m.parts.filter((p) => p.type === 'source-url');
    assert.equal(sources.length, 2);
    for (const s of sources) assert.deepEqual(s.providerMetadata?.docsmith, quotes[s.sourceId], `${s.sourceId} carries its quote`);
  });
}
