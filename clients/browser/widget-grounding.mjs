// The chat widget showing a grounded answer (started by
// internal/app/widget_grounding_browser_test.go): its status line, the
// sentence the cited docs do not hold, a citation's quote on hover and on
// keyboard focus, and the citation's link opening the docs page at the
// quoted passage.
// Input on stdin: {chromium, artifacts, page, question}
// Prints {failure, console, error, status, marks, screenReader, listItems,
// hover, focus, citeHref, opened, firstTap, secondTap, screenshots}.

import { launch, log, readInput } from './lib.mjs';

const input = await readInput();
const out = { console: [], screenshots: [] };
const { context, close } = await launch(input);
const timeout = 20_000;


try {
  const page = await context.newPage();
  page.on('console', (m) => out.console.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => out.console.push(`pageerror: ${e.message}`));
  await page.goto(input.page);
  await page.waitForFunction(() => window.docsmith && window.docsmith.version, null, { timeout });
  await page.evaluate(() => window.docsmith.open());
  await page.locator('[role=dialog]').waitFor({ timeout });

  const box = page.locator('textarea[aria-label="Your question"]');
  await box.fill(input.question);
  await box.press('Enter');
  await page.waitForFunction(
    () => {
      const r = document.querySelector('docsmith-widget').shadowRoot;
      return r.querySelector('.msg.assistant .actions') || r.querySelector('.error[role=alert]');
    },
    null,
    { timeout },
  );
  Object.assign(
    out,
    await page.evaluate(() => {
      const r = document.querySelector('docsmith-widget').shadowRoot;
      const msg = r.querySelector('.msg.assistant');
      return {
        error: r.querySelector('.error[role=alert] p')?.textContent ?? '',
        status: msg.querySelector('.status')?.textContent ?? '',
        marks: [...msg.querySelectorAll('mark.unsupported')].map((m) => ({ text: m.textContent, title: m.title, parent: m.closest('li')?.tagName ?? m.parentElement.tagName })),
        screenReader: [...msg.querySelectorAll('.md .sr-only')].map((e) => e.textContent).join('|'),
        listItems: msg.querySelectorAll('.md li').length,
        citeHref: msg.querySelector('.md a.cite[data-n="1"]')?.href ?? '',
      };
    }),
  );
  log('status', out.status, 'marks', out.marks.length);

  const quoteState = () =>
    page.evaluate(() => {
      const r = document.querySelector('docsmith-widget').shadowRoot;
      const pop = r.querySelector('.quote-pop');
      const cite = r.querySelector('.md a.cite[data-n="1"]');
      return {
        visible: !!pop && pop.getBoundingClientRect().height > 0 && getComputedStyle(pop).visibility !== 'hidden',
        text: pop?.querySelector('blockquote')?.textContent ?? '',
        link: pop?.querySelector('a')?.href ?? '',
        described: cite?.getAttribute('aria-describedby') ?? '',
      };
    });

  // Hover with the mouse.
  const cite = page.locator('docsmith-widget .md a.cite[data-n="1"]');
  await cite.hover();
  await page.waitForFunction(() => !!document.querySelector('docsmith-widget').shadowRoot.querySelector('.quote-pop'), null, { timeout });
  out.hover = await quoteState();
  // Away from it, the quote goes.
  await page.mouse.move(5, 5);
  await page.waitForFunction(() => !document.querySelector('docsmith-widget').shadowRoot.querySelector('.quote-pop'), null, { timeout });

  // Keyboard focus shows it too.
  await cite.focus();
  await page.waitForFunction(() => !!document.querySelector('docsmith-widget').shadowRoot.querySelector('.quote-pop'), null, { timeout });
  out.focus = await quoteState();

  // Screenshots with a quote shown (by focus on the first source below the
  // answer, so that the marked sentence stays in view): light and dark,
  // desktop and phone.
  const chip = page.locator('docsmith-widget .sources a[data-n="1"]');
  for (const [name, size] of [
    ['desktop', { width: 1280, height: 800 }],
    ['phone', { width: 390, height: 844 }],
  ]) {
    await page.setViewportSize(size);
    for (const scheme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.mouse.move(5, 5);
      await chip.blur();
      await chip.focus();
      await page.waitForFunction(() => !!document.querySelector('docsmith-widget').shadowRoot.querySelector('.quote-pop'), null, { timeout });
      await page.waitForTimeout(150);
      const file = `${input.artifacts}/widget-grounding-${name}-${scheme}.png`;
      await page.screenshot({ path: file });
      const bg = await page.locator('.panel').evaluate((el) => getComputedStyle(el).backgroundColor);
      out.screenshots.push({ file, scheme, name, panelBackground: bg });
    }
  }

  // The citation's link, followed as a reader would: a click, which opens
  // a new tab.
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.emulateMedia({ colorScheme: 'light' });
  const [opened] = await Promise.all([context.waitForEvent('page', { timeout }), cite.click()]);
  await opened.waitForLoadState('load');
  // Text fragments scroll after load, once the text is found.
  await opened.waitForFunction(() => window.scrollY > 0, null, { timeout: 5_000 }).catch(() => {});
  await opened.waitForTimeout(300);
  out.opened = await opened.evaluate(() => ({
    url: location.href,
    passageTop: document.getElementById('passage').getBoundingClientRect().top,
    headingTop: document.getElementById('exclude-files').getBoundingClientRect().top,
    viewportHeight: window.innerHeight,
    scrollY: window.scrollY,
  }));
  const file = `${input.artifacts}/widget-grounding-opened-page.png`;
  await opened.screenshot({ path: file });
  out.screenshots.push({ file, scheme: 'light', name: 'opened-page', panelBackground: '' });
  log('opened', JSON.stringify(out.opened));

  // On a touch screen: a first tap on a citation shows its quote and stays
  // on the page; a second tap follows the link.
  const phone = await launch(input, { hasTouch: true, isMobile: true, viewport: { width: 390, height: 844 } });
  try {
    const tp = await phone.context.newPage();
    tp.on('pageerror', (e) => out.console.push(`pageerror (touch): ${e.message}`));
    await tp.goto(input.page);
    await tp.waitForFunction(() => window.docsmith && window.docsmith.version, null, { timeout });
    await tp.evaluate(() => window.docsmith.open());
    const q = tp.locator('textarea[aria-label="Your question"]');
    await q.fill(input.question);
    await q.press('Enter');
    await tp.waitForFunction(() => !!document.querySelector('docsmith-widget').shadowRoot.querySelector('.msg.assistant .actions'), null, { timeout });
    const tcite = tp.locator('docsmith-widget .md a.cite[data-n="1"]');
    const before = phone.context.pages().length;
    await tcite.tap();
    await tp.waitForTimeout(300);
    out.firstTap = {
      quote: await tp.evaluate(() => document.querySelector('docsmith-widget').shadowRoot.querySelector('.quote-pop blockquote')?.textContent ?? ''),
      opened: phone.context.pages().length - before,
    };
    const [followed] = await Promise.all([phone.context.waitForEvent('page', { timeout }), tcite.tap()]);
    await followed.waitForLoadState('load');
    out.secondTap = { url: followed.url(), opened: phone.context.pages().length - before };
  } finally {
    await phone.close();
  }
} catch (err) {
  out.failure = String(err?.stack ?? err);
} finally {
  await close();
}
process.stdout.write(JSON.stringify(out));
