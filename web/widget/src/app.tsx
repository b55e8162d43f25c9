// The widget's UI: a launcher button and a dialog that renders the chat
// client's state. It holds only view state (open, the input, the feedback
// given); the conversation itself is the chat client's.

import { useEffect, useLayoutEffect, useReducer, useRef, useState } from 'preact/hooks';
import { clip, contextItem, textOf, threadOf, type Chat, type ContextItem, type Message } from './client';
import { safeURL, type Config } from './config';
import { describeError } from './errors';
import { answerStatus, grounding, proseOf, textFragmentURL, textIndex, type AnswerStatus, type Span } from './grounding';
import { renderMarkdown, type Source } from './markdown';

export interface Feedback {
  threadId: string;
  messageId: string;
  rating: 'up' | 'down';
  comment?: string;
}

/** Controller is how the page (through the JS API) and the widget talk to each other. */
export interface Controller {
  cfg: Config;
  chat: Chat;
  /** open shows the dialog; with a question it asks it, with context it attaches it to the next question. */
  open(question?: string, context?: ContextItem): void;
  close(): void;
  isOpen(): boolean;
  subscribe(fn: () => void): () => void;
  pending(): { question?: string; context?: ContextItem };
  takePending(): void;
  newConversation(): void;
  sendFeedback(f: Feedback): Promise<void>;
}

type Theme = 'light' | 'dark';

export function App({ ctl, theme }: { ctl: Controller; theme: () => Theme }) {
  const { cfg, chat } = ctl;
  const [, bump] = useReducer((n: number) => n + 1, 0);
  useEffect(() => chat.subscribe(() => bump(0)), [chat]);
  useEffect(() => ctl.subscribe(() => bump(0)), [ctl]);
  const [, setTheme] = useState(theme());
  useEffect(() => {
    const update = () => setTheme(theme());
    const mq = matchMedia('(prefers-color-scheme: dark)');
    mq.addEventListener('change', update);
    const mo = new MutationObserver(update);
    mo.observe(document.documentElement, { attributes: true, attributeFilter: ['class', 'data-theme', 'style'] });
    if (document.body) mo.observe(document.body, { attributes: true, attributeFilter: ['class', 'data-theme'] });
    return () => {
      mq.removeEventListener('change', update);
      mo.disconnect();
    };
  }, []);

  const open = ctl.isOpen();
  const rootClass = `root ${theme()} ${cfg.position}`;
  const style = `--accent: ${cfg.color}`;
  return (
    <div class={rootClass} style={style}>
      {cfg.button && !open && (
        <button type="button" class="launcher" aria-label={`${cfg.buttonText}: open ${cfg.title}${cfg.shortcutLabel ? ` (${cfg.shortcutLabel})` : ''}`} onClick={() => ctl.open()}>
          <SparkIcon />
          <span>{cfg.buttonText}</span>
        </button>
      )}
      {open && <Dialog ctl={ctl} />}
    </div>
  );
}

function Dialog({ ctl }: { ctl: Controller }) {
  const { cfg, chat } = ctl;
  const panel = useRef<HTMLDivElement>(null);
  const input = useRef<HTMLTextAreaElement>(null);
  const log = useRef<HTMLDivElement>(null);
  const [text, setText] = useState('');
  const [context, setContext] = useState<ContextItem | undefined>(undefined);
  const busy = chat.status === 'submitted' || chat.status === 'streaming';

  // Pending work from open(question, context).
  const pend = ctl.pending();
  useEffect(() => {
    if (!pend.question && !pend.context) return;
    ctl.takePending();
    if (pend.context) setContext(pend.context);
    if (pend.question) send(pend.question, pend.context);
    input.current?.focus();
  }, [pend.question, pend.context]);

  useEffect(() => {
    input.current?.focus();
  }, []);

  // Keep the newest text in view while it streams.
  const last = chat.messages[chat.messages.length - 1];
  const lastLen = last ? textOf(last).length : 0;
  useLayoutEffect(() => {
    const el = log.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [chat.messages.length, lastLen, chat.status]);

  function send(question: string, ctx = context) {
    const q = question.trim();
    if (!q || busy) return;
    setText('');
    setContext(undefined);
    chat.clearError();
    void chat.sendMessage({ text: q, metadata: ctx ? { context: [ctx] } : {} });
  }

  function onKeyDown(e: KeyboardEvent) {
    if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      ctl.close();
      return;
    }
    if (e.key !== 'Tab' || !panel.current) return;
    // Keep focus inside the dialog.
    const items = Array.from(panel.current.querySelectorAll<HTMLElement>('button:not([disabled]), a[href], textarea:not([disabled]), input:not([disabled]), [tabindex]:not([tabindex="-1"])')).filter(
      (el) => el.offsetParent !== null || el === document.activeElement,
    );
    if (!items.length) return;
    const root = panel.current.getRootNode() as ShadowRoot;
    const active = root.activeElement as HTMLElement | null;
    const first = items[0];
    const lastItem = items[items.length - 1];
    if (e.shiftKey && (active === first || !active || !panel.current.contains(active))) {
      e.preventDefault();
      lastItem.focus();
    } else if (!e.shiftKey && (active === lastItem || !active || !panel.current.contains(active))) {
      e.preventDefault();
      first.focus();
    }
  }

  const empty = chat.messages.length === 0;
  const lastAssistant = [...chat.messages].reverse().find((m) => m.role === 'assistant');
  return (
    <div class="backdrop" onClick={(e) => e.target === e.currentTarget && ctl.close()}>
      <div ref={panel} class="panel" role="dialog" aria-modal="true" aria-labelledby="ds-title" onKeyDown={onKeyDown}>
        <header class="head">
          {cfg.logo ? <img class="logo" src={cfg.logo} alt="" /> : <SparkIcon />}
          <h2 id="ds-title">{cfg.title}</h2>
          <button type="button" class="icon" aria-label="New conversation" title="New conversation" disabled={empty && !chat.error} onClick={() => ctl.newConversation()}>
            <NewIcon />
          </button>
          <button type="button" class="icon" aria-label="Close" title={`Close (Esc)`} onClick={() => ctl.close()}>
            <CloseIcon />
          </button>
        </header>
        <div class="log" ref={log} aria-live="polite" aria-busy={busy}>
          {empty && (
            <div class="welcome">
              <p>Ask anything about the documentation. Answers quote the docs and link to their pages.</p>
              {cfg.examples.length > 0 && (
                <ul class="examples" aria-label="Example questions">
                  {cfg.examples.map((q) => (
                    <li key={q}>
                      <button type="button" onClick={() => send(q)}>
                        {q}
                      </button>
                    </li>
                  ))}
                </ul>
              )}
            </div>
          )}
          {chat.messages.map((m, i) =>
            m.role === 'user' ? (
              <UserMessage key={m.id} m={m} />
            ) : (
              <AssistantMessage key={m.id} m={m} ctl={ctl} streaming={busy && i === chat.messages.length - 1} last={m === lastAssistant && !busy} />
            ),
          )}
          {chat.status === 'submitted' && (
            <div class="msg assistant">
              <p class="thinking" role="status">
                Searching the docs…
              </p>
            </div>
          )}
          {chat.status === 'error' && (
            <div class="error" role="alert">
              <p>{describeError(chat.error)}</p>
              <button type="button" onClick={() => void chat.regenerate()}>
                Retry
              </button>
            </div>
          )}
        </div>
        <form
          class="ask"
          onSubmit={(e) => {
            e.preventDefault();
            send(text);
          }}
        >
          {context && (
            <div class="context">
              <span class="ctx-label">{context.type === 'code' ? 'About this code' : 'About this selection'}</span>
              <span class="ctx-value">{clip(context.value.replace(/\s+/g, ' '), 120)}</span>
              <button type="button" class="icon small" aria-label="Remove the attached context" onClick={() => setContext(undefined)}>
                <CloseIcon />
              </button>
            </div>
          )}
          <div class="row">
            <textarea
              ref={input}
              rows={1}
              value={text}
              placeholder={cfg.placeholder}
              aria-label="Your question"
              maxLength={4000}
              onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
              onKeyDown={(e) => {
                if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
                  e.preventDefault();
                  send(text);
                }
              }}
            />
            {busy ? (
              <button type="button" class="send stop" aria-label="Stop the answer" onClick={() => void chat.stop()}>
                <StopIcon />
              </button>
            ) : (
              <button type="submit" class="send" aria-label="Send" disabled={!text.trim()}>
                <SendIcon />
              </button>
            )}
          </div>
          <p class="foot">
            {cfg.disclaimer || 'Answers are generated from the docs and may be incomplete.'}
            {cfg.shortcutLabel && <span class="kbd"> {cfg.shortcutLabel} to toggle</span>}
          </p>
        </form>
      </div>
    </div>
  );
}

function UserMessage({ m }: { m: Message }) {
  const ctx = m.metadata?.context?.[0];
  return (
    <div class="msg user">
      {ctx && <p class="ctx-sent">{ctx.type === 'code' ? 'About this code: ' : 'About this selection: '}{clip(ctx.value.replace(/\s+/g, ' '), 80)}</p>}
      <p>{textOf(m)}</p>
    </div>
  );
}

/** maxQuote bounds the quote kept for a citation, whatever the server sent. */
const maxQuote = 4000;

/**
 * sourcesOf lists an answer's citations, each with the quote the server put
 * in its provider metadata. A root-relative URL (a domain without a site
 * URL) is a page path: it is resolved under the site's base path.
 */
export function sourcesOf(m: Message, basePath: string): Source[] {
  const out: Source[] = [];
  for (const p of m.parts) {
    if (p.type === 'source-url') {
      const raw = p.url.startsWith('/') && !p.url.startsWith('//') ? basePath + p.url : p.url;
      const url = safeURL(raw);
      if (!url) continue;
      const src: Source = { id: p.sourceId, url, title: p.title || url };
      const quote = (p.providerMetadata?.docsmith as { quote?: unknown } | undefined)?.quote;
      if (typeof quote === 'string' && quote.trim()) src.quote = clip(quote, maxQuote);
      out.push(src);
    }
  }
  return out;
}

/** statusOf is the answer's status: its latest data-answer-status part, else the finish metadata's. */
export function statusOf(m: Message): AnswerStatus | undefined {
  for (let i = m.parts.length - 1; i >= 0; i--) {
    const p = m.parts[i];
    if (p.type === 'data-answer-status') return answerStatus(p.data);
  }
  return answerStatus(m.metadata?.answerStatus);
}

/**
 * unsupportedSpans lists the sentences the server could not find in their
 * cited passages, as offsets into the message's joined text.
 */
export function unsupportedSpans(m: Message): Span[] {
  const lengths = m.parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text.length);
  const out: Span[] = [];
  for (const p of m.parts) {
    if (p.type !== 'data-grounding') continue;
    const g = grounding(p.data);
    if (!g || g.supported) continue;
    const i = textIndex(g.textId);
    if (i >= lengths.length || g.start >= lengths[i]) continue;
    const offset = lengths.slice(0, i).reduce((a, b) => a + b, 0);
    out.push({ start: offset + g.start, end: offset + Math.min(g.end, lengths[i]) });
  }
  return out;
}

function AssistantMessage({ m, ctl, streaming, last }: { m: Message; ctl: Controller; streaming: boolean; last: boolean }) {
  const { chat } = ctl;
  const body = useRef<HTMLDivElement>(null);
  const text = textOf(m);
  const sources = sourcesOf(m, ctl.cfg.basePath);
  const spans = unsupportedSpans(m);
  const status = statusOf(m);
  const spansKey = spans.map((s) => `${s.start}-${s.end}`).join(',');
  const quotesKey = sources.map((s) => (s.quote ? 1 : 0)).join('');
  useLayoutEffect(() => {
    const el = body.current;
    if (el) el.replaceChildren(renderMarkdown(text, sources, spans));
  }, [text, sources.length, spansKey, quotesKey]);
  const quotes = useQuotePopover(sources, m.id);

  function onClick(e: MouseEvent) {
    if (quotes.onClick(e)) return;
    const btn = (e.target as HTMLElement).closest<HTMLButtonElement>('[data-copy]');
    if (!btn) return;
    const code = btn.parentElement?.querySelector('pre')?.textContent ?? '';
    void navigator.clipboard?.writeText(code).then(
      () => flash(btn, 'Copied'),
      () => flash(btn, 'Copy failed'),
    );
  }

  return (
    <div class="msg assistant" ref={quotes.container} {...quotes.handlers}>
      {status && <StatusLine s={status} />}
      <div class="md" ref={body} onClick={onClick} />
      {streaming && !text && <p class="thinking">Searching the docs…</p>}
      {sources.length > 0 && (
        <ol class="sources" aria-label="Sources" onClick={(e) => quotes.onClick(e)}>
          {sources.map((s, i) => (
            <li key={s.url + i}>
              <a href={textFragmentURL(s.url, s.quote)} target="_blank" rel="noopener noreferrer" data-n={i + 1}>
                <span class="num">{i + 1}</span>
                <span class="stitle">{s.title}</span>
              </a>
            </li>
          ))}
        </ol>
      )}
      {quotes.popover}
      {!streaming && text && (
        <div class="actions">
          <Rating m={m} ctl={ctl} />
          {last && (
            <button type="button" class="link" onClick={() => void chat.regenerate()}>
              Retry
            </button>
          )}
        </div>
      )}
    </div>
  );
}

/** StatusLine says, quietly, when the docs cover the question only in part or not at all. */
function StatusLine({ s }: { s: AnswerStatus }) {
  if (s.status === 'answered') return null;
  const label = s.status === 'partial' ? 'Partly covered by the docs' : 'Not covered by the docs';
  return (
    <p class={`status ${s.status}`} role="note">
      <InfoIcon />
      <span>
        <span class="status-label">{label}</span>
        {s.note && <span class="status-note"> · {s.note}</span>}
      </span>
    </p>
  );
}

type Pop = { n: number; top?: number; bottom?: number; left: number; width: number; pinned: boolean; trigger: HTMLElement };

/**
 * useQuotePopover shows a citation's quote beside it: on hover with a
 * mouse, on keyboard focus, and on a first tap on a touch screen (a second
 * tap, or the popover's own link, opens the page at the passage). Escape
 * or leaving the citation hides it.
 */
function useQuotePopover(sources: Source[], messageId: string) {
  const container = useRef<HTMLDivElement>(null);
  const [pop, setPop] = useState<Pop | undefined>(undefined);
  const hideTimer = useRef(0);
  const pointer = useRef('mouse');
  const id = 'qp-' + messageId.replace(/[^\w-]/g, '_');

  const citeOf = (t: EventTarget | null) => (t instanceof Element ? t.closest<HTMLElement>('a[data-n]') : null);
  const inPopover = (t: EventTarget | null) => t instanceof Element && !!t.closest('.quote-pop');

  function show(el: HTMLElement, pinned: boolean): boolean {
    const n = Number(el.dataset.n);
    const box = container.current?.getBoundingClientRect();
    if (!sources[n - 1]?.quote || !box) return false;
    clearTimeout(hideTimer.current);
    const r = el.getBoundingClientRect();
    const width = Math.min(320, box.width);
    const left = Math.max(0, Math.min(r.left - box.left - 12, box.width - width));
    const log = el.closest('.log')?.getBoundingClientRect();
    // Above the citation when there is no room below it in the log.
    const above = !!log && r.bottom + 190 > log.bottom && r.top - log.top > 190;
    const p: Pop = { n, left, width, pinned, trigger: el };
    if (above) p.bottom = box.bottom - r.top + 6;
    else p.top = r.bottom - box.top + 6;
    if (pop?.trigger && pop.trigger !== el) pop.trigger.removeAttribute('aria-describedby');
    el.setAttribute('aria-describedby', id);
    setPop(p);
    return true;
  }
  function hide() {
    clearTimeout(hideTimer.current);
    pop?.trigger.removeAttribute('aria-describedby');
    setPop(undefined);
  }
  function hideSoon() {
    clearTimeout(hideTimer.current);
    hideTimer.current = window.setTimeout(hide, 250);
  }

  // A pinned popover (opened by a tap) closes on a tap anywhere else.
  useEffect(() => {
    if (!pop?.pinned) return;
    const root = container.current?.getRootNode() as ShadowRoot | Document | undefined;
    const onDown = (e: Event) => {
      const path = e.composedPath();
      if (!path.includes(pop.trigger) && !path.some((n) => n instanceof Element && n.classList.contains('quote-pop'))) hide();
    };
    root?.addEventListener('pointerdown', onDown);
    return () => root?.removeEventListener('pointerdown', onDown);
  }, [pop]);
  useEffect(() => () => clearTimeout(hideTimer.current), []);

  const handlers = {
    onPointerDown: (e: PointerEvent) => {
      pointer.current = e.pointerType;
    },
    onPointerOver: (e: PointerEvent) => {
      if (e.pointerType !== 'mouse') return;
      const el = citeOf(e.target);
      if (el) show(el, false);
      else if (inPopover(e.target)) clearTimeout(hideTimer.current);
    },
    onPointerOut: (e: PointerEvent) => {
      if (!pop || pop.pinned || e.pointerType !== 'mouse') return;
      if (citeOf(e.relatedTarget) === pop.trigger || inPopover(e.relatedTarget)) return;
      hideSoon();
    },
    onFocusIn: (e: FocusEvent) => {
      const el = citeOf(e.target);
      if (el && !inPopover(e.target)) show(el, false);
      else if (inPopover(e.target)) clearTimeout(hideTimer.current);
    },
    onFocusOut: (e: FocusEvent) => {
      if (!pop || pop.pinned) return;
      if (e.relatedTarget === pop.trigger || inPopover(e.relatedTarget)) return;
      hideSoon();
    },
    onKeyDown: (e: KeyboardEvent) => {
      if (e.key !== 'Escape' || !pop) return;
      // Escape closes the popover first, the dialog only after.
      e.preventDefault();
      e.stopPropagation();
      const t = pop.trigger;
      hide();
      t.focus();
    },
  };

  /** onClick handles a tap on a citation: the first one shows its quote instead of leaving. */
  function onClick(e: MouseEvent): boolean {
    const el = citeOf(e.target);
    if (!el || inPopover(e.target) || pointer.current === 'mouse' || pointer.current === '') return false;
    if (pop?.pinned && pop.trigger === el) return false;
    if (!show(el, true)) return false;
    e.preventDefault();
    return true;
  }

  const src = pop ? sources[pop.n - 1] : undefined;
  const popover = pop && src?.quote && (
    <div
      class="quote-pop"
      id={id}
      role="group"
      aria-label={`Quote from source ${pop.n}`}
      style={{ left: `${pop.left}px`, width: `${pop.width}px`, top: pop.top === undefined ? undefined : `${pop.top}px`, bottom: pop.bottom === undefined ? undefined : `${pop.bottom}px` }}
    >
      <p class="qp-title">
        <span class="num">{pop.n}</span> {src.title}
      </p>
      <blockquote>{clip(proseOf(src.quote) || src.quote.replace(/\s+/g, ' '), 360)}</blockquote>
      <a href={textFragmentURL(src.url, src.quote)} target="_blank" rel="noopener noreferrer">
        Open at this passage
      </a>
    </div>
  );
  return { container, handlers, onClick, popover };
}

function flash(btn: HTMLElement, label: string) {
  btn.textContent = label;
  setTimeout(() => (btn.textContent = 'Copy'), 1500);
}

type RatingState = { rating?: 'up' | 'down'; stage: 'idle' | 'comment' | 'sending' | 'sent' | 'failed'; error?: string };

function Rating({ m, ctl }: { m: Message; ctl: Controller }) {
  const [st, setSt] = useState<RatingState>({ stage: 'idle' });
  const [comment, setComment] = useState('');
  const threadId = m.metadata?.threadId ?? threadOf(ctl.chat.messages);
  if (!threadId) return null;

  async function submit(rating: 'up' | 'down', text?: string) {
    setSt({ rating, stage: 'sending' });
    try {
      const f: Feedback = { threadId: threadId!, messageId: m.id, rating };
      if (text?.trim()) f.comment = text.trim().slice(0, 2000);
      await ctl.sendFeedback(f);
      setSt({ rating, stage: 'sent' });
    } catch (err) {
      setSt({ rating, stage: 'failed', error: describeError(err) });
    }
  }

  if (st.stage === 'sent') return <span class="thanks" role="status">Thanks for the feedback.</span>;
  if (st.stage === 'failed') return <span class="thanks" role="alert">{st.error}</span>;
  if (st.stage === 'comment') {
    return (
      <form
        class="comment"
        onSubmit={(e) => {
          e.preventDefault();
          void submit('down', comment);
        }}
      >
        <label>
          <span>What was wrong or missing? (optional)</span>
          <textarea rows={2} maxLength={2000} value={comment} onInput={(e) => setComment((e.target as HTMLTextAreaElement).value)} />
        </label>
        <div class="row">
          <button type="submit" class="primary">
            Send feedback
          </button>
          <button type="button" class="link" onClick={() => setSt({ stage: 'idle' })}>
            Cancel
          </button>
        </div>
      </form>
    );
  }
  return (
    <span class="rate" role="group" aria-label="Rate this answer">
      <button type="button" class="icon small" aria-label="Helpful" title="Helpful" disabled={st.stage === 'sending'} onClick={() => void submit('up')}>
        <ThumbIcon />
      </button>
      <button type="button" class="icon small down" aria-label="Not helpful" title="Not helpful" disabled={st.stage === 'sending'} onClick={() => setSt({ rating: 'down', stage: 'comment' })}>
        <ThumbIcon />
      </button>
    </span>
  );
}

/** SelectionButton floats by a text selection on the page and asks about it. */
export function SelectionButton({ ctl }: { ctl: Controller }) {
  const [at, setAt] = useState<{ x: number; y: number; text: string } | undefined>(undefined);
  useEffect(() => {
    let timer = 0;
    const update = () => {
      clearTimeout(timer);
      timer = window.setTimeout(() => {
        const sel = document.getSelection();
        const text = sel?.toString().trim() ?? '';
        if (!sel || sel.rangeCount === 0 || text.length < 3 || ctl.isOpen()) {
          setAt(undefined);
          return;
        }
        const r = sel.getRangeAt(0).getBoundingClientRect();
        if (!r.width && !r.height) {
          setAt(undefined);
          return;
        }
        const x = Math.min(Math.max(8, r.left + r.width / 2 - 90), window.innerWidth - 190);
        const y = r.bottom + 8 > window.innerHeight - 48 ? Math.max(8, r.top - 44) : r.bottom + 8;
        setAt({ x, y, text });
      }, 150);
    };
    document.addEventListener('selectionchange', update);
    window.addEventListener('scroll', () => setAt(undefined), { passive: true });
    return () => document.removeEventListener('selectionchange', update);
  }, [ctl]);
  if (!at) return null;
  return (
    <button
      type="button"
      class="selask"
      style={{ left: `${at.x}px`, top: `${at.y}px` }}
      onMouseDown={(e) => e.preventDefault()}
      onClick={() => {
        const text = at.text;
        setAt(undefined);
        ctl.open(undefined, contextItem(ctl.cfg.basePath, 'textSelection', text));
      }}
    >
      <SparkIcon /> Ask about this selection
    </button>
  );
}

function InfoIcon() {
  return (
    <svg viewBox="0 0 24 24" width="14" height="14" aria-hidden="true">
      <circle cx="12" cy="12" r="9" fill="none" stroke="currentColor" stroke-width="2" />
      <path fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" d="M12 11v6M12 7.5v.5" />
    </svg>
  );
}
function SparkIcon() {
  return (
    <svg class="spark" viewBox="0 0 24 24" width="18" height="18" aria-hidden="true">
      <path fill="currentColor" d="M12 2l1.9 5.6L19.5 9.5l-5.6 1.9L12 17l-1.9-5.6L4.5 9.5l5.6-1.9L12 2zm7 11l.9 2.6 2.6.9-2.6.9L19 20l-.9-2.6-2.6-.9 2.6-.9L19 13z" />
    </svg>
  );
}
function CloseIcon() {
  return (
    <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true">
      <path fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" d="M6 6l12 12M18 6L6 18" />
    </svg>
  );
}
function NewIcon() {
  return (
    <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true">
      <path fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" d="M4 20h4L19 9l-4-4L4 16v4zM13.5 6.5l4 4" />
    </svg>
  );
}
function SendIcon() {
  return (
    <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true">
      <path fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" d="M12 19V5M5 12l7-7 7 7" />
    </svg>
  );
}
function StopIcon() {
  return (
    <svg viewBox="0 0 24 24" width="16" height="16" aria-hidden="true">
      <rect x="6" y="6" width="12" height="12" rx="2" fill="currentColor" />
    </svg>
  );
}
function ThumbIcon() {
  return (
    <svg viewBox="0 0 24 24" width="16" height="16" aria-hidden="true">
      <path fill="none" stroke="currentColor" stroke-width="2" stroke-linejoin="round" d="M7 11v9H4v-9h3zm0 0l4-8c1.7 0 2.5 1 2.2 2.6L12.6 9H18c1.3 0 2.2 1.2 1.9 2.4l-1.6 6.8c-.2.9-1 1.8-2 1.8H7" />
    </svg>
  );
}
