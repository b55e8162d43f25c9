// AI SDK 4 (ai@4.3.19) against the v1 endpoint, through the code path of
// useChat({ streamProtocol: 'data', sendExtraMessageFields: true }):
// callChatApi from @ai-sdk/ui-utils fetches, parses the data stream and
// assembles the assistant message exactly as the hook does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { callChatApi, generateId } from '@ai-sdk/ui-utils';
import { server, skip, endpoint, headers, recordingFetch, siteURL } from './server.mjs';

const version = createRequire(import.meta.url)('ai-v4/package.json').version;

// A useChat-like conversation: the state the hook keeps and the request it
// builds for each submitted question.
class Conversation {
  constructor(domain) {
    this.api = endpoint('v1', domain);
    this.id = generateId();
    this.messages = [];
    this.responses = [];
  }

  async ask(question, extraBody = {}) {
    const user = { id: generateId(), createdAt: new Date(), role: 'user', content: question, parts: [{ type: 'text', text: question }] };
    const messages = [...this.messages, user];
    let update;
    let finish;
    await callChatApi({
      api: this.api,
      // sendExtraMessageFields: the whole message objects go to the server.
      body: { id: this.id, messages, data: undefined, fp: 'anonymous', retrievalPageSize: 5, ...extraBody },
      streamProtocol: 'data',
      credentials: undefined,
      headers: headers(),
      abortController: () => null,
      restoreMessagesOnFailure() {},
      onResponse: undefined,
      onUpdate(u) {
        update = u;
      },
      onFinish(message, details) {
        finish = { message, ...details };
      },
      onToolCall: undefined,
      generateId,
      fetch: recordingFetch(this.responses),
      lastMessage: user,
      requestType: 'generate',
    });
    assert.ok(update?.message, 'the client assembled no assistant message');
    this.messages = [...messages, update.message];
    return { message: finish?.message ?? update.message, finishReason: finish?.finishReason };
  }
}

const threadOf = (message) => message.annotations?.find((a) => typeof a?.threadId === 'string')?.threadId;

test(`ai@${version} data stream: a cited answer, then a follow-up in the same thread`, { skip }, async () => {
  const chat = new Conversation(server.domain);
  const first = await chat.ask('How do I exclude files from a sync?');
  assert.equal(first.finishReason, 'stop');
  const thread = threadOf(first.message);
  assert.match(thread ?? '', /^thr_[0-9a-f]{32}$/, 'threadId is in message.annotations');
  assert.equal(chat.responses[0].threadHeader, thread, 'x-thread-id matches');

  const sources = first.message.parts.filter((p) => p.type === 'source').map((p) => p.source);
  assert.ok(sources.length > 0, 'citations arrive as source parts');
  for (const s of sources) {
    assert.equal(s.sourceType, 'url');
    assert.ok(s.url.startsWith(siteURL), s.url);
    assert.ok(s.title);
  }
  assert.equal(sources[0].url.split('#')[0], `${siteURL}guides/sync`, 'the first citation links a section of the sync page');
  assert.ok(first.message.annotations?.some((a) => a?.answerStatus?.status === 'answered'), 'the answer status is a message annotation');
  assert.match(first.message.content, /\.ternignore/);
  assert.match(first.message.content, /\[1\]/);

  // The hook sends the history back with its annotations and no threadId
  // in the body: the server continues the thread from the annotation.
  const second = await chat.ask('And what about conflicts?');
  assert.equal(threadOf(second.message), thread, 'the follow-up stays in the thread');
  assert.equal(chat.responses[1].threadHeader, thread);
  const third = await chat.ask('How do I cap the bandwidth?', { threadId: thread });
  assert.equal(threadOf(third.message), thread, 'a body threadId continues it too');
  assert.ok(third.message.parts.some((p) => p.type === 'source' && p.source.url.split('#')[0] === `${siteURL}guides/schedules`));
});

test(`ai@${version} data stream: an unknown domain is an HTTP error the client surfaces`, { skip }, async () => {
  const chat = new Conversation('no-such-domain');
  await assert.rejects(chat.ask('How do I sync?'), (err) => {
    assert.match(err.message, /not found/);
    return true;
  });
  assert.equal(chat.responses[0].status, 404);
});

test(`ai@${version} data stream: a model answer cites only this turn's passages`, { skip: skip || (!server.modelDomain && 'DOCSMITH_MODEL_DOMAIN is not set') }, async () => {
  const chat = new Conversation(server.modelDomain);
  const { message } = await chat.ask('How do I exclude files from a sync?');
  const sources = message.parts.filter((p) => p.type === 'source');
  assert.ok(sources.length > 0);
  assert.match(message.content, /\[1\]/);
  assert.doesNotMatch(message.content, /\[8\]/, 'a marker to a passage not retrieved is removed');
});
