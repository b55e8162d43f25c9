// Where the docsmith server under test is, and helpers the client tests
// share. The tests start nothing: internal/app/aisdk_clients_test.go starts
// a server with the fixture docs and runs them with these variables set.
//
//   DOCSMITH_URL              base URL of the server, e.g. http://127.0.0.1:40123
//   DOCSMITH_ASSISTANT_KEY    an assistant key (svc_dsc_...) of the domains' organization
//   DOCSMITH_DOMAIN           a domain that sends the top-level threadId on the v2 finish chunk
//   DOCSMITH_STRICT_DOMAIN    a domain with that setting off (for strict-schema clients)
//   DOCSMITH_MODEL_DOMAIN     optional: a domain answered by a scripted model that cites [1] and [8]
//
// Without DOCSMITH_URL every test is skipped.

export const server = {
  url: process.env.DOCSMITH_URL,
  key: process.env.DOCSMITH_ASSISTANT_KEY,
  domain: process.env.DOCSMITH_DOMAIN,
  strictDomain: process.env.DOCSMITH_STRICT_DOMAIN,
  modelDomain: process.env.DOCSMITH_MODEL_DOMAIN,
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
