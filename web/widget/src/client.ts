// The conversation: the AI SDK's own chat client (AbstractChat with its
// DefaultChatTransport) owns messages, status, stop and regenerate; this file
// only gives it a state container the UI can subscribe to, shapes the request
// body into docsmith's v2 assistant request, and keeps the thread for the
// tab's session.

import { AbstractChat, DefaultChatTransport, type ChatState, type ChatStatus, type UIMessage } from 'ai';
import { pagePath, type Config } from './config';
import type { AnswerStatus, DataParts } from './grounding';
import { NetworkError, readServerError } from './errors';
import { powChallengeHeader, powHeader, solve, type Challenge } from './pow';

/** ContextItem is what the reader points at, in the request's context shape. */
export interface ContextItem {
  type: 'code' | 'textSelection';
  value: string;
  path?: string;
  elementId?: string;
}

export interface Metadata {
  threadId?: string;
  /** answerStatus is the finish chunk's copy of the answer's status. */
  answerStatus?: AnswerStatus;
  /** context sent with a user message, kept so that a retry sends it again. */
  context?: ContextItem[];
}

export type Message = UIMessage<Metadata, DataParts>;

/** Limits that keep a request well under the server's body limit. */
const maxContextChars = 4000;
const maxSentMessages = 12;
const maxCurrentPath = 200;

class State implements ChatState<Message> {
  private listeners = new Set<() => void>();
  private _status: ChatStatus = 'ready';
  private _error: Error | undefined;
  private _messages: Message[];

  constructor(messages: Message[]) {
    this._messages = messages;
  }

  get status() {
    return this._status;
  }
  set status(s: ChatStatus) {
    this._status = s;
    this.notify();
  }
  get error() {
    return this._error;
  }
  set error(e: Error | undefined) {
    this._error = e;
    this.notify();
  }
  get messages() {
    return this._messages;
  }
  set messages(m: Message[]) {
    this._messages = m.slice();
    this.notify();
  }
  pushMessage = (m: Message) => {
    this._messages = this._messages.concat(m);
    this.notify();
  };
  popMessage = () => {
    this._messages = this._messages.slice(0, -1);
    this.notify();
  };
  replaceMessage = (i: number, m: Message) => {
    const next = this._messages.slice();
    next[i] = m;
    this._messages = next;
    this.notify();
  };
  snapshot = <T,>(thing: T): T => structuredClone(thing);

  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
  private notify() {
    for (const fn of this.listeners) fn();
  }
}

export class Chat extends AbstractChat<Message> {
  private store: State;
  constructor(init: ConstructorParameters<typeof AbstractChat<Message>>[0] & { store: State }) {
    super(init);
    this.store = init.store;
  }
  subscribe(fn: () => void) {
    return this.store.subscribe(fn);
  }
}

/** Session keeps the thread and the messages for the tab's session, so that a reload continues. */
export class Session {
  private key: string;
  constructor(domain: string) {
    this.key = 'docsmith:' + domain;
  }
  load(): { threadId?: string; messages: Message[] } {
    try {
      const raw = sessionStorage.getItem(this.key);
      if (!raw) return { messages: [] };
      const v = JSON.parse(raw) as { threadId?: unknown; messages?: unknown };
      const messages = Array.isArray(v.messages) ? (v.messages as Message[]).filter(isMessage) : [];
      return { threadId: typeof v.threadId === 'string' ? v.threadId : undefined, messages };
    } catch {
      return { messages: [] };
    }
  }
  save(threadId: string | undefined, messages: Message[]) {
    try {
      sessionStorage.setItem(this.key, JSON.stringify({ threadId, messages: messages.slice(-40) }));
    } catch {
      // storage full or disabled: the conversation just will not survive a reload
    }
  }
  clear() {
    try {
      sessionStorage.removeItem(this.key);
    } catch {
      // disabled storage
    }
  }
}

function isMessage(m: unknown): m is Message {
  const v = m as Message;
  return !!v && typeof v.id === 'string' && (v.role === 'user' || v.role === 'assistant') && Array.isArray(v.parts);
}

export function textOf(m: Message): string {
  return m.parts.map((p) => (p.type === 'text' ? p.text : '')).join('');
}

/** threadOf is the thread the latest answer belongs to (from the finish chunk's metadata). */
export function threadOf(messages: Message[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const t = messages[i].metadata?.threadId;
    if (messages[i].role === 'assistant' && t) return t;
  }
  return undefined;
}

export function clip(s: string, n: number): string {
  const chars = Array.from(s);
  return chars.length <= n ? s : chars.slice(0, n).join('');
}

export interface ChatHooks {
  onFinish(message: Message, isAbort: boolean, isError: boolean): void;
  /** refusedOrigin is called when the server does not let this page's origin in. */
  refusedOrigin(): void;
}

export function newChat(cfg: Config, session: Session, hooks: ChatHooks): Chat {
  const saved = session.load();
  const store = new State(saved.messages);
  const api = `${cfg.api}/discovery/v2/assistant/${encodeURIComponent(cfg.domain)}/message`;
  const transport = new DefaultChatTransport<Message>({
    api,
    headers: { Authorization: `Bearer ${cfg.key}` },
    credentials: 'omit',
    fetch: (input, init) => guardedFetch(cfg, input, init, hooks),
    prepareSendMessagesRequest: ({ messages }) => {
      const lastUser = [...messages].reverse().find((m) => m.role === 'user');
      const body: Record<string, unknown> = {
        fp: cfg.user,
        messages: messages.slice(-maxSentMessages).map((m) => ({
          id: m.id,
          role: m.role,
          parts: m.parts.filter((p) => p.type === 'text').map((p) => ({ type: 'text', text: (p as { text: string }).text })),
        })),
        currentPath: clip(pagePath(cfg.basePath), maxCurrentPath),
      };
      const threadId = threadOf(messages) ?? session.load().threadId;
      if (threadId) body.threadId = threadId;
      if (cfg.pageSize) body.retrievalPageSize = cfg.pageSize;
      if (cfg.filter) body.filter = cfg.filter;
      const context = lastUser?.metadata?.context;
      if (context?.length) body.context = context;
      return { body };
    },
  });
  return new Chat({
    store,
    state: store,
    transport,
    onFinish: ({ message, messages, isAbort, isError }) => {
      session.save(threadOf(messages), messages);
      hooks.onFinish(message, isAbort, isError);
    },
  });
}

/** contextItem builds a context entry, clipped, with the page's path. */
export function contextItem(basePath: string, type: ContextItem['type'], value: string, elementId?: string): ContextItem {
  const item: ContextItem = { type, value: clip(value, maxContextChars), path: clip(pagePath(basePath), maxCurrentPath) };
  if (elementId) item.elementId = elementId;
  return item;
}

/**
 * guardedFetch turns a refused or failed request into an error the UI can
 * explain: a non-2xx answer becomes a ServerError with the server's message
 * and Retry-After, and a request the browser blocked tells apart being
 * offline, the server being down, and this origin not being allowed.
 */
export async function guardedFetch(cfg: Config, input: RequestInfo | URL, init: RequestInit | undefined, hooks: Pick<ChatHooks, 'refusedOrigin'>): Promise<Response> {
  let res = await send(cfg, input, init, hooks);
  // A domain that asks for proof of work says so in the refusal: solve a
  // challenge and send the request once more with the solution.
  if (res.status === 403 && res.headers.has(powChallengeHeader)) {
    const headers = new Headers(init?.headers);
    headers.set(powHeader, await proofOfWork(cfg, init?.signal ?? undefined, hooks));
    res = await send(cfg, input, { ...init, headers }, hooks);
  }
  if (!res.ok) throw await readServerError(res);
  return res;
}

/** proofOfWork fetches a challenge for the domain and solves it. */
async function proofOfWork(cfg: Config, signal: AbortSignal | undefined, hooks: Pick<ChatHooks, 'refusedOrigin'>): Promise<string> {
  const url = `${cfg.api}/discovery/v1/challenge/${encodeURIComponent(cfg.domain)}`;
  const res = await send(cfg, url, { headers: { Authorization: `Bearer ${cfg.key}` }, credentials: 'omit', cache: 'no-store', signal }, hooks);
  if (!res.ok) throw await readServerError(res);
  return solve((await res.json()) as Challenge, signal);
}

/** send is one fetch whose network failure is explained as guardedFetch says. */
async function send(cfg: Config, input: RequestInfo | URL, init: RequestInit | undefined, hooks: Pick<ChatHooks, 'refusedOrigin'>): Promise<Response> {
  try {
    return await fetch(input, withReaderToken(cfg, init));
  } catch (err) {
    if (init?.signal?.aborted) throw err;
    if (typeof navigator !== 'undefined' && navigator.onLine === false) throw new NetworkError('offline');
    // The server may be up but refusing this origin: an opaque request
    // (which CORS does not block) tells the two apart.
    try {
      await fetch(`${cfg.api}/healthz`, { mode: 'no-cors', cache: 'no-store', credentials: 'omit' });
    } catch {
      throw new NetworkError('unreachable');
    }
    hooks.refusedOrigin();
    throw new NetworkError('refused-origin');
  }
}

/**
 * withReaderToken adds the reader token, when the site gave one, to a
 * request: the server takes a reader's access groups from it alone.
 */
function withReaderToken(cfg: Config, init: RequestInit | undefined): RequestInit | undefined {
  if (!cfg.readerToken) return init;
  const headers = new Headers(init?.headers);
  headers.set('X-Docsmith-Reader-Token', cfg.readerToken);
  return { ...init, headers };
}
