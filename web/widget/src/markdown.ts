// Answers are Markdown from the server, and untrusted: they quote docs and
// model output. They are parsed with marked, then sanitized with DOMPurify
// (no scripts, no event handlers, no styles, no forms, only http(s) and
// mailto links), and only then decorated: sentences the server could not
// find in their cited passages are marked, citation markers become numbered
// links to the cited passages and code blocks get a copy button.

import DOMPurify from 'dompurify';
import { Marked } from 'marked';
import { spanClose, spanOpen, textFragmentURL, withSentinels, wrapSpans, type Span } from './grounding';

export interface Source {
  /** The source's id in the stream (src_N), which grounding parts name. */
  id?: string;
  url: string;
  title: string;
  /** The passage the citation stands for, as Markdown; shown on hover and highlighted on the page. */
  quote?: string;
}

/** unsupportedNote is what a marked sentence says to the reader. */
export const unsupportedNote = 'Not found in the cited docs';

// A line break in an answer is a line break: quoted passages keep their lines.
const marked = new Marked({ gfm: true, breaks: true, async: false });

const allowedTags = [
  'a', 'b', 'blockquote', 'br', 'code', 'del', 'em', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'i', 'li', 'ol', 'p', 'pre', 's',
  'strong', 'sub', 'sup', 'table', 'tbody', 'td', 'th', 'thead', 'tr', 'ul',
];

const purify = DOMPurify(window);
purify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    const href = node.getAttribute('href') ?? '';
    if (!/^(https?:|mailto:|#)/i.test(href)) {
      node.removeAttribute('href');
    } else if (!href.startsWith('#')) {
      node.setAttribute('target', '_blank');
      node.setAttribute('rel', 'noopener noreferrer');
    }
  }
});

/**
 * renderMarkdown returns a sanitized fragment for an answer's text, with
 * the unsupported spans (UTF-16 offsets into text) marked.
 */
export function renderMarkdown(text: string, sources: Source[], unsupported: Span[] = []): DocumentFragment {
  // The sentinels are the widget's own: any in the text itself go first.
  const clean = text.includes(spanOpen) || text.includes(spanClose) ? text.replace(/[\uE000\uE001]/g, '\uFFFD') : text;
  const html = marked.parse(withSentinels(clean, unsupported)) as string;
  const frag = purify.sanitize(html, {
    ALLOWED_TAGS: allowedTags,
    // align carries a table column's alignment (| ---: |).
    ALLOWED_ATTR: ['href', 'title', 'class', 'start', 'align'],
    ALLOW_DATA_ATTR: false,
    RETURN_DOM_FRAGMENT: true,
  }) as DocumentFragment;
  markUnsupported(frag);
  linkCitations(frag, sources);
  addCopyButtons(frag);
  return frag;
}

const marker = /(\[\^?\d+(?:\s*,\s*\^?\d+)*\])/;

/** linkCitations turns the markers "[2]", "[1, 3]" and "[^2]" in prose (not in code) into links to those sources. */
function linkCitations(root: DocumentFragment, sources: Source[]) {
  if (!sources.length) return;
  const doc = root.ownerDocument;
  const walker = doc.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const texts: Text[] = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const t = n as Text;
    if (t.parentElement?.closest('code, pre, a')) continue;
    if (marker.test(t.data)) texts.push(t);
  }
  for (const t of texts) {
    const out = doc.createDocumentFragment();
    for (const part of t.data.split(marker)) {
      const nums = marker.test(part) ? (part.match(/\d+/g) ?? []).map(Number) : [];
      if (!nums.length || nums.some((n) => !sources[n - 1])) {
        if (part) out.append(doc.createTextNode(part));
        continue;
      }
      for (const n of nums) {
        const src = sources[n - 1];
        const a = doc.createElement('a');
        a.className = 'cite';
        a.dataset.n = String(n);
        a.href = textFragmentURL(src.url, src.quote);
        a.target = '_blank';
        a.rel = 'noopener noreferrer';
        a.title = src.title || src.url;
        a.setAttribute('aria-label', `Source ${n}: ${src.title || src.url}`);
        a.textContent = String(n);
        out.append(a);
      }
    }
    t.replaceWith(out);
  }
}

/**
 * markUnsupported wraps each marked sentence in a subtly underlined span
 * that says, on hover and to assistive technology, that the cited docs do
 * not hold it.
 */
function markUnsupported(root: DocumentFragment) {
  const doc = root.ownerDocument;
  wrapSpans(
    root,
    () => {
      const m = doc.createElement('mark');
      m.className = 'unsupported';
      m.title = unsupportedNote;
      return m;
    },
    (last) => {
      const note = doc.createElement('span');
      note.className = 'sr-only';
      note.textContent = ` (${unsupportedNote.toLowerCase()})`;
      last.after(note);
    },
  );
}

function addCopyButtons(root: DocumentFragment) {
  const doc = root.ownerDocument;
  root.querySelectorAll('pre').forEach((pre) => {
    const wrap = doc.createElement('div');
    wrap.className = 'code';
    pre.replaceWith(wrap);
    wrap.append(pre);
    const b = doc.createElement('button');
    b.type = 'button';
    b.className = 'copy';
    b.setAttribute('data-copy', '');
    b.setAttribute('aria-label', 'Copy code');
    b.textContent = 'Copy';
    wrap.append(b);
  });
}
