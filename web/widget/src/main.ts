// docsmith's chat widget: one <script> tag on a docs site.
//
//   <script async src="https://docsmith.example/widget.js"
//           data-domain="acme-docs" data-key="svc_dsc_…" data-title="Acme docs"></script>
//
// It mounts into a Shadow DOM (no CSS in or out), talks to the v2 assistant
// endpoint through the AI SDK's chat client, and exposes window.docsmith:
// open(question?), close(), toggle(), on(event, fn) for "open", "close",
// "answer" and "feedback" (also dispatched on window as "docsmith:<event>"),
// and setReaderToken(token) for a signed-in reader's token.

import { h, render } from 'preact';
import { App, SelectionButton, sourcesOf, type Controller, type Feedback } from './app';
import { contextItem, guardedFetch, newChat, Session, textOf, threadOf, type ContextItem } from './client';
import { matchShortcut, readConfig, type Config } from './config';
import css from './styles.css?inline';

type EventName = 'open' | 'close' | 'answer' | 'feedback';
type Listener = (detail: unknown) => void;

interface PublicAPI {
  open(question?: string): void;
  close(): void;
  toggle(): void;
  isOpen(): boolean;
  on(event: EventName, fn: Listener): () => void;
  /** setReaderToken sets or refreshes the reader token sent from now on; '' or null removes it. */
  setReaderToken(token: string | null): void;
  version: string;
}

declare global {
  interface Window {
    docsmith?: PublicAPI | { q?: unknown[][] };
  }
}

const version = '1';

// Read now: document.currentScript is only set while the script first runs.
const ownScript = document.currentScript as HTMLScriptElement | null;

function start() {
  const script = ownScript ?? document.querySelector<HTMLScriptElement>('script[data-domain][src*="widget"]');
  const cfg = readConfig(script);
  if (typeof cfg === 'string') {
    console.error(`docsmith widget: ${cfg}.`);
    return;
  }
  if (window.docsmith && 'version' in window.docsmith) return; // loaded twice

  const host = document.createElement('docsmith-widget');
  // Inline and initial: the page's styles cannot reach into the widget
  // (inherited properties stop here) and the host box takes no space.
  host.style.cssText = 'all: initial; position: static; display: contents;';
  const shadow = host.attachShadow({ mode: 'open' });
  adoptStyles(shadow);
  const mount = document.createElement('div');
  shadow.append(mount);
  (document.body ?? document.documentElement).append(host);

  const listeners = new Map<EventName, Set<Listener>>();
  const emit = (event: EventName, detail: unknown) => {
    listeners.get(event)?.forEach((fn) => {
      try {
        fn(detail);
      } catch (err) {
        console.error('docsmith widget: an event listener failed', err);
      }
    });
    window.dispatchEvent(new CustomEvent('docsmith:' + event, { detail }));
  };

  const session = new Session(cfg.domain);
  let warned = false;
  const chat = newChat(cfg, session, {
    onFinish(message, isAbort, isError) {
      if (isAbort || isError) return;
      const msgs = chat.messages;
      const q = [...msgs].reverse().find((m) => m.role === 'user');
      emit('answer', {
        question: q ? textOf(q) : '',
        answer: textOf(message),
        messageId: message.id,
        threadId: threadOf(msgs),
        sources: sourcesOf(message, cfg.basePath),
      });
    },
    refusedOrigin() {
      if (warned) return;
      warned = true;
      console.error(
        `docsmith widget: ${cfg.api} refused this page's origin ${location.origin} for the assistant domain "${cfg.domain}". ` +
          `To allow it, add ${location.origin} to the domain's allowed origins: ` +
          `"docsmith domain update --domain ${cfg.domain} --allowed-origin ${location.origin}" ` +
          `(the flag replaces the list: repeat it for each origin to keep), ` +
          `or allowed_origins in the set-up file given to "docsmith apply".`,
      );
    },
  });

  let open = false;
  let returnFocus: Element | null = null;
  let pending: { question?: string; context?: ContextItem } = {};
  const subs = new Set<() => void>();
  const changed = () => subs.forEach((fn) => fn());

  const ctl: Controller = {
    cfg,
    chat,
    open(question, context) {
      if (question || context) pending = { question: question?.trim() || undefined, context };
      if (!open) {
        returnFocus = document.activeElement;
        open = true;
        emit('open', { question });
      }
      changed();
    },
    close() {
      if (!open) return;
      open = false;
      changed();
      emit('close', {});
      // Back to where the reader was: the page's element, or the
      // launcher when the dialog was opened from it.
      const back = returnFocus;
      setTimeout(() => {
        if (back === host) shadow.querySelector<HTMLElement>('button.launcher')?.focus();
        else if (back instanceof HTMLElement) back.focus();
      }, 0);
    },
    isOpen: () => open,
    subscribe(fn) {
      subs.add(fn);
      return () => subs.delete(fn);
    },
    pending: () => pending,
    takePending() {
      pending = {};
    },
    newConversation() {
      void chat.stop();
      chat.messages = [];
      chat.clearError();
      session.clear();
      changed();
    },
    async sendFeedback(f: Feedback) {
      const url = `${cfg.api}/discovery/v1/assistant/${encodeURIComponent(cfg.domain)}/feedback`;
      await guardedFetch(
        cfg,
        url,
        {
          method: 'POST',
          headers: { Authorization: `Bearer ${cfg.key}`, 'Content-Type': 'application/json' },
          body: JSON.stringify(f),
          credentials: 'omit',
        },
        { refusedOrigin: () => undefined },
      );
      emit('feedback', f);
    },
  };

  const theme = () => pickTheme(cfg);
  render(h('div', null, h(App, { ctl, theme }), h(SelectionButton, { ctl })), mount);

  document.addEventListener(
    'keydown',
    (e) => {
      if (cfg.shortcut && matchShortcut(cfg.shortcut, e)) {
        e.preventDefault();
        if (open) ctl.close();
        else ctl.open();
      }
    },
    true,
  );

  addCodeButtons(cfg, ctl);

  const queued = (window.docsmith as { q?: unknown[][] } | undefined)?.q ?? [];
  const api: PublicAPI = {
    open: (question?: string) => ctl.open(typeof question === 'string' ? question : undefined),
    close: () => ctl.close(),
    toggle: () => (open ? ctl.close() : ctl.open()),
    isOpen: () => open,
    on(event, fn) {
      if (!listeners.has(event)) listeners.set(event, new Set());
      listeners.get(event)!.add(fn);
      return () => listeners.get(event)?.delete(fn);
    },
    setReaderToken(token) {
      cfg.readerToken = typeof token === 'string' ? token.trim() : '';
    },
    version,
  };
  window.docsmith = api;
  // Calls made before the script loaded: window.docsmith = {q: [["open", "question"]]}.
  for (const call of queued) {
    const [name, ...args] = call as [keyof PublicAPI, ...unknown[]];
    const fn = api[name];
    if (typeof fn === 'function') (fn as (...a: unknown[]) => void)(...args);
  }
  window.dispatchEvent(new CustomEvent('docsmith:ready'));
}

let sheet: CSSStyleSheet | undefined;

/**
 * adoptStyles gives a shadow root the widget's styles as a constructed
 * style sheet, which a page's Content-Security-Policy does not block (a
 * <style> element would need style-src 'unsafe-inline').
 */
function adoptStyles(root: ShadowRoot) {
  try {
    sheet ??= new CSSStyleSheet();
    sheet.replaceSync(css);
    root.adoptedStyleSheets = [sheet];
  } catch {
    const style = document.createElement('style');
    style.textContent = css;
    root.append(style);
  }
}

/**
 * pickTheme follows, in order: data-theme on the script, a dark or light
 * marker on the page (a "dark" class or data-theme on <html> or <body>, or
 * its color-scheme), then the reader's prefers-color-scheme.
 */
function pickTheme(cfg: Config): 'light' | 'dark' {
  if (cfg.theme !== 'auto') return cfg.theme;
  for (const el of [document.documentElement, document.body]) {
    if (!el) continue;
    const mark = `${el.className} ${el.getAttribute('data-theme') ?? ''} ${el.getAttribute('data-color-scheme') ?? ''}`.toLowerCase();
    if (/\bdark\b/.test(mark)) return 'dark';
    if (/\blight\b/.test(mark)) return 'light';
  }
  const scheme = getComputedStyle(document.documentElement).colorScheme;
  if (scheme === 'dark') return 'dark';
  if (scheme === 'light') return 'light';
  return matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

/**
 * addCodeButtons puts an "Ask about this code" button on code blocks that
 * opt in with a data-docsmith-ask attribute on the <pre> or its <code>. The
 * button lives in its own small shadow root beside the block, so the
 * page's styles do not change it.
 */
function addCodeButtons(cfg: Config, ctl: Controller) {
  const seen = new WeakSet<Element>();
  const scan = () => {
    document.querySelectorAll('pre[data-docsmith-ask], pre > code[data-docsmith-ask]').forEach((el) => {
      const pre = el.tagName === 'PRE' ? el : el.parentElement!;
      const code = pre.querySelector('code') ?? pre;
      if (seen.has(pre)) return;
      seen.add(pre);
      const host = document.createElement('docsmith-ask');
      host.style.cssText = 'all: initial; display: block; height: 0; position: relative;';
      const root = host.attachShadow({ mode: 'open' });
      adoptStyles(root);
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'codeask';
      b.style.setProperty('--accent', cfg.color);
      b.textContent = 'Ask about this code';
      b.addEventListener('click', () => {
        const id = code.id || pre.id || undefined;
        ctl.open(undefined, contextItem(cfg.basePath, 'code', code.textContent ?? '', id));
      });
      root.append(b);
      pre.before(host);
    });
  };
  scan();
  new MutationObserver(scan).observe(document.body ?? document.documentElement, { childList: true, subtree: true });
}

if (document.readyState === 'loading') {
  document.addEventListener('DOMContentLoaded', start, { once: true });
} else {
  start();
}
