// The chat widget in a real browser, on a page of another origin than
// docsmith (started by internal/app/widget_browser_test.go, which checks the
// server's side). Input on stdin:
//   {chromium, artifacts, page, barePage, revokedPage, limitedPage, foreignPage, shortcut, questions…}
// Prints one JSON object with what the browser saw.

import { launch, log, readInput } from './lib.mjs';

const input = await readInput();
const out = { steps: [], console: [] };
const { context, close } = await launch(input);
const timeout = 20_000;

// Styles of the host page that must not change when the widget loads and opens.
const probes = ['body', 'h1', 'p#sel', 'pre', 'a', 'button#own', 'input#own-input'];
const props = ['font-family', 'font-size', 'line-height', 'color', 'background-color', 'margin-top', 'padding-left', 'border-top-width', 'box-sizing', 'letter-spacing'];

async function hostStyles(page) {
  return page.evaluate(
    ({ probes, props }) =>
      Object.fromEntries(
        probes.map((sel) => {
          const el = document.querySelector(sel);
          const cs = el && getComputedStyle(el);
          return [sel, cs ? Object.fromEntries(props.map((p) => [p, cs.getPropertyValue(p)])) : null];
        }),
      ),
    { probes, props },
  );
}

/** ask types a question and waits for the answer (or an error) to be complete. */
async function ask(page, question) {
  const before = await page.locator('.msg.assistant').count();
  await page.evaluate((before) => {
    const root = document.querySelector('docsmith-widget').shadowRoot;
    const t = { sent: 0, first: 0, lengths: [], stopSeen: false };
    window.__ask = t;
    const seen = () => {
      const mds = root.querySelectorAll('.msg.assistant .md');
      const md = mds[before];
      const n = md ? md.textContent.length : 0;
      if (n > 0 && !t.first) t.first = performance.now();
      if (n > 0 && t.lengths[t.lengths.length - 1] !== n) t.lengths.push(n);
      if (root.querySelector('.send.stop')) t.stopSeen = true;
    };
    window.__askObserver?.disconnect();
    window.__askObserver = new MutationObserver(seen);
    window.__askObserver.observe(root, { subtree: true, childList: true, characterData: true, attributes: true });
  }, before);
  const box = page.locator('textarea[aria-label="Your question"]');
  await box.fill(question);
  await page.evaluate(() => (window.__ask.sent = performance.now()));
  await box.press('Enter');
  await page.waitForFunction(
    (before) => {
      const root = document.querySelector('docsmith-widget').shadowRoot;
      return root.querySelectorAll('.msg.assistant .actions').length > before || root.querySelector('.error[role=alert]');
    },
    before,
    { timeout },
  );
  const r = await page.evaluate((before) => {
    const root = document.querySelector('docsmith-widget').shadowRoot;
    const msg = root.querySelectorAll('.msg.assistant')[before];
    const t = window.__ask;
    return {
      text: msg?.querySelector('.md')?.textContent ?? '',
      citations: [...(msg?.querySelectorAll('a.cite') ?? [])].map((a) => ({ n: a.textContent, href: a.href })),
      sources: [...(msg?.querySelectorAll('.sources a') ?? [])].map((a) => ({ href: a.href, title: a.querySelector('.stitle')?.textContent })),
      error: root.querySelector('.error[role=alert] p')?.textContent ?? '',
      firstTokenMs: t.first ? t.first - t.sent : null,
      lengths: t.lengths,
      stopSeen: t.stopSeen,
    };
  }, before);
  r.threadId = await page.evaluate(() => {
    for (let i = 0; i < sessionStorage.length; i++) {
      const k = sessionStorage.key(i);
      if (k.startsWith('docsmith:')) return JSON.parse(sessionStorage.getItem(k)).threadId ?? '';
    }
    return '';
  });
  return r;
}

async function openWidget(page) {
  await page.waitForFunction(() => window.docsmith && window.docsmith.version, null, { timeout });
  await page.evaluate(() => {
    // The JS API's events, as a site would follow them.
    if (!window.__events) {
      window.__events = [];
      for (const name of ['open', 'answer', 'feedback']) window.docsmith.on(name, (d) => window.__events.push({ name, detail: d }));
      window.addEventListener('docsmith:answer', () => window.__events.push({ name: 'window:answer' }));
    }
    window.docsmith.open();
  });
  await page.locator('[role=dialog]').waitFor({ timeout });
}

try {
  // The host page without the widget, for its styles.
  const bare = await context.newPage();
  await bare.goto(input.barePage);
  out.stylesBefore = await hostStyles(bare);
  await bare.close();

  const page = await context.newPage();
  // With the URL: "Failed to load resource" alone does not say which.
  page.on('console', (m) => out.console.push(`${m.type()}: ${m.text()}${m.location().url ? ` (${m.location().url})` : ''}`));
  page.on('pageerror', (e) => out.console.push(`pageerror: ${e.message}`));
  await page.goto(input.page);
  await page.waitForFunction(() => window.docsmith && window.docsmith.version, null, { timeout });
  out.launcher = await page.locator('button.launcher').getAttribute('aria-label');

  // Keyboard: the shortcut opens the dialog with the focus in the question box.
  await page.keyboard.press(input.shortcut);
  await page.locator('[role=dialog]').waitFor({ timeout });
  out.focusOnOpen = await page.evaluate(() => document.querySelector('docsmith-widget').shadowRoot.activeElement?.getAttribute('aria-label') ?? '');
  // Tab never leaves the dialog.
  const left = [];
  for (let i = 0; i < 8; i++) {
    await page.keyboard.press('Tab');
    left.push(await page.evaluate(() => document.activeElement?.tagName.toLowerCase()));
  }
  out.tabStops = left;
  await page.keyboard.press('Escape');
  await page.locator('[role=dialog]').waitFor({ state: 'detached', timeout });
  out.escapeClosed = true;
  log('keyboard ok');

  await openWidget(page);
  out.first = await ask(page, input.question);
  log('first answer', JSON.stringify(out.first).slice(0, 300));
  out.followUp = await ask(page, input.followUp);
  log('follow-up', out.followUp.threadId);

  // A reload keeps the conversation and continues the thread.
  await page.reload();
  await openWidget(page);
  out.messagesAfterReload = await page.locator('.msg').count();
  out.afterReload = await ask(page, input.afterReload);
  log('after reload', out.afterReload.threadId);
  await page.evaluate(() => window.docsmith.close());

  // Ask about a selection of the page's text.
  await page.evaluate(() => {
    const p = document.querySelector('p#sel');
    const r = document.createRange();
    r.selectNodeContents(p);
    const s = document.getSelection();
    s.removeAllRanges();
    s.addRange(r);
  });
  await page.locator('button.selask').click({ timeout });
  out.selectionChip = await page.locator('.context').textContent({ timeout });
  out.selection = await ask(page, input.selectionQuestion);
  log('selection', out.selection.text.slice(0, 80));
  await page.evaluate(() => window.docsmith.close());

  // Ask about a code block that opted in.
  await page.locator('button.codeask').first().click({ timeout });
  out.codeChip = await page.locator('.context').textContent({ timeout });
  out.code = await ask(page, input.codeQuestion);
  log('code', out.code.text.slice(0, 80));

  // Thumbs down with a comment on the last answer.
  const last = page.locator('.msg.assistant').last();
  await last.locator('button[aria-label="Not helpful"]').click();
  await last.locator('.comment textarea').fill(input.comment);
  await last.locator('.comment button[type=submit]').click();
  await last.locator('.thanks').waitFor({ timeout });
  out.feedback = await last.locator('.thanks').textContent();
  out.events = await page.evaluate(() => window.__events);
  log('feedback', out.feedback);

  // Screenshots of the open widget: light and dark, desktop and phone.
  out.screenshots = [];
  for (const [name, size] of [
    ['desktop', { width: 1280, height: 800 }],
    ['phone', { width: 390, height: 844 }],
  ]) {
    await page.setViewportSize(size);
    for (const scheme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.waitForTimeout(150);
      const file = `${input.artifacts}/widget-${name}-${scheme}.png`;
      await page.screenshot({ path: file });
      const bg = await page.locator('.panel').evaluate((el) => getComputedStyle(el).backgroundColor);
      const box = await page.locator('.panel').boundingBox();
      out.screenshots.push({ file, scheme, name, panelBackground: bg, panelWidth: box?.width ?? 0 });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 800 });
  out.stylesAfter = await hostStyles(page);

  // A revoked key: a sentence, not a blank panel.
  const revoked = await context.newPage();
  await revoked.goto(input.revokedPage);
  await openWidget(revoked);
  out.revoked = await ask(revoked, input.question);
  await revoked.close();

  // A key over its rate limit: when to retry.
  const limited = await context.newPage();
  await limited.goto(input.limitedPage);
  await openWidget(limited);
  out.limited = await ask(limited, input.question);
  await limited.close();

  // An origin outside the domain's list: refused, with a console message
  // that says how to allow it.
  const foreign = await context.newPage();
  const foreignConsole = [];
  foreign.on('console', (m) => foreignConsole.push(`${m.type()}: ${m.text()}`));
  await foreign.goto(input.foreignPage);
  await openWidget(foreign);
  out.foreign = await ask(foreign, input.question);
  out.foreignConsole = foreignConsole;
  await foreign.close();
} catch (err) {
  out.failure = String(err?.stack ?? err);
} finally {
  await close();
}
process.stdout.write(JSON.stringify(out));
