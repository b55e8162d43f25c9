// Where the docsmith server under test is, and helpers the client tests
// share. The tests start nothing: internal/app/aisdk_clients_test.go starts
// a server with the fixture docs and runs them with these variables set.
//
//   DOCSMITH_URL              base URL of the server, e.g. http://127.0.0.1:40123
//   DOCSMITH_ASSISTANT_KEY    an assistant key (svc_dsc_...) of the domains' organization
//   DOCSMITH_DOMAIN           a domain that sends the top-level threadId on the v2 finish chunk
//   DOCSMITH_STRICT_DOMAIN    a domain with that setting off (for strict-schema clients)
//   DOCSMITH_MODEL_DOMAIN     optional: a domain answered by a scripted model that cites [1] and [8]
//   DOCSMITH_WIRE_URL         optional: a server that streams one answer with a status, grounding
//                             and quoted sources, POST /v1 (data stream) and /v2 (UI message stream)
//
// Without DOCSMITH_URL every test is skipped.

export const server = {
  url: process.env.DOCSMITH_URL,
  key: process.env.DOCSMITH_ASSISTANT_KEY,
  domain: process.env.DOCSMITH_DOMAIN,
  strictDomain: process.env.DOCSMITH_STRICT_DOMAIN,
  modelDomain: process.env.DOCSMITH_MODEL_DOMAIN,
  wire: process.env.DOCSMITH_WIRE_URL,
};

export const skip = server.url ? false : 'DOCSMITH_URL is not set (run through go test ./internal/app -run TestAISDKClients)';

export function endpoint(version, domain) {
  return `${server.url}/discovery/${version}/assistant/${encodeURIComponent(domain)}/message`;
}

export const headers = () => ({ Authorization: `Bearer ${server.key}` });

// recordingFetch is the fetch the chat clients get: the real one, with the
// response headers kept so that a test can compare x-thread-id.
export function recordingFetch(log) {
  return async (input, init) => {
    const res = await globalThis.fetch(input, init);
    log.push({ url: String(input), status: res.status, threadHeader: res.headers.get('x-thread-id') });
    return res;
  };
}

// The page the citations of the fixture docs point into.
export const siteURL = 'https://tern.example/docs/';

// MemoryState is a chat state like the framework ones, without a framework.
export class MemoryState {
  status = 'ready';
  error = undefined;
  messages = [];
  pushMessage = (m) => {
    this.messages = this.messages.concat(m);
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (i, m) => {
    this.messages = [...this.messages.slice(0, i), structuredClone(m), ...this.messages.slice(i + 1)];
  };
  snapshot = (v) => structuredClone(v);
}
