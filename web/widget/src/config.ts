// The widget's configuration, read from the data- attributes of its own
// <script> tag. Every value comes from the host page, so each one is checked
// and falls back to a default rather than breaking the widget.

export type Position = 'bottom-right' | 'bottom-left';
export type Theme = 'auto' | 'light' | 'dark';

export interface Filter {
  version?: string;
  language?: string;
  groups?: string[];
}

export interface Config {
  /** Base URL of the docsmith server, without a trailing slash. */
  api: string;
  domain: string;
  key: string;
  title: string;
  color: string;
  logo: string;
  placeholder: string;
  examples: string[];
  disclaimer: string;
  position: Position;
  theme: Theme;
  /** Parsed keyboard shortcut, or undefined when turned off. */
  shortcut?: Shortcut;
  shortcutLabel: string;
  pageSize?: number;
  filter?: Filter;
  /** Whether to show the floating button (a site may open the widget from its own search bar). */
  button: boolean;
  buttonText: string;
  /** The reader's id sent as fp; "anonymous" unless the site sets one. */
  user: string;
  /** The path the docs are served under ("/docs"), left out of currentPath and context paths. */
  basePath: string;
  /**
   * The reader token the site's backend signed for its signed-in reader
   * (its access groups); set by data-reader-token or docsmith.setReaderToken.
   */
  readerToken: string;
}

export interface Shortcut {
  key: string;
  mod: boolean;
  ctrl: boolean;
  alt: boolean;
  shift: boolean;
  meta: boolean;
}

const defaultColor = '#0b7285';

/** readConfig reads the script tag's attributes. It returns an error sentence when the tag cannot work. */
export function readConfig(script: HTMLScriptElement | null): Config | string {
  const attr = (name: string) => script?.getAttribute('data-' + name)?.trim() ?? '';
  const domain = attr('domain');
  const key = attr('key');
  if (!domain) {
    return 'the script tag needs data-domain="YOUR_DOMAIN" (the assistant domain created with "docsmith domain create")';
  }
  if (!key) {
    return 'the script tag needs data-key="svc_dsc_…" (an assistant key from "docsmith key create --kind assistant")';
  }
  const api = apiBase(attr('api'), script?.src ?? '');
  if (!api) {
    return 'cannot tell where the docsmith server is: load the script from it or set data-api="https://docsmith.example"';
  }
  const shortcutText = (attr('shortcut') || 'mod+i').toLowerCase();
  const shortcut = shortcutText === 'none' ? undefined : parseShortcut(shortcutText);
  const pageSize = Number.parseInt(attr('page-size'), 10);
  const groups = attr('groups')
    .split(',')
    .map((g) => g.trim())
    .filter(Boolean);
  const filter: Filter = {};
  if (groups.length) filter.groups = groups;
  if (attr('version')) filter.version = attr('version');
  if (attr('language')) filter.language = attr('language');
  const position = attr('position') === 'bottom-left' ? 'bottom-left' : 'bottom-right';
  const theme = (['light', 'dark'] as const).find((t) => t === attr('theme')) ?? 'auto';
  return {
    api,
    domain,
    key,
    title: attr('title') || 'Ask the docs',
    color: validColor(attr('color')) ?? defaultColor,
    logo: safeURL(attr('logo'), true),
    placeholder: attr('placeholder') || 'Ask a question about the docs…',
    examples: parseList(attr('examples')).slice(0, 6),
    disclaimer: attr('disclaimer'),
    position,
    theme,
    shortcut,
    shortcutLabel: shortcut ? shortcutLabel(shortcut) : '',
    pageSize: pageSize >= 1 && pageSize <= 50 ? pageSize : undefined,
    filter: Object.keys(filter).length ? filter : undefined,
    button: attr('button') !== 'false',
    buttonText: attr('button-text') || 'Ask AI',
    user: attr('user') || 'anonymous',
    basePath: attr('base-path').replace(/\/+$/, ''),
    readerToken: attr('reader-token'),
  };
}

/** apiBase is data-api, or the origin (and path prefix) the script was loaded from. */
function apiBase(explicit: string, src: string): string {
  const raw = explicit || src;
  if (!raw) return '';
  let u: URL;
  try {
    u = new URL(raw, document.baseURI);
  } catch {
    return '';
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return '';
  let path = u.pathname;
  if (!explicit) {
    // The script is served at <base>/widget.js or <base>/widget/<hash>.js.
    path = path.replace(/\/widget(\/[^/]*)?\.js$/, '').replace(/\/widget\/[^/]*$/, '');
  }
  return (u.origin + path).replace(/\/+$/, '');
}

/** parseList accepts a JSON array of strings or a list separated by "|". */
function parseList(s: string): string[] {
  if (!s) return [];
  if (s.startsWith('[')) {
    try {
      const v: unknown = JSON.parse(s);
      if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string' && x.trim() !== '').map((x) => x.trim());
    } catch {
      // fall through to the plain list
    }
  }
  return s
    .split('|')
    .map((x) => x.trim())
    .filter(Boolean);
}

function validColor(c: string): string | undefined {
  if (!c) return undefined;
  return typeof CSS !== 'undefined' && CSS.supports('color', c) ? c : undefined;
}

/** safeURL keeps http(s) URLs (and data: images when allowed) and drops anything else. */
export function safeURL(s: string, allowDataImage = false): string {
  if (!s) return '';
  try {
    const u = new URL(s, document.baseURI);
    if (u.protocol === 'https:' || u.protocol === 'http:') return u.href;
    if (allowDataImage && u.protocol === 'data:' && /^data:image\/(png|jpeg|gif|webp|svg\+xml)[;,]/i.test(s)) return s;
  } catch {
    // not a URL
  }
  return '';
}

const isMac = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent);

/** parseShortcut reads "mod+i", "ctrl+shift+k", "/" and the like ("mod" is ⌘ on a Mac, Ctrl elsewhere). */
export function parseShortcut(s: string): Shortcut | undefined {
  const parts = s.split('+').map((p) => p.trim()).filter(Boolean);
  const key = parts.pop();
  if (!key) return undefined;
  const sc: Shortcut = { key, mod: false, ctrl: false, alt: false, shift: false, meta: false };
  for (const p of parts) {
    if (p === 'mod' || p === 'cmd' || p === 'ctrl' || p === 'control' || p === 'alt' || p === 'option' || p === 'shift' || p === 'meta') {
      if (p === 'mod') sc.mod = true;
      else if (p === 'cmd' || p === 'meta') sc.meta = true;
      else if (p === 'ctrl' || p === 'control') sc.ctrl = true;
      else if (p === 'alt' || p === 'option') sc.alt = true;
      else sc.shift = true;
    } else {
      return undefined;
    }
  }
  return sc;
}

export function matchShortcut(sc: Shortcut, e: KeyboardEvent): boolean {
  const ctrl = sc.ctrl || (sc.mod && !isMac);
  const meta = sc.meta || (sc.mod && isMac);
  return e.key.toLowerCase() === sc.key && e.ctrlKey === ctrl && e.metaKey === meta && e.altKey === sc.alt && e.shiftKey === sc.shift;
}

function shortcutLabel(sc: Shortcut): string {
  const out: string[] = [];
  if (sc.ctrl || (sc.mod && !isMac)) out.push('Ctrl');
  if (sc.meta || (sc.mod && isMac)) out.push('⌘');
  if (sc.alt) out.push(isMac ? '⌥' : 'Alt');
  if (sc.shift) out.push('Shift');
  out.push(sc.key.length === 1 ? sc.key.toUpperCase() : sc.key);
  return out.join(isMac ? '' : '+');
}

/** pagePath is the page's path as the docs know it: location.pathname without the base path. */
export function pagePath(basePath: string): string {
  const p = location.pathname;
  if (basePath && (p === basePath || p.startsWith(basePath + '/'))) return p.slice(basePath.length) || '/';
  return p;
}
