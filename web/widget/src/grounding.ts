// What the server says about an answer beyond its text: its status (whether
// the docs cover the question), which sentences it could not find in the
// passages they cite, and the quote each citation stands for. All of it
// comes from the stream and is untrusted: every value is checked before use.

/** AnswerStatus is the data-answer-status part (also the finish metadata's answerStatus). */
export interface AnswerStatus {
  status: 'answered' | 'partial' | 'not_covered';
  note?: string;
  missing?: string[];
}

/** Grounding is a data-grounding part: one sentence of a text block and whether its cited passages hold it. */
export interface Grounding {
  textId: string;
  /** UTF-16 offsets into the text block, end exclusive. */
  start: number;
  end: number;
  sources: string[];
  supported: boolean;
  missing?: string[];
}

/** DataParts names the data parts the widget reads, for the AI SDK's message type. */
export type DataParts = {
  'answer-status': AnswerStatus;
  grounding: Grounding;
};

const statuses = ['answered', 'partial', 'not_covered'];

/** Limits on what is shown, whatever the server sent. */
const maxNote = 300;
const maxMissing = 8;

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');

/** answerStatus returns v as an AnswerStatus, or undefined when it is not one. */
export function answerStatus(v: unknown): AnswerStatus | undefined {
  const s = v as AnswerStatus | null;
  if (!s || typeof s !== 'object' || !statuses.includes(s.status)) return undefined;
  const out: AnswerStatus = { status: s.status };
  if (typeof s.note === 'string' && s.note.trim()) out.note = s.note.trim().slice(0, maxNote);
  if (isStrings(s.missing)) out.missing = s.missing.slice(0, maxMissing);
  return out;
}

/** grounding returns v as a Grounding, or undefined when it is not one. */
export function grounding(v: unknown): Grounding | undefined {
  const g = v as Grounding | null;
  if (!g || typeof g !== 'object' || typeof g.textId !== 'string' || typeof g.supported !== 'boolean') return undefined;
  if (!Number.isInteger(g.start) || !Number.isInteger(g.end) || g.start < 0 || g.end <= g.start) return undefined;
  return {
    textId: g.textId,
    start: g.start,
    end: g.end,
    sources: isStrings(g.sources) ? g.sources : [],
    supported: g.supported,
    missing: isStrings(g.missing) ? g.missing.slice(0, maxMissing) : undefined,
  };
}

/** Span is a range of an answer's text to mark, in UTF-16 offsets. */
export interface Span {
  start: number;
  end: number;
}

/**
 * textIndex is the position, among a message's text parts, of the text
 * block textId names. The assistant numbers its blocks txt_0, txt_1, … in
 * the order it opens them, which is the order of the parts (the AI SDK
 * keeps no block ids on text parts); anything else is the first block.
 */
export function textIndex(textId: string): number {
  const m = /_(\d+)$/.exec(textId);
  return m ? Number(m[1]) : 0;
}

// Sentinels mark a span's ends in the Markdown source: private-use
// characters that Markdown and the sanitizer leave alone as text, found and
// removed again in the rendered DOM.
export const spanOpen = '\uE000';
export const spanClose = '\uE001';

/**
 * withSentinels inserts the sentinels around each span of text. A span's
 * ends are moved off Markdown block syntax (list and quote markers, heading
 * hashes, table pipes, code fences at a line's edge), where a character
 * would change how the line parses. Spans outside the text, overlapping an
 * earlier one or empty once moved are left out.
 */
export function withSentinels(text: string, spans: Span[]): string {
  const marks: { at: number; s: string }[] = [];
  let last = 0;
  for (const sp of [...spans].sort((a, b) => a.start - b.start)) {
    if (sp.start < last || sp.end > text.length) continue;
    const start = skipBlockSyntax(text, sp.start, sp.end);
    const end = trimBlockSyntax(text, start, sp.end);
    if (end <= start) continue;
    marks.push({ at: start, s: spanOpen }, { at: end, s: spanClose });
    last = sp.end;
  }
  let out = '';
  let from = 0;
  for (const m of marks) {
    out += text.slice(from, m.at) + m.s;
    from = m.at;
  }
  return out + text.slice(from);
}

const blockPrefix = /^(?:[ \t]*(?:[-*+>|]|\d{1,9}[.)]|#{1,6})(?=[ \t]|$)[ \t]*)+/;
const fence = /^[ \t]*(```|~~~)/;

/** skipBlockSyntax moves a span's start past whitespace, and past block syntax where it begins a line. */
function skipBlockSyntax(text: string, start: number, end: number): number {
  let i = start;
  for (let guard = 0; i < end && guard < 64; guard++) {
    while (i < end && /\s/.test(text[i])) i++;
    const atLineStart = i === 0 || text[i - 1] === '\n' || /^[ \t]*$/.test(text.slice(text.lastIndexOf('\n', i - 1) + 1, i));
    if (!atLineStart) break;
    const line = text.slice(i, text.indexOf('\n', i) === -1 ? text.length : text.indexOf('\n', i));
    if (fence.test(line)) {
      i += line.length; // the fence line itself; the code starts on the next
      continue;
    }
    const m = blockPrefix.exec(line);
    if (!m || !m[0].length) break;
    i += m[0].length;
  }
  return Math.min(i, end);
}

/** trimBlockSyntax moves a span's end back over white space, trailing table pipes and a closing fence line. */
function trimBlockSyntax(text: string, start: number, end: number): number {
  let j = end;
  for (let guard = 0; j > start && guard < 64; guard++) {
    const before = j;
    while (j > start && /[\s|]/.test(text[j - 1])) j--;
    const lineStart = text.lastIndexOf('\n', j - 1) + 1;
    if (lineStart > start && fence.test(text.slice(lineStart, j))) j = lineStart;
    if (j === before) break;
  }
  return j;
}

/**
 * wrapSpans replaces the sentinels in a rendered fragment: the text
 * between an opening and a closing one is wrapped, text node by text node
 * (a sentence may cross inline elements), in elements made by wrap. The
 * last wrapper of each span is passed to after (for a note readers of
 * assistive technology hear once per sentence).
 */
export function wrapSpans(root: DocumentFragment, wrap: () => HTMLElement, after?: (last: HTMLElement) => void) {
  const doc = root.ownerDocument;
  const walker = doc.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const texts: Text[] = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) texts.push(n as Text);
  let inside = false;
  let lastWrapper: HTMLElement | undefined;
  for (const t of texts) {
    if (!inside && !t.data.includes(spanOpen) && !t.data.includes(spanClose)) continue;
    const out = doc.createDocumentFragment();
    let buf = '';
    const emit = () => {
      if (!buf) return;
      if (inside) {
        const w = wrap();
        w.textContent = buf;
        out.append(w);
        lastWrapper = w;
      } else {
        out.append(doc.createTextNode(buf));
      }
      buf = '';
    };
    for (const ch of t.data) {
      if (ch === spanOpen || ch === spanClose) {
        emit();
        const closing = ch === spanClose && inside;
        inside = ch === spanOpen;
        // The wrapper has a parent by now: this node's fragment or, when
        // the span began in an earlier node, the tree.
        if (closing && lastWrapper && after) after(lastWrapper);
        if (closing) lastWrapper = undefined;
        continue;
      }
      buf += ch;
    }
    emit();
    t.replaceWith(out);
  }
}

/**
 * textFragmentURL returns url with a text fragment that scrolls the page to
 * the quote and highlights it (#anchor:~:text=…). The quote is Markdown;
 * its first passage of prose is what the page shows as text, so the
 * fragment is taken from it: the whole of a short one, the first and last
 * words (textStart,textEnd) of a long one. Without prose to match, url is
 * returned as it is.
 */
export function textFragmentURL(url: string, quote: string | undefined): string {
  if (!quote) return url;
  const words = proseOf(quote).split(/\s+/).filter(Boolean);
  if (words.length < 2) return url;
  const edge = 4;
  const directive =
    words.length <= 2 * edge + 2 ? encodeFragmentText(words.join(' ')) : `${encodeFragmentText(words.slice(0, edge).join(' '))},${encodeFragmentText(words.slice(-edge).join(' '))}`;
  const directiveAt = url.indexOf(':~:');
  const base = directiveAt !== -1 ? url.slice(0, directiveAt) : url.includes('#') ? url : url + '#';
  return `${base}:~:text=${directive}`;
}

/**
 * encodeFragmentText percent-encodes a text directive's term: what
 * encodeURIComponent encodes, plus "-", which the directive's syntax uses
 * (",", "&" and "#" are encoded already).
 */
export function encodeFragmentText(s: string): string {
  return encodeURIComponent(s).replace(/-/g, '%2D');
}

/**
 * proseOf returns the first paragraph of prose in Markdown, as the page
 * renders it as text: headings, code blocks and table rows are skipped,
 * and inline markup (emphasis, code spans, links, images, HTML tags,
 * citation markers) is reduced to its text.
 */
export function proseOf(md: string): string {
  const lines = md.split('\n');
  const para: string[] = [];
  let inCode = false;
  for (const raw of lines) {
    const line = raw.trim();
    if (fence.test(line)) {
      inCode = !inCode;
      if (para.length) break;
      continue;
    }
    if (inCode) continue;
    const prose = line.replace(/^(?:>\s*)+/, '').replace(/^(?:[-*+]|\d{1,9}[.)])\s+/, '');
    const skip = !prose || /^#{1,6}\s/.test(prose) || prose.startsWith('|') || /^[-=_*]{3,}$/.test(prose) || /^<[^>]+>$/.test(prose);
    if (skip) {
      if (para.length) break;
      continue;
    }
    para.push(prose);
  }
  return para
    .join(' ')
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/\[\^?\d+(?:\s*,\s*\^?\d+)*\]/g, '')
    .replace(/<[^>]+>/g, '')
    .replace(/\*\*|~~|`/g, '')
    .replace(/(^|[^\w])[*_]([^*_]+)[*_](?=[^\w]|$)/g, '$1$2')
    .replace(/\s+/g, ' ')
    .replace(/ ([.,;:!?])(?=\s|$)/g, '$1')
    .trim();
}
