// The official TypeScript MCP client against docsmith's MCP endpoint over
// Streamable HTTP, with the assistant key in the Authorization header as an
// MCP client's configuration sends it, and without one on a domain that
// serves its public pages so (mcp_public). internal/app/mcp_client_test.go
// starts the server and passes its URL, key and domains in the environment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run this through go test ./internal/app -run TestMCPTypeScriptClient`);
  return v;
};
const base = env('DOCSMITH_URL');
const key = env('DOCSMITH_ASSISTANT_KEY');
const domain = env('DOCSMITH_DOMAIN');
const foreignDomain = env('DOCSMITH_FOREIGN_DOMAIN');
const publicDomain = env('DOCSMITH_PUBLIC_DOMAIN');

async function connect(domainID, bearer) {
  const client = new Client({ name: 'docsmith-ts-test', version: '1.0.0' });
  const headers = bearer ? { Authorization: `Bearer ${bearer}` } : {};
  const transport = new StreamableHTTPClientTransport(new URL(`/discovery/v1/mcp/${domainID}`, base), {
    requestInit: { headers },
  });
  await client.connect(transport);
  return client;
}

test('lists the tools and the page resource template', async () => {
  const client = await connect(domain, key);
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['get_page', 'search', 'submit_feedback']);
    const search = tools.find((t) => t.name === 'search');
    assert.ok(search.inputSchema.properties.query, 'search takes a query');
    assert.ok(search.outputSchema, 'search declares its structured output');
    // Each description says when to use the tool; each argument says what it is.
    for (const [name, when] of [['search', /^Use this first/], ['get_page', /^Use this after search/], ['submit_feedback', /^Use this after you used a page/]]) {
      const tool = tools.find((t) => t.name === name);
      assert.match(tool.description, when, name);
      for (const [arg, schema] of Object.entries(tool.inputSchema.properties)) {
        assert.ok(schema.description, `${name}.${arg} has a description`);
      }
    }
    assert.deepEqual(tools.find((t) => t.name === 'submit_feedback').inputSchema.required, ['path', 'helpful']);
    assert.match(client.getInstructions(), /call search first/);
    const { resourceTemplates } = await client.listResourceTemplates();
    assert.deepEqual(resourceTemplates.map((r) => r.uriTemplate), ['docs://page/{+path}']);
  } finally {
    await client.close();
  }
});

test('search returns passages with titles, paths, URLs and text', async () => {
  const client = await connect(domain, key);
  try {
    const res = await client.callTool({ name: 'search', arguments: { query: 'exclude files from a sync', pageSize: 3 } });
    assert.equal(res.isError ?? false, false, JSON.stringify(res));
    const { passages } = res.structuredContent;
    assert.ok(passages.length >= 1 && passages.length <= 3, JSON.stringify(passages));
    const first = passages[0];
    assert.equal(first.path, 'guides/sync');
    assert.equal(first.url.split('#')[0], 'https://tern.example/docs/guides/sync');
    assert.ok(first.title.length > 0 && first.text.includes('.ternignore'), JSON.stringify(first));
    assert.match(res.content[0].text, /url: https:\/\/tern\.example\/docs\/guides\/sync/);
  } finally {
    await client.close();
  }
});

test('get_page returns the page as Markdown, and the resource the same', async () => {
  const client = await connect(domain, key);
  try {
    const res = await client.callTool({ name: 'get_page', arguments: { path: 'guides/sync' } });
    assert.equal(res.isError ?? false, false, JSON.stringify(res));
    assert.match(res.content[0].text, /^# /);
    assert.ok(res.content[0].text.includes('.ternignore'));
    assert.equal(res.structuredContent.url, 'https://tern.example/docs/guides/sync');
    const page = await client.readResource({ uri: 'docs://page/guides/sync' });
    assert.equal(page.contents[0].text, res.content[0].text);

    const missing = await client.callTool({ name: 'get_page', arguments: { path: 'guides/nope' } });
    assert.equal(missing.isError, true);
    assert.match(missing.content[0].text, /not found/);
  } finally {
    await client.close();
  }
});

test('a missing or unknown key is refused with 401', async () => {
  for (const bearer of ['', 'svc_dsc_unknown_key']) {
    await assert.rejects(connect(domain, bearer), (err) => {
      assert.match(String(err), /401|Unauthorized|not valid|missing/i);
      return true;
    });
  }
});

test("another organization's domain is 404, like an unknown one", async () => {
  for (const d of [foreignDomain, 'no-such-domain']) {
    await assert.rejects(connect(d, key), (err) => {
      assert.match(String(err), /404|not found/i);
      return true;
    });
  }
});

test('submit_feedback records whether a page helped', async () => {
  const client = await connect(domain, key);
  try {
    const res = await client.callTool({
      name: 'submit_feedback',
      arguments: { path: 'guides/sync', helpful: false, comment: 'No example of excluding a folder.' },
    });
    assert.equal(res.isError ?? false, false, JSON.stringify(res));
    assert.deepEqual(res.structuredContent, { recorded: true, path: 'guides/sync', helpful: false });

    const missing = await client.callTool({ name: 'submit_feedback', arguments: { path: 'guides/nope', helpful: true } });
    assert.equal(missing.isError, true);
    assert.match(missing.content[0].text, /not found/);
  } finally {
    await client.close();
  }
});

test('without a key, a domain with mcp_public serves its public pages read-only', async () => {
  const client = await connect(publicDomain, '');
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['get_page', 'search']);
    const res = await client.callTool({ name: 'search', arguments: { query: 'exclude files from a sync' } });
    assert.equal(res.isError ?? false, false, JSON.stringify(res));
    assert.equal(res.structuredContent.passages[0].path, 'guides/sync');
    const page = await client.readResource({ uri: 'docs://page/guides/sync' });
    assert.ok(page.contents[0].text.includes('.ternignore'));
    const refused = await client.callTool({ name: 'submit_feedback', arguments: { path: 'guides/sync', helpful: true } }).catch((err) => ({ isError: true, err }));
    assert.equal(refused.isError, true, JSON.stringify(refused));
  } finally {
    await client.close();
  }
});

test('without a key, a domain without mcp_public says which setting would allow it', async () => {
  await assert.rejects(connect(domain, ''), (err) => {
    assert.match(String(err), /mcp_public/);
    return true;
  });
});
